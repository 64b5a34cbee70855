"""One SSE stream of a legacy (initialize-based) session on Streamable HTTP, apart from the
connection that happens to carry it.

In the 2025 revisions a stream outlives its HTTP response: the server numbers its events
(`<stream>-<n>`), keeps the last few in a bounded replay buffer, and a client that lost the
connection — or was told to go away and come back, the 2025-11-25 polling pattern — resumes it
with a GET carrying `Last-Event-ID`. A `EventStream` is that logical stream: handlers (through
the request's notify hook and client channel) `emit` messages into it whether or not a
connection is attached; the HTTP side (`http/legacy/sessions.py`) attaches a connection, writes what
`take` hands it, and detaches when the client leaves or the server closes the response.

The stream is finished by its request's response (POST streams) or by the end of the session
(the standalone GET stream). Memory is bounded by `replay` events per stream: a connection that
falls further behind is ended, and its client resumes from the buffer.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from ... import _json
from ...protocol.legacy import sse_writer as sse

__all__ = ["END", "EventStream", "Mirror"]

# What a mirror is told when a stream finishes (its position).
END = -1
# Copies each recorded event (position, SSE bytes) to a shared log, so another replica can serve
# a `Last-Event-ID` resume (shared_sessions.py); END when the stream finishes.
Mirror = Callable[[int, bytes], None]


class EventStream:
    """A numbered SSE stream with a bounded replay buffer and at most one attached connection."""

    __slots__ = (
        "_attached",
        "_log",
        "_outbox",
        "_position",
        "_replay",
        "_retry_ms",
        "closing",
        "finished",
        "id",
        "mirror",
        "opened",
        "priming",
        "wake",
    )

    def __init__(self, stream_id: str, *, replay: int, priming: bool, retry_ms: int | None) -> None:
        self.id = stream_id
        self.priming = priming  # 2025-11-25: a priming event first
        self._retry_ms = retry_ms
        self._position = 0
        self._replay = replay
        self._log: deque[tuple[int, bytes]] = deque(maxlen=replay)
        self._outbox: list[bytes] = []
        self._attached = True  # a POST stream starts with its own connection
        self.opened = False  # the first event was written (the reply is SSE)
        self.finished = False  # nothing more will be emitted
        self.closing = False  # the server asked to end the current connection (polling)
        self.wake = asyncio.Event()
        self.mirror: Mirror | None = None  # set when sessions are shared by replicas

    # ---- the producing side: handlers, the request's completion, the session ----------------------

    def open(self) -> None:
        """Commit to SSE: the priming event (2025-11-25) gives the client a resume point at once."""
        if self.opened:
            return
        self.opened = True
        if self.priming:
            self._record(0, sse.priming_event(sse.event_id(self.id, 0), self._retry_ms))
        else:
            self.wake.set()

    def emit(self, message: dict[str, Any]) -> None:
        """Append one JSON-RPC message as the next numbered event; dropped once the stream finished."""
        if self.finished:
            return
        self.open()
        self._position += 1
        self._record(
            self._position, sse.message_event(_json.dumps(message), sse.event_id(self.id, self._position))
        )

    def finish(self, response: dict[str, Any] | None) -> None:
        """End the stream, with its request's response as the last event (None: no response, e.g.
        the request was cancelled)."""
        if self.finished:
            return
        if response is not None:
            self.emit(response)
        self.finished = True
        self.wake.set()
        if self.mirror is not None:
            self.mirror(END, b"")

    def request_close(self) -> None:
        """End the attached connection after what was emitted so far; the stream lives on (the
        client resumes it with `Last-Event-ID`)."""
        self.open()
        self.closing = True
        self.wake.set()

    def _record(self, position: int, data: bytes) -> None:
        self._log.append((position, data))
        if self.mirror is not None:
            self.mirror(position, data)
        if self._attached:
            self._outbox.append(data)
            if len(self._outbox) > self._replay:
                # The client does not keep up: end its connection rather than queue without bound;
                # it resumes from the replay buffer.
                self.closing = True
            self.wake.set()

    # ---- the connection side ----------------------------------------------------------------

    @property
    def attached(self) -> bool:
        return self._attached

    def take(self) -> list[bytes]:
        """What the attached connection has not written yet."""
        out, self._outbox = self._outbox, []
        return out

    def attach(self, after: int | None) -> list[bytes]:
        """Attach a new connection (replacing any other); returns the buffered events after position
        `after` to write first (None: none, a fresh connection). Events older than the buffer are lost."""
        self._attached = True
        self.closing = False
        self._outbox = []
        self.wake.set()  # a connection still attached elsewhere sees it lost the stream
        self.wake = asyncio.Event()
        if after is None:
            return []
        return [data for position, data in self._log if position > after]

    def detach(self) -> None:
        """The connection is gone: events from now on only go to the replay buffer."""
        self._attached = False
        self._outbox = []
