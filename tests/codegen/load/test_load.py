"""LOAD stage: every accepted document shape, every error path, live sources via a fake client."""

from __future__ import annotations

import importlib.util
import json
import shlex
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from codegen.errors import SpecLoadError
from codegen.load import document, live
from codegen.load.document import load_file
from codegen.load.live import display_url, load_stdio, load_url
from codegen.load.source import load_source
from codegen.refs import resolve_pointer
from mcpgen_runtime.errors import ConnectError, InputRequiredError, MethodNotFoundError, ServerExitedError
from tests.support import SHARED, free_port, needs_shared

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _write(tmp_path: Path, content: str | bytes, name: str = "spec.json") -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


def _document(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- accepted shapes


@pytest.mark.parametrize(
    ("fixture", "prefix", "names"),
    [
        ("tools-list.json", "/tools", ["echo", "add"]),
        ("jsonrpc-response.json", "/result/tools", ["echo", "ping"]),
        ("bare-array.json", "", ["echo", "ping"]),
    ],
)
def test_shapes_give_real_pointers(fixture: str, prefix: str, names: list[str]) -> None:
    path = FIXTURES / fixture
    spec = load_file(path)
    assert spec.source == str(path)
    assert spec.pointer_prefix == prefix
    assert [t["name"] for t in spec.tools] == names
    document = _document(path)
    for index, tool in enumerate(spec.tools):
        # The pointer names exactly that tool inside the file that was read (RFC 6901).
        assert resolve_pointer(document, spec.tool_pointer(index)) == tool


def test_single_tool_document_is_its_own_pointer() -> None:
    path = FIXTURES / "single-tool.json"
    spec = load_file(path)
    assert spec.single_tool
    assert spec.tool_pointer(0) == ""
    assert resolve_pointer(_document(path), spec.tool_pointer(0) + "/inputSchema/properties/days") == {
        "type": "integer",
        "minimum": "one",
    }


def test_extra_result_fields_are_tolerated() -> None:
    spec = load_file(FIXTURES / "tools-list.json")  # nextCursor, ttlMs, cacheScope, resultType, _meta
    assert len(spec.tools) == 2


def test_path_objects_and_bom(tmp_path: Path) -> None:
    path = _write(tmp_path, b'\xef\xbb\xbf{"tools": []}')
    assert load_file(path).tools == []


@pytest.mark.parametrize(
    "path",
    [
        SHARED / "realworld/github-tools.json",
        SHARED / "realworld/x-mcp-header-invalid-set.json",
        SHARED / "spec/conformance-tools.json",
        Path(__file__).parents[3] / "specs/weather.json",
    ],
)
def test_realworld_files_load(path: Path) -> None:
    if path.is_relative_to(SHARED):
        needs_shared(*path.relative_to(SHARED).parts)
    spec = load_file(path)
    assert spec.pointer_prefix == "/tools"
    assert spec.tools == _document(path)["tools"]


# --------------------------------------------------------------------------- file errors


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SpecLoadError, match=r"nope\.json: file not found"):
        load_file(tmp_path / "nope.json")


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(SpecLoadError, match="is a directory"):
        load_file(tmp_path)


def test_not_utf8(tmp_path: Path) -> None:
    path = _write(tmp_path, b'{"tools": [{"name": "caf\xe9"}]}')
    with pytest.raises(
        SpecLoadError, match=r"not UTF-8 text: invalid byte b'\\xe9' at line 1 \(byte offset 24\)"
    ):
        load_file(path)


def test_invalid_json_reports_line_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path, '{\n  "tools": [\n    {"name": "a",}\n  ]\n}\n')
    with pytest.raises(SpecLoadError, match=r"invalid JSON at line 3, column 18: Expecting property name"):
        load_file(path)


def test_empty_file(tmp_path: Path) -> None:
    with pytest.raises(SpecLoadError, match=r"line 1, column 1: .*\(the file is empty\)"):
        load_file(_write(tmp_path, ""))


@pytest.mark.parametrize(
    ("literal", "line", "column"),
    [("NaN", 2, 31), ("Infinity", 2, 31), ("-Infinity", 2, 31)],  # 1e400: test_generate_odd_input.py
)
def test_non_finite_numbers_rejected(tmp_path: Path, literal: str, line: int, column: int) -> None:
    # The string "NaN Infinity" on line 1 must not be mistaken for the literal.
    text = '{"note": "NaN Infinity 1e400",\n "tools": [{"name": "a", "x": ' + literal + "}]}"
    with pytest.raises(
        SpecLoadError, match=rf"line {line}, column {column}: '{literal}' is not a finite number"
    ):
        load_file(_write(tmp_path, text))


def test_huge_integer_rejected(tmp_path: Path) -> None:
    with pytest.raises(SpecLoadError, match="invalid JSON"):
        load_file(_write(tmp_path, '{"tools": [], "n": ' + "9" * 5000 + "}"))


def test_deeply_nested_json_fails_cleanly(tmp_path: Path) -> None:
    started = time.perf_counter()
    with pytest.raises(SpecLoadError, match="nested too deeply"):
        load_file(_write(tmp_path, '{"tools": ' + "[" * 10_000 + "]" * 10_000 + "}"))
    assert time.perf_counter() - started < 2


def test_size_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(document, "MAX_FILE_BYTES", 100)
    path = _write(tmp_path, json.dumps({"tools": [], "pad": "x" * 200}))
    with pytest.raises(SpecLoadError, match="larger than"):
        load_file(path)


def test_default_size_cap_is_64_mib() -> None:
    assert document.MAX_FILE_BYTES == 64 * 1024 * 1024


@pytest.mark.parametrize(
    ("document", "found"),
    [
        ('"hello"', "found a string 'hello'"),
        ("42", "found an integer 42"),
        ("null", "found null"),
        ('{"servers": [], "version": 1}', "found an object with keys 'servers', 'version'"),
        ("{}", "found an empty object"),
        ('{"name": "pkg", "version": "1.0"}', "found an object with keys 'name', 'version'"),
    ],
)
def test_unrecognised_document(tmp_path: Path, document: str, found: str) -> None:
    with pytest.raises(SpecLoadError) as info:
        load_file(_write(tmp_path, document))
    message = str(info.value)
    assert "expected a tools/list result" in message
    assert found in message


def test_tools_member_not_an_array(tmp_path: Path) -> None:
    with pytest.raises(SpecLoadError, match=r"/tools must be an array of tool objects; found an object"):
        load_file(_write(tmp_path, '{"tools": {"name": "a"}}'))


def test_tools_that_are_not_objects(tmp_path: Path) -> None:
    with pytest.raises(SpecLoadError) as info:
        load_file(_write(tmp_path, '{"tools": [{"name": "ok"}, "echo", null, [1]]}'))
    message = str(info.value)
    assert "3 tool(s) are not JSON objects" in message
    assert "/tools/1: expected a tool object, found a string 'echo'" in message
    assert "/tools/2: expected a tool object, found null" in message
    assert "/tools/3: expected a tool object, found an array" in message


def test_bare_array_with_non_object(tmp_path: Path) -> None:
    with pytest.raises(SpecLoadError, match=r"  /0: expected a tool object, found an integer 1"):
        load_file(_write(tmp_path, "[1]"))


def test_jsonrpc_error_response(tmp_path: Path) -> None:
    text = '{"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}'
    with pytest.raises(
        SpecLoadError,
        match=r"JSON-RPC error response \(code an integer -32601, message a string "
        r"'Method not found'\)",
    ):
        load_file(_write(tmp_path, text))


def test_jsonrpc_request_is_not_a_response(tmp_path: Path) -> None:
    with pytest.raises(SpecLoadError, match="JSON-RPC request"):
        load_file(_write(tmp_path, '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'))


def test_jsonrpc_result_without_tools(tmp_path: Path) -> None:
    text = '{"jsonrpc": "2.0", "id": 1, "result": {"prompts": []}}'
    with pytest.raises(SpecLoadError, match=r"expected /result/tools, found an object with keys 'prompts'"):
        load_file(_write(tmp_path, text))


def test_jsonrpc_result_tools_not_array(tmp_path: Path) -> None:
    with pytest.raises(SpecLoadError, match=r"/result/tools must be an array"):
        load_file(_write(tmp_path, '{"jsonrpc": "2.0", "id": 1, "result": {"tools": 3}}'))


# --------------------------------------------------------------------------- live sources (fake client)


@dataclass
class FakePage:
    tools: list[Any]
    next_cursor: str | None = None

    @property
    def listed(self) -> tuple[Any, ...]:  # as ToolsPage.listed: every tool the server sent
        return tuple(self.tools)


class FakeClient:
    """Stands in for mcpgen_runtime.client.Client: discover + list_tools(cursor)."""

    def __init__(self, pages: dict[str | None, FakePage], *, fail: BaseException | None = None) -> None:
        self.pages = pages
        self.fail = fail
        self.calls: list[str] = []
        self.closed = False

    def __enter__(self) -> FakeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.closed = True

    def discover(self) -> dict[str, Any]:
        self.calls.append("server/discover")
        return {"capabilities": {"tools": {}}}

    def list_tools(self, cursor: str | None = None) -> FakePage:
        self.calls.append(f"tools/list {cursor}")
        if self.fail is not None:
            raise self.fail
        return self.pages[cursor]


BAD_HEADER_TOOL = {
    "name": "bad_header",
    "inputSchema": {"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}},
}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    state: dict[str, Any] = {
        "client": FakeClient(
            {
                None: FakePage([{"name": "a", "inputSchema": {"type": "object"}}], "c1"),
                "c1": FakePage([BAD_HEADER_TOOL], "c2"),
                "c2": FakePage([{"name": "c", "inputSchema": {"type": "object"}}]),
            }
        ),
    }

    def open_http(
        url: str,
        headers: Any,
        timeout: float,
        era: str = "auto",
        auth: Any = None,
        max_response_bytes: int | None = None,
    ) -> FakeClient:
        state["http"] = (url, headers, timeout)
        state["max_response_bytes"] = max_response_bytes
        client: FakeClient = state["client"]
        return client

    def open_stdio(argv: list[str], era: str = "auto", max_response_bytes: int | None = None) -> FakeClient:
        state["argv"] = argv
        state["max_response_bytes"] = max_response_bytes
        client: FakeClient = state["client"]
        return client

    monkeypatch.setattr(live, "_open_http", open_http)
    monkeypatch.setattr(live, "_open_stdio", open_stdio)
    yield state


def test_load_url_reads_every_page_unfiltered(fake: dict[str, Any]) -> None:
    spec = load_url(
        "https://user:secret@example.com:8443/mcp?key=abc#frag", headers={"Authorization": "x"}, timeout=5.0
    )
    assert [t["name"] for t in spec.tools] == [
        "a",
        "bad_header",
        "c",
    ]  # invalid x-mcp-header kept for validate
    assert spec.source == "https://example.com:8443/mcp"
    assert spec.pointer_prefix == "/tools"
    assert fake["client"].calls == ["server/discover", "tools/list None", "tools/list c1", "tools/list c2"]
    assert fake["client"].closed
    assert fake["http"] == (
        "https://user:secret@example.com:8443/mcp?key=abc#frag",
        {"Authorization": "x"},
        5.0,
    )


def test_load_stdio_source_name_and_argv(fake: dict[str, Any]) -> None:
    spec = load_stdio("/usr/local/bin/my-server --token 'abc def'")
    assert spec.source == "stdio:my-server"
    assert fake["argv"] == ["/usr/local/bin/my-server", "--token", "abc def"]
    assert len(spec.tools) == 3


def test_load_stdio_bad_command() -> None:
    with pytest.raises(SpecLoadError, match="command is empty"):
        load_stdio("   ")
    with pytest.raises(SpecLoadError, match="cannot split the command line"):
        load_stdio("server 'unterminated")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:pw@host.example:8443/mcp?token=abc#x", "https://host.example:8443/mcp"),
        ("HTTP://[::1]:9000/a/b", "http://[::1]:9000/a/b"),
        ("http://localhost/", "http://localhost/"),
    ],
)
def test_display_url_never_leaks_credentials(url: str, shown: str) -> None:
    assert display_url(url) == shown


def test_runtime_errors_become_spec_load_errors_without_secrets(fake: dict[str, Any]) -> None:
    url = "https://user:hunter2@example.com/mcp?api_key=topsecret"
    fake["client"].fail = ConnectError(f"cannot connect to {url}")
    with pytest.raises(SpecLoadError) as info:
        load_url(url)
    message = str(info.value)
    assert message.startswith(
        "https://example.com/mcp: tools/list page 1 failed: ConnectError: cannot connect to "
    )
    assert message.endswith("cannot connect to https://example.com/mcp")
    assert "hunter2" not in message and "topsecret" not in message
    assert isinstance(info.value.__cause__, ConnectError)


def test_discover_failure_names_the_stage(fake: dict[str, Any]) -> None:
    def refuse() -> dict[str, Any]:
        raise MethodNotFoundError(-32601, "Method not found")

    fake["client"].discover = refuse
    with pytest.raises(
        SpecLoadError,
        match=r"^http://example.com/mcp: server/discover failed: server answered "
        r"with JSON-RPC error -32601: 'Method not found'$",
    ):
        load_url("http://example.com/mcp")


def test_remote_error_text_is_repr(fake: dict[str, Any]) -> None:
    fake["client"].fail = MethodNotFoundError(-32601, "no such method\x1b[31m", http_status=404)
    with pytest.raises(
        SpecLoadError, match=r"JSON-RPC error -32601: 'no such method\\x1b\[31m' \(HTTP 404\)"
    ):
        load_url("http://example.com/mcp")


def test_server_exit_reports_stderr_tail(fake: dict[str, Any]) -> None:
    fake["client"].fail = ServerExitedError("gone", returncode=3, stderr_tail="Traceback ...\nboom\n")
    with pytest.raises(
        SpecLoadError,
        match=r"stdio:srv: tools/list page 1 failed: server process exited \(code 3\); stderr ends with "
        r"'Traceback ...\\nboom\\n'",
    ):
        load_stdio("srv")


def test_os_errors_are_translated(fake: dict[str, Any]) -> None:
    fake["client"].fail = FileNotFoundError(2, "No such file or directory")
    with pytest.raises(
        SpecLoadError, match="stdio:missing-binary: tools/list page 1 failed: FileNotFoundError"
    ):
        load_stdio("missing-binary")


def test_repeated_cursor(fake: dict[str, Any]) -> None:
    fake["client"].pages = {None: FakePage([], "same"), "same": FakePage([], "same")}
    with pytest.raises(SpecLoadError, match="repeated the tools/list cursor 'same'"):
        load_url("http://example.com/mcp")


def test_page_cap(fake: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "MAX_PAGES", 3)
    fake["client"].pages = {None: FakePage([], "1"), "1": FakePage([], "2"), "2": FakePage([], "3")}
    with pytest.raises(SpecLoadError, match="after 3 pages"):
        load_url("http://example.com/mcp")


def test_listed_tool_cap(fake: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "MAX_LISTED_TOOLS", 2)
    fake["client"].pages = {None: FakePage([{}, {}, {}])}
    with pytest.raises(SpecLoadError, match="more than 2 tools"):
        load_url("http://example.com/mcp")


def test_listed_tools_must_be_objects(fake: dict[str, Any]) -> None:
    fake["client"].pages = {None: FakePage([{"name": "a"}, "b"])}
    with pytest.raises(SpecLoadError, match=r"/tools/1: expected a tool object, found a string 'b'"):
        load_url("http://example.com/mcp")


def test_input_required_while_listing_is_a_clear_error(fake: dict[str, Any]) -> None:
    fake["client"].fail = InputRequiredError(
        "tools/list None needs input", input_requests={}, request_state="s"
    )
    with pytest.raises(
        SpecLoadError,
        match=r"^http://example.com/mcp: tools/list page 1 failed: the server asked "
        r"for user input while mcpgen was listing its tools$",
    ):
        load_url("http://example.com/mcp")


def test_live_sources_use_the_runtime_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain Client: no tool table, no response cache, the caller's headers and timeout; either era;
    every capability a generated client can answer declared, so servers list every tool."""
    import mcpgen_runtime.client

    made: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    class Recorder:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            made.append((args, kwargs))

        @classmethod
        def stdio(cls, *args: Any, **kwargs: Any) -> Recorder:
            made.append((("stdio", *args), kwargs))
            return cls.__new__(cls)

    monkeypatch.setattr(mcpgen_runtime.client, "Client", Recorder)
    live._open_http("https://example.com/mcp", {"Authorization": "x"}, 5.0)
    live._open_stdio(["server", "--flag"])
    listing = {"era": "auto", "capabilities": live.LISTING_CAPABILITIES}
    assert made == [
        (
            ("https://example.com/mcp",),
            {
                "headers": {"Authorization": "x"},
                "timeout": 5.0,
                "tools": (),
                "cache": False,
                **listing,
                "auth": None,
                "max_response_bytes": 64 << 20,
            },
        ),
        (
            ("stdio", ["server", "--flag"]),
            {
                "env": None,
                "cwd": None,
                "tools": (),
                "cache": False,
                **listing,
                "max_response_bytes": 64 << 20,
            },
        ),
    ]


def test_reading_a_file_does_not_import_the_client() -> None:
    """The runtime's client (and httpx) are imported for live sources only: `mcpgen validate FILE`
    stays fast."""
    script = (
        "import sys; from codegen.load.source import load_source; "
        f"load_source({str(FIXTURES / 'tools-list.json')!r}); "
        "print(sorted(m for m in sys.modules if m in ('httpx', 'mcpgen_runtime.client') "
        "or m.startswith('mcpgen_runtime.transport')))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_load_url_rejects_other_schemes() -> None:
    with pytest.raises(SpecLoadError, match="not an http"):
        load_url("ftp://example.com/tools")


# --------------------------------------------------------------------------- dispatch


def test_load_source_dispatch(fake: dict[str, Any], tmp_path: Path) -> None:
    assert load_source("https://example.com/mcp").source == "https://example.com/mcp"
    assert fake["http"][0] == "https://example.com/mcp"
    assert load_source(None, stdio="python -m server").source == "stdio:python -m server"
    path = _write(tmp_path, '{"tools": []}')
    assert load_source(str(path)).source == str(path)


def test_load_source_passes_the_response_limit(fake: dict[str, Any]) -> None:
    load_source("https://example.com/mcp", max_response_bytes=1000)
    assert fake["max_response_bytes"] == 1000
    load_source(None, stdio="python -m server", max_response_bytes=2000)
    assert fake["max_response_bytes"] == 2000
    load_source("https://example.com/mcp")
    assert fake["max_response_bytes"] is None  # the client's own default


def test_load_source_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(SpecLoadError, match="no source given"):
        load_source(None)
    with pytest.raises(SpecLoadError, match="not both"):
        load_source("spec.json", stdio="server")
    with pytest.raises(SpecLoadError, match="unsupported URL scheme 'ftp'"):
        load_source("ftp://user:pw@example.com/x")
    with pytest.raises(SpecLoadError, match="headers apply to URL sources only"):
        load_source(str(_write(tmp_path, '{"tools": []}')), headers={"X": "1"})
    with pytest.raises(SpecLoadError, match="headers apply to URL sources only"):
        load_source(None, stdio="server", headers={"X": "1"})


# ------------------------------------------------------------------ live sources (real runtime transports)


def _listing_stub() -> Any:
    spec = importlib.util.spec_from_file_location("listing_server", FIXTURES / "listing_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def http_stub() -> Iterator[tuple[str, list[dict[str, str]]]]:
    respond = _listing_stub().respond
    seen_headers: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen_headers.append(dict(self.headers))
            body = self.rfile.read(int(self.headers["Content-Length"]))
            reply = respond(json.loads(body))
            data = json.dumps(reply).encode() if reply is not None else b""
            self.send_response(200 if reply is not None else 202)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp", seen_headers
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_load_url_real_transport_keeps_invalid_tools(http_stub: tuple[str, list[dict[str, str]]]) -> None:
    base, seen = http_stub
    spec = load_url(base + "?token=abc#frag", headers={"Authorization": "Bearer t0k"}, timeout=5.0)
    assert [t.get("name") for t in spec.tools] == ["good", "bad_header", "no_schema"]
    assert spec.source == base
    assert spec.pointer_prefix == "/tools"
    assert [h.get("Mcp-Method") for h in seen] == ["server/discover", "tools/list", "tools/list"]
    assert all(h.get("Authorization") == "Bearer t0k" for h in seen)


def test_load_url_real_transport_warns_about_nothing(http_stub: tuple[str, list[dict[str, str]]]) -> None:
    """The client's warnings about the tools it would drop stay quiet: validation reports them."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spec = load_url(http_stub[0], timeout=5.0)
    assert len(spec.tools) == 3


def test_load_url_connection_refused_is_a_load_error() -> None:
    port = free_port()
    url = f"http://user:hunter2@127.0.0.1:{port}/mcp?key=s3cret"
    with pytest.raises(SpecLoadError) as info:
        load_url(url, timeout=2.0)
    message = str(info.value)
    assert message.startswith(f"http://127.0.0.1:{port}/mcp: ")
    assert "hunter2" not in message and "s3cret" not in message


def test_load_stdio_real_transport_keeps_invalid_tools() -> None:
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(FIXTURES / 'listing_server.py'))}"
    spec = load_stdio(command)
    assert [t.get("name") for t in spec.tools] == ["good", "bad_header", "no_schema"]
    # the script started, by its last three parts (the same in every checkout)
    assert spec.source == f"stdio:{Path(sys.executable).name} codegen/fixtures/listing_server.py"


def test_load_stdio_missing_program() -> None:
    with pytest.raises(
        SpecLoadError, match=r"stdio:no-such-mcp-server-xyz: connecting failed: ConnectError: cannot start"
    ):
        load_stdio("no-such-mcp-server-xyz --flag")


def test_load_stdio_server_that_exits() -> None:
    command = (
        f"{shlex.quote(sys.executable)} -c \"import sys; sys.stderr.write('bad config\\n'); sys.exit(3)\""
    )
    with pytest.raises(SpecLoadError) as info:
        load_stdio(command)
    assert str(info.value).startswith(f"stdio:{Path(sys.executable).name}: ")
