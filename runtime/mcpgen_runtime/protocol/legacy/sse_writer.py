"""Server-Sent Events as a server writes them, without I/O: message events, the numbered events
and priming event of the initialize-based revisions, comments, and event ids that name their stream.

2026-07-28 streams carry no event ids and cannot be resumed (HTTP-20). The initialize-based
revisions (2025-03-26 .. 2025-11-25) let a server number the events of a stream so that a client
that lost the connection resumes with `Last-Event-ID`; 2025-11-25 adds the priming event (an id
and an empty `data` line, so the client has a resume point before anything else arrives) and the
`retry` field (how long to wait before reconnecting). An event id here is `<stream>-<n>`: the
stream it belongs to and its position, so a resume names both.
"""

from __future__ import annotations

__all__ = ["KEEPALIVE", "event_id", "message_event", "parse_event_id", "priming_event"]

_MESSAGE: bytes = b"event: message\ndata: "
_END = b"\n\n"
KEEPALIVE = b": keep-alive\n\n"
# An event id must not hold CR, LF or NUL (WHATWG SSE), and this one stays short.
_MAX_EVENT_ID = 64


def message_event(data: bytes, event_id: str | None = None) -> bytes:
    """One `message` event carrying a JSON-RPC message (`data` is its JSON, one line)."""
    if event_id is None:
        return _MESSAGE + data + _END
    return b"id: " + event_id.encode("ascii") + b"\n" + _MESSAGE + data + _END


def priming_event(event_id: str, retry_ms: int | None = None) -> bytes:
    """An event with an id and empty data: clients record the id and dispatch nothing parseable.

    The empty `data:` line matters: an event with only `id:`/`retry:` lines is never dispatched
    by SSE parsers, so the client would not learn the id."""
    retry = b"" if retry_ms is None else b"retry: %d\n" % retry_ms
    return b"id: " + event_id.encode("ascii") + b"\n" + retry + b"data:" + _END


def event_id(stream: str, position: int) -> str:
    return f"{stream}-{position}"


def parse_event_id(value: str) -> tuple[str, int] | None:
    """(stream, position) of an id made by `event_id`; None for anything else (a peer's garbage)."""
    if len(value) > _MAX_EVENT_ID:
        return None
    stream, sep, position = value.strip().rpartition("-")
    if not sep or not stream or not position.isdigit() or not position.isascii():
        return None
    return stream, int(position)
