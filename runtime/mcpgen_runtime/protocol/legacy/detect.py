"""Which era a server speaks, decided without I/O: modern (2026-07-28, per-request `_meta`) or
legacy (the initialize-based revisions, protocol/legacy/handshake.py).

A dual-era client (`era="auto"`) decides from what the server answers (VER-07..10):

- stdio: it probes with `server/discover` before anything else (STDIO-13, VER-09). A result, or
  a recognised modern error, means modern; any other error, or no answer within
  `PROBE_TIMEOUT`, means legacy (STDIO-14: never one error code). A server slow to start may
  answer after that wait: its result (or modern error) arriving while the fallback
  `initialize` is pending still means modern (the handshake is abandoned), and an
  `initialize` refused after a silent probe is followed by one more probe
  (client/legacy_flows.py). The wait starts when the probe is sent: a process gives no sign
  that it is ready before it answers.
- HTTP: it sends the modern request it was going to send anyway (no extra round trip). A
  `4xx` whose body is a recognised modern JSON-RPC error means modern (VER-10), as does the
  server's answer to the request itself (404 + -32601, 400 + -32602, with the request's id:
  an unknown method or tool); any other `4xx` — an empty body, a legacy server's refusal
  outside a session — means legacy. Authentication and rate
  limiting statuses (401, 403, 407, 429) say nothing about the era and are raised as they are.

The verdict holds for the client's lifetime, which is the life of its stdio process or its
HTTP origin (VER-07); when the belief later fails (`initialize` refused by a server that turns
out to be modern) the client probes again.
"""

from __future__ import annotations

from typing import Final, Literal

from ...errors import HttpStatusError, McpRuntimeError, RemoteError, RequestTimeoutError
from ..jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
)

__all__ = [
    "ERAS",
    "MODERN_ERROR_CODES",
    "PROBE_TIMEOUT",
    "Era",
    "EraChoice",
    "check_era",
    "http_says_legacy",
    "probe_says_legacy",
]

Era = Literal["modern", "legacy"]
EraChoice = Literal["auto", "modern", "legacy"]
ERAS: Final = ("auto", "modern", "legacy")

# Error codes only a modern server sends: a reply carrying one identifies the server as modern.
MODERN_ERROR_CODES: Final = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)
# Seconds a stdio probe waits before taking silence for a legacy server (capped by the
# client's own timeout): legacy servers may ignore a request that precedes `initialize`.
PROBE_TIMEOUT: Final = 5.0
DISCOVER: Final = "server/discover"
# A modern server's own answer to a request it read (the error carries the request's id): an unknown
# method is 404 + -32601, as the transport requires, and bad parameters 400 + -32602 (its
# validation failures). Legacy servers refuse a request outside a session with id null or their
# own id ("server-error"), or with no JSON-RPC body at all.
_MODERN_ANSWERS: Final = frozenset({(404, METHOD_NOT_FOUND), (400, INVALID_PARAMS)})
# Statuses that are about the credentials or the load, not the protocol: never an era signal.
_NOT_ERA_STATUSES: Final = frozenset({401, 403, 407, 429})


def check_era(era: object) -> EraChoice:
    if era not in ERAS:
        raise ValueError(f"era must be one of {', '.join(map(repr, ERAS))}, not {era!r}")
    return era


def is_modern_error(exc: BaseException) -> bool:
    return isinstance(exc, RemoteError) and exc.code in MODERN_ERROR_CODES


def probe_says_legacy(exc: McpRuntimeError) -> bool:
    """After a failed stdio `server/discover` probe: whether the server is legacy (STDIO-13/14).
    Any JSON-RPC error that is not a modern one, or silence, means legacy; a dead process or a
    broken stream is no verdict and is raised as it is."""
    if isinstance(exc, RemoteError):
        return not is_modern_error(exc)
    return isinstance(exc, RequestTimeoutError)


def http_says_legacy(exc: McpRuntimeError, method: str) -> bool:
    """After a failed first modern request (`method`) over HTTP: whether the server is legacy
    (VER-10). A `server/discover` answered with a non-modern JSON-RPC error under a 2xx status
    counts too: every modern server serves it, and a legacy server without sessions may
    answer that way."""
    if isinstance(exc, RemoteError):
        status = exc.http_status
        if is_modern_error(exc) or status is None or status in _NOT_ERA_STATUSES:
            return False
        if exc.in_band and (status, exc.code) in _MODERN_ANSWERS and method != DISCOVER:
            return False  # the request itself was read and refused: a modern server's answer
        return 400 <= status < 500 or (method == DISCOVER and 200 <= status < 300)
    if isinstance(exc, HttpStatusError):
        return 400 <= exc.status_code < 500 and exc.status_code not in _NOT_ERA_STATUSES
    return False
