"""The transport contract, written once (the blocking twin is `SyncTransport`); `base.py`
re-exports both and says what a transport is for."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Protocol, runtime_checkable

from ..hooks import AsyncOnRequest, Message, OnNotification, Reply
from ..limits import Timeout


@runtime_checkable
class AsyncTransport(Protocol):
    on_request: AsyncOnRequest | None
    """Answers requests the peer initiates mid-reply (`hooks.py`); None drops them."""

    async def start(self) -> None:
        """Get ready to send (a stdio transport starts its process); a no-op once started."""
        ...

    # Each transport restates this signature (a Protocol is matched, not inherited), so the
    # repeats in streamable_http.py and the stdio transports stay.
    async def request(
        self,
        message: Message,
        headers: Mapping[str, str],
        *,
        timeout: Timeout,
        on_notification: OnNotification | None = None,
    ) -> Reply:
        """Send one JSON-RPC request; return (response message, HTTP status or None).
        Notifications that arrive before the response go to `on_notification`. `timeout`:
        seconds for one deadline over the whole request, or (only for a call made with
        `max_time`) a `limits.Deadline` that progress pushes back, read before each wait."""
        ...

    async def notify(self, message: Message, headers: Mapping[str, str]) -> None:
        """Send one JSON-RPC notification (no reply is read)."""
        ...

    def stream(self, message: Message, headers: Mapping[str, str]) -> AsyncIterator[Message]:
        """Send a request whose reply is long-lived (`subscriptions/listen`) and iterate over
        every message of it as it arrives, the response (or the peer's cancellation) last;
        closing the iterator early cancels the request."""
        ...

    async def aclose(self) -> None:
        """Release everything (connections, the process); the transport is not used again."""
        ...
