"""What a server does as one of several replicas sharing a store (store/): the store it is
configured with (`resolve_store`: a shared one needs shared requestState secrets), the retryable
answer when the store is down (`store_unavailable`), rate-limit bucket keys, and `Fanout`.

`Fanout`: changes one replica makes that the others must see, through the store's pub/sub:
list-changed and resource-updated notifications (every replica's `subscriptions/listen` streams
and legacy GET streams get them, TOOLS-05, SUB-01), the run-time tool set (`add_tool` /
`remove_tool` on one replica; the others serve the same names with the handlers they have), and
likewise the run-time set of resources, resource templates and prompts (`share_surfaces`).

With a store that is not shared (the default) every method returns at once and nothing is
scheduled. With a shared one, `start` (the server's start-up, or its first listen stream) joins
the channel and adopts the tool set stored by earlier changes; `announce` and `share_tools`
publish in the background, so a handler that changes the tool set never waits on the store. A
message carries its origin: a replica ignores its own.

Limits: a change published while a replica's pub/sub connection is down does not reach it (it
sees the next one; listen clients re-list then). A tool the shared set names but this replica
has no handler for is not served here (logged): replicas are meant to run the same code.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import secrets
from collections.abc import Callable, Sequence
from typing import Any

from ... import _json
from ...protocol import jsonrpc
from ..store import STORE_ENV, Store, StoreUnavailable, Unsubscribe, open_store
from .bearer_auth import BearerAuth, principal_id
from .config import IncomingRequest, Outcome, ServerConfig
from .listen import LIST_CHANGED, SubscriptionHub
from .request_state import STATE_SECRET_ENV, StateSecretError, configured_keys

__all__ = ["STORE_RETRY_AFTER_MS", "Fanout", "bucket_key", "resolve_store", "store_unavailable"]

_LOG = logging.getLogger("mcpgen.server")

CHANNEL = "changes"
TOOLS_VALUE = "tools"
SURFACES_VALUE = "surfaces"
# Adopts a tool set by name: (names, notify listeners).
AdoptTools = Callable[[list[str], bool], None]
# Adopts the served resources, templates and prompts by key ({"resources": [uri], "resourceTemplates":
# [uriTemplate], "prompts": [name]}), then notifies listeners of that kind's list change (or None).
AdoptSurfaces = Callable[[dict[str, list[str]], str | None], None]

# How long a client should wait before retrying a request refused because the store is down.
STORE_RETRY_AFTER_MS = 1000


def store_unavailable(id_: Any, exc: StoreUnavailable) -> Outcome:
    """The retryable answer to a request that needed the shared store while it was down: HTTP 503
    (with `Retry-After`, added by the HTTP layer) and `-32603` whose data says it can be retried."""
    _LOG.warning("%s", exc)
    return Outcome(
        503,
        jsonrpc.error(
            id_,
            jsonrpc.INTERNAL_ERROR,
            "The server's shared store is unavailable; retry the request shortly",
            {"retryable": True, "retryAfterMs": STORE_RETRY_AFTER_MS},
        ),
    )


def resolve_store(config: ServerConfig) -> Store:
    """`config.store` (a Store, or a URL), else `MCPGEN_STORE`, else memory; StateSecretError when
    the store is shared but the requestState secrets are not configured (each replica would sign
    with its own random key), ValueError for a URL it cannot open."""
    configured = config.store
    if isinstance(configured, Store):
        store = configured
    else:
        store = open_store(configured if configured is not None else os.environ.get(STORE_ENV), config.name)
    if store.shared and configured_keys(config.state_secrets) is None:
        raise StateSecretError(
            f"the shared store {store.description} needs a requestState secret every replica shares: set "
            f"{STATE_SECRET_ENV} (or ServerConfig.state_secrets), else a multi-round call retried on another "
            "replica is refused"
        )
    return store


def bucket_key(auth: BearerAuth | None, request: IncomingRequest) -> str:
    """The caller's rate-limit bucket in a shared store: a digest of the principal (bounded, no
    identity in key names), else the peer address."""
    ident = principal_id(auth, request.principal)
    if ident is not None:
        return "bucket:p:" + hashlib.sha256(ident.encode("utf-8", "replace")).hexdigest()[:32]
    return "bucket:a:" + (request.peer or "")[:64]


class Fanout:
    """Cross-replica changes of one server (see the module docstring)."""

    __slots__ = (
        "_adopt",
        "_adopt_surfaces",
        "_hub",
        "_last_send",
        "_origin",
        "_store",
        "_tasks",
        "_unsubscribe",
    )

    def __init__(
        self,
        store: Store,
        hub: SubscriptionHub,
        adopt_tools: AdoptTools,
        adopt_surfaces: AdoptSurfaces | None = None,
    ) -> None:
        self._store = store
        self._hub = hub
        self._adopt = adopt_tools
        self._adopt_surfaces = adopt_surfaces
        self._origin = secrets.token_hex(8)
        self._unsubscribe: Unsubscribe | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._last_send: asyncio.Task[None] | None = None

    @property
    def active(self) -> bool:
        return self._unsubscribe is not None

    async def start(self) -> None:
        """Join the fan-out (idempotent; nothing for a store that is not shared). StoreUnavailable
        when the store cannot be reached."""
        if self._unsubscribe is not None or not self._store.shared:
            return
        self._unsubscribe = await self._store.subscribe(CHANNEL, self._receive)
        stored = await self._store.get_shared(TOOLS_VALUE)
        if stored:
            names = _json.loads(stored)
            if isinstance(names, list):
                self._adopt([n for n in names if isinstance(n, str)], False)
        if self._adopt_surfaces is not None:
            stored = await self._store.get_shared(SURFACES_VALUE)
            keys = _json.loads(stored) if stored else None
            if isinstance(keys, dict):
                self._adopt_surfaces(_surface_keys(keys), None)

    async def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for task in list(self._tasks):
            task.cancel()

    # ---- this replica's changes --------------------------------------------------------------------

    def announce(self, kind: str, argument: str) -> None:
        """Tell the other replicas: `("list", "tools"|"prompts"|"resources")` or `("resource", uri)`."""
        if self._unsubscribe is not None:
            self._send({"o": self._origin, "k": kind, "a": argument}, None)

    def share_tools(self, names: Sequence[str], notify: bool) -> None:
        """This replica's tool set changed: store it and tell the others to serve the same names."""
        if self._unsubscribe is not None:
            message = {"o": self._origin, "k": "tools", "a": list(names), "n": notify}
            self._send(message, (TOOLS_VALUE, list(names)))

    def share_surfaces(self, keys: dict[str, list[str]], kind: str | None) -> None:
        """This replica's resources, templates or prompts changed: store the set and tell the others
        to serve the same keys (and, `kind` "resources" or "prompts", to tell their listeners)."""
        if self._unsubscribe is not None:
            self._send({"o": self._origin, "k": "surfaces", "a": keys, "n": kind}, (SURFACES_VALUE, keys))

    def _send(self, message: dict[str, Any], value: tuple[str, Any] | None) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not serving (yet): nothing to tell
            return
        task = loop.create_task(self._publish(_json.dumps(message), value, self._last_send))
        self._last_send = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _publish(
        self, message: bytes, value: tuple[str, Any] | None, previous: asyncio.Task[None] | None
    ) -> None:
        # One change after the other: a store's connection pool may carry two concurrent sends on two
        # connections, and the others would then adopt an older set after a newer one.
        if previous is not None and not previous.done():
            await asyncio.wait((previous,))
        try:
            if value is not None:
                await self._store.put_shared(value[0], _json.dumps(value[1]))
            await self._store.publish(CHANNEL, message)
        except StoreUnavailable as exc:
            _LOG.warning("a change was not shared with the other replicas: %s", exc)

    # ---- the others' changes ------------------------------------------------------------------------

    def _receive(self, raw: bytes) -> None:
        try:
            message = _json.loads(raw)
        except _json.JSONDecodeError:
            return
        if not isinstance(message, dict) or message.get("o") == self._origin:
            return
        kind, argument = message.get("k"), message.get("a")
        if kind == "list" and isinstance(argument, str):
            method = LIST_CHANGED.get(f"{argument}ListChanged")
            if method is not None:
                self._hub.publish(method)
        elif kind == "resource" and isinstance(argument, str):
            self._hub.publish_resource_updated(argument)
        elif kind == "tools" and isinstance(argument, list):
            self._adopt([n for n in argument if isinstance(n, str)], message.get("n") is True)
        elif kind == "surfaces" and isinstance(argument, dict) and self._adopt_surfaces is not None:
            notify = message.get("n")
            self._adopt_surfaces(
                _surface_keys(argument), notify if notify in ("resources", "prompts") else None
            )


def _surface_keys(raw: dict[str, Any]) -> dict[str, list[str]]:
    """The shared surface set as sent, keeping only lists of strings under the known keys."""
    out: dict[str, list[str]] = {}
    for key in ("resources", "resourceTemplates", "prompts"):
        values = raw.get(key)
        if isinstance(values, list):
            out[key] = [v for v in values if isinstance(v, str)]
    return out
