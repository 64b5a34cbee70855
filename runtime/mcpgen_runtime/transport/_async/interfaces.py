"""The interfaces the HTTP transports are written against, so that no module reaches into
another's private names and the imports run one way (httpcore's `interfaces.py` plays the same
part): `streamable_http.py` > `legacy_session.py` > `session_events.py` | `http_sse.py` >
`engine.py` > this module.

- `AsyncEngine` / `AsyncEngineResponse`: one HTTP exchange, whichever engine makes it
  (`engine.py`: the lean HTTP/1.1 pool, or httpx).
- `AsyncEndpoint`: what the legacy parts see of the transport that made them (the Streamable
  HTTP transport): its URL, its limit, and its `on_request` hook, which the client sets only once
  a legacy session has begun, so it is read at each use.
- `AsyncEventSource`: what the legacy session's standalone GET stream (`session_events.py`)
  needs of the legacy session: (re)open the stream, and answer the peer's requests on it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Protocol

from ..hooks import AsyncOnRequest, Message
from ..limits import Deadline, Timeout


class AsyncEngineResponse(Protocol):
    """A reply whose head has arrived."""

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    async def aread(self) -> bytes: ...

    def aiter_body(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None:
        """Done with it: closing an unfinished body is the cancellation (HTTP-21)."""

    def forever(self) -> None:
        """Lift the deadline for the rest of the body (a long-lived event stream)."""

    async def linger(self, seconds: float) -> None:
        """Wait briefly for the rest of the body (its connection is then kept)."""

    def abort(self) -> None:
        """Close it now, from any thread (best effort)."""


RequestSigner = Callable[[str, str, Mapping[str, str]], Mapping[str, str]]
"""(HTTP method, URL, headers) -> the headers to send: what a client's authorization adds to each
request right before it goes out (a DPoP proof, RFC 9449 §7). Not a coroutine: it computes only."""


class AsyncEngine(Protocol):
    name: str
    timeout: float | None  # for POSTs that carry no request (notifications, answers to the peer)
    sign: RequestSigner | None  # applied to every request's headers (none: sent as given)

    async def post(self, body: bytes, headers: Mapping[str, str], timeout: Timeout) -> AsyncEngineResponse:
        """POST `body` (JSON) with `headers` on top of `BASE_HEADERS`; `timeout` None: no deadline
        (a `Deadline`: one that progress pushes back, `limits.py`)."""
        ...

    async def bare(self, method: str, headers: Mapping[str, str], timeout: Timeout) -> AsyncEngineResponse:
        """A request without a body (`GET`, `DELETE`: the legacy session's)."""
        ...

    async def aclose(self) -> None: ...


class AsyncEndpoint(Protocol):
    """The transport as the legacy session and the HTTP+SSE transport see it."""

    @property
    def url(self) -> str: ...

    @property
    def shown_url(self) -> str:
        """The URL as messages show it (`failures.shown_url`)."""

    @property
    def max_response_bytes(self) -> int: ...

    @property
    def on_request(self) -> AsyncOnRequest | None:
        """Answers the peer's requests (`hooks.py`); None drops them."""


class AsyncEventSource(Protocol):
    """The legacy session as its standalone GET stream sees it."""

    @property
    def endpoint(self) -> AsyncEndpoint: ...

    async def open_stream(
        self, headers: Mapping[str, str], last_event_id: str | None, deadline: float | Deadline | None
    ) -> AsyncEngineResponse:
        """`GET` the session's events: resumed after `last_event_id`, or the standalone stream."""
        ...

    async def answer(self, requests: list[Message], headers: Mapping[str, str]) -> None:
        """Answer the peer's `requests` (emptying the list), each with its own POST."""
        ...
