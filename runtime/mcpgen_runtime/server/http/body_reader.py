"""Reading an HTTP request body within the body limits of `HttpLimits` (core/limits.py).

`take_first`/`finish_first` and `read_rest` read the body; a body that does not arrive in time
(shorter than its Content-Length, a chunked body never terminated, a trickle) raises
`BodyTimeout`, and the app answers 408 and closes the connection.

Nearly every request arrives whole before the app asks for it: `take_first` then takes the
message without arming any timer (the first step of `receive()` completes at once), so the
deadlines cost nothing on the hot path.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from types import CoroutineType
from typing import Any

from ..core.limits import HttpLimits
from .asgi_io import Message, Receive, Resumed

__all__ = ["BodyTimeout", "body_deadline", "finish_first", "read_rest", "receive_within", "take_first"]


class BodyTimeout(Exception):
    """The request body did not arrive within the limits; `str()` says which one."""


_NOT_STARTED: Any = object()


def take_first(receive: Receive) -> tuple[Message | None, Any, Any]:
    """Run `receive()` up to its first suspension: (message, None, None) when it completed at once,
    else (None, the pending awaitable, what it yielded) for `finish_first` to finish within the limits."""
    pending = receive()
    if type(pending) is not CoroutineType:  # another ASGI server's awaitable: not started here
        return None, pending, _NOT_STARTED
    try:
        first = pending.send(None)
    except StopIteration as done:
        return done.value, None, None
    return None, pending, first


async def finish_first(pending: Any, first: Any, limits: HttpLimits) -> tuple[Message, float]:
    """Finish the `receive()` that `take_first` left pending, within the body limits; also returns
    the deadline of the whole body (for `read_rest`)."""
    deadline = time.monotonic() + limits.body_timeout_s
    awaitable = pending if first is _NOT_STARTED else Resumed(pending, first)
    return await receive_within(awaitable, limits, deadline), deadline


def body_deadline(limits: HttpLimits) -> float:
    """When the whole body must have arrived, for a body whose first part came at once."""
    return time.monotonic() + limits.body_timeout_s


async def read_rest(
    receive: Receive, first: bytes, max_body: int, limits: HttpLimits, deadline: float
) -> bytes | None:
    """The remaining parts of a body sent in several, within the body limits; stops reading past
    `max_body` (the caller answers 413). None: the client went away."""
    chunks = [first]
    size = len(first)
    while True:
        message = await receive_within(receive(), limits, deadline)
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        chunks.append(chunk)
        if size > max_body or not message.get("more_body", False):
            return b"".join(chunks)


async def receive_within(awaitable: Awaitable[Message], limits: HttpLimits, deadline: float) -> Message:
    """Await one `receive()` until the sooner of the idle limit and the body deadline."""
    now = time.monotonic()
    idle = now + limits.body_idle_timeout_s <= deadline
    try:
        async with asyncio.timeout(max(0.0, min(limits.body_idle_timeout_s, deadline - now))):
            return await awaitable
    except TimeoutError:
        raise BodyTimeout(
            f"no part of the request body for {limits.body_idle_timeout_s:g} s"
            if idle
            else f"request body not complete within {limits.body_timeout_s:g} s"
        ) from None
