"""`listen()` on a legacy server: its notifications arrive unasked (the session's GET stream, or
stdio lines that answer no request), so there is no `subscriptions/listen` to acknowledge.
`LegacyListenState` stands in for `ListenState`: the requested kinds count as acknowledged at
once (resource subscriptions, which need `resources/subscribe`, are reported unsupported), and
only notifications of the requested kinds are delivered, the same objects as in the modern era.
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


class LegacyListenState(ListenState):
    def __init__(self, requested: SubscriptionFilter, on_notification: Callable[[Message], None]) -> None:
        super().__init__(0, requested, on_notification)
        self.acknowledged = SubscriptionFilter(
            requested.tools_list_changed, requested.prompts_list_changed, requested.resources_list_changed
        )
        self.unsupported = list(requested.resource_subscriptions)
        if self.unsupported:
            warnings.warn(
                "listen() on a legacy server delivers list changes only; resource subscriptions "
                f"({', '.join(self.unsupported)}) are not supported",
                SubscriptionWarning,
                stacklevel=4,
            )
        self._methods = frozenset(method for attr, method in _KINDS if getattr(requested, attr))

    def accept(self, message: Message) -> Message | None:
        if message.get("method") not in self._methods or "id" in message:
            return None
        self._on_notification(message)
        return message
