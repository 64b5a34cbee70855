"""The lowered specs are what the providers' own SDKs take (openai, anthropic, google-genai in
tests/peers/.venv-providers, made by `make peers-deps`; no network call)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from mcpgen_runtime.providers import PROFILES, lint_tool
from tests.support import ROOT, SHARED, needs_peer

pytestmark = pytest.mark.peer

PYTHON = ROOT / "tests" / "peers" / ".venv-providers" / "bin" / "python"
CHECKER = ROOT / "tests" / "peers" / "provider_sdks.py"


def _corpus() -> list[dict[str, Any]]:
    paths = sorted((ROOT / "specs").glob("*.json")) + sorted((SHARED / "realworld").glob("*.json"))
    tools: list[dict[str, Any]] = []
    for path in paths:
        tools += [
            t for t in json.loads(path.read_text(encoding="utf-8")).get("tools", []) if isinstance(t, dict)
        ]
    return tools


def _check(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    python = needs_peer(PYTHON, "the providers' SDKs (make peers-deps)")
    done = subprocess.run(
        [str(python), str(CHECKER)],
        input=json.dumps(items),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def test_every_spec_taken_or_lowered_is_accepted_by_the_providers_sdk() -> None:
    """One run of the SDKs (importing them is most of its time): every lowered spec of the corpora
    passes, and shapes the profiles report unlowered fail, so the check is not vacuous."""
    items = [
        {"profile": profile, "name": result.name, "schema": result.schema}
        for profile in PROFILES
        for result in (lint_tool(profile, tool) for tool in _corpus())
        if result.schema is not None
    ]
    assert {item["profile"] for item in items} == set(PROFILES)
    assert len(items) > 300
    unlowered = [
        {
            "profile": "openai-strict",
            "name": "!a",
            "schema": {"type": "object", "properties": {"x": {"type": "string"}}},
        },
        {
            "profile": "anthropic",
            "name": "!b",
            "schema": {"type": "object", "properties": {"x": {"type": ["string", "null"]}}},
        },
        {
            "profile": "gemini",
            "name": "!c",
            "schema": {"type": "object", "properties": {"x": {"type": "string", "const": "k"}}},
        },
    ]
    assert [failure["name"] for failure in _check(items + unlowered)] == ["!a", "!b", "!c"]
