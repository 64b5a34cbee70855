"""Streamable HTTP without I/O: the headers every POST carries, and the reading of replies —
a JSON body (`classify_body`) or an SSE stream (`SseDecoder`, `ResponseStream`, `EventMessages`).

Rules: HTTP-06/07/09 (one POST per message, Accept lists both types), HTTP-13 (both reply
types), HTTP-15 (no server requests on a reply stream: dropped unless the transport has an
`on_request` hook), HTTP-19 (SSE comments ignored), HTTP-20 (no resumption in this revision:
`id:` and `retry:` are only recorded, for the legacy session's resumable streams:
`_async/legacy_session.py`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from .. import _json
from .._version import __version__
from ..errors import ProtocolError
from ..protocol.jsonrpc import decode, is_request
from .failures import status_error
from .hooks import Message, OnNotification
from .limits import DEFAULT_MAX_RESPONSE_BYTES, too_large

BASE_HEADERS: Final[Mapping[str, str]] = {
    "Accept": "application/json, text/event-stream",
    "Accept-Encoding": "identity",  # no decompression bombs (limits.py); httpx would ask for gzip
    "Content-Type": "application/json",
}
USER_AGENT: Final = f"mcpgen/{__version__}"

DEFAULT_RETRY_MS: Final = 1000  # legacy era: wait before reconnecting when the server sent no `retry`
MAX_RETRY_MS: Final = 30_000  # a server's `retry` is honoured up to this
_MAX_EVENT_ID = 1024  # bytes of an SSE event id kept (it goes back in Last-Event-ID)
# SSE line terminators: CRLF, LF or CR (WHATWG "event stream interpretation").
_EOL = re.compile(rb"\r\n|\r|\n")


def retry_wait(retry_ms: int | None) -> float:
    """Seconds to wait before reconnecting to a legacy event stream (its `retry`, bounded)."""
    return min(DEFAULT_RETRY_MS if retry_ms is None else retry_ms, MAX_RETRY_MS) / 1000


def is_event_stream(content_type: str) -> bool:
    return content_type[:17].lower() == "text/event-stream"


def classify_body(status: int, body: bytes, retry_after: str | None = None) -> Message:
    """The JSON-RPC message of a non-streamed reply, or the error the HTTP status stands for
    (with its `Retry-After` header, `retry_after`)."""
    if 200 <= status < 300:
        if not body:
            raise ProtocolError(f"HTTP {status} reply to a request has no body")
        return decode(body, "HTTP %d reply is not JSON", "HTTP %d reply is not a JSON-RPC message", status)
    # A non-2xx reply carrying a JSON-RPC error is the server's answer; the caller raises it
    # with `http_status` (e.g. 400 + -32022, 404 + -32601).
    try:
        message = _json.loads(body) if body else None
    except _json.JSONDecodeError:
        message = None
    if isinstance(message, dict) and isinstance(message.get("error"), dict):
        return message
    raise status_error(status, body, retry_after)


class SseDecoder:
    """Incremental `text/event-stream` parser that yields the `data` payload of each event.

    Comment lines (`:` keep-alives) and the `event` field are ignored; a multi-line `data`
    field is joined with `\\n`; the last `id` and `retry` seen are kept in `last_id` and
    `retry_ms` (legacy-era resumption). Chunks may split lines anywhere, including between
    the CR and LF of a CRLF.

    One event may hold at most `limit` bytes (its unfinished line and its data lines together,
    `limits.py`): an event that never ends is cut there with `ResponseTooLargeError`.
    """

    __slots__ = (
        "_buffer",
        "_data",
        "_event",
        "_held",
        "_size",
        "event_names",
        "last_id",
        "limit",
        "retry_ms",
        "source",
    )

    def __init__(
        self, *, named: bool = False, limit: int = DEFAULT_MAX_RESPONSE_BYTES, source: str = "the server"
    ) -> None:
        self._buffer = b""  # the start of an unfinished line
        self._held: list[
            bytes
        ] = []  # and its continuation, kept apart until the line ends: no rescan, no copy
        self._data: list[bytes] | None = None
        self._size = 0  # bytes of the event's data lines so far
        self.limit = limit
        self.source = source
        self.last_id: str | None = None
        self.retry_ms: int | None = None
        # With `named`, the `event` name of each event returned is appended here (the caller
        # empties it): the 2024-11-05 HTTP+SSE transport tells `endpoint` from `message`.
        self.event_names: list[str] | None = [] if named else None
        self._event = "message"

    def feed(self, chunk: bytes) -> list[bytes]:
        if self._buffer:
            held = self._held
            if (held[-1] if held else self._buffer)[-1:] != b"\r" and _EOL.search(chunk) is None:
                return self._hold(chunk)  # the line goes on
            buffer = b"".join([self._buffer, *held, chunk]) if held else self._buffer + chunk
            held.clear()
        else:
            buffer = chunk
        events: list[bytes] = []
        start = 0
        end = len(buffer)
        for match in _EOL.finditer(buffer):
            if match.end() == end and match.group() == b"\r":
                break  # may be the first half of a CRLF split across chunks
            self._line(buffer[start : match.start()], events)
            start = match.end()
        self._buffer = buffer[start:]
        if len(self._buffer) + self._size > self.limit:
            raise too_large(self.source, self.limit, "SSE event")
        return events

    def _hold(self, chunk: bytes) -> list[bytes]:
        self._held.append(chunk)
        if len(self._buffer) + sum(map(len, self._held)) + self._size > self.limit:
            raise too_large(self.source, self.limit, "SSE event")
        return []

    def finish(self) -> list[bytes]:
        """End of stream: flush a final unterminated line and event (lenient with servers
        that close without the closing blank line)."""
        events: list[bytes] = []
        if self._held:
            self._buffer = b"".join([self._buffer, *self._held])
            self._held.clear()
        if self._buffer:
            self._line(self._buffer.rstrip(b"\r"), events)
            self._buffer = b""
        self._line(b"", events)
        return events

    def _line(self, line: bytes, events: list[bytes]) -> None:
        if not line:
            if self._data is not None:
                events.append(b"\n".join(self._data))
                self._data = None
                self._size = 0
                if self.event_names is not None:
                    self.event_names.append(self._event)
            self._event = "message"
            return
        if line[:1] == b":":
            return
        field, _, value = line.partition(b":")
        if field == b"data":
            if value[:1] == b" ":
                value = value[1:]
            self._size += len(value) + 1
            if self._size > self.limit:
                raise too_large(self.source, self.limit, "SSE event")
            if self._data is None:
                self._data = [value]
            else:
                self._data.append(value)
        elif field == b"id" or field == b"retry":
            self._control(field, value[1:] if value[:1] == b" " else value)
        elif field == b"event" and self.event_names is not None:
            self._event = (value[1:] if value[:1] == b" " else value).decode("utf-8", "replace")[:100]

    def _control(self, field: bytes, value: bytes) -> None:
        if field == b"id":
            if b"\0" not in value and len(value) <= _MAX_EVENT_ID:
                self.last_id = value.decode("utf-8", "replace")
        elif value.isdigit() and len(value) <= 9:
            self.retry_ms = int(value)


def event_message(data: bytes) -> Message | None:
    """The JSON-RPC message an SSE event carries (None for an empty event)."""
    if not data.strip():
        return None
    return decode(data, "SSE event data is not JSON", "SSE event is not a JSON-RPC message")


class ResponseStream:
    """Reads one request's SSE reply: notifications go to `on_notification`, the response
    carrying the request's id ends the read, and requests of the peer's are collected in
    `requests` for the transport to answer (dropped when `requests` is None: HTTP-15).
    `decoder` is replaced when a legacy stream is resumed on a new response."""

    __slots__ = ("_id", "_on_notification", "decoder", "requests")

    def __init__(
        self,
        request_id: Any,
        on_notification: OnNotification | None,
        requests: list[Message] | None = None,
        *,
        limit: int = DEFAULT_MAX_RESPONSE_BYTES,
        source: str = "the server",
    ) -> None:
        self.decoder = SseDecoder(limit=limit, source=source)
        self._id = request_id
        self._on_notification = on_notification
        self.requests = requests

    def feed(self, chunk: bytes) -> Message | None:
        for data in self.decoder.feed(chunk):
            message = self._accept(data)
            if message is not None:
                return message
        return None

    def finish(self) -> Message | None:
        for data in self.decoder.finish():
            message = self._accept(data)
            if message is not None:
                return message
        return None

    def _accept(self, data: bytes) -> Message | None:
        message = event_message(data)
        if message is None:
            return None
        if "id" in message:
            if "result" in message or "error" in message:
                msg_id = message["id"]
                # An error with id null answers a request the server could not read: ours.
                if msg_id == self._id or (msg_id is None and "error" in message):
                    return message
            elif "method" in message and self.requests is not None:
                self.requests.append(message)
            # Responses to other ids, and peer requests nobody answers (HTTP-15), are dropped.
            return None
        if "method" in message and self._on_notification is not None:
            self._on_notification(message)
        return None


class EventMessages:
    """Every message of an SSE reply, for `stream()`: peer requests are set aside in
    `requests` when the transport answers them (`requests` not None), else passed on."""

    __slots__ = ("decoder", "requests")

    def __init__(
        self,
        requests: list[Message] | None = None,
        *,
        limit: int = DEFAULT_MAX_RESPONSE_BYTES,
        source: str = "the server",
    ) -> None:
        self.decoder = SseDecoder(limit=limit, source=source)
        self.requests = requests

    def feed(self, chunk: bytes) -> list[Message]:
        return self._messages(self.decoder.feed(chunk))

    def finish(self) -> list[Message]:
        return self._messages(self.decoder.finish())

    def _messages(self, events: list[bytes]) -> list[Message]:
        messages: list[Message] = []
        for data in events:
            message = event_message(data)
            if message is None:
                continue
            if self.requests is not None and is_request(message):
                self.requests.append(message)
            else:
                messages.append(message)
        return messages
