"""What the client accepts from a server, without I/O: the size limit on a response and how a
breach is reported (the client half of the trust model: docs/explanation/trust-model.md, Client limits).

One knob, `max_response_bytes` (`Client(..., max_response_bytes=...)`, default 64 MiB), bounds
every place a server's bytes accumulate in the client:
- an HTTP response body, either engine: a Content-Length over it is refused before a body byte is
  read; chunked and close-delimited bodies are counted as they arrive, and a chunk that declares
  more than the budget left is refused at its size line (a long-lived event stream, whose
  deadline is lifted, is bounded per event instead);
- one SSE event (its unfinished line and its `data` lines together), on every event stream of
  both eras;
- one stdio line (the line is skipped to its end, never buffered).
Compressed responses are refused: both engines ask for `identity`, and a `Content-Encoding`
other than that means the server ignored it (a gzip bomb inflates a thousandfold).
Time is bounded by the per-request `timeout`, one deadline over connect, head and every body
byte (`pool.py`, `engine.py`); or, for a call made with `max_time`, by a `Deadline` that the
call's progress notifications push back (CANCEL-06), never past its `max_time`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Final, TypeAlias

from ..errors import ProtocolError, ResponseTooLargeError

DEFAULT_MAX_RESPONSE_BYTES: Final = 64 * 1024 * 1024
MAX_EVENTS_BEFORE_ENDPOINT: Final = 1024  # HTTP+SSE: messages kept until the `endpoint` event


class Deadline:
    """When a request that progress keeps alive gives up (CANCEL-06): `timeout` seconds after it
    started or after its last progress notification (`extend`, which the client core calls), and
    never later than `max_time` seconds after `started` (a `time.monotonic()` instant: the start
    of the whole call, so every request of a multi-round call shares one end). `timeout` None:
    only `max_time` bounds it. Transports read it before each wait (`expiry`), so an extension
    counts at the next wait; a transport given a plain number keeps its one deadline."""

    __slots__ = ("at", "end", "max_time", "timeout")

    def __init__(self, timeout: float | None, max_time: float, *, started: float | None = None) -> None:
        now = time.monotonic()
        self.timeout = timeout
        self.max_time = max_time
        self.end = (now if started is None else started) + max_time
        self.at = self.end if timeout is None else min(now + timeout, self.end)  # on time.monotonic()

    def extend(self) -> None:
        """Progress arrived: `timeout` more seconds from now, up to the end."""
        if self.timeout is not None:
            self.at = min(time.monotonic() + self.timeout, self.end)

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def expired(self) -> bool:
        return time.monotonic() >= self.at

    def __str__(self) -> str:
        """What ran out, for error messages: the silence or the whole call's time."""
        if self.timeout is None or self.at >= self.end:
            return f"the max time of {self.max_time:g}s"
        return f"{self.timeout:g}s without progress"


Timeout: TypeAlias = float | Deadline | None
"""What a transport's `request(timeout=...)` takes: seconds for one deadline, a `Deadline`, or None."""


def start_deadline(timeout: Timeout, clock: Callable[[], float]) -> float | Deadline | None:
    """The deadline of a request starting now: `clock() + timeout` for seconds, a `Deadline` as is."""
    if timeout is None or isinstance(timeout, Deadline):
        return timeout
    return clock() + timeout


def expiry(deadline: float | Deadline | None, clock: Callable[[], float]) -> float | None:
    """The instant on `clock` when the next wait ends (a `Deadline` is read afresh each time)."""
    if isinstance(deadline, Deadline):
        return clock() + deadline.remaining()
    return deadline


def seconds_left(timeout: Timeout) -> float | None:
    """The budget of one wait that takes seconds (a library's per-read timeout, a GET to resume)."""
    if isinstance(timeout, Deadline):
        return max(timeout.remaining(), 0.001)
    return timeout


def within_text(timeout: Timeout) -> str:
    """How long was waited, for error messages: "within 30s", "within 2s without progress"."""
    if isinstance(timeout, Deadline):
        return f"within {timeout}"
    return f"within {timeout}s"


def check_limit(value: int) -> int:
    """`value` as a limit: a positive int (not a bool)."""
    if type(value) is not int or value <= 0:
        raise ValueError(f"max_response_bytes must be a positive int, not {value!r}")
    return value


def too_large(source: str, limit: int, what: str = "response") -> ResponseTooLargeError:
    """`what` from `source` (a URL, or a stdio server's program) over `limit` bytes."""
    return ResponseTooLargeError(
        f"{what} from {source} exceeds the client's limit of {limit} bytes (max_response_bytes)", limit=limit
    )


def refuse_encoding(headers: Mapping[str, str], url: str) -> None:
    """A compressed reply: asked for `identity`, so the server is not to be trusted with a
    decompressor's output size. Raises `ProtocolError`."""
    coding = headers.get("content-encoding")
    if coding is not None and coding.strip().lower() not in ("", "identity"):
        raise ProtocolError(
            f"{url} sent a {coding[:40]!r}-encoded response although the client asked for "
            "identity (Accept-Encoding); compressed responses are refused"
        )


def declared_length(headers: Mapping[str, str]) -> int | None:
    """The Content-Length a head declares, when it is a plain number (the engines check the rest)."""
    text = headers.get("content-length")
    if text is None:
        return None
    text = text.split(",", 1)[0].strip()
    return int(text) if text.isdigit() else None
