"""The lowered specs are what the providers' own SDKs take (openai, anthropic, google-genai in
tests/peers/.venv-providers, made by `make peers-deps`; no network call)."""

from __future__ import annotations

import contextlib
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


def test_a_clients_specs_and_replies_are_what_each_sdk_takes_in_a_request() -> None:
    """`client.tool_specs(provider).tools` as the request's `tools` and a `ToolReply.message()` (an
    error and a structured answer), in the SDKs' own request types, for every tool of the corpora
    that can be sent; a reply or declaration with a misspelled key is refused, so the check bites."""
    from mcpgen_runtime.client import Client
    from mcpgen_runtime.client.tool_specs import ToolReply
    from mcpgen_runtime.content import ToolResult
    from mcpgen_runtime.tools import ToolSpec

    unique = {}
    for tool in _corpus():
        with contextlib.suppress(ValueError, KeyError):  # the corpora's deliberately broken tools
            unique[ToolSpec.from_definition(tool).name] = tool
    client = Client("http://127.0.0.1:9/mcp", tools=unique.values())
    answered = ToolResult.model_validate({"content": [], "structuredContent": {"a": [1]}})
    items = []
    for provider in ("openai", "openai-chat", "anthropic", "gemini"):
        specs = client.tool_specs(provider)
        assert len(specs) > 50
        for reply in (
            ToolReply(provider, "some_tool", "call_1", '{"a":[1]}', False, answered),
            ToolReply(provider, "some_tool", "call_1", "no such city", True),
        ):
            items.append(
                {"provider": provider, "name": provider, "tools": specs.tools, "reply": reply.message()}
            )
    misspelled = client.tool_specs("anthropic", tools=["get_weather"])
    items.append(
        {
            "provider": "anthropic",
            "name": "!misspelled",
            "tools": [{**misspelled.tools[0], "inputSchema": {}}],
            "reply": {"type": "tool_result", "tool_use_id": "x", "content": "y"},
        }
    )
    assert [failure["name"] for failure in _check(items)] == ["!misspelled"]
