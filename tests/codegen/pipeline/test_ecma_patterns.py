"""ECMA-262 patterns end to end (issue 20): `mcpgen client` on a spec file whose schemas use named
groups, `\\p{…}`, lookbehind, backreferences, ASCII `\\d`/`\\w`/`\\b`, Unicode `\\s`, `$`, `.`,
astral characters and `[^]` keeps every tool; the generated client refuses, with
`ToolArgumentsError` naming the pointer, exactly the sample strings Node's `RegExp` (`u` flag) does
not match, and sends the others to a generated server on loopback, which accepts them. An invalid
pattern still excludes its tool (MCPGEN-REGEX); a valid one without a faithful translation keeps
its tool with a warning (MCPGEN-REGEX-UNENFORCED).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner

from codegen.cli import main
from codegen.load.document import load_file
from codegen.pipeline import build_server
from codegen.spec import ValidatedSpec, canonical_digest
from codegen.validate.checks import validate
from mcpgen_runtime.errors import ToolArgumentsError
from tests.runtime._client_helpers import LiveServer
from tests.runtime.ecma_reference import Case, Verdict, corpus, reference

# One property per construct; every pattern is also in tests/runtime/ecma_patterns.json (its samples).
CONSTRUCTS = [
    r"^(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})$",
    r"(?<a>x)\k<a>",
    r"^\p{L}+$",
    r"^\p{Lu}",
    r"\P{L}",
    r"^\p{sc=Grek}+$",
    r"^[\p{L}\p{N}]+$",
    r"(?<=a+)b",
    r"(?<!\$)\d+",
    r"(\d+)-\1",
    r"^\d+$",
    r"^\w+$",
    r"\bfoo\b",
    r"^\s$",
    r"^abc$",
    r"a.c",
    r"^🐲+$",
    r"^\u{1F432}$",
    r"^[^]$",
]
UNENFORCED = r"(?:(a)|b)+\1"
INVALID = r"(?P<year>\d{4})"


def _tools() -> list[dict[str, Any]]:
    return [
        {
            "name": "check",
            "inputSchema": {
                "type": "object",
                "properties": {f"p{i}": {"type": "string", "pattern": p} for i, p in enumerate(CONSTRUCTS)},
            },
        },
        {
            "name": "tagged",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "tags": {
                        "type": "object",
                        "patternProperties": {r"^\p{Lu}\w*$": {"type": "integer"}},
                        "additionalProperties": False,
                    }
                },
            },
        },
        {
            "name": "stamp",
            "inputSchema": {
                "type": "object",
                "properties": {"year": {"type": "string"}},
                "required": ["year"],
            },
            "outputSchema": {
                "type": "object",
                "properties": {"year": {"type": "string", "pattern": r"^(?<y>\d{4})$"}},
                "required": ["year"],
            },
        },
        {
            "name": "loose",
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "pattern": UNENFORCED}}},
        },
        {
            "name": "broken",
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "pattern": INVALID}}},
        },
    ]


def _verdict(pattern: str) -> tuple[Case, Verdict]:
    _, verdicts = reference()
    for case in corpus():
        if case.pattern == pattern and case.source == "own":
            return case, verdicts[case]
    raise AssertionError(f"{pattern!r} is not in the corpus")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, ModuleType, Path]]:
    root = tmp_path_factory.mktemp("ecma")
    spec = root / "ecma.json"
    spec.write_text(json.dumps({"tools": _tools()}), encoding="utf-8")
    result = CliRunner().invoke(
        main,
        ["client", os.fspath(spec), "-o", os.fspath(root), "--package", "ecma_client"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    validated = validate(load_file(spec))
    server_spec = ValidatedSpec(
        source="ecma.json", tools=validated.tools, digest=canonical_digest(validated.tools)
    )
    server = build_server(server_spec, package="ecma_server")
    target = root / server.package
    for name, data in {**server.files, **server.user_files}.items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes(data)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("ecma_client"), importlib.import_module("ecma_server.handlers"), spec
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n.startswith(("ecma_client", "ecma_server"))]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def live(generated: tuple[ModuleType, ModuleType, Path]) -> Iterator[LiveServer]:
    handlers = generated[1]

    class Impl(handlers.Server):  # type: ignore[misc, name-defined]
        async def check(self, args: Any, ctx: Any) -> str:
            return "ok"

        async def tagged(self, args: Any, ctx: Any) -> str:
            return "ok"

        async def loose(self, args: Any, ctx: Any) -> str:
            return "ok"

        async def stamp(self, args: Any, ctx: Any) -> dict[str, str]:
            return {"year": args.year}

    with LiveServer(Impl()) as server:
        yield server


def test_valid_patterns_keep_their_tools(generated: tuple[ModuleType, ModuleType, Path]) -> None:
    client, _, spec = generated
    validated = validate(load_file(spec))
    assert [t["name"] for t in validated.tools] == ["check", "tagged", "stamp", "loose"]
    rules = sorted((w.rule, w.pointer) for w in validated.warnings)
    assert rules == [
        ("MCPGEN-REGEX", "/tools/4/inputSchema/properties/q/pattern"),
        ("MCPGEN-REGEX-UNENFORCED", "/tools/3/inputSchema/properties/q/pattern"),
    ]
    assert all(hasattr(client.Client, name) for name in ("check", "tagged", "stamp", "loose"))
    assert not hasattr(client.Client, "broken")


@pytest.mark.parametrize("index", range(len(CONSTRUCTS)), ids=[f"p{i}" for i in range(len(CONSTRUCTS))])
def test_the_client_enforces_each_pattern_as_node_does(
    generated: tuple[ModuleType, ModuleType, Path], live: LiveServer, index: int
) -> None:
    client_package = generated[0]
    case, verdict = _verdict(CONSTRUCTS[index])
    assert verdict.valid
    refused: list[str] = []
    with client_package.Client(live.url) as client, live.recording():
        for sample, matches in zip(case.samples, verdict.matches, strict=True):
            if matches:
                client.check(**{f"p{index}": sample})
            else:
                with pytest.raises(ToolArgumentsError) as info:
                    client.check(**{f"p{index}": sample})
                assert info.value.pointer == f"/p{index}" and info.value.tool == "check"
                refused.append(sample)
        sent = [r.body["params"]["arguments"] for r in live.requests if r.method == "tools/call"]
    assert sent == [{f"p{index}": s} for s, m in zip(case.samples, verdict.matches, strict=True) if m]
    assert refused and sent  # each construct has samples on both sides


def test_the_server_refuses_what_node_does_not_match(
    generated: tuple[ModuleType, ModuleType, Path], live: LiveServer
) -> None:
    with generated[0].Client(live.url) as client:
        for index, pattern in enumerate(CONSTRUCTS):
            case, verdict = _verdict(pattern)
            bad = next(s for s, m in zip(case.samples, verdict.matches, strict=True) if not m)
            good = next(s for s, m in zip(case.samples, verdict.matches, strict=True) if m)
            assert not client.call_tool("check", {f"p{index}": good}).is_error
            result = client.call_tool("check", {f"p{index}": bad})
            assert result.is_error and f"/p{index}" in result.text, (pattern, bad, result.text)


def test_pattern_properties_and_unenforced_patterns(
    generated: tuple[ModuleType, ModuleType, Path], live: LiveServer
) -> None:
    with generated[0].Client(live.url) as client:
        client.tagged(tags={"Éclair": 1, "Ωmega": 2})  # \p{Lu} then ASCII \w*: both keys match
        with pytest.raises(ToolArgumentsError) as info:
            client.tagged(
                tags={"Éclairé": 1}
            )  # é is not in ECMA's \w: no pattern matches, and none other is allowed
        assert info.value.pointer == "/tags"
        with pytest.raises(ToolArgumentsError) as info:
            client.tagged(tags={"Tag": "one"})
        assert info.value.pointer == "/tags/Tag"
        client.loose(q="anything")  # not enforced on either side (warned at generation)
        assert not client.call_tool("loose", {"q": "zzz"}).is_error


def test_the_server_checks_its_output_pattern_as_ecma(
    generated: tuple[ModuleType, ModuleType, Path], live: LiveServer
) -> None:
    """The output check is the same translation: Python's `\\d` would accept Arabic-Indic digits."""
    with generated[0].Client(live.url) as client:
        assert client.stamp("2024").year == "2024"
        result = client.call_tool("stamp", {"year": "\u0662\u0660\u0662\u0664"})
        assert result.is_error and "invalid output" in result.text
