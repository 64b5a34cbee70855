"""VALIDATE for resources, resource templates and prompts (codegen/validate/surfaces.py): pointers,
rule ids (docs/RULES.md RES / PROMPT), exclusion and --skip-invalid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegen.errors import SpecValidationError
from codegen.load.document import load_file
from codegen.validate.checks import validate

GOOD = {
    "tools": [],
    "resources": [{"uri": "file:///README.md", "name": "README", "mimeType": "text/markdown"}],
    "resourceTemplates": [{"uriTemplate": "file:///{path}", "name": "Project Files"}],
    "prompts": [
        {"name": "code_review", "arguments": [{"name": "code", "required": True}, {"name": "language"}]}
    ],
}


def _write(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_a_spec_file_with_surfaces_loads_and_validates(tmp_path: Path) -> None:
    loaded = load_file(_write(tmp_path, GOOD))
    checked = validate(loaded)
    assert checked.resources == GOOD["resources"]
    assert checked.resource_templates == GOOD["resourceTemplates"]
    assert checked.prompts == GOOD["prompts"]


def test_an_old_file_still_loads(tmp_path: Path) -> None:
    loaded = load_file(_write(tmp_path, {"tools": []}))
    assert (loaded.resources, loaded.resource_templates, loaded.prompts) == ([], [], [])


BAD = [
    ({"resources": [{"uri": "no scheme", "name": "x"}]}, "/resources/0/uri", "RES-02"),
    ({"resources": [{"uri": "x:\r\nHost: evil", "name": "x"}]}, "/resources/0/uri", "RES-02"),
    ({"resources": [{"name": "x"}]}, "/resources/0", "MCPGEN-SURFACE-SHAPE"),
    ({"resources": [{"uri": "x:a", "name": 3}]}, "/resources/0/name", "MCPGEN-SURFACE-SHAPE"),
    (
        {"resources": [{"uri": "x:a", "name": "a"}, {"uri": "x:a", "name": "b"}]},
        "/resources/1/uri",
        "RES-02",
    ),
    (
        {"resourceTemplates": [{"uriTemplate": "x://{a b}", "name": "t"}]},
        "/resourceTemplates/0/uriTemplate",
        "RES-03",
    ),
    (
        {"resourceTemplates": [{"uriTemplate": "x://{a", "name": "t"}]},
        "/resourceTemplates/0/uriTemplate",
        "RES-03",
    ),
    ({"prompts": [{"name": "p"}, {"name": "p"}]}, "/prompts/1/name", "PROMPT-02"),
    (
        {"prompts": [{"name": "p", "arguments": [{"name": "a"}, {"name": "a"}]}]},
        "/prompts/0/arguments/1/name",
        "PROMPT-02",
    ),
    (
        {"prompts": [{"name": "p", "arguments": [{"name": "a", "required": "yes"}]}]},
        "/prompts/0/arguments/0/required",
        "MCPGEN-SURFACE-SHAPE",
    ),
    ({"prompts": [{"name": "p", "description": 5}]}, "/prompts/0/description", "MCPGEN-SURFACE-SHAPE"),
]


@pytest.mark.parametrize(("document", "pointer", "rule"), BAD)
def test_invalid_entries_are_errors_with_pointer_and_rule(
    tmp_path: Path, document: dict[str, object], pointer: str, rule: str
) -> None:
    loaded = load_file(_write(tmp_path, {"tools": [], **document}))
    with pytest.raises(SpecValidationError) as info:
        validate(loaded)
    assert any(d.pointer == pointer and d.rule == rule for d in info.value.diagnostics), [
        str(d) for d in info.value.diagnostics
    ]
    skipped = validate(loaded, skip_invalid=True)
    assert any(d.pointer == pointer and "skipped (--skip-invalid)" in d.message for d in skipped.warnings), [
        str(d) for d in skipped.warnings
    ]


def test_skip_invalid_keeps_the_valid_entries(tmp_path: Path) -> None:
    document = dict(GOOD)
    document["prompts"] = [*GOOD["prompts"], {"name": 7}]
    checked = validate(load_file(_write(tmp_path, document)), skip_invalid=True)
    assert [p["name"] for p in checked.prompts] == ["code_review"]


def test_hostile_text_reaches_messages_only_through_repr(tmp_path: Path) -> None:
    document = {"tools": [], "resources": [{"uri": "nope\n", "name": "\x1b[31mred\n"}]}
    with pytest.raises(SpecValidationError) as info:
        validate(load_file(_write(tmp_path, document)))
    text = str(info.value)
    assert "\x1b" not in text and "red\n" not in text
