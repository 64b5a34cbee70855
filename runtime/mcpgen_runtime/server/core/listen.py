"""`subscriptions/listen`: long-lived notification streams (SUB-01..08, TOOLS-05).

The hub keeps the open subscriptions of one server. `publish` queues a notification for
every subscription whose acknowledged filter includes it; `listen`, serving one listen
request, drains its subscription's queue onto its own stream, after the acknowledgment
(SUB-02). List-changed notifications are idempotent, so a notification that
is already queued for a subscription is not queued twice: a slow client never makes the
queue grow beyond one entry per notification kind (and per resource URI). A stream keeps only the
resource URIs `admit` lets through (resource_subscriptions.py), and one owner (a principal, or a
connection when anonymous) holds at most `max_per_owner` open streams.

Call `publish` from the event loop thread (from handlers, or via `loop.call_soon_threadsafe`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
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
TASK_IDS = "taskIds"  # the tasks extension: notifications/tasks for these tasks
TASK_NOTIFICATION = "notifications/tasks"


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
    for field in (RESOURCE_SUBSCRIPTIONS, TASK_IDS):
        values = requested.get(field)
        if values is None:
            continue
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise ValueError(f"notifications.{field} must be an array of strings")
        if field in supported:
            honoured[field] = list(dict.fromkeys(values))
    return honoured


class Subscription:
    """One open `subscriptions/listen` stream."""

    __slots__ = ("_closed", "_queue", "_wake", "every_uri", "id", "kinds", "owner", "task_ids", "uris")

    def __init__(
        self, id_: jsonrpc.RequestId, honoured: Mapping[str, Any], owner: Hashable | None = None
    ) -> None:
        self.id = id_
        self.owner = owner  # who opened it, for the per-owner cap (None: uncounted)
        self.kinds = frozenset(LIST_CHANGED[name] for name in LIST_CHANGED if honoured.get(name))
        self.uris = frozenset(honoured.get(RESOURCE_SUBSCRIPTIONS, ()))
        self.task_ids: frozenset[str] = frozenset()  # set once admitted (the caller's own tasks)
        self.every_uri = False  # the legacy sessions' forwarder: every resource update (it filters)
        self._queue: dict[tuple[str, str], dict[str, Any]] = {}  # insertion-ordered, coalescing
        self._wake = asyncio.Event()
        self._closed = False

    def tagged(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A notification on this stream, carrying the subscription id (SUB-05)."""
        body: dict[str, Any] = dict(params or {})
        body["_meta"] = {**body.get("_meta", {}), SUBSCRIPTION_ID_KEY: self.id}
        return jsonrpc.notification(method, body)

    def offer(
        self, method: str, params: Mapping[str, Any] | None = None, *, dedupe: str = "", latest: bool = False
    ) -> None:
        """Queue a notification unless one with the same (method, dedupe) is queued; `latest`: replace
        that one instead (a task's newest state supersedes an undelivered older one)."""
        key = (method, dedupe)
        if latest:
            self._queue.pop(key, None)
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

    def __init__(self, max_per_owner: int | None = None) -> None:
        self._open: set[Subscription] = set()
        self._max_per_owner = max_per_owner
        self._per_owner: dict[Hashable, int] = {}

    def __len__(self) -> int:
        return len(self._open)

    def open(
        self, id_: jsonrpc.RequestId, honoured: Mapping[str, Any], owner: Hashable | None = None
    ) -> Subscription:
        """A new subscription; RpcError when `owner` already holds `max_per_owner` of them."""
        if owner is not None:
            held = self._per_owner.get(owner, 0)
            if self._max_per_owner is not None and held >= self._max_per_owner:
                raise RpcError(
                    jsonrpc.INVALID_REQUEST,
                    f"Too many open subscriptions/listen streams for this client "
                    f"(at most {self._max_per_owner}); close one first",
                )
            self._per_owner[owner] = held + 1
        subscription = Subscription(id_, honoured, owner)
        self._open.add(subscription)
        return subscription

    def discard(self, subscription: Subscription) -> None:
        if subscription not in self._open:
            return
        self._open.remove(subscription)
        owner = subscription.owner
        if owner is not None:
            held = self._per_owner[owner] - 1
            if held:
                self._per_owner[owner] = held
            else:
                del self._per_owner[owner]

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

    def publish_task(self, task_id: str, params: Mapping[str, Any]) -> int:
        """`notifications/tasks` (the task's newest state) for subscriptions that listed it."""
        count = 0
        for subscription in self._open:
            if task_id in subscription.task_ids:
                subscription.offer(TASK_NOTIFICATION, params, dedupe=task_id, latest=True)
                count += 1
        return count

    def watched_tasks(self) -> set[str]:
        """The task ids some open subscription listens to."""
        return {task_id for subscription in self._open for task_id in subscription.task_ids}

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
    admit: Callable[[Sequence[str]], Awaitable[list[str]]] | None = None,
    admit_tasks: Callable[[Sequence[str]], Awaitable[dict[str, dict[str, Any]]]] | None = None,
    owner: Hashable | None = None,
) -> Outcome:
    """One `subscriptions/listen` stream: acknowledgment first (SUB-02), then the notifications
    the client opted into and the server honours (`supported`, SUB-01/03; resource URIs only those
    `admit` keeps; task ids only those `admit_tasks` keeps, each task's current state sent first),
    each tagged with the subscription id (SUB-05); a final response when the server ends it
    (SUB-07). Returns only when the subscription ends (client cancellation raises CancelledError
    here). `owner` counts the stream against the hub's per-owner cap."""
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
    requested_uris = honoured.pop(RESOURCE_SUBSCRIPTIONS, None)
    requested_tasks = honoured.pop(TASK_IDS, None)
    # The owner's cap first (before any URI is looked at); the URIs once admitted.
    subscription = hub.open(id_, honoured, owner)
    keepalive = request.keepalive
    interval = keepalive_s if keepalive is not None else None
    try:
        if requested_uris is not None:
            kept = requested_uris if admit is None else await admit(requested_uris)
            honoured[RESOURCE_SUBSCRIPTIONS] = kept
            subscription.uris = frozenset(kept)
            # The request stays referenced while the stream is open (hours): keep only what was
            # admitted of a list that may have filled a whole body.
            requested[RESOURCE_SUBSCRIPTIONS] = kept
            requested_uris = None
        if requested_tasks is not None:
            current = await admit_tasks(requested_tasks) if admit_tasks is not None else {}
            honoured[TASK_IDS] = list(current)
            subscription.task_ids = frozenset(current)
            requested[TASK_IDS] = list(current)
            for task_id, state in current.items():  # queued now, sent right after the acknowledgment
                subscription.offer(TASK_NOTIFICATION, state, dedupe=task_id, latest=True)
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
