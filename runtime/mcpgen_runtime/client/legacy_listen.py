"""`listen()` on a legacy server: its notifications arrive unasked (the session's GET stream, or
stdio lines that answer no request), so there is no `subscriptions/listen` to acknowledge.
`LegacyListenState` stands in for `ListenState`: the requested kinds count as acknowledged at
once, and only notifications of the requested kinds are delivered, the same objects as in the
modern era. Resource subscriptions are made with `resources/subscribe` (RES-08) by the driver;
the URIs the server accepted are `subscribed`, and `notifications/resources/updated` for them is
delivered; the others are reported unsupported (SUB-04).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from ..protocol.jsonrpc import Message
from ..protocol.subscriptions import ListenState, SubscriptionFilter, SubscriptionWarning

__all__ = ["LegacyListenState"]

_KINDS = (
    ("tools_list_changed", "notifications/tools/list_changed"),
    ("prompts_list_changed", "notifications/prompts/list_changed"),
    ("resources_list_changed", "notifications/resources/list_changed"),
)


UPDATED = "notifications/resources/updated"


class LegacyListenState(ListenState):
    def __init__(
        self,
        requested: SubscriptionFilter,
        on_notification: Callable[[Message], None],
        subscribed: tuple[str, ...] = (),
    ) -> None:
        super().__init__(0, requested, on_notification)
        self.subscribed = frozenset(subscribed)
        self.acknowledged = SubscriptionFilter(
            requested.tools_list_changed,
            requested.prompts_list_changed,
            requested.resources_list_changed,
            tuple(uri for uri in requested.resource_subscriptions if uri in self.subscribed),
        )
        self.unsupported = [uri for uri in requested.resource_subscriptions if uri not in self.subscribed]
        if self.unsupported:
            warnings.warn(
                "listen(): the legacy server refused resources/subscribe for "
                f"{', '.join(self.unsupported)}; listening for the rest",
                SubscriptionWarning,
                stacklevel=4,
            )
        self._methods = frozenset(method for attr, method in _KINDS if getattr(requested, attr))

    def accept(self, message: Message) -> Message | None:
        if "id" in message:
            return None
        method = message.get("method")
        if method == UPDATED:
            params = message.get("params")
            if not (isinstance(params, dict) and params.get("uri") in self.subscribed):
                return None
        elif method not in self._methods:
            return None
        self._on_notification(message)
        return message
