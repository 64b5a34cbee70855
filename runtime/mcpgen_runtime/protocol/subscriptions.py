"""`subscriptions/listen` without I/O (basic-patterns-subscriptions.mdx).

`SubscriptionFilter` is the wire filter both sides speak. `ListenState` reads one listen
stream for a client (`client/_async/listen.py` iterates over it); the transports deliver the
stream (`stream()`: the SSE reply on HTTP; on stdio the messages tagged with the
subscription's id — SUB-06):

- SUB-02: the acknowledgment comes first; `acknowledged` is the filter the server agreed to.
- SUB-04: requested types the acknowledgment leaves out are listed in `unsupported` and
  announced with a `SubscriptionWarning`; iteration goes on with what is supported.
- SUB-05/06: only messages carrying this subscription's id (or, on HTTP, arriving on its
  stream) are delivered.
- SUB-07/08: a final response (or, on stdio, `notifications/cancelled` for the listen id)
  ends iteration; a stream that closes without either raises `ResponseLostError`.
- CACHE-14: `notifications/tools/list_changed` invalidates the cached `tools/list` pages
  before it is delivered.
- SUB-10: closing the subscription closes the HTTP stream, or sends `notifications/cancelled`
  on stdio.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ProtocolError, RemoteError
from . import jsonrpc
from .jsonrpc import Message
from .meta import SUBSCRIPTION_ID_KEY
from .tasks import mask_task_id

__all__ = ["ListenState", "SubscriptionFilter", "SubscriptionWarning", "subscription_id"]

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
CANCELLED = "notifications/cancelled"
_FLAGS = (
    ("tools_list_changed", "toolsListChanged"),
    ("prompts_list_changed", "promptsListChanged"),
    ("resources_list_changed", "resourcesListChanged"),
)


class SubscriptionWarning(UserWarning):
    """The server acknowledged less than the client asked for (SUB-04)."""


@dataclass(frozen=True, slots=True)
class SubscriptionFilter:
    """Which notifications a listen stream carries (schema.ts `SubscriptionFilter`)."""

    tools_list_changed: bool = False
    prompts_list_changed: bool = False
    resources_list_changed: bool = False
    resource_subscriptions: tuple[str, ...] = ()
    task_ids: tuple[str, ...] = ()  # notifications/tasks (the tasks extension)

    def wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {name: True for attr, name in _FLAGS if getattr(self, attr)}
        if self.resource_subscriptions:
            wire["resourceSubscriptions"] = list(self.resource_subscriptions)
        if self.task_ids:
            wire["taskIds"] = list(self.task_ids)
        return wire

    @classmethod
    def from_wire(cls, value: Any) -> SubscriptionFilter:
        if not isinstance(value, Mapping):
            return cls()
        uris = value.get("resourceSubscriptions")
        ids = value.get("taskIds")
        return cls(
            tools_list_changed=value.get("toolsListChanged") is True,
            prompts_list_changed=value.get("promptsListChanged") is True,
            resources_list_changed=value.get("resourcesListChanged") is True,
            resource_subscriptions=tuple(uri for uri in uris if isinstance(uri, str))
            if isinstance(uris, list)
            else (),
            task_ids=tuple(task_id for task_id in ids if isinstance(task_id, str))
            if isinstance(ids, list)
            else (),
        )

    def missing_from(self, acknowledged: SubscriptionFilter) -> list[str]:
        """Requested notification types (wire names, resource URIs) the acknowledgment lacks."""
        missing = [name for attr, name in _FLAGS if getattr(self, attr) and not getattr(acknowledged, attr)]
        missing += [
            uri for uri in self.resource_subscriptions if uri not in acknowledged.resource_subscriptions
        ]
        missing += [  # task ids are secrets: named masked
            f"task {mask_task_id(task_id)}"
            for task_id in self.task_ids
            if task_id not in acknowledged.task_ids
        ]
        return missing


def subscription_id(message: Mapping[str, Any]) -> Any:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(SUBSCRIPTION_ID_KEY) if isinstance(meta, dict) else None


class ListenState:
    """Reads the messages of one listen stream; `accept` says what to deliver."""

    def __init__(
        self,
        request_id: jsonrpc.RequestId,
        requested: SubscriptionFilter,
        on_notification: Callable[[Message], None],
    ) -> None:
        self.id = request_id
        self.requested = requested
        self.acknowledged: SubscriptionFilter | None = None
        self.unsupported: list[str] = []
        self.ended = False
        self._on_notification = (
            on_notification  # the client's dispatcher: cache invalidation, on_notification
        )

    def accept(self, message: Message) -> Message | None:
        """The notification to deliver, or None (the acknowledgment, someone else's message, or
        the end: then `ended` is set). A JSON-RPC error ends the stream by raising it."""
        if "method" not in message:
            if message.get("id") != self.id or not ("result" in message or "error" in message):
                return None
            if "error" in message:
                raise RemoteError.from_error(message["error"])
            self.ended = True  # the server closed the subscription gracefully (SUB-07)
            return None
        method = message["method"]
        if "id" in message:
            raise ProtocolError(f"server sent a request ({method!r:.100}) on a listen stream (HTTP-15)")
        if method == CANCELLED:
            params = message.get("params")
            if isinstance(params, dict) and params.get("requestId") == self.id:
                self.ended = True  # the server tore the subscription down (SUB-08)
            return None
        sid = subscription_id(message)
        if sid is not None and sid != self.id:
            return None  # another subscription's (SUB-06)
        if method == ACKNOWLEDGED:
            if self.acknowledged is None:
                self._acknowledge(message)
            return None
        if self.acknowledged is None:
            raise ProtocolError(f"listen stream delivered {method!r:.100} before its acknowledgment (SUB-02)")
        self._on_notification(message)
        return message

    def _acknowledge(self, message: Message) -> None:
        params = message.get("params")
        self.acknowledged = SubscriptionFilter.from_wire(
            params.get("notifications") if isinstance(params, dict) else None
        )
        self.unsupported = self.requested.missing_from(self.acknowledged)
        if self.unsupported:
            warnings.warn(
                f"subscriptions/listen: the server does not deliver {', '.join(self.unsupported)} "
                "(SUB-04); listening for the rest",
                SubscriptionWarning,
                stacklevel=4,
            )
