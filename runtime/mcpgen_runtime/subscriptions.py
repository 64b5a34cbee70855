"""Moved: `SubscriptionFilter`, `ListenState` and `SubscriptionWarning` to `mcpgen_runtime.protocol.subscriptions`,
`Subscription` / `AsyncSubscription` to `mcpgen_runtime.client`. This path is kept for one release."""

from .client import AsyncSubscription, Subscription
from .protocol.subscriptions import ListenState, SubscriptionFilter, SubscriptionWarning

__all__ = ["AsyncSubscription", "ListenState", "Subscription", "SubscriptionFilter", "SubscriptionWarning"]
