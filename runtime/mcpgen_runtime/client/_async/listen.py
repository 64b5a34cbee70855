"""A client's `subscriptions/listen` stream: `with client.listen(...) as sub: for note in sub: ...`
(`async with` / `async for` on an `AsyncClient`).

`ListenState` (protocol/subscriptions.py) decides what each message of the stream means;
this class only pulls messages from the transport's stream. SUB-07/08: a final response (or,
on stdio, `notifications/cancelled` for the listen id) ends iteration; a stream that closes
without either raises `ResponseLostError`. SUB-10: closing the subscription closes the HTTP
stream, or sends `notifications/cancelled` on stdio.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import TracebackType
from typing import Self

from ...errors import ResponseLostError
from ...protocol import jsonrpc
from ...protocol.jsonrpc import Message
from ...protocol.subscriptions import ListenState, SubscriptionFilter
from ..common import AsyncListenOpener

__all__ = ["AsyncSubscription"]


class AsyncSubscription:
    """One listen stream. Opens on entering the `with`, on `open()` or on the first item;
    iteration ends when the server ends the subscription; closing it (or leaving the `with`)
    cancels it. Use it from one thread or task."""

    def __init__(self, opener: AsyncListenOpener, requested: SubscriptionFilter) -> None:
        self._opener = opener
        self.requested = requested
        self._state: ListenState | None = None
        self._stream: AsyncIterator[Message] | None = None

    @property
    def acknowledged(self) -> SubscriptionFilter | None:
        return None if self._state is None else self._state.acknowledged

    @property
    def unsupported(self) -> list[str]:
        return [] if self._state is None else self._state.unsupported

    @property
    def id(self) -> jsonrpc.RequestId | None:
        return None if self._state is None else self._state.id

    async def open(self) -> Self:
        if self._state is None:
            self._state, self._stream = await self._opener(self.requested)
            try:
                while self._state.acknowledged is None:
                    await self._read()
            except BaseException:
                await self.aclose()
                raise
        return self

    async def _read(self) -> Message | None:
        assert self._state is not None and self._stream is not None
        try:
            message = await anext(self._stream)
        except StopAsyncIteration:
            raise ResponseLostError(
                "the listen stream closed without a final response; listen again to resubscribe"
            ) from None
        return self._state.accept(message)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Message:
        state = (await self.open())._state
        assert state is not None
        while not state.ended:
            message = await self._read()
            if message is not None:
                return message
        await self.aclose()
        raise StopAsyncIteration

    async def aclose(self) -> None:
        stream, self._stream = self._stream, None
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()  # HTTP: closes the reply; stdio: notifications/cancelled unless it ended

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
