"""What the client accepts from a server, without I/O: the size limit on a response and how a
breach is reported (the client half of the README's trust model).

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
byte (`pool.py`, `engine.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ..errors import ProtocolError, ResponseTooLargeError

DEFAULT_MAX_RESPONSE_BYTES: Final = 64 * 1024 * 1024
MAX_EVENTS_BEFORE_ENDPOINT: Final = 1024  # HTTP+SSE: messages kept until the `endpoint` event


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
