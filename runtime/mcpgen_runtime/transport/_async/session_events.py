"""A legacy session's standalone GET stream, read in the background (the blocking twin reads it
on a daemon thread): the server's requests that belong to no call (`elicitation/create`,
`roots/list`, `ping`, ...) are answered through the transport's `on_request` hook with a POST,
notifications go to the client's `on_notification` and to every open `listen()`.

The stream is resumed after it ends: wait the server's `retry` (bounded), then `GET` again with
`Last-Event-ID` (2025-11-25/basic-transports.mdx § Listening for Messages from the Server,
§ Resumability and Redelivery). It stops when the server refuses a new GET, after
`MAX_FAILURES` reconnections in a row that failed, or on `stop()`. Each `listen()` reads a
bounded mailbox: a notification flood drops messages rather than grow memory.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Final

from ...errors import McpRuntimeError
from ..asyncio_backend import MAILBOX_END, AsyncMailbox, AsyncWorker, pause
from ..hooks import Message, OnNotification
from ..sse_reader import EventMessages, retry_wait
from .interfaces import AsyncEngineResponse, AsyncEventSource

MAX_FAILURES: Final = 5
MAILBOX_LIMIT: Final = 1024  # notifications a slow `listen()` may fall behind by


class AsyncSessionEvents:
    """The session's GET stream: opened by `open()` (the first GET waits for its head, so the
    server knows the stream before the next request), then read by a worker."""

    def __init__(
        self, session: AsyncEventSource, headers: Mapping[str, str], on_notification: OnNotification | None
    ) -> None:
        self._session = session
        self._headers = dict(headers)
        self._on_notification = on_notification
        self._mailboxes: list[AsyncMailbox] = []
        self._response: AsyncEngineResponse | None = None
        self._worker: AsyncWorker | None = None
        self._last_id: str | None = None
        self._retry_ms: int | None = None
        self._stopped = False
        self.dropped = 0  # notifications a full mailbox could not take

    async def open(self) -> bool:
        try:
            response = await self._session.open_stream(self._headers, None, None)
        except McpRuntimeError:
            return False  # 405: the server offers no standalone stream
        response.forever()
        self._response = response
        self._worker = AsyncWorker(self._pump, "mcpgen-session-events")
        return True

    async def _pump(self) -> None:
        failures = 0
        try:
            while not self._stopped and failures <= MAX_FAILURES:
                response = self._response
                if response is None:
                    await pause(retry_wait(self._retry_ms))
                    try:
                        response = await self._session.open_stream(self._headers, self._last_id, None)
                    except McpRuntimeError:
                        failures += 1
                        continue
                    response.forever()
                    self._response = response
                failures = 0 if await self._read(response) else failures + 1
                self._response = None
        finally:
            for mailbox in self._mailboxes:
                mailbox.close()

    async def _read(self, response: AsyncEngineResponse) -> bool:
        """Read one connection of the stream to its end; True when any event arrived."""
        requests: list[Message] = []
        endpoint = self._session.endpoint
        events = EventMessages(
            requests if endpoint.on_request is not None else None,
            limit=endpoint.max_response_bytes,
            source=endpoint.shown_url,
        )
        got_any = False
        try:
            async for chunk in response.aiter_body():
                for message in events.feed(chunk):
                    got_any = True
                    self._deliver(message)
                if requests:
                    got_any = True
                    await self._session.answer(requests, self._headers)
            for message in events.finish():
                self._deliver(message)
        except McpRuntimeError:
            pass  # a broken connection: resumed like a closed one
        finally:
            with contextlib.suppress(McpRuntimeError, OSError):
                await response.aclose()
            decoder = events.decoder
            if decoder.last_id is not None:
                self._last_id = decoder.last_id
                got_any = True
            if decoder.retry_ms is not None:
                self._retry_ms = decoder.retry_ms
        return got_any

    def _deliver(self, message: Message) -> None:
        if "method" not in message or "id" in message:
            return  # a response replayed on resumption, or a request nobody answers
        if self._on_notification is not None:
            self._on_notification(message)
        for mailbox in self._mailboxes:
            if not mailbox.put(message):
                self.dropped += 1

    def messages(self) -> AsyncIterator[Message]:
        """Every notification from now on (the mailbox is open from this call, not from the
        first item), until the stream stops for good or the iterator is closed: a `listen()`
        of the legacy era."""
        mailbox = AsyncMailbox(MAILBOX_LIMIT)
        if self._stopped or self._worker is None:
            mailbox.close()
        else:
            self._mailboxes.append(mailbox)
        return self._drain(mailbox)

    async def _drain(self, mailbox: AsyncMailbox) -> AsyncIterator[Message]:
        try:
            while True:
                item = await mailbox.get()
                if item is MAILBOX_END:
                    return
                yield item
        finally:
            with contextlib.suppress(ValueError):
                self._mailboxes.remove(mailbox)

    def stop(self) -> None:
        self._stopped = True
        response = self._response
        if response is not None:
            response.abort()  # a blocking read of it ends (the asyncio worker is cancelled too)
        if self._worker is not None:
            self._worker.stop()
        for mailbox in self._mailboxes:
            mailbox.close()
