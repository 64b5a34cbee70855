"""Which resource URIs a client may subscribe to, and how many (both eras), without I/O.

A subscription is a URI the server keeps for a client until it goes away (a legacy session's
`resources/subscribe`, kept in the session record; a `subscriptions/listen` stream's
`resourceSubscriptions`), so what a client may make it keep is bounded here:

- a URI longer than `ServerConfig.max_uri_length` (characters, as for `resources/read`) is never kept;
- a URI no static resource or template serves (`Surfaces.serves`) is never kept;
- `ToolServer.may_subscribe(uri, principal)` decides whether this principal may watch it (default:
  whoever may call the server may read, hence watch, every resource it serves);
- one session, or one listen stream, keeps at most `LegacySessionOptions.max_resource_subscriptions` URIs
  of at most `max_resource_subscription_bytes` together.

A legacy `resources/subscribe` past a bound is refused (`refusal`); a listen stream's acknowledgment
leaves such URIs out (`admit`, SUB-03: the client sees what it did not get, SUB-04).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any

from ....protocol import jsonrpc
from ..handler_errors import RpcError
from .surfaces import resource_not_found
from .uri_match import check_uri_length

__all__ = ["MaySubscribe", "SubscribeRules", "utf8_size"]

_LOG = logging.getLogger("mcpgen.server")

# ToolServer.may_subscribe: (uri, principal) -> whether that principal may watch the URI.
MaySubscribe = Callable[[str, Any], Awaitable[bool]]


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


class SubscribeRules:
    """The bounds above for one server (`served` and `may_subscribe` are the server's)."""

    __slots__ = ("_may_subscribe", "_served", "max_bytes", "max_count", "max_uri_length")

    def __init__(
        self,
        *,
        max_uri_length: int,
        max_count: int,
        max_bytes: int,
        served: Callable[[str], bool],
        may_subscribe: MaySubscribe,
    ) -> None:
        self.max_uri_length = max_uri_length
        self.max_count = max_count
        self.max_bytes = max_bytes
        self._served = served
        self._may_subscribe = may_subscribe

    async def _allowed(self, uri: str, principal: Any) -> bool:
        if not self._served(uri):
            return False
        try:
            return await self._may_subscribe(uri, principal) is True
        except Exception:  # a failing hook refuses (closed, never open)
            _LOG.exception("may_subscribe(%.200r) failed; the subscription is refused", uri)
            return False

    async def refusal(
        self, uri: str, principal: Any, held: Collection[str], protocol_version: str
    ) -> RpcError | None:
        """Why a legacy session holding `held` may not add `uri` (None: it may)."""
        try:
            check_uri_length(uri, self.max_uri_length)
        except RpcError as too_long:
            return too_long
        if not await self._allowed(uri, principal):
            # Not served and not permitted answer alike: a principal learns nothing of others' resources.
            return resource_not_found(uri, protocol_version)
        if uri not in held and (
            len(held) >= self.max_count or sum(map(utf8_size, held)) + utf8_size(uri) > self.max_bytes
        ):
            return RpcError(
                jsonrpc.INVALID_PARAMS,
                f"Too many resource subscriptions in this session (at most {self.max_count} URIs, "
                f"{self.max_bytes} bytes together)",
            )
        return None

    async def admit(self, uris: Sequence[str], principal: Any) -> list[str]:
        """The URIs of a listen request the stream keeps, in order: only the first `max_count`
        distinct ones are looked at, and those over a bound are left out."""
        kept: list[str] = []
        seen: set[str] = set()
        budget = self.max_bytes
        for uri in uris:
            if len(seen) >= self.max_count:
                break
            if uri in seen:
                continue
            seen.add(uri)
            if len(uri) > self.max_uri_length:
                continue
            size = utf8_size(uri)
            if size <= budget and await self._allowed(uri, principal):
                kept.append(uri)
                budget -= size
        return kept
