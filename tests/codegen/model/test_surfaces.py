"""codegen/model/surfaces.py: method and parameter names for resource templates and prompts."""

from __future__ import annotations

import json
from pathlib import Path

from codegen.load.document import load_file
from codegen.model.renames import rename_warnings
from codegen.model.surfaces import build_surfaces
from codegen.spec import ValidatedSpec
from codegen.validate.checks import validate


def _spec(**kwargs: object) -> ValidatedSpec:
    return ValidatedSpec("spec.json", [], "0" * 64, **kwargs)  # type: ignore[arg-type]


def test_template_methods_are_prefixed_and_clear_of_runtime_and_tool_names() -> None:
    ir = build_surfaces(
        _spec(
            resource_templates=[
                {"name": "Project Files", "uriTemplate": "file:///{path}{?rev,class}"},
                {"name": "resource", "uriTemplate": "x://{self}"},
                {"name": "echo", "uriTemplate": "e://{a}"},
            ]
        ),
        taken=["read_echo"],
    )
    first, second, third = ir.templates
    assert first.method_name == "read_project_files"
    assert [(p.name, p.wire_name, p.required) for p in first.params] == [
        ("path", "path", True),
        ("rev", "rev", False),
        ("class_", "class", False),
    ]
    assert second.method_name == "read_resource_"  # the runtime's read_resource
    assert [p.name for p in second.params] == ["self_"]
    assert third.method_name == "read_echo_"  # a tool method already has read_echo


def test_prompt_arguments_required_first_and_duplicate_names_numbered() -> None:
    ir = build_surfaces(
        _spec(
            prompts=[
                {
                    "name": "code_review",
                    "arguments": [
                        {"name": "lang"},
                        {"name": "code", "required": True},
                        {"name": "class", "required": True},
                    ],
                },
                {"name": "echo"},
                {"name": "echo"},
                {"name": "import"},
            ]
        )
    )
    review, echo, echo2, imp = ir.prompts
    assert review.method_name == "prompt_code_review"
    assert [(p.name, p.required) for p in review.params] == [
        ("code", True),
        ("class_", True),
        ("lang", False),
    ]
    assert (echo.method_name, echo2.method_name) == ("prompt_echo", "prompt_echo_2")
    assert imp.method_name == "prompt_import"


def test_a_template_and_a_prompt_of_one_name_get_distinct_methods() -> None:
    ir = build_surfaces(
        _spec(resource_templates=[{"name": "x", "uriTemplate": "x://{a}"}], prompts=[{"name": "x"}])
    )
    assert ir.method_names == ("read_x", "prompt_x")


def test_resource_constants() -> None:
    ir = build_surfaces(
        _spec(
            resources=[
                {"uri": "file:///a", "name": "README"},
                {"uri": "x:b", "name": "class"},
                {"uri": "x:c", "name": "README"},
            ]
        )
    )
    assert [r.constant_name for r in ir.resources] == ["README", "CLASS_", "README_2"]
    assert not build_surfaces(_spec())


def test_renamed_methods_and_parameters_are_warned_about(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text(
        json.dumps(
            {
                "tools": [{"name": "read_x", "inputSchema": {"type": "object"}}],
                "resourceTemplates": [
                    {"name": "resource", "uriTemplate": "x://{class}"},
                    {"name": "x", "uriTemplate": "x://{a}"},
                ],
                "prompts": [{"name": "p", "arguments": [{"name": "self"}, {"name": "ok"}]}],
            }
        ),
        "utf-8",
    )
    loaded = load_file(path)
    found = {(d.pointer, d.message.split(" in Python")[0]) for d in rename_warnings(loaded, validate(loaded))}
    assert found == {
        ("/resourceTemplates/0/name", "resource template 'resource' is 'read_resource_'"),
        ("/resourceTemplates/0/uriTemplate", "template variable 'class' is 'class_'"),
        ("/resourceTemplates/1/name", "resource template 'x' is 'read_x_'"),
        ("/prompts/0/arguments", "prompt argument 'self' is 'self_'"),
    }
