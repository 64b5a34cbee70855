"""`mcpgen diff` of resources, resource templates and prompts (codegen/diff/surfaces.py)."""

from __future__ import annotations

from typing import Any

import pytest

from codegen.diff.surfaces import diff_specs
from codegen.spec import LoadedSpec

BASE: dict[str, Any] = {
    "resources": [{"uri": "file:///README.md", "name": "README", "mimeType": "text/markdown"}],
    "resource_templates": [{"uriTemplate": "file:///{path}", "name": "files"}],
    "prompts": [{"name": "review", "arguments": [{"name": "code", "required": True}, {"name": "lang"}]}],
}


def _spec(**changes: Any) -> LoadedSpec:
    return LoadedSpec("spec.json", [], **{**BASE, **changes})


def _kinds(new: LoadedSpec) -> list[tuple[str, str, str]]:
    return [(c.kind, c.client, c.server) for c in diff_specs(_spec(), new).changes]


def test_nothing_changed() -> None:
    assert diff_specs(_spec(), _spec()).changes == ()


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        (_spec(prompts=[]), ("prompt-removed", "breaking", "compatible")),
        (
            _spec(
                prompts=[
                    {
                        "name": "review",
                        "arguments": [
                            {"name": "code", "required": True},
                            {"name": "lang"},
                            {"name": "style", "required": True},
                        ],
                    }
                ]
            ),
            ("argument-added-required", "breaking", "compatible"),
        ),
        (
            _spec(
                prompts=[
                    {
                        "name": "review",
                        "arguments": [
                            {"name": "code", "required": True},
                            {"name": "lang"},
                            {"name": "style"},
                        ],
                    }
                ]
            ),
            ("argument-added-optional", "compatible", "breaking"),
        ),
        (
            _spec(
                prompts=[
                    {
                        "name": "review",
                        "arguments": [{"name": "code", "required": True}, {"name": "lang", "required": True}],
                    }
                ]
            ),
            ("argument-made-required", "breaking", "compatible"),
        ),
        (
            _spec(prompts=[{"name": "review", "arguments": [{"name": "code", "required": True}]}]),
            ("argument-removed", "breaking", "compatible"),
        ),
        (
            _spec(resource_templates=[{"uriTemplate": "file:///{+path}", "name": "files"}]),
            ("template-uri-changed", "breaking", "breaking"),
        ),
        (_spec(resource_templates=[]), ("template-removed", "breaking", "compatible")),
        (
            _spec(resource_templates=[{"uriTemplate": "file:///{path}", "name": "documents"}]),
            ("template-renamed", "breaking", "breaking"),
        ),
        (_spec(resources=[]), ("resource-removed", "breaking", "compatible")),
        (
            _spec(resources=[*BASE["resources"], {"uri": "file:///NEW", "name": "new"}]),
            ("resource-added", "compatible", "breaking"),
        ),
        (
            _spec(resources=[{"uri": "file:///README.md", "name": "README", "mimeType": "text/plain"}]),
            ("resource-mime-type-changed", "possibly-breaking", "possibly-breaking"),
        ),
        (
            _spec(
                prompts=[
                    {
                        "name": "review",
                        "description": "new words",
                        "arguments": [{"name": "code", "required": True}, {"name": "lang"}],
                    }
                ]
            ),
            ("description-changed", "cosmetic", "cosmetic"),
        ),
    ],
)
def test_each_change_is_judged_for_clients_and_servers(
    new: LoadedSpec, expected: tuple[str, str, str]
) -> None:
    assert _kinds(new) == [expected]


def test_breaking_for_clients_sets_the_worst_severity() -> None:
    report = diff_specs(_spec(), _spec(prompts=[]))
    assert report.worst("client") == "breaking"
    assert report.worst("server") == "compatible"
