"""`subscriptions/listen`: long-lived notification streams (SUB-01..08, TOOLS-05).

The hub keeps the open subscriptions of one server. `publish` queues a notification for
every subscription whose acknowledged filter includes it; `listen`, serving one listen
request, drains its subscription's queue onto its own stream, after the acknowledgment
(SUB-02). List-changed notifications are idempotent, so a notification that
is already queued for a subscription is not queued twice: a slow client never makes the
queue grow beyond one entry per notification kind (and per resource URI).

Call `publish` from the event loop thread (from handlers, or via `loop.call_soon_threadsafe`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from ...protocol import jsonrpc
from ...protocol.meta import SUBSCRIPTION_ID_KEY
from .config import IncomingRequest, Outcome
from .handler_errors import RpcError

__all__ = ["LIST_CHANGED", "Subscription", "SubscriptionHub", "honoured_filter", "listen"]

# SubscriptionFilter flag -> the notification it opts into (schema.ts `SubscriptionFilter`).
LIST_CHANGED: dict[str, str] = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}
RESOURCE_SUBSCRIPTIONS = "resourceSubscriptions"
RESOURCE_UPDATED = "notifications/resources/updated"


def honoured_filter(requested: Mapping[str, Any], supported: frozenset[str]) -> dict[str, Any]:
    """The part of a requested filter this server honours (SUB-03): unsupported types are omitted.

    `supported` holds filter field names (`toolsListChanged`, …, `resourceSubscriptions`).
    Raises ValueError for a field of the wrong type.
    """
    honoured: dict[str, Any] = {}
    for name in LIST_CHANGED:
        value = requested.get(name)
        if value is None:
            continue
        if not isinstance(value, bool):
            raise ValueError(f"notifications.{name} must be a boolean")
        if value and name in supported:
            honoured[name] = True
    uris = requested.get(RESOURCE_SUBSCRIPTIONS)
    if uris is not None:
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            raise ValueError(f"notifications.{RESOURCE_SUBSCRIPTIONS} must be an array of strings")
        if RESOURCE_SUBSCRIPTIONS in supported:
            honoured[RESOURCE_SUBSCRIPTIONS] = list(dict.fromkeys(uris))
    return honoured


class Subscription:
    """One open `subscriptions/listen` stream."""

    __slots__ = ("_closed", "_queue", "_wake", "every_uri", "id", "kinds", "uris")

    def __init__(self, id_: jsonrpc.RequestId, honoured: Mapping[str, Any]) -> None:
        self.id = id_
        self.kinds = frozenset(LIST_CHANGED[name] for name in LIST_CHANGED if honoured.get(name))
        self.uris = frozenset(honoured.get(RESOURCE_SUBSCRIPTIONS, ()))
        self.every_uri = False  # the legacy sessions' forwarder: every resource update (it filters)
        self._queue: dict[tuple[str, str], dict[str, Any]] = {}  # insertion-ordered, coalescing
        self._wake = asyncio.Event()
        self._closed = False

    def tagged(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A notification on this stream, carrying the subscription id (SUB-05)."""
        body: dict[str, Any] = dict(params or {})
        body["_meta"] = {**body.get("_meta", {}), SUBSCRIPTION_ID_KEY: self.id}
        return jsonrpc.notification(method, body)

    def offer(self, method: str, params: Mapping[str, Any] | None = None, *, dedupe: str = "") -> None:
        key = (method, dedupe)
        if key not in self._queue:
            self._queue[key] = self.tagged(method, params)
            self._wake.set()

    def close(self) -> None:
        """End the subscription gracefully: the listen coroutine answers and returns (SUB-07)."""
        self._closed = True
        self._wake.set()

    @property
    def closed(self) -> bool:
        return self._closed

    async def next_batch(self, timeout: float | None) -> list[dict[str, Any]] | None:
        """Queued notifications, in order; [] after `timeout` (time for a keep-alive); None once closed."""
        if not self._queue and not self._closed:
            if timeout is None:
                await self._wake.wait()
            else:
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout)
                except TimeoutError:
                    return []
        self._wake.clear()
        if self._closed:
            return None
        batch = list(self._queue.values())
        self._queue.clear()
        return batch


class SubscriptionHub:
    """The open subscriptions of one server (ids may repeat across HTTP clients: kept by identity)."""

    def __init__(self) -> None:
        self._open: set[Subscription] = set()

    def __len__(self) -> int:
        return len(self._open)

    def open(self, id_: jsonrpc.RequestId, honoured: Mapping[str, Any]) -> Subscription:
        subscription = Subscription(id_, honoured)
        self._open.add(subscription)
        return subscription

    def discard(self, subscription: Subscription) -> None:
        self._open.discard(subscription)

    def publish(self, method: str, params: Mapping[str, Any] | None = None) -> int:
        """Queue a list-changed notification for every subscription that opted in (SUB-01);
        returns how many subscriptions it was queued for."""
        count = 0
        for subscription in self._open:
            if method in subscription.kinds:
                subscription.offer(method, params)
                count += 1
        return count

    def publish_resource_updated(self, uri: str) -> int:
        """`notifications/resources/updated` for subscriptions that listed `uri`."""
        count = 0
        for subscription in self._open:
            if uri in subscription.uris or subscription.every_uri:
                subscription.offer(RESOURCE_UPDATED, {"uri": uri}, dedupe=uri)
                count += 1
        return count

    def close_all(self) -> None:
        """End every subscription gracefully (server shutdown)."""
        for subscription in list(self._open):
            subscription.close()


async def listen(
    hub: SubscriptionHub,
    supported: frozenset[str],
    id_: jsonrpc.RequestId,
    params: Mapping[str, Any],
    request: IncomingRequest,
    *,
    keepalive_s: float,
    meta: Mapping[str, Any] | None,
) -> Outcome:
    """One `subscriptions/listen` stream: acknowledgment first (SUB-02), then the notifications
    the client opted into and the server honours (`supported`, SUB-01/03), each tagged with the
    subscription id (SUB-05); a final response when the server ends it (SUB-07). Returns only
    when the subscription ends (client cancellation raises CancelledError here)."""
    notify = request.notify
    if notify is None:
        raise RpcError(jsonrpc.INVALID_REQUEST, "subscriptions/listen needs a transport that can stream")
    requested = params.get("notifications")
    if type(requested) is not dict:
        raise RpcError(jsonrpc.INVALID_PARAMS, "params.notifications must be an object (SubscriptionFilter)")
    try:
        honoured = honoured_filter(requested, supported)
    except ValueError as exc:
        raise RpcError(jsonrpc.INVALID_PARAMS, str(exc)) from exc
    subscription = hub.open(id_, honoured)
    keepalive = request.keepalive
    interval = keepalive_s if keepalive is not None else None
    try:
        await notify(
            subscription.tagged("notifications/subscriptions/acknowledged", {"notifications": honoured})
        )
        while True:
            batch = await subscription.next_batch(interval)
            if batch is None:
                break
            if not batch:
                assert keepalive is not None
                await keepalive()
            for notification in batch:
                await notify(notification)
    finally:
        hub.discard(subscription)
    result: dict[str, Any] = {
        "resultType": jsonrpc.RESULT_COMPLETE,
        "_meta": {**(meta or {}), SUBSCRIPTION_ID_KEY: id_},
    }
    return Outcome(200, {"jsonrpc": "2.0", "id": id_, "result": result})
