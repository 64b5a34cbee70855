"""What transport failures become: the `TransportError`s both HTTP engines raise, worded once.

`ConnectError` (could not connect, including a connect timeout and TLS verification),
`RequestTimeoutError` (no complete reply in time), `ResponseLostError` (a reply stream ended
before the response, HTTP-26), `HttpStatusError` (a status without a JSON-RPC answer) and
plain `TransportError` for anything else in the exchange.
"""

from __future__ import annotations

import email.utils
import time
from typing import Final
from urllib.parse import urlsplit

from ..errors import (
    MAX_RETRY_AFTER_S,
    ConnectError,
    HttpStatusError,
    RequestTimeoutError,
    ResponseLostError,
    TransportError,
)
from ..protocol.oauth.challenge import challenge_of
from .limits import Timeout, within_text

BODY_PREVIEW: Final = 2000  # bytes of a rejected reply's body kept on HttpStatusError
MAX_NONCE: Final = 256  # characters of a `DPoP-Nonce` header taken (a longer one is ignored)

# Connection failures that, on a reused connection before any response byte, mean the server
# closed it while idle (see ReusedConnectionLost).
RETRYABLE: Final = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


def shown_url(url: str) -> str:
    """`url` as error messages show it: no userinfo, query or fragment (they may carry credentials)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"


def timed_out(url: str, timeout: Timeout) -> RequestTimeoutError:
    return RequestTimeoutError(f"no response from {url} {within_text(timeout)}")


def connect_failed(url: str, exc: BaseException) -> ConnectError:
    return ConnectError(f"cannot connect to {url}: {type(exc).__name__}: {exc}")


def exchange_failed(url: str, exc: BaseException) -> TransportError:
    # A connection cut during the exchange (a replica that died, say): retryable, maybe elsewhere.
    return TransportError(
        f"HTTP exchange with {url} failed: {type(exc).__name__}: {exc}",
        retryable=isinstance(exc, OSError | EOFError),
    )


def stream_ended(url: str) -> ResponseLostError:
    # HTTP-26: the request is lost; a caller may re-issue it with a new id.
    return ResponseLostError(f"SSE response stream from {url} ended before the response")


def status_error(status: int, body: bytes, retry_after: str | None = None) -> HttpStatusError:
    """A non-2xx reply to a request without a JSON-RPC error in its body (`retry_after`: its
    `Retry-After` header, if any)."""
    return HttpStatusError(
        f"HTTP {status} without a JSON-RPC error body",
        status_code=status,
        body=body[:BODY_PREVIEW],
        retry_after_s=retry_after_seconds(retry_after),
    )


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """A `Retry-After` header (RFC 9110 §10.2.3: delay-seconds or an HTTP-date) as seconds from
    `now`, at most `MAX_RETRY_AFTER_S`; None when absent or unreadable. A date in the past is 0."""
    if value is None:
        return None
    text = value.strip()[:64]  # a peer's header: read a bounded piece
    if text.isdigit():
        return min(float(int(text[:12])), MAX_RETRY_AFTER_S)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # an HTTP-date is GMT; parsedate says "no zone" for "-0000"
        return None
    delay = when.timestamp() - (time.time() if now is None else now)
    return min(max(delay, 0.0), MAX_RETRY_AFTER_S)


def challenged(
    status: int, body: bytes, www_authenticate: str, dpop_nonce: str | None = None
) -> HttpStatusError:
    """A 401/403 with an authorization challenge (Bearer or DPoP): whatever the body says, the
    answer is the challenge (AUTH-01), which the client's authorization reads, with the server's
    `DPoP-Nonce` when it sent one (RFC 9449 §9; at most 256 characters). The message repeats the
    challenge's error and description (bounded), never the request's credentials."""
    challenge = challenge_of(www_authenticate)
    why = ""
    if challenge is not None and challenge.error:
        description = challenge.params.get("error_description")
        why = f" ({challenge.error[:60]}{': ' + description[:200] if description else ''})"
        if challenge.scopes:
            why += f", needs scope {' '.join(challenge.scopes)[:200]}"
    what = (
        "refused the request's authorization"
        if status == 403 or (challenge and challenge.error)
        else "asks for authorization"
    )
    return HttpStatusError(
        f"HTTP {status}: the server {what}{why}",
        status_code=status,
        body=body[:BODY_PREVIEW],
        www_authenticate=www_authenticate,
        dpop_nonce=dpop_nonce if dpop_nonce is not None and 0 < len(dpop_nonce) <= MAX_NONCE else None,
    )


def rejected(what: str, status: int, body: bytes) -> HttpStatusError:
    """A non-2xx reply to a POST that carries no request (`what`: a notification, an answer)."""
    return HttpStatusError(
        f"{what} rejected with HTTP {status}", status_code=status, body=body[:BODY_PREVIEW]
    )


def from_httpx(exc: Exception, url: str, timeout: Timeout = None) -> TransportError:
    """An httpx failure as the lean engine would have reported it (a read timeout says how long
    was waited when the request's `timeout` is known)."""
    import httpx  # only the httpx engine gets here, and it has imported httpx already

    if isinstance(exc, httpx.ConnectTimeout | httpx.ConnectError):
        return ConnectError(f"cannot connect to {url}: {exc}")
    if isinstance(exc, httpx.TimeoutException):
        if timeout is not None:
            return timed_out(url, timeout)
        return RequestTimeoutError(f"no response from {url} in time: {exc}")
    failed = exchange_failed(url, exc)
    # A connection cut mid-exchange, as the lean engine's OSError/EOF: httpx's network errors, and
    # the protocol errors httpcore raises for a peer that closed (not those for malformed bytes).
    text = str(exc).lower()
    if isinstance(exc, httpx.NetworkError) or (
        isinstance(exc, httpx.RemoteProtocolError) and ("disconnected" in text or "closed" in text)
    ):
        failed.retryable = True
    return failed
