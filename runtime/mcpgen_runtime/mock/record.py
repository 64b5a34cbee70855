"""`mcpgen mock --record`: a proxy between a client and a real server that writes a cassette.

Downstream, the proxy serves Streamable HTTP (`RecordingApp`, any path) or stdio
(`record_stdio`); upstream it reaches the server over HTTP or stdio (upstream.py). Every
exchange is written to the cassette as it completes (cassette.py: requests in the order the
client sent them, the server's notifications and requests in the order they came, secrets
scrubbed), so a proxy stopped at any time leaves a readable file.

Over HTTP to an HTTP server the bytes pass through untouched (status, `Mcp-Session-Id`,
`WWW-Authenticate`, SSE streams, the legacy GET stream); what is recorded is read from them on
the way. Both eras pass: modern requests one by one, and legacy sessions (initialize, the session
id, `notifications/initialized`, server requests answered by the client).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from .. import _json
from ..server.http.asgi_io import Receive, Scope, Send
from .cassette import Scrubber, is_request, is_response, write_cassette
from .faults import MAX_BODY_BYTES, Faults, not_http, pipe_reader, protocol_stdout, with_faults
from .task_ids import TaskIdNames
from .upstream import (
    SSE,
    HttpUpstream,
    SseMessages,
    StdioUpstream,
    Upstream,
    UpstreamError,
    as_mapping,
    open_upstream,
)

__all__ = ["Recorder", "RecordingApp", "record_http", "record_stdio", "serve_asgi"]

_LOG = logging.getLogger("mcpgen.mock")
# Request headers left out of a cassette: what every HTTP client sends differently (hop-by-hop, sizes).
_NOT_RECORDED = frozenset(
    {"host", "content-length", "accept-encoding", "user-agent", "connection", "keep-alive", "te"}
)


class Recorder:
    """The cassette being written: interactions in the order the client sent them.

    Progress tokens are written as `progress-1`, `progress-2`, … (in the order requests name
    them), in requests and in their progress notifications alike, so the same traffic gives the
    same cassette whatever tokens a client draws; replay puts the client's own token back.
    Task ids, bearer secrets, are written as `task-1`, `task-2`, … (task_ids.py); replay hands
    the client those names."""

    def __init__(self, path: str | Path, upstream: str, scrubber: Scrubber | None = None) -> None:
        self.path = Path(path)
        self.upstream = upstream
        self.scrubber = scrubber or Scrubber()
        self.interactions: list[dict[str, Any]] = []
        self._by_id: dict[bytes, dict[str, Any]] = {}  # stdio: open requests by id
        self._tokens: dict[bytes, str] = {}  # progress tokens as the client sent them -> as written
        self.task_ids = TaskIdNames()
        self.save()

    def save(self) -> None:
        write_cassette(self.path, self.interactions, self.upstream)

    def _scrub(self, message: Any) -> Any:
        """`message` scrubbed, its progress token (in `_meta` or a progress notification) and task
        ids renamed."""
        message = self.scrubber.value(self.task_ids.rename(message))
        if not isinstance(message, dict) or not isinstance(message.get("params"), dict):
            return message
        params = message["params"]
        meta = params.get("_meta")
        if isinstance(meta, dict) and meta.get("progressToken") is not None:
            key = _json.dumps(meta["progressToken"])
            token = self._tokens.setdefault(key, f"progress-{len(self._tokens) + 1}")
            message["params"] = {**params, "_meta": {**meta, "progressToken": token}}
        elif message.get("method") == "notifications/progress" and "progressToken" in params:
            known = self._tokens.get(_json.dumps(params["progressToken"]))
            if known is not None:
                message["params"] = {**params, "progressToken": known}
        return message

    def open(
        self, request: Mapping[str, Any], headers: Sequence[tuple[str, str]] | None = None
    ) -> dict[str, Any]:
        entry: dict[str, Any] = {}
        if headers is not None:
            self.task_ids.learn(request)
            by_id = str(request.get("method", "")).startswith("tasks/")
            kept = [
                (name, self.task_ids.task_id(value) if by_id and name.lower() == "mcp-name" else value)
                for name, value in headers
                if name.lower() not in _NOT_RECORDED
            ]
            recorded = self.scrubber.header_map(kept)  # first: secrets learnt before bodies are scrubbed
            entry["request"] = self._scrub(dict(request))
            entry["headers"] = recorded
        else:
            entry["request"] = self._scrub(dict(request))
        entry["messages"] = []
        self.interactions.append(entry)
        return entry

    def attach(self, entry: dict[str, Any], message: Any) -> None:
        if is_response(message) and message.get("id") == entry["request"].get("id"):
            entry["response"] = self._scrub(message)
            self.save()
        else:
            entry["messages"].append(self._scrub(message))

    def close(self, entry: dict[str, Any], *, status: int, stream: bool, session: bool) -> None:
        messages = entry.pop("messages")
        response = entry.pop("response", None)
        if response is None and messages and is_response(messages[-1]):
            response = messages.pop()  # answered under another id (an error before the id was read)
        entry.update(status=status, stream=stream, session=session)
        entry["messages"] = messages
        if response is not None:
            entry["response"] = response
        self.save()

    def note(self, kind: str, message: Any) -> None:
        self.interactions.append({kind: self._scrub(message)})
        self.save()

    def client_message(self, message: Any) -> dict[str, Any] | None:
        """A message from a stdio client: a request opens an entry, anything else is noted."""
        if is_request(message):
            entry = self.open(message)
            self._by_id[_json.dumps(message["id"])] = entry
            return entry
        self.note("client_response" if is_response(message) else "notification", message)
        return None

    def server_message(self, message: Any) -> None:
        """A message from a stdio server: a response completes its request; anything else goes to
        the request its progress token names, else the latest request open, else stands alone."""
        if not isinstance(message, dict):
            return
        if is_response(message):
            entry = self._by_id.pop(_json.dumps(message.get("id")), None)
            if entry is not None:
                entry["response"] = self._scrub(message)
                self.save()
                return
        open_entries = list(self._by_id.values())
        scrubbed = self._scrub(message)
        token = as_mapping(scrubbed.get("params")).get("progressToken")
        for entry in open_entries:
            meta = as_mapping(as_mapping(entry["request"].get("params")).get("_meta"))
            if token is not None and meta.get("progressToken") == token:
                entry["messages"].append(scrubbed)
                return
        if open_entries:
            open_entries[-1]["messages"].append(scrubbed)
            return
        self.note("server_message", message)


class RecordingApp:
    """ASGI: every HTTP exchange passed to the upstream and recorded (see the module docstring)."""

    def __init__(self, upstream: HttpUpstream | StdioUpstream, recorder: Recorder) -> None:
        self.upstream = upstream
        self.recorder = recorder
        # Requests in flight by legacy session id: what the session's GET stream carries meanwhile
        # (a server's sampling or roots request, a log line) belongs to the latest of them.
        self._open: dict[str, list[dict[str, Any]]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if await not_http(scope, receive, send):
            return
        method = scope["method"]
        body = await _read_body(receive)
        if body is None:
            await _plain(send, 413, b"request body too large")
            return
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        message: Any = None
        if method == "POST":
            with contextlib.suppress(_json.JSONDecodeError):
                message = _json.loads(body)
        entry = None
        session_id = next((value for name, value in headers if name.lower() == "mcp-session-id"), "")
        if is_request(message):
            entry = self.recorder.open(message, headers)
            if session_id:
                self._open.setdefault(session_id, []).append(entry)
        elif isinstance(message, dict):
            self.recorder.note("client_response" if is_response(message) else "notification", message)
        try:
            reply = await self.upstream.forward(method, headers, body)
        except UpstreamError as exc:
            _LOG.warning("upstream: %s", exc)
            error = {
                "jsonrpc": "2.0",
                "id": message.get("id") if isinstance(message, dict) else None,
                "error": {"code": -32603, "message": f"mcpgen mock --record: upstream unreachable: {exc}"},
            }
            payload = _json.dumps(error)
            await send(
                {
                    "type": "http.response.start",
                    "status": 502,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": payload})
            if entry is not None:
                self.recorder.attach(entry, error)
                self.recorder.close(entry, status=502, stream=False, session=False)
            return
        stream = reply.content_type == SSE
        decoder = SseMessages() if stream else None
        collected: list[bytes] = []
        collected_bytes = 0

        def seen(item: Any) -> None:
            if entry is not None:
                self.recorder.attach(entry, item)
            elif method == "GET" and isinstance(item, dict):
                in_flight = self._open.get(session_id)
                if in_flight:
                    self.recorder.attach(in_flight[-1], item)  # replayed within that request's stream
                else:
                    self.recorder.note("server_message", item)

        async def pump() -> None:
            nonlocal collected_bytes
            out_headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in reply.headers]
            await send({"type": "http.response.start", "status": reply.status, "headers": out_headers})
            async for chunk in reply.body:
                if decoder is not None:
                    for item in decoder.feed(chunk):
                        seen(item)
                elif collected_bytes <= MAX_BODY_BYTES:  # past it: passed on, not recorded
                    collected.append(chunk)
                    collected_bytes += len(chunk)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})

        pumping = asyncio.ensure_future(pump())
        watching = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait({pumping, watching}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (pumping, watching):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pumping
            with contextlib.suppress(asyncio.CancelledError):
                await watching
            await reply.close()
        if decoder is None and collected and collected_bytes <= MAX_BODY_BYTES:
            with contextlib.suppress(_json.JSONDecodeError):
                seen(_json.loads(b"".join(collected)))
        if entry is not None:
            if session_id and entry in self._open.get(session_id, []):
                self._open[session_id].remove(entry)
                if not self._open[session_id]:
                    del self._open[session_id]
            session = any(name.lower() == "mcp-session-id" for name, _ in reply.headers)
            self.recorder.close(entry, status=reply.status, stream=stream, session=session)


async def _read_body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        event = await receive()
        if event["type"] == "http.disconnect":
            return b""
        chunk = event.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not event.get("more_body", False):
            return b"".join(chunks)


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _plain(send: Send, status: int, text: bytes) -> None:
    await send(
        {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"text/plain")]}
    )
    await send({"type": "http.response.body", "body": text})


def serve_asgi(app: Any, host: str, port: int) -> None:
    """Serve an ASGI app with uvicorn until interrupted (the proxy, a replay, a mock with faults)."""
    import uvicorn

    from ..server.http.draining import uvicorn_config

    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(uvicorn_config(app, grace_s=2, host=host, port=port)).run()


def record_http(
    upstream: Upstream,
    cassette: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    scrubber: Scrubber | None = None,
    faults: Faults | None = None,
) -> None:
    """Serve the recording proxy on http://HOST:PORT/mcp until interrupted."""
    recorder = Recorder(cassette, upstream.display(), scrubber)
    opened: list[HttpUpstream | StdioUpstream] = []
    locks: list[asyncio.Lock] = []

    class Lazy:
        """The upstream is opened in uvicorn's event loop, on the first request (once: a stdio
        server is one process for every client)."""

        async def forward(self, method: str, headers: Sequence[tuple[str, str]], body: bytes) -> Any:
            if not locks:
                locks.append(asyncio.Lock())
            async with locks[0]:
                if not opened:
                    opened.append(await open_upstream(upstream))
            return await opened[0].forward(method, headers, body)

    app: Any = RecordingApp(Lazy(), recorder)  # type: ignore[arg-type]
    app = with_faults(app, faults)
    serve_asgi(app, host, port)


def record_stdio(
    upstream: Upstream,
    cassette: str | Path,
    *,
    scrubber: Scrubber | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> None:
    """Proxy this process's stdin/stdout to the upstream until stdin closes."""
    protocol_out = stdout if stdout is not None else protocol_stdout()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_record_stdio(upstream, cassette, scrubber, stdin or sys.stdin.buffer, protocol_out))


async def _record_stdio(
    upstream: Upstream, cassette: str | Path, scrubber: Scrubber | None, stdin: BinaryIO, stdout: BinaryIO
) -> None:
    recorder = Recorder(cassette, upstream.display(), scrubber)
    reader = await pipe_reader(stdin)
    loop = asyncio.get_running_loop()
    write_lock = asyncio.Lock()

    async def write(line: bytes) -> None:
        async with write_lock:
            await loop.run_in_executor(None, stdout.write, line.rstrip(b"\r\n") + b"\n")

    server = await open_upstream(upstream)
    tasks: set[asyncio.Task[None]] = set()
    try:
        if isinstance(server, StdioUpstream):
            hidden = upstream.hidden()

            async def from_server(line: bytes, message: Any) -> None:
                recorder.server_message(message)
                await write(line if message is not None else hidden.mask_bytes(line))  # a stray print

            server.raw_listener = from_server
            while line := await reader.readline():
                if not line.strip():
                    continue
                with contextlib.suppress(_json.JSONDecodeError):
                    recorder.client_message(_json.loads(line))
                try:
                    await server.write_line(line)
                except UpstreamError as exc:
                    _LOG.warning("upstream: %s", exc)
                    break
            return

        async def unsolicited(item: Any) -> None:  # the legacy session's GET stream
            recorder.server_message(item)
            await write(_json.dumps(item))

        server.on_unsolicited = unsolicited

        async def relay(message: Any) -> None:
            try:
                async for item in server.exchange(message):
                    recorder.server_message(item)
                    await write(_json.dumps(item))
            except UpstreamError as exc:
                _LOG.warning("upstream: %s", exc)
                if is_request(message):
                    error = {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32603, "message": str(exc)},
                    }
                    recorder.server_message(error)
                    await write(_json.dumps(error))

        while line := await reader.readline():
            try:
                message = _json.loads(line)
            except _json.JSONDecodeError:
                continue
            if not isinstance(message, dict):
                continue
            recorder.client_message(message)
            if not is_request(message):  # in order: `notifications/initialized` before the next request
                await relay(message)
                continue
            task = asyncio.ensure_future(relay(message))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if tasks:
            await asyncio.wait(tasks, timeout=5)
    finally:
        for task in tasks:
            task.cancel()
        await server.aclose()
        recorder.save()
