"""A mock for one test: `running_mock(...)` starts it and yields a `RunningMock`.

Three ways to run it, all on 127.0.0.1 and all stopped when the `with` block ends:

- `transport="http"` (default): in this process, uvicorn in a thread on a free port — the
  test reads `server.calls` directly;
- `transport="http", in_process=False`: `python -m mcpgen_runtime.mock --http` as a subprocess;
- `transport="stdio"`: nothing is started here; `command` is the argv a stdio client launches.

Out of process, calls are read from the JSON-lines record the mock writes (`--record`).

`cassette=` serves a cassette (replay.py) instead of made-up answers: its misses are in `misses`
(in process); `faults=` (a `Faults`, or a mapping of the command-line options: `latency`,
`error_rate`, `drop_connection`, `slow_stream`) injects faults (faults.py) with `seed`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

from .. import _json
from ..server.http.app import McpAsgiApp
from ..tools import load_package_tools, tool_table
from .cassette import load_cassette
from .command import load_spec_file, make_faults
from .faults import FaultInjector, Faults, FaultyApp
from .replay import Replayer, replay_app
from .responses import ToolResponses, parse_responses
from .server import MockCall, MockServer, read_record
from .surfaces import load_spec_surfaces, serve_surfaces

__all__ = ["RunningMock", "running_mock"]

STARTUP_TIMEOUT_S: Final = 30.0
Transport = Literal["http", "stdio"]


class RunningMock:
    """A started mock: where to reach it (`url` or `command`), what was called, and assertions."""

    def __init__(
        self,
        tools: list[dict[str, Any]],
        *,
        url: str | None = None,
        command: list[str] | None = None,
        server: MockServer | None = None,
        record: Path | None = None,
        replayer: Replayer | None = None,
        injector: FaultInjector | None = None,
    ) -> None:
        self.tools = tools  # the served definitions, as listed
        self.url = url  # Streamable HTTP endpoint; None on stdio
        self.command = command  # stdio: the argv that starts the mock; None on HTTP
        self.server = server  # the MockServer when it runs in this process
        self.record = record  # out of process: the JSON-lines file the mock appends calls to
        self.replayer = replayer  # the cassette's Replayer when one is replayed in this process
        self.injector = injector  # in process: the faults injected (`injector.injected` counts them)
        self._skip = 0  # calls before the last reset() of an out-of-process mock

    @property
    def misses(self) -> list[str]:
        """Replaying in this process: every request the cassette had no answer for, described."""
        return list(self.replayer.misses) if self.replayer is not None else []

    @property
    def calls(self) -> list[MockCall]:
        """Every call the mock answered, in order (one per call, whatever its input rounds)."""
        if self.server is not None:
            return list(self.server.calls)
        if self.record is None:
            return []  # a replayed cassette: its calls are the recorded ones
        return read_record(self.record)[self._skip :]

    def reset(self) -> None:
        """Forget the calls so far."""
        if self.server is not None:
            self.server.reset_calls()
        elif self.record is not None:
            self._skip += len(self.calls)

    def calls_to(self, tool: str) -> list[dict[str, Any]]:
        """The arguments of every call of `tool`, in order."""
        return [call.arguments for call in self.calls if call.tool == tool]

    def assert_called(
        self, tool: str, arguments: Mapping[str, Any] | None = None, /, **subset: Any
    ) -> MockCall:
        """Some call of `tool` had these arguments among its own (a dict, or keywords); returns the first."""
        wanted = {**(arguments or {}), **subset}
        for call in self.calls:
            if call.tool == tool and all(
                k in call.arguments and call.arguments[k] == v for k, v in wanted.items()
            ):
                return call
        raise AssertionError(f"no call of {tool!r} with {wanted!r}; calls were:\n{self._listing()}")

    def assert_not_called(self, tool: str) -> None:
        if any(call.tool == tool for call in self.calls):
            raise AssertionError(f"{tool!r} was called; calls were:\n{self._listing()}")

    def assert_calls(self, expected: Sequence[tuple[str, Mapping[str, Any]] | str]) -> None:
        """The calls were exactly these, in order: `(tool, arguments)` pairs, or tool names alone."""
        actual = self.calls

        def same(call: MockCall, want: tuple[str, Mapping[str, Any]] | str) -> bool:
            return (
                call.tool == want
                if isinstance(want, str)
                else (call.tool, call.arguments) == (want[0], dict(want[1]))
            )

        if len(actual) != len(expected) or not all(
            same(c, w) for c, w in zip(actual, expected, strict=False)
        ):
            wanted = "\n".join(f"  {w!r}" for w in expected) or "  (none)"
            raise AssertionError(f"expected calls:\n{wanted}\nactual calls:\n{self._listing()}")

    def _listing(self) -> str:
        return (
            "\n".join(f"  {call.tool} {_json.dumps(call.arguments).decode()}" for call in self.calls)
            or "  (none)"
        )


def _definitions(
    tools: Sequence[Mapping[str, Any]] | None,
    spec: str | Path | None,
    package: str | None,
    cassette: str | Path | None = None,
) -> list[dict[str, Any]]:
    given = [x is not None for x in (tools, spec, package)]
    if cassette is not None:
        if spec is not None:
            raise ValueError("cassette= serves the recorded answers: give no spec=")
        if tools is None and package is None:
            return _cassette_tools(cassette)
    elif sum(given) != 1:
        raise ValueError("give exactly one of tools=, spec= (a spec file) or package= (a generated package)")
    if tools is not None:
        return [dict(tool) for tool in tools]
    if spec is not None:
        return load_spec_file(spec)
    assert package is not None
    return load_package_tools(package)


def _surfaces(spec: str | Path | None, package: str | None) -> dict[str, list[dict[str, Any]]]:
    """The resources, templates and prompts the mock serves beside the tools, as `mcpgen mock SPEC`
    does: a spec file's arrays, or a generated server package's surfaces.json (a client package
    ships none)."""
    if spec is not None:
        return load_spec_surfaces(spec)
    if package is not None:
        from importlib import resources

        found = resources.files(package).joinpath("surfaces.json")
        if found.is_file():
            with resources.as_file(found) as path:
                return load_spec_surfaces(path)
    return {"resources": [], "resourceTemplates": [], "prompts": []}


def _cassette_tools(cassette: str | Path) -> list[dict[str, Any]]:
    """The tools the cassette's first `tools/list` answers listed (every page of that listing)."""
    tools: list[dict[str, Any]] = []
    for entry in load_cassette(cassette).exchanges:
        result = entry["response"].get("result")
        if entry["request"].get("method") == "tools/list" and isinstance(result, Mapping):
            listed = result.get("tools")
            tools += (
                [dict(tool) for tool in listed if isinstance(tool, Mapping)]
                if isinstance(listed, list)
                else []
            )
            if not result.get("nextCursor"):
                break
    return tools


def _faults(seed: int, faults: Faults | Mapping[str, Any] | None) -> Faults | None:
    if faults is None or isinstance(faults, Faults):
        return faults
    unknown = set(faults) - {"latency", "error_rate", "drop_connection", "slow_stream"}
    if unknown:
        raise ValueError(f"faults: unknown option(s) {', '.join(sorted(unknown))}")
    options = {key: (None if value is None else str(value)) for key, value in faults.items()}
    return make_faults(seed, **options)


def _fault_args(faults: Faults | None) -> list[str]:
    if faults is None or not faults.active:
        return []
    args = ["--seed", str(faults.seed)]
    if faults.latency_ms:
        args += ["--latency", f"{faults.latency_ms[0]!r}-{faults.latency_ms[1]!r}ms"]
    if faults.error_rate:
        args += ["--error-rate", repr(faults.error_rate)]
    if faults.drop_rate:
        args += ["--drop-connection", repr(faults.drop_rate)]
    if faults.slow_stream_ms:
        args += ["--slow-stream", f"{faults.slow_stream_ms!r}ms"]
    return args


@contextlib.contextmanager
def running_mock(
    tools: Sequence[Mapping[str, Any]] | None = None,
    *,
    spec: str | Path | None = None,
    package: str | None = None,
    cassette: str | Path | None = None,
    seed: int = 0,
    responses: str | Path | Mapping[str, Any] | ToolResponses | None = None,
    transport: Transport = "http",
    in_process: bool = True,
    env: Mapping[str, str] | None = None,
    faults: Faults | Mapping[str, Any] | None = None,
) -> Iterator[RunningMock]:
    """Serve the tools (`tools`, a `spec` file, or a generated `package`'s tools.json), with the
    spec's (or a server package's) resources, templates and prompts, or a `cassette`, until the
    block ends.

    `responses`: a responses file, or its content as a mapping. `env`: added to the environment
    of an out-of-process mock. `faults`: see the module docstring.
    """
    definitions = _definitions(tools, spec, package, cassette)
    surfaces = _surfaces(spec, package) if cassette is None else _surfaces(None, None)
    injected = _faults(seed, faults)
    if transport not in ("http", "stdio"):
        raise ValueError(f"transport must be 'http' or 'stdio', not {transport!r}")
    if cassette is not None:
        if responses is not None:
            raise ValueError("cassette= serves the recorded answers: give no responses=")
        with _replaying(definitions, Path(cassette), injected, transport, in_process, env) as running:
            yield running
        return
    if transport == "http" and in_process:
        loaded = responses
        if isinstance(responses, Mapping):
            loaded = parse_responses(responses, tool_table(definitions))
        server = MockServer(definitions, seed=seed, responses=loaded)  # type: ignore[arg-type]
        serve_surfaces(
            server,
            resources=surfaces["resources"],
            resource_templates=surfaces["resourceTemplates"],
            prompts=surfaces["prompts"],
            seed=seed,
        )
        injector = FaultInjector(injected) if injected is not None and injected.active else None
        app: Any = McpAsgiApp(server) if injector is None else FaultyApp(McpAsgiApp(server), injector)
        with _serving(app) as url:
            yield RunningMock(definitions, url=url, server=server, injector=injector)
        return
    with tempfile.TemporaryDirectory(prefix="mcpgen-mock-") as folder:
        spec_file = Path(folder) / "spec.json"  # not tools.json, whose surfaces are read beside it
        spec_file.write_bytes(_json.dumps({"tools": definitions, **surfaces}))
        record = Path(folder) / "calls.jsonl"
        args = [
            sys.executable,
            "-m",
            "mcpgen_runtime.mock",
            str(spec_file),
            "--seed",
            str(seed),
            "--record",
            str(record),
            *_fault_args(injected),
        ]
        if isinstance(responses, ToolResponses):
            raise ValueError("an out-of-process mock takes responses as a file or a mapping")
        if isinstance(responses, Mapping):
            responses_file = Path(folder) / "responses.json"
            responses_file.write_bytes(_json.dumps(responses))
            responses = responses_file
        if responses is not None:
            args += ["--responses", str(Path(responses).resolve())]
        # Checked here, in this process, so a bad spec or responses file fails the test with its message.
        MockServer(definitions, seed=seed, responses=responses)
        if transport == "stdio":
            yield RunningMock(definitions, command=[*args, "--stdio"], record=record)
            return
        port = _free_port()
        child_env = {**os.environ, **(env or {})}
        with _child([*args, "--http", "--port", str(port)], port, child_env, Path(folder) / "stderr.log"):
            yield RunningMock(definitions, url=f"http://127.0.0.1:{port}/mcp", record=record)


@contextlib.contextmanager
def _replaying(
    definitions: list[dict[str, Any]],
    cassette: Path,
    faults: Faults | None,
    transport: Transport,
    in_process: bool,
    env: Mapping[str, str] | None,
) -> Iterator[RunningMock]:
    if transport == "http" and in_process:
        app, replayer = replay_app(cassette, faults=faults)
        injector = app.injector if isinstance(app, FaultyApp) else None
        with _serving(app) as url:
            yield RunningMock(definitions, url=url, replayer=replayer, injector=injector)
        return
    load_cassette(cassette)  # a bad cassette fails the test here, with its message
    args = [
        sys.executable,
        "-m",
        "mcpgen_runtime.mock",
        "--replay",
        str(cassette.resolve()),
        *_fault_args(faults),
    ]
    if transport == "stdio":
        yield RunningMock(definitions, command=[*args, "--stdio"])
        return
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="mcpgen-mock-") as folder:
        child_env = {**os.environ, **(env or {})}
        with _child([*args, "--http", "--port", str(port)], port, child_env, Path(folder) / "stderr.log"):
            yield RunningMock(definitions, url=f"http://127.0.0.1:{port}/mcp")


@contextlib.contextmanager
def _serving(app: Any) -> Iterator[str]:
    """`app` (ASGI) under uvicorn in a daemon thread on a free loopback port; yields the MCP endpoint URL."""
    import uvicorn

    from ..server.http.draining import uvicorn_config

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    web = uvicorn.Server(uvicorn_config(app, grace_s=2))
    thread = threading.Thread(
        target=web.run, kwargs={"sockets": [sock]}, name=f"mcpgen-mock:{port}", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not web.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError("the mock's HTTP server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        web.should_exit = True
        thread.join(10)
        sock.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _child(
    args: list[str], port: int, env: Mapping[str, str], log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as stderr:  # a file, not a pipe: nobody has to drain it while the test runs
        proc = subprocess.Popen(
            args, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr
        )
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                err = log.read_text(errors="replace")
                raise RuntimeError(f"the mock exited with {proc.returncode} before listening:\n{err[-4000:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the mock did not listen on 127.0.0.1:{port} within {STARTUP_TIMEOUT_S:g} s"
                )
            time.sleep(0.05)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
