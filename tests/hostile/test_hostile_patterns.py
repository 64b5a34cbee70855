"""Issue 31, items 9 and 10: a schema's own `pattern` cannot hang a server or a client, and a tool
that disappears cannot keep CI green.

A generated server (a real `python -m PKG --http` subprocess) lists tools whose patterns backtrack
catastrophically: `^(a+)+$` (regular: RE2, linear time) and `^(a|aa)+(?<=a)$` (a lookbehind: the
`regex` package within the time budget, 0.1 s by default). Before the fix Python's `re` took 4.6 s
for 27 characters of the first and doubled per character, so a 100-character argument never
returned and every other caller waited. Each test asserts the answer, its time, and the server's
or the process's memory. A generated client checks the same patterns in its arguments and in the
structured output a lying server sends.

MCPGEN-EXCLUDED: `mcpgen validate --strict` exits 1 when a tool would be excluded (a Python-only
pattern), and client, server and generate end with the count of excluded tools.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest

from mcpgen_runtime.errors import ToolArgumentsError, ToolOutputError
from mcpgen_runtime.patterns import pattern_match
from tests.runtime.server_helpers import call, mcp_headers
from tests.support import PYTHON, free_port, run_mcpgen, running_server, subprocess_env

LINEAR = "^(a+)+$"  # nested quantifiers, regular: RE2
BACKTRACKING = "^(a|aa)+(?<=a)$"  # overlapping alternatives and a lookbehind: regex with the budget
BUDGET_S = pattern_match.DEFAULT_TIME_BUDGET_S
# Answered within: the budget twice (fast path and jsonschema), plus a loaded 2-core machine's margin.
BOUND_S = 1.5


def _string_tool(name: str, pattern: str, output: bool = False) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": pattern}},
        "required": ["s"],
    }
    tool: dict[str, Any] = {"name": name, "inputSchema": schema}
    if output:
        tool["outputSchema"] = {"type": "object", "properties": {"t": {"type": "string", "pattern": pattern}}}
    return tool


KEYS = {
    "name": "keys",
    "inputSchema": {
        "type": "object",
        "patternProperties": {BACKTRACKING: {"type": "integer"}},
        "propertyNames": {"pattern": LINEAR},
        "additionalProperties": False,
    },
}
ECHO = {
    "name": "echo",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}
# The server's listing; the client is generated from the same tools, except that `lies` declares an
# output pattern the server's definition does not have (so the server sends what it likes).
SERVER_SPEC = {
    "tools": [
        _string_tool("linear", LINEAR),
        _string_tool("budget", BACKTRACKING),
        KEYS,
        ECHO,
        {"name": "lies", "inputSchema": {"type": "object"}},
    ]
}
CLIENT_SPEC = {
    "tools": [
        *SERVER_SPEC["tools"][:4],
        {
            "name": "lies",
            "inputSchema": {"type": "object"},
            "outputSchema": _string_tool("x", BACKTRACKING, True)["outputSchema"],
        },
    ]
}
HANDLERS = """
from __future__ import annotations

from mcpgen_runtime.content import ToolResult
from mcpgen_runtime.server import ToolContext, ToolReturn

from . import models as _m
from .base import ServerBase


class Server(ServerBase):
    async def linear(self, args: _m.LinearInput, ctx: ToolContext) -> ToolReturn:
        return "ok"

    async def budget(self, args: _m.BudgetInput, ctx: ToolContext) -> ToolReturn:
        return "ok"

    async def keys(self, args: _m.KeysInput, ctx: ToolContext) -> ToolReturn:
        return "ok"

    async def echo(self, args: _m.EchoInput, ctx: ToolContext) -> ToolReturn:
        return args.text

    async def lies(self, args: _m.LiesInput, ctx: ToolContext) -> ToolReturn:
        return ToolResult(content=[], structuredContent={"t": "a" * 60 + "!"})
"""


def _mcpgen(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_mcpgen(cwd, *args)


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("patterns")
    (root / "server.json").write_text(json.dumps(SERVER_SPEC))
    (root / "client.json").write_text(json.dumps(CLIENT_SPEC))
    done = _mcpgen("server", "server.json", "-o", "out", "--package", "patterns_server", cwd=root)
    assert done.returncode == 0, done.stderr
    (root / "out" / "patterns_server" / "handlers.py").write_text(HANDLERS)
    done = _mcpgen("client", "client.json", "-o", "out", "--package", "patterns_client", cwd=root)
    assert done.returncode == 0, done.stderr
    return root


class Server(NamedTuple):
    url: str
    pid: int


@pytest.fixture(scope="module")
def server(packages: Path) -> Iterator[Server]:
    env = subprocess_env()
    env["PYTHONPATH"] = os.pathsep.join([str(packages / "out"), env["PYTHONPATH"]])
    port = free_port()
    with running_server(
        [PYTHON, "-m", "patterns_server", "--http", "--port", str(port)], port, env=env
    ) as proc:
        yield Server(f"http://127.0.0.1:{port}/mcp", proc.pid)


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def _call(
    http: httpx.Client, url: str, id_: int, name: str, arguments: dict[str, Any]
) -> tuple[dict[str, Any], float]:
    message = call(id_, name, arguments)
    started = time.monotonic()
    response = http.post(url, json=message, headers=mcp_headers(message), timeout=30)
    return response.json(), time.monotonic() - started


def _refusal(reply: dict[str, Any]) -> str:
    """The text of a refused call: a tool error result (how the server answers invalid arguments)."""
    assert reply["result"]["isError"] is True, reply
    text: str = reply["result"]["content"][0]["text"]
    return text


@pytest.mark.parametrize("length", [30, 60, 100])
def test_catastrophic_patterns_are_answered_in_bounded_time(server: Server, length: int) -> None:
    hostile = "a" * length + "!"
    hwm_before = _status_kib(server.pid, "VmHWM")
    with httpx.Client() as http:
        reply, took = _call(http, server.url, 1, "linear", {"s": hostile})
        assert took < BOUND_S, took  # RE2: microseconds; `re` before: 2**(length-27) * 4.6 s
        assert "does not match" in _refusal(reply) and "at /s" in _refusal(reply)
        reply, took = _call(http, server.url, 2, "budget", {"s": hostile})
        assert took < BOUND_S, took
        text = _refusal(reply)
        assert "'budget'" in text and "at /s" in text and "time budget" in text, text
        reply, took = _call(http, server.url, 3, "keys", {hostile: 1})
        assert took < BOUND_S, took
        assert "time budget" in _refusal(reply) or "does not match" in _refusal(reply)
        # an ordinary argument still passes both engines
        reply, _ = _call(http, server.url, 4, "budget", {"s": "a" * length})
        assert reply["result"].get("isError") is not True, reply
    assert _status_kib(server.pid, "VmHWM") - hwm_before < 30 * 1024  # KiB: no growth with the input


def test_another_client_is_not_delayed_by_hostile_calls(server: Server) -> None:
    """One client sends 20 hostile calls back to back; another client's calls, meanwhile, are
    answered as fast as ever: no call waits longer than a budget or two of the event loop."""
    stop = threading.Event()
    hostile_times: list[float] = []

    def attacker() -> None:
        with httpx.Client() as http:
            for i in range(20):
                if stop.is_set():
                    break
                name = "budget" if i % 2 else "linear"
                _, took = _call(http, server.url, 100 + i, name, {"s": "a" * 80 + "!"})
                hostile_times.append(took)

    thread = threading.Thread(target=attacker)
    latencies: list[float] = []
    thread.start()
    try:
        with httpx.Client() as http:
            for i in range(20):
                reply, took = _call(http, server.url, 200 + i, "echo", {"text": f"hi {i}"})
                assert reply["result"]["content"][0]["text"] == f"hi {i}"
                latencies.append(took)
                time.sleep(0.02)
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not thread.is_alive()
    assert max(hostile_times) < BOUND_S, hostile_times
    # A call may wait for one hostile check in progress (at most the budget twice), never longer.
    assert max(latencies) < 2 * BUDGET_S + 0.8, latencies
    assert sorted(latencies)[len(latencies) // 2] < 0.25, latencies


def test_a_generated_client_checks_hostile_patterns_in_bounded_time(packages: Path, server: Server) -> None:
    """The generated client checks arguments before sending and the structured output a lying
    server sends, with the same bounded engines; tracemalloc bounds what the checks allocate."""
    sys.path.insert(0, str(packages / "out"))
    try:
        module = importlib.import_module("patterns_client")
    finally:
        sys.path.remove(str(packages / "out"))

    async def scenario() -> list[float]:
        took: list[float] = []
        async with module.AsyncClient(server.url) as client:
            await client.linear("aaa")  # compiles the schemas (jsonschema's first import): not timed
            for name in ("linear", "budget"):
                started = time.monotonic()
                with pytest.raises(ToolArgumentsError) as refused:
                    await getattr(client, name)("a" * 100 + "!")
                took.append(time.monotonic() - started)
                assert refused.value.pointer == "/s"
            started = time.monotonic()
            with pytest.raises(ToolOutputError) as lied:
                await client.lies()
            took.append(time.monotonic() - started)
            assert lied.value.pointer == "/t" and "time budget" in str(lied.value), lied.value
        return took

    took = asyncio.run(scenario())
    assert max(took) < BOUND_S, took
    tracemalloc.start()  # again, for what the checks allocate
    try:
        asyncio.run(scenario())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 30 * 1024 * 1024, peak


def test_the_time_budget_is_configurable_and_checked() -> None:
    from mcpgen_runtime.schema import compile_schema

    validate = compile_schema({"type": "string", "pattern": BACKTRACKING})
    try:
        pattern_match.set_time_budget(0.02)
        started = time.monotonic()
        issue = validate("a" * 60 + "!")
        assert time.monotonic() - started < 0.02 * 2 + 0.5
        assert issue is not None and "0.02 s" in issue.message
        for bad in (0, -1, float("nan"), float("inf"), True, "1"):
            with pytest.raises(ValueError, match="time budget"):
                pattern_match.set_time_budget(bad)  # type: ignore[arg-type]
    finally:
        pattern_match.set_time_budget(pattern_match.DEFAULT_TIME_BUDGET_S)


# ---- MCPGEN-EXCLUDED ---------------------------------------------------------------------------

EXCLUDING_SPEC = {
    "tools": [
        ECHO,
        _string_tool("python_only", "(?P<name>a)"),  # Python's named group: invalid ECMA-262
    ]
}


def test_strict_makes_an_excluded_tool_an_error(tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text(json.dumps(EXCLUDING_SPEC))
    lenient = _mcpgen("validate", "spec.json", cwd=tmp_path)
    assert lenient.returncode == 0, lenient.stderr
    assert lenient.stdout.splitlines()[-1].endswith("1 tool(s) usable, 1 excluded, 1 warning(s)")
    strict = _mcpgen("validate", "--strict", "spec.json", cwd=tmp_path)
    assert strict.returncode == 1, strict.stdout
    assert "error: tool 'python_only'" in strict.stdout and "MCPGEN-EXCLUDED" in strict.stdout
    for command in ("client", "server"):
        refused = _mcpgen(command, "--strict", "spec.json", "-o", f"strict_{command}", cwd=tmp_path)
        assert refused.returncode == 1, refused.stdout
        assert not (tmp_path / f"strict_{command}").exists()


def test_every_generator_command_ends_with_the_excluded_count(tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text(json.dumps(EXCLUDING_SPEC))
    for command in ("client", "server"):
        done = _mcpgen(command, "spec.json", "-o", f"out_{command}", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1].startswith("spec.json: 1 tool(s) generated, 1 excluded"), (
            done.stdout
        )
        assert "MCPGEN-REGEX" in done.stderr
    (tmp_path / "pyproject.toml").write_text(
        '[[tool.mcpgen.targets]]\nsource = "spec.json"\nkind = "client"\n'
        'output = "gen"\npackage = "spec_client"\n'
    )
    for args in (["generate"], ["generate", "--check"]):  # built, then fresh (not rebuilt)
        done = _mcpgen(*args, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.splitlines()[-1].startswith("1 tool(s) generated, 1 excluded"), done.stdout
    with (tmp_path / "pyproject.toml").open("a") as fh:
        fh.write("strict = true\n")
    done = _mcpgen("generate", cwd=tmp_path)
    assert done.returncode == 1 and "MCPGEN-EXCLUDED" in done.stderr, done.stdout + done.stderr
