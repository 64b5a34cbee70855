"""`mcpgen mock --replay CASSETTE`: a cassette served back, over Streamable HTTP or stdio.

A request is matched on its era, method and params without `_meta` (cassette.py `request_key`:
for `tools/call` the tool and its arguments; `initialize` on its protocol version, else any
recorded `initialize`), after the same scrubbing the recording had. The era handshake replays
too: when the recorded server is legacy (it answered `initialize`, and every modern request it
got with an error), any modern request gets that recorded refusal, so a client that probes
differently from the one recorded still finds the server legacy and falls back. The n-th request with one key
gets the n-th recorded answer with that key, and the last one from then on, so a replay is the
same every time. Tasks replay by the same rule: the recorded `CreateTaskResult` hands the client
the cassette's `task-N` id, and its `tasks/get` polls get the recorded states in order, then the
last (terminal) one again, so a client that polls more often than the recorded one still sees
every state and the end (one that polls less sees the states it skipped first: the end comes
after as many polls as were recorded). The answer is what was recorded: the server's messages
(notifications, and its requests, whose answers are accepted and not checked), then the
response, under the client's id and progress token; over HTTP with the recorded status, as SSE
when it was a stream (recorded on stdio: when the server sent messages before its response),
with a legacy session id (`replay-1`, `replay-2`, …) where one was opened.

A request the cassette does not hold is answered with JSON-RPC error -32603 whose message names
it (`no recorded answer for tools/call 'echo' with arguments {...}`) and is kept in `misses`;
with a passthrough upstream it is sent there instead (a legacy session is opened upstream with
the client's own `initialize` first) and its answer passed on, not recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO, Final

from .. import _json
from ..server.http.asgi_io import Receive, Scope, Send
from .cassette import Cassette, Scrubber, describe_request, is_request, load_cassette, request_key
from .faults import MAX_BODY_BYTES, FaultInjector, Faults, not_http, pipe_reader, protocol_stdout, with_faults
from .upstream import SSE, HttpUpstream, StdioUpstream, Upstream, UpstreamError, as_mapping, open_upstream

__all__ = ["MISS_CODE", "ReplayApp", "Replayer", "replay_http", "replay_stdio", "serve_replay_stdio"]

_LOG = logging.getLogger("mcpgen.mock")
MISS_CODE: Final = -32603


class Replayer:
    """Finds the recorded answer of a request (see the module docstring)."""

    def __init__(self, cassette: Cassette | str | Path, *, scrubber: Scrubber | None = None) -> None:
        self.cassette = cassette if isinstance(cassette, Cassette) else load_cassette(cassette)
        self.scrubber = scrubber or Scrubber()
        self._index: dict[tuple[str, str, bytes], list[dict[str, Any]]] = {}
        self._initialize: dict[str, list[dict[str, Any]]] = {}
        for entry in self.cassette.exchanges:
            key = request_key(entry["request"])
            self._index.setdefault(key, []).append(entry)
            if key[1] == "initialize":
                self._initialize.setdefault(key[0], []).append(entry)
        # A legacy server's answer to a modern request (its era, as a probe saw it): what any modern
        # request gets from a cassette whose server never answered one with a result.
        modern = [entry for entry in self.cassette.exchanges if request_key(entry["request"])[0] == "modern"]
        self._legacy_refusal = (
            modern[0]
            if self._initialize.get("legacy") and modern and all("error" in e["response"] for e in modern)
            else None
        )
        # A 2026-07-28 recording over HTTP holds no handshake (that client sends its first request
        # as it is); a stdio client probes with server/discover, then falls back to initialize.
        methods = {request_key(entry["request"])[1] for entry in self.cassette.exchanges}
        self._no_handshake = bool(modern) and not methods & {"initialize", "server/discover"}
        self._served: dict[tuple[str, str, bytes], int] = {}
        self._lock = threading.Lock()
        self.misses: list[str] = []  # every request that had no recorded answer, described
        self.initialize: dict[str, Any] | None = None  # the client's last initialize (for passthrough)
        self._sessions = itertools.count(1)

    def find(self, message: Mapping[str, Any]) -> dict[str, Any] | None:
        if message.get("method") == "initialize":
            self.initialize = dict(message)
        key = request_key(self.scrubber.value(dict(message)))
        with self._lock:
            entries = self._index.get(key)
            if not entries and key[1] == "initialize":
                entries = self._initialize.get(key[0])
            if not entries and key[0] == "modern" and self._legacy_refusal is not None:
                return self._legacy_refusal
            if not entries:
                return None
            number = self._served.get(key, 0)
            self._served[key] = number + 1
        return entries[min(number, len(entries) - 1)]

    def status_of(self, entry: Mapping[str, Any]) -> int:
        """The HTTP status of a recorded answer: as recorded, else (recorded on stdio) 200, or 400
        for a legacy server's refusal of a modern request, as legacy HTTP servers answer it."""
        recorded = entry.get("status")
        if isinstance(recorded, int):
            return recorded
        return 400 if entry is self._legacy_refusal else 200

    def answer(
        self, message: Mapping[str, Any], entry: Mapping[str, Any], *, http: bool = False
    ) -> list[dict[str, Any]]:
        """The recorded messages, then the response, under `message`'s id and progress token
        (over HTTP, a response recorded under another id keeps it: its status answers the POST)."""
        recorded_token = _progress_token(entry["request"])
        token = _progress_token(message)
        out: list[dict[str, Any]] = []
        for item in entry.get("messages") or []:
            if (
                isinstance(item, dict)
                and item.get("method") == "notifications/progress"
                and recorded_token is not None
                and isinstance(item.get("params"), dict)
                and item["params"].get("progressToken") == recorded_token
            ):
                if token is None:
                    continue  # the client asked for no progress this time
                item = {**item, "params": {**item["params"], "progressToken": token}}
            out.append(item)
        response = entry["response"]
        if not http or response.get("id") == entry["request"].get("id"):
            response = {**response, "id": message.get("id")}
        out.append(response)
        return out

    def miss(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """The error answering a request the cassette does not hold (and note it)."""
        what = describe_request(self.scrubber.value(dict(message)))
        with self._lock:
            self.misses.append(what)
        _LOG.error("cassette %s: no recorded answer for %s", self.cassette.path, what)
        params = as_mapping(message.get("params"))
        data: dict[str, Any] = {"cassette": self.cassette.path, "method": message.get("method")}
        if message.get("method") == "tools/call":
            data.update(tool=params.get("name"), arguments=params.get("arguments"))
        name = os.path.basename(self.cassette.path)
        text = f"cassette {name} has no recorded answer for {what}"
        if self._no_handshake and message.get("method") in ("initialize", "server/discover"):
            text += (
                " (it was recorded in 2026-07-28 requests without server/discover or initialize, as"
                " a client over HTTP sends them: replay it with --http, or connect with era='modern',"
                " --era modern on a generated command line)"
            )
        return {
            "jsonrpc": "2.0",
            "id": message.get("id"),
            "error": {
                "code": MISS_CODE,
                "message": text,
                "data": data,
            },
        }

    def new_session(self) -> str:
        return f"replay-{next(self._sessions)}"


def _progress_token(message: Mapping[str, Any]) -> Any:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    return meta.get("progressToken") if isinstance(meta, Mapping) else None


class Passthrough:
    """Misses sent to a real server (`--passthrough`), opened on first use in the serving loop."""

    def __init__(self, upstream: Upstream, replayer: Replayer) -> None:
        self.upstream = upstream
        self.replayer = replayer
        self._open: HttpUpstream | StdioUpstream | None = None
        self._legacy_open = False
        self._lock: asyncio.Lock | None = None

    async def answer(self, message: Mapping[str, Any]) -> list[Any]:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._open is None:
                self._open = await open_upstream(self.upstream)
            initialize = self.replayer.initialize
            legacy = request_key(message)[0] == "legacy" and message.get("method") != "initialize"
            if legacy and not self._legacy_open and initialize is not None:
                self._legacy_open = True
                async for _ in self._open.exchange({**initialize, "id": "mcpgen-passthrough-initialize"}):
                    pass
                async for _ in self._open.exchange({"jsonrpc": "2.0", "method": "notifications/initialized"}):
                    pass
            if message.get("method") == "initialize":
                self._legacy_open = True  # the client's own handshake opens the session upstream
        return [item async for item in self._open.exchange(message)]

    async def aclose(self) -> None:
        if self._open is not None:
            await self._open.aclose()


class ReplayApp:
    """ASGI: a cassette served over Streamable HTTP on any path."""

    def __init__(self, replayer: Replayer, passthrough: Passthrough | None = None) -> None:
        self.replayer = replayer
        self.passthrough = passthrough

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if await not_http(scope, receive, send):
            return
        method = scope["method"]
        if method == "DELETE":
            await _send(send, 204, [], b"")
            return
        if method != "POST":
            await _send(send, 405, [(b"allow", b"POST, DELETE")], b"")
            return
        body = b""
        while True:
            event = await receive()
            if event["type"] == "http.disconnect":
                return
            body += event.get("body", b"")
            if len(body) > MAX_BODY_BYTES:
                await _send(send, 413, [], b"")
                return
            if not event.get("more_body", False):
                break
        try:
            message = _json.loads(body)
        except _json.JSONDecodeError:
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
            await _send(send, 400, [(b"content-type", b"application/json")], _json.dumps(error))
            return
        if not is_request(message):
            await _send(send, 202, [], b"")  # notifications and answers to recorded server requests
            return
        entry = self.replayer.find(message)
        headers: list[tuple[bytes, bytes]] = []
        if entry is None:
            messages = await self._unmatched(message)
            status, stream = 200, len(messages) > 1
        else:
            messages = self.replayer.answer(message, entry, http=True)
            status, stream = self.replayer.status_of(entry), _as_stream(entry, messages)
            if entry.get("session"):
                session = dict(scope["headers"]).get(b"mcp-session-id")
                if message.get("method") == "initialize" or session is None:
                    session = self.replayer.new_session().encode()
                headers.append((b"mcp-session-id", session))
        if stream:
            headers += [(b"content-type", SSE.encode()), (b"cache-control", b"no-cache")]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            for item in messages:
                data = b"event: message\ndata: " + _json.dumps(item) + b"\n\n"
                await send({"type": "http.response.body", "body": data, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        else:
            headers.append((b"content-type", b"application/json"))
            await _send(send, status, headers, _json.dumps(messages[-1]))

    async def _unmatched(self, message: dict[str, Any]) -> list[Any]:
        if self.passthrough is None:
            return [self.replayer.miss(message)]
        try:
            return await self.passthrough.answer(message)
        except UpstreamError as exc:
            error = {"code": MISS_CODE, "message": f"passthrough: {exc}"}
            return [{"jsonrpc": "2.0", "id": message.get("id"), "error": error}]


def _as_stream(entry: Mapping[str, Any], messages: list[dict[str, Any]]) -> bool:
    """Whether a recorded answer goes out over HTTP as SSE: as recorded over HTTP; recorded on
    stdio (no `stream`), whenever the server sent messages before its response (progress, its own
    requests), which a plain JSON body would drop."""
    recorded = entry.get("stream")
    return recorded if isinstance(recorded, bool) else len(messages) > 1


async def _send(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def replay_app(
    cassette: str | Path | Cassette,
    *,
    faults: Faults | None = None,
    passthrough: Upstream | None = None,
    scrubber: Scrubber | None = None,
) -> tuple[Any, Replayer]:
    """The ASGI app serving `cassette` (with faults in front), and its `Replayer`."""
    replayer = Replayer(cassette, scrubber=scrubber)
    app: Any = ReplayApp(replayer, Passthrough(passthrough, replayer) if passthrough is not None else None)
    app = with_faults(app, faults)
    return app, replayer


def replay_http(
    cassette: str | Path | Cassette,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    faults: Faults | None = None,
    passthrough: Upstream | None = None,
    scrubber: Scrubber | None = None,
) -> None:
    """Serve `cassette` on http://HOST:PORT/mcp until interrupted."""
    from .record import serve_asgi

    app, _replayer = replay_app(cassette, faults=faults, passthrough=passthrough, scrubber=scrubber)
    serve_asgi(app, host, port)


def replay_stdio(
    cassette: str | Path | Cassette,
    *,
    faults: Faults | None = None,
    passthrough: Upstream | None = None,
    scrubber: Scrubber | None = None,
) -> None:
    """Serve `cassette` on this process's stdin/stdout until stdin closes."""
    replayer = Replayer(cassette, scrubber=scrubber)
    with protocol_stdout() as out, contextlib.suppress(KeyboardInterrupt):
        asyncio.run(
            serve_replay_stdio(replayer, sys.stdin.buffer, out, faults=faults, passthrough=passthrough)
        )


async def serve_replay_stdio(
    replayer: Replayer,
    stdin: BinaryIO,
    stdout: BinaryIO,
    *,
    faults: Faults | None = None,
    passthrough: Upstream | None = None,
) -> None:
    reader = await pipe_reader(stdin)
    loop = asyncio.get_running_loop()
    injector = FaultInjector(faults or Faults())
    through = Passthrough(passthrough, replayer) if passthrough is not None else None
    lock = asyncio.Lock()
    tasks: set[asyncio.Task[None]] = set()
    dropped = asyncio.Event()

    async def write(message: Any) -> None:
        line = _json.dumps(message) + b"\n"

        async def raw(data: bytes) -> None:
            await loop.run_in_executor(None, stdout.write, data)

        async with lock:
            await injector.trickle(line, raw)

    async def serve(message: dict[str, Any]) -> None:
        decision = injector.decide(message)
        if decision.delay_s:
            await asyncio.sleep(decision.delay_s)
        if decision.drop:
            dropped.set()  # on stdio a dropped connection is the server process going away
            return
        if decision.error:
            await write(injector.error_response(message))
            return
        entry = replayer.find(message)
        if entry is not None:
            messages = replayer.answer(message, entry)
        elif through is not None:
            try:
                messages = await through.answer(message)
            except UpstreamError as exc:
                messages = [
                    {"jsonrpc": "2.0", "id": message["id"], "error": {"code": MISS_CODE, "message": str(exc)}}
                ]
        else:
            messages = [replayer.miss(message)]
        for item in messages:
            await write(item)

    async def lines() -> None:
        while line := await reader.readline():
            try:
                message = _json.loads(line)
            except _json.JSONDecodeError:
                continue
            if is_request(message):
                task = asyncio.ensure_future(serve(message))
                tasks.add(task)
                task.add_done_callback(tasks.discard)

    reading = asyncio.ensure_future(lines())
    dropping = asyncio.ensure_future(dropped.wait())
    await asyncio.wait({reading, dropping}, return_when=asyncio.FIRST_COMPLETED)
    if dropped.is_set():
        reading.cancel()
        for task in tasks:
            task.cancel()
        if through is not None:
            await through.aclose()
        raise SystemExit(1)
    dropping.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=5)
    if through is not None:
        await through.aclose()
