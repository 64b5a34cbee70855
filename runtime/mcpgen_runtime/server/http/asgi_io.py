"""ASGI plumbing shared by both Streamable HTTP paths — the stateless 2026-07-28 one (app.py)
and legacy sessions (legacy/sessions.py): the ASGI types, JSON and SSE replies, error bodies,
continuing a coroutine that already ran its first step, and noticing a client that went away.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Generator, MutableMapping
from typing import Any, Final, Generic, TypeVar

from ... import _json
from ...protocol import jsonrpc
from ..core.config import Outcome

__all__ = [
    "CONTENT_TYPE_JSON",
    "EVENT_PREFIX",
    "EVENT_SUFFIX",
    "JSON_HEADERS",
    "SSE_HEADERS",
    "ASGIApp",
    "Gone",
    "Message",
    "Receive",
    "Resumed",
    "Scope",
    "Send",
    "cancel_on_disconnect",
    "reply",
    "send_body",
    "send_empty",
    "send_error",
    "wait_for_disconnect",
]

# The ASGI types, once for the runtime (the mock's proxies and fault layer use them too).
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CONTENT_TYPE_JSON: Final = (b"content-type", b"application/json")
JSON_HEADERS: Final = [CONTENT_TYPE_JSON]
SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),  # HTTP-18
]
RETRY_AFTER: Final = (b"retry-after", b"1")
EVENT_PREFIX: Final = b"event: message\ndata: "
EVENT_SUFFIX: Final = b"\n\n"


async def send_body(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def send_empty(send: Send, status: int, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*(headers or ()), (b"content-length", b"0")],
        }
    )
    await send({"type": "http.response.body", "body": b""})


async def send_error(
    send: Send,
    status: int,
    message: str,
    *,
    code: int = jsonrpc.INVALID_REQUEST,
    close: bool = False,
    id_: Any = None,
) -> None:
    headers = [*JSON_HEADERS, (b"connection", b"close")] if close else JSON_HEADERS
    await send_body(send, status, _json.dumps(jsonrpc.error(id_, code, message)), headers)


async def reply(send: Send, outcome: Outcome, *, sse: bool) -> None:
    """The whole answer to one message: empty (an accepted notification), one SSE event (a
    client that takes only SSE), or JSON."""
    status, response = outcome
    if response is None:  # accepted notification (HTTP-10)
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
    elif sse and status == 200:  # a client that only takes SSE gets a one-event stream
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        await send(
            {"type": "http.response.body", "body": EVENT_PREFIX + _json.dumps(response) + EVENT_SUFFIX}
        )
    else:  # send_body, inlined: this is every JSON reply
        body = _json.dumps(response)
        headers = [CONTENT_TYPE_JSON, (b"content-length", b"%d" % len(body))]
        if status == 503:  # the shared store is down (dispatch.store_unavailable): retry after a while
            headers.append(RETRY_AFTER)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


_T = TypeVar("_T")


class Resumed(Generic[_T]):
    """Awaitable that continues a coroutine which already ran its first step and yielded `first`
    (PEP 380 delegation, as `await` itself does: values go up to the task, sends and throws
    come back down). What Python 3.12's eager tasks do, for one coroutine."""

    __slots__ = ("coro", "first")

    def __init__(self, coro: Coroutine[Any, Any, _T], first: Any) -> None:
        self.coro = coro
        self.first = first

    def __await__(self) -> Generator[Any, Any, _T]:
        coro, value = self.coro, self.first
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # cancellation and friends go to the coroutine
                try:
                    value = coro.throw(exc)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]
            else:
                try:
                    value = coro.send(sent)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]


class Gone:
    __slots__ = ("disconnected",)

    def __init__(self) -> None:
        self.disconnected = False


async def cancel_on_disconnect(receive: Receive, task: asyncio.Task[Any], gone: Gone) -> None:
    await wait_for_disconnect(receive)
    gone.disconnected = True
    task.cancel()


async def wait_for_disconnect(receive: Receive) -> None:
    """Return once the client has closed the connection (the request body was read already)."""
    while (await receive())["type"] != "http.disconnect":
        pass
