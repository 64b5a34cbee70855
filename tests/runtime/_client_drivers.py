"""Test helpers for the client runtime: one scenario, both drivers; scripted peers for wire details.

`Driver` runs a client method the same way for `Client` and `AsyncClient` (an async one runs
on a long-lived `asyncio.Runner`, so one client can serve many tests). `ScriptedHttpServer`
is a real HTTP/1.1 server on a thread whose replies a test scripts byte for byte — for wire
conditions no real peer produces on demand (a -32022 on the first POST, SSE split across
chunks, broken tool definitions). `STDIO_SCRIPT` is the stdio counterpart, run as a process.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mcpgen_runtime.client import AsyncClient, Client
from tests.support import free_port

MODES = ("sync", "async")


class Driver:
    """`drv("call_tool", "x", {...})` calls the client method and waits for it if it is async."""

    def __init__(self, client: Client | AsyncClient, runner: asyncio.Runner | None = None) -> None:
        self.client = client
        self.runner = runner

    @property
    def is_async(self) -> bool:
        return self.runner is not None

    def __call__(self, method: str, *args: Any, **kwargs: Any) -> Any:
        result = getattr(self.client, method)(*args, **kwargs)
        return self.runner.run(result) if self.runner is not None else result

    def run(self, make: Callable[[Any], Any]) -> Any:
        """Run `make(client)`: a value for sync clients, a coroutine for async ones."""
        result = make(self.client)
        return self.runner.run(result) if self.runner is not None else result

    def close(self) -> None:
        if isinstance(self.client, AsyncClient):
            assert self.runner is not None
            self.runner.run(self.client.aclose())
        else:
            self.client.close()


@contextlib.contextmanager
def driver(
    mode: str,
    make_sync: Callable[[], Client],
    make_async: Callable[[], AsyncClient],
    runner: asyncio.Runner | None = None,
) -> Iterator[Driver]:
    """A Driver for `mode`; async drivers get their own Runner unless one is given."""
    if mode == "sync":
        drv = Driver(make_sync())
        try:
            yield drv
        finally:
            drv.close()
        return
    own = runner is None
    loop_runner = asyncio.Runner() if runner is None else runner
    try:
        drv = Driver(make_async(), loop_runner)
        try:
            yield drv
        finally:
            drv.close()
    finally:
        if own:
            loop_runner.close()


# -- scripted HTTP peer -------------------------------------------------------------------


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names; repeated names joined with ", "
    raw_headers: list[tuple[str, str]]
    body: Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON; bytes -> as is
    content_type: str = "application/json"
    chunks: list[bytes] | None = None  # chunked transfer, one write (and flush) per chunk
    chunk_delay: float = 0.0
    delay: float = 0.0


def result(request: dict[str, Any], value: dict[str, Any]) -> Reply:
    return Reply(body={"jsonrpc": "2.0", "id": request.get("id"), "result": value})


def error(
    request: dict[str, Any] | None, code: int, message: str, data: Any = None, status: int = 400
) -> Reply:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return Reply(
        status=status,
        body={"jsonrpc": "2.0", "id": None if request is None else request.get("id"), "error": err},
    )


@dataclass
class ScriptedHttpServer:
    """`app(recorded) -> Reply`; every request is recorded in `requests`."""

    app: Callable[[Recorded], Reply]
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw
                raw_headers = list(self.headers.items())
                headers: dict[str, str] = {}
                for name, value in raw_headers:
                    key = name.lower()
                    headers[key] = f"{headers[key]}, {value}" if key in headers else value
                recorded = Recorded("POST", self.path, headers, raw_headers, body)
                outer.requests.append(recorded)
                reply = outer.app(recorded)
                if reply.delay:
                    time.sleep(reply.delay)
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                if reply.chunks is not None:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    try:
                        for chunk in reply.chunks:
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                            self.wfile.flush()
                            if reply.chunk_delay:
                                time.sleep(reply.chunk_delay)
                        self.wfile.write(b"0\r\n\r\n")
                    except OSError:
                        self.close_connection = True
                    return
                payload = (
                    reply.body
                    if isinstance(reply.body, bytes)
                    else (b"" if reply.body is None else json.dumps(reply.body).encode())
                )
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                with contextlib.suppress(OSError):
                    self.wfile.write(payload)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.01,), daemon=True)

    def __enter__(self) -> ScriptedHttpServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def bodies(self, method: str | None = None) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if method is None or r.body.get("method") == method]


# -- scripted stdio peer ------------------------------------------------------------------

# argv: MODE RECORD_PATH. Records every stdin line to RECORD_PATH, then per MODE:
#   silent   never answers tools/call; answers anything else with an empty complete result
#   die      writes to stderr and exits 3 on the first request
#   garbage  answers the first request with 1000 non-JSON lines (past the client's limit of skipped lines)
STDIO_SCRIPT = r"""
import json, sys
mode, record = sys.argv[1], sys.argv[2]
with open(record, "a") as log:
    for line in sys.stdin:
        log.write(line); log.flush()
        msg = json.loads(line)
        if "id" not in msg:
            continue
        if mode == "die":
            sys.stderr.write("fatal: the scripted peer gives up\n"); sys.stderr.flush()
            sys.exit(3)
        if mode == "garbage":
            sys.stdout.write("this is not json\n" * 1000); sys.stdout.flush()
            continue
        if mode == "silent" and msg["method"] == "tools/call":
            continue
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": {"resultType": "complete",
                 "content": [{"type": "text", "text": msg["method"]}]}}
        sys.stdout.write(json.dumps(reply) + "\n"); sys.stdout.flush()
"""
