"""The real server behind `mcpgen mock --record` (and `--replay --passthrough`): HTTP or stdio.

`Upstream` names it (a URL with headers, or a command with its environment and directory), so
every way of naming a server (a URL, `--upstream-stdio CMD`, an entry of an MCP config file)
ends in one value; `open_upstream` connects. Two faces:

- `forward(method, headers, body)`: one HTTP exchange as the downstream client sent it, answered
  as the upstream answered it (status, headers, body streamed). Over HTTP the bytes pass through
  untouched, legacy `Mcp-Session-Id` and all; a stdio upstream is answered as a Streamable HTTP
  server would (requests as SSE streams, notifications and answers `202`; ids remapped, since
  several HTTP clients share the one process). It offers no GET stream: what the process sends
  while no request is open reaches no HTTP client (a notification during a request goes to the
  request its progress token names, else to the latest one).
- `exchange(message)`: one JSON-RPC message, and the messages the server sends back for it (its
  notifications and requests, then the response), for a stdio client in front of an HTTP server
  and for passthrough. Over HTTP it keeps the legacy session id (from `initialize`'s answer),
  protocol version and, given `on_unsolicited`, the session's GET stream, and sets the modern
  headers (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` from the tools it has seen listed).

Uses httpx directly, never the runtime's client transport: a proxy passes traffic through, it
does not interpret it (and the mock is a server: pyproject.toml's contracts).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import shlex
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .. import _json
from ..masking import KNOWN, Secrets
from ..protocol import headers as hdr
from ..protocol.meta import PROGRESS_TOKEN_KEY, PROTOCOL_VERSION_KEY
from ..protocol.xheader import analyze, request_headers
from .cassette import display_upstream, is_request, is_response

__all__ = [
    "HttpUpstream",
    "SseMessages",
    "StdioUpstream",
    "Upstream",
    "UpstreamError",
    "UpstreamReply",
    "as_mapping",
    "open_upstream",
]

MAX_LINE_BYTES: Final = 64 * 1024 * 1024
CONNECT_TIMEOUT_S: Final = 10.0
# Not forwarded either way: hop-by-hop headers, and what the proxy sets itself.
_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "proxy-connection",
        "host",
        "content-length",
        "accept-encoding",
        "content-encoding",
        "date",
        "server",
    }
)
SSE: Final = "text/event-stream"


class UpstreamError(Exception):
    """The upstream could not be reached or started; the message names it without secrets."""


@dataclass(frozen=True)
class Upstream:
    """A real server: `url` (+ `headers`) or `command` (+ `env`, `cwd`). `label` names it in
    messages and cassettes instead (an MCP config file's `FILE#NAME`); `secrets` are values to
    scrub from cassettes besides the headers' and the environment's."""

    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    command: Sequence[str] | None = None
    env: Mapping[str, str] | None = None  # added to this process's environment
    cwd: str | None = None
    label: str | None = None
    secrets: frozenset[str] = frozenset()

    @staticmethod
    def stdio(command: str | Sequence[str], **options: Any) -> Upstream:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        return Upstream(command=argv, **options)

    def hidden(self) -> Secrets:
        """What never leaves this process from the upstream's side (masking.py): its header and
        env values, `secrets`, its command's credential arguments, its URL's query values."""
        found = Secrets([*self.headers.values(), *(self.env or {}).values(), *self.secrets, *KNOWN])
        found.add_arguments(list(self.command or ())[1:])
        if self.url is not None:
            found.add_url(self.url)
        return found

    def display(self) -> str:
        if self.label is not None:
            return self.label
        if self.url is not None:
            return display_upstream(self.url)
        return display_upstream(" ".join(self.command or ()))


@dataclass
class UpstreamReply:
    status: int
    headers: list[tuple[str, str]]
    body: AsyncIterator[bytes]
    close: Callable[[], Awaitable[None]]

    @property
    def content_type(self) -> str:
        for name, value in self.headers:
            if name.lower() == "content-type":
                return value.split(";")[0].strip().lower()
        return ""


class SseMessages:
    """JSON messages out of an SSE body, fed in pieces (`data:` lines; other fields ignored)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[bytes] = []

    def feed(self, chunk: bytes) -> list[Any]:
        self._buffer += chunk
        out: list[Any] = []
        while (end := self._buffer.find(b"\n")) >= 0:
            line, self._buffer = self._buffer[:end].rstrip(b"\r"), self._buffer[end + 1 :]
            if not line:
                if self._data:
                    data, self._data = b"\n".join(self._data), []
                    with contextlib.suppress(_json.JSONDecodeError):
                        out.append(_json.loads(data))
            elif line.startswith(b"data:"):
                value = line[5:]
                self._data.append(value[1:] if value.startswith(b" ") else value)
            if len(self._buffer) > MAX_LINE_BYTES:
                raise UpstreamError("an SSE event over 64 MiB")
        return out


def as_mapping(value: Any) -> Mapping[str, Any]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def sse_event(message: Mapping[str, Any]) -> bytes:
    return b"event: message\ndata: " + _json.dumps(message) + b"\n\n"


async def open_upstream(upstream: Upstream) -> HttpUpstream | StdioUpstream:
    if upstream.url is not None:
        return HttpUpstream(upstream)
    stdio = StdioUpstream(upstream)
    await stdio.start()
    return stdio


class HttpUpstream:
    def __init__(self, upstream: Upstream) -> None:
        import httpx

        assert upstream.url is not None
        self.upstream = upstream
        self.url = upstream.url
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(CONNECT_TIMEOUT_S, read=None), follow_redirects=False, trust_env=False
        )
        self._session: str | None = None  # exchange(): the legacy session the proxy holds
        self._version: str | None = None  # exchange(): the legacy protocol version negotiated
        self._tools: dict[str, Any] = {}  # exchange(): x-mcp-header parameters of tools seen listed
        self._listed = False  # exchange(): whether the proxy listed the tools itself
        # exchange(): where the messages of the legacy session's GET stream go (a stdio client's proxy
        # opens the stream for its client, as an HTTP client would); None: no GET stream.
        self.on_unsolicited: Callable[[Any], Awaitable[None]] | None = None
        self._listening: asyncio.Task[None] | None = None

    async def aclose(self) -> None:
        if self._listening is not None:
            self._listening.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._listening
        await self._client.aclose()

    async def _listen(self, headers: Mapping[str, str]) -> None:
        """The legacy session's GET stream, read until it ends (a server without one says 405)."""
        import httpx

        callback = self.on_unsolicited
        assert callback is not None
        try:
            async with self._client.stream("GET", self.url, headers=dict(headers)) as response:
                if response.status_code != 200:
                    return
                decoder = SseMessages()
                async for chunk in response.aiter_raw():
                    for item in decoder.feed(chunk):
                        await callback(item)
        except (httpx.HTTPError, UpstreamError):
            return

    async def forward(self, method: str, headers: Sequence[tuple[str, str]], body: bytes) -> UpstreamReply:
        import httpx

        sent = [(name, value) for name, value in headers if name.lower() not in _HOP]
        sent += list(self.upstream.headers.items())
        request = self._client.build_request(method, self.url, headers=sent, content=body or None)
        try:
            response = await self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise UpstreamError(f"{self.upstream.display()}: {type(exc).__name__}") from None
        got = [(name, value) for name, value in response.headers.multi_items() if name.lower() not in _HOP]
        return UpstreamReply(response.status_code, got, response.aiter_raw(), response.aclose)

    def _headers(self, message: Mapping[str, Any]) -> dict[str, str]:
        out = {"Content-Type": "application/json", "Accept": f"application/json, {SSE}"}
        params = as_mapping(message.get("params"))
        meta = as_mapping(params.get("_meta"))
        method = message.get("method")
        if PROTOCOL_VERSION_KEY in meta:  # modern: the standard headers (HDR rules), and x-mcp-header
            out[hdr.PROTOCOL_VERSION] = str(meta[PROTOCOL_VERSION_KEY])
            out[hdr.METHOD] = str(method)
            field_name = hdr.NAME_FIELD_BY_METHOD.get(str(method))
            if field_name is not None and isinstance(params.get(field_name), str):
                out[hdr.NAME] = hdr.encode_value(params[field_name])
            arguments = params.get("arguments")
            header_params = self._tools.get(str(params.get("name")))
            if method == "tools/call" and header_params and isinstance(arguments, Mapping):
                for name, text in request_headers(header_params, arguments):
                    out[name] = hdr.encode_value(text)  # name: Mcp-Param-…
        else:
            if self._version is not None:
                out[hdr.PROTOCOL_VERSION] = self._version
            if self._session is not None and method != "initialize":
                out[hdr.SESSION_ID] = self._session
        out.update(self.upstream.headers)
        return out

    def _learn(self, request: Mapping[str, Any], message: Any) -> None:
        result = message.get("result") if isinstance(message, dict) else None
        if not isinstance(result, Mapping):
            return
        if request.get("method") == "initialize" and isinstance(result.get("protocolVersion"), str):
            self._version = result["protocolVersion"]
        if request.get("method") == "tools/list" and isinstance(result.get("tools"), list):
            for tool in result["tools"]:
                if isinstance(tool, Mapping) and isinstance(tool.get("inputSchema"), Mapping):
                    params, _violations = analyze(tool["inputSchema"])
                    self._tools[str(tool.get("name"))] = params

    async def _learn_tools(self, meta: Mapping[str, Any]) -> None:
        """A modern `tools/call` from a client that sends no headers (stdio): the proxy reads the
        tools' `x-mcp-header` parameters once, with its own `tools/list` (every page; not recorded)."""
        self._listed = True
        cursor: Any = None
        for page in range(100):
            params: dict[str, Any] = {"_meta": dict(meta)}
            if cursor is not None:
                params["cursor"] = cursor
            request = {
                "jsonrpc": "2.0",
                "id": f"mcpgen-proxy-{page}",
                "method": "tools/list",
                "params": params,
            }
            cursor = None
            async for item in self._exchange(request):
                result = item.get("result") if isinstance(item, dict) else None
                if isinstance(result, Mapping):
                    cursor = result.get("nextCursor")
            if not isinstance(cursor, str):
                return

    async def exchange(self, message: Mapping[str, Any]) -> AsyncIterator[Any]:
        params = as_mapping(message.get("params"))
        meta = as_mapping(params.get("_meta"))
        modern_call = message.get("method") == "tools/call" and PROTOCOL_VERSION_KEY in meta
        if modern_call and not self._listed and str(params.get("name")) not in self._tools:
            await self._learn_tools({k: v for k, v in meta.items() if k != PROGRESS_TOKEN_KEY})
        async for item in self._exchange(message):
            yield item

    async def _exchange(self, message: Mapping[str, Any]) -> AsyncIterator[Any]:
        reply = await self.forward("POST", list(self._headers(message).items()), _json.dumps(message))
        try:
            for name, value in reply.headers:
                if name.lower() == hdr.SESSION_ID_LC and message.get("method") == "initialize":
                    self._session = value  # assigned by initialize's answer only (others may carry strays)
            if reply.content_type == SSE:
                decoder = SseMessages()
                async for chunk in reply.body:
                    for item in decoder.feed(chunk):
                        self._learn(message, item)
                        self._maybe_listen(message, item)
                        yield item
                return
            body = b"".join([chunk async for chunk in reply.body])
            if not body.strip():
                if is_request(message) and reply.status >= 400:
                    yield _upstream_error(message, f"HTTP {reply.status} without a JSON-RPC body")
                return
            try:
                item = _json.loads(body)
            except _json.JSONDecodeError:
                yield _upstream_error(message, f"HTTP {reply.status} with a body that is not JSON")
                return
            if is_request(message) and is_response(item) and item.get("id") != message.get("id"):
                # The one JSON answer to this POST, under another id (a 400 before the id was read):
                # a stdio client needs it under its own.
                item = {**item, "id": message.get("id")}
            self._learn(message, item)
            self._maybe_listen(message, item)
            yield item
        finally:
            await reply.close()

    def _maybe_listen(self, request: Mapping[str, Any], item: Any) -> None:
        """After a legacy session opened (initialize answered with a session id): its GET stream."""
        if (
            self.on_unsolicited is None
            or self._listening is not None
            or request.get("method") != "initialize"
            or self._session is None
            or not (isinstance(item, dict) and "result" in item)
        ):
            return
        headers = {"Accept": SSE, hdr.SESSION_ID: self._session, **self.upstream.headers}
        if self._version is not None:
            headers[hdr.PROTOCOL_VERSION] = self._version
        self._listening = asyncio.ensure_future(self._listen(headers))


def _upstream_error(message: Mapping[str, Any], what: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": message.get("id"),
        "error": {"code": -32603, "message": f"upstream: {what}"},
    }


class StdioUpstream:
    """A server process; its stdout lines go to `listeners` (raw line, parsed message)."""

    def __init__(self, upstream: Upstream) -> None:
        assert upstream.command
        self.upstream = upstream
        self.proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._stderr: asyncio.Task[None] | None = None  # the server's stderr, relayed masked
        self._write_lock = asyncio.Lock()
        self.raw_listener: Callable[[bytes, Any], Awaitable[None]] | None = None  # stdio <-> stdio
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[Any, asyncio.Queue[Any], Any]] = {}  # proxy id -> (id, queue, token)
        self.exited = asyncio.Event()
        self._modern_answered = False  # forward(): a modern request has had a result

    async def start(self) -> None:
        env = {**os.environ, **(self.upstream.env or {})}
        argv = list(self.upstream.command or ())
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=self.upstream.cwd,
                limit=MAX_LINE_BYTES,
            )
        except OSError as exc:
            raise UpstreamError(f"{self.upstream.display()}: cannot start: {exc.strerror or exc}") from None
        self._reader = asyncio.create_task(self._read())
        self._stderr = asyncio.create_task(self._relay_stderr())

    async def _relay_stderr(self) -> None:
        """The server's log goes on to ours, line by line, without the secrets it was given."""
        assert self.proc is not None and self.proc.stderr is not None
        hidden = self.upstream.hidden()
        stderr = self.proc.stderr
        while True:
            try:
                line = await stderr.readline()
            except ValueError:  # a line over the limit: dropped, read on
                continue
            if not line:
                return
            with contextlib.suppress(OSError, ValueError):  # our stderr closed: the server's is still drained
                _write_stderr(hidden.mask_bytes(line))

    async def aclose(self) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError, RuntimeError):
                proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 3)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 3)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if self._stderr is not None:  # the process is gone: its last log lines are still in the pipe
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._stderr), 1)
        for task in (self._reader, self._stderr):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def write_line(self, line: bytes) -> None:
        proc = self.proc
        if proc is None or proc.stdin is None or self.exited.is_set():
            raise UpstreamError(f"{self.upstream.display()}: the server process has exited")
        async with self._write_lock:
            proc.stdin.write(line.rstrip(b"\r\n") + b"\n")
            try:
                await proc.stdin.drain()
            except (ConnectionError, OSError):
                raise UpstreamError(f"{self.upstream.display()}: the server process has exited") from None

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        try:
            while line := await self.proc.stdout.readline():
                if not line.strip():
                    continue
                try:
                    message = _json.loads(line)
                except _json.JSONDecodeError:
                    message = None  # a banner or stray print: passed on, never matched
                if self.raw_listener is not None:
                    await self.raw_listener(line, message)
                else:
                    self._route(message)
        except (ValueError, asyncio.LimitOverrunError):
            pass  # a line over the limit: the process is treated as gone
        finally:
            self.exited.set()
            for _id, queue, _token in self._pending.values():
                queue.put_nowait(None)

    # ---- forward / exchange: messages from several clients over the one process -------------

    def _route(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        if is_response(message) and message.get("id") in self._pending:
            original, queue, _token = self._pending.pop(message["id"])
            queue.put_nowait({**message, "id": original})
            return
        params = as_mapping(message.get("params"))
        token = params.get(PROGRESS_TOKEN_KEY) if message.get("method") == "notifications/progress" else None
        targets = [entry for entry in self._pending.values() if token is not None and entry[2] == token]
        if not targets and self._pending:
            targets = [list(self._pending.values())[-1]]  # the latest request in flight
        for _original, queue, _token in targets[:1]:
            queue.put_nowait(message)

    async def exchange(self, message: Mapping[str, Any]) -> AsyncIterator[Any]:
        if not is_request(message):
            await self.write_line(_json.dumps(message))
            return
        proxy_id = next(self._ids)
        queue: asyncio.Queue[Any] = asyncio.Queue()
        params = as_mapping(message.get("params"))
        meta = as_mapping(params.get("_meta"))
        self._pending[proxy_id] = (message["id"], queue, meta.get(PROGRESS_TOKEN_KEY))
        try:
            await self.write_line(_json.dumps({**message, "id": proxy_id}))
            while True:
                item = await queue.get()
                if item is None:
                    yield _upstream_error(message, "the server process exited before answering")
                    return
                yield item
                if is_response(item) and item.get("id") == message["id"]:
                    return
        finally:
            self._pending.pop(proxy_id, None)

    async def forward(self, method: str, headers: Sequence[tuple[str, str]], body: bytes) -> UpstreamReply:
        """Answer one HTTP exchange as a Streamable HTTP server (without sessions) would."""

        async def nothing() -> AsyncIterator[bytes]:
            return
            yield b""

        async def done() -> None:
            return None

        if method != "POST":
            return UpstreamReply(405, [("allow", "POST")], nothing(), done)
        try:
            message = _json.loads(body)
        except _json.JSONDecodeError:
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
            return UpstreamReply(400, [("content-type", "application/json")], _once(_json.dumps(error)), done)
        if not is_request(message):
            await self.write_line(_json.dumps(message))
            return UpstreamReply(202, [], nothing(), done)
        meta = as_mapping(as_mapping(message.get("params")).get("_meta"))
        if PROTOCOL_VERSION_KEY in meta and not self._modern_answered:
            # Until the server has answered a modern request, it may be legacy: its refusal goes
            # out as a legacy HTTP server sends it (400 and the JSON error), for the client's probe.
            answer = [item async for item in self.exchange(message)]
            final = answer[-1] if answer else None
            if isinstance(final, dict) and "error" in final:
                return UpstreamReply(
                    400, [("content-type", "application/json")], _once(_json.dumps(final)), done
                )
            self._modern_answered = True
            body = b"".join(sse_event(item) for item in answer)
            return UpstreamReply(
                200, [("content-type", SSE), ("cache-control", "no-cache")], _once(body), done
            )
        messages = self.exchange(message)
        assert isinstance(messages, AsyncGenerator)

        async def events() -> AsyncIterator[bytes]:
            async for item in messages:
                yield sse_event(item)

        async def close() -> None:
            await messages.aclose()

        return UpstreamReply(200, [("content-type", SSE), ("cache-control", "no-cache")], events(), close)


def _write_stderr(data: bytes) -> None:
    stream = getattr(sys.stderr, "buffer", None)
    if stream is None:
        sys.stderr.write(data.decode("utf-8", "replace"))
    else:
        stream.write(data)
        stream.flush()


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data
