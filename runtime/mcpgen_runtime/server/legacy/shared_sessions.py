"""Legacy sessions kept in a shared store, so that every replica serves them (`SharedSessionStore`,
a `LegacySessionStore`; http/legacy/sessions.py uses it when `ServerConfig.store` is shared).

What is shared: the session record (id, principal, protocol version, client capabilities and
info, log level, initialized) under `session:<id>`, expiring after the idle timeout and renewed
by each request (GETEX); the events of every SSE stream, mirrored in order to a bounded log
`events:<session>:<stream>` (the replay buffer), so a `Last-Event-ID` resume on another replica
replays them and then follows what the producing replica still writes (`follow`); and the
client's answers to server-to-client requests and its `notifications/cancelled`, published to
the replicas (`forward`) so the one running the call gets them.

What stays in the process that serves it: running calls, pending server-to-client requests,
attached connections. A replica that dies takes its running calls with it (the client gets no
response and retries); the session itself lives on.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

from ... import _json
from ..core.config import LegacySessionOptions
from ..store import Store, StoreUnavailable
from .event_streams import END, EventStream
from .sessions import Session

__all__ = ["SharedSessionStore"]

_LOG = logging.getLogger("mcpgen.server")

_CHANNEL = "session-messages"
_MAX_LOCAL = 10_000


def _record(session: Session) -> bytes:
    return _json.dumps(
        {
            "p": session.principal,
            "v": session.protocol_version,
            "c": session.client_capabilities,
            "i": dict(session.client_info),
            "l": session.log_level,
            "n": session.initialized,
            "r": sorted(session.resource_subscriptions or ()),
        }
    )


class SharedSessionStore:
    """Sessions in a shared `Store` (see the module docstring); a `LegacySessionStore`."""

    def __init__(self, store: Store, options: LegacySessionOptions) -> None:
        self._store = store
        self._options = options
        self._ttl = options.idle_timeout_s
        self._tag = secrets.token_hex(4) + "."  # this replica's stream-id prefix
        self._local: OrderedDict[str, Session] = OrderedDict()
        self._writers: set[asyncio.Task[None]] = set()
        self._subscribed = False

    def __len__(self) -> int:
        return len(self._local)

    # ---- LegacySessionStore -----------------------------------------------------------------------------

    async def add(self, session: Session) -> bool:
        assert session.id is not None
        await self._subscribe()
        await self._store.put("session:" + session.id, _record(session), self._ttl)
        self._keep(session)
        return True

    async def get(self, session_id: str) -> Session | None:
        await self._subscribe()
        raw = await self._store.get("session:" + session_id, touch_s=self._ttl)
        local = self._local.get(session_id)
        if raw is None:
            if local is not None and local.busy:  # a call outlived the idle timeout: keep its record
                await self.save(local)
                return local
            if local is not None:
                del self._local[session_id]
                local.end()
            return None
        record = _json.loads(raw)
        if local is None:  # opened on another replica
            local = Session(
                session_id, record.get("p"), record["v"], record.get("c") or {}, record.get("i") or {}
            )
            self._keep(local)
        else:
            self._local.move_to_end(session_id)
        local.log_level = record.get("l")
        local.initialized = bool(record.get("n"))
        subscribed = record.get("r")
        local.resource_subscriptions = set(subscribed) if subscribed else None
        return local

    async def remove(self, session_id: str) -> Session | None:
        await self._store.delete("session:" + session_id)
        return self._local.pop(session_id, None)

    async def save(self, session: Session) -> None:
        assert session.id is not None
        await self._store.put("session:" + session.id, _record(session), self._ttl)

    def close(self) -> None:
        """Shutdown of this replica: its local parts end; the records stay for the others."""
        for session in list(self._local.values()):
            session.end()
        self._local.clear()

    def _keep(self, session: Session) -> None:
        session.stream_prefix = self._tag
        session.on_new_stream = lambda stream: self._mirror(session, stream)
        self._local[session.id or ""] = session
        if len(self._local) > _MAX_LOCAL:  # forget the least recent idle copy (its record stays)
            for key, old in self._local.items():
                if not old.busy:
                    del self._local[key]
                    break

    # ---- SSE streams: mirrored to the store, followed from another replica ----------------------------

    def _mirror(self, session: Session, stream: EventStream) -> None:
        """Copy `stream`'s events, in order, to its shared log (one writer task per stream)."""
        log = f"events:{session.id}:{stream.id}"
        queue: asyncio.Queue[tuple[int, bytes]] = asyncio.Queue()
        max_len = self._options.replay_events + 2  # the priming event and the end marker

        async def write() -> None:
            while True:
                position, data = await queue.get()
                try:
                    await self._store.append(log, b"%d\n" % position + data, max_len=max_len, ttl_s=self._ttl)
                except StoreUnavailable as exc:
                    _LOG.warning("event of stream %s not mirrored: %s", stream.id, exc)
                if position == END:
                    return

        task = asyncio.get_running_loop().create_task(write())
        self._writers.add(task)
        task.add_done_callback(self._writers.discard)
        stream.mirror = lambda position, data: queue.put_nowait((position, data))

    async def exists(self, session: Session, stream_id: str, *, wait_s: float = 0.0) -> bool:
        """Whether another replica mirrored a stream of this id for `session`, waiting up to
        `wait_s` for its first event: mirroring is written behind, so a client that got the
        priming event and reconnected at once can arrive before it."""
        log = f"events:{session.id}:{stream_id}"
        return bool(await self._store.read(log, 0, count=1, block_s=wait_s))

    async def follow(
        self, session: Session, stream_id: str, after: int, *, wait_s: float
    ) -> AsyncIterator[bytes | None]:
        """The SSE events of a stream produced elsewhere, after position `after`: the replay, then
        each new one as it is written; None after `wait_s` without one (time for a keep-alive).
        Ends when the stream finished or its log expired."""
        log = f"events:{session.id}:{stream_id}"
        cursor = 0
        while True:
            entries = await self._store.read(log, cursor, block_s=wait_s)
            if not entries:
                if not await self._store.read(log, 0, count=1):
                    return  # the log expired: its producer is gone (its replica died, or the session ended)
                yield None
                continue
            for position_in_log, data in entries:
                cursor = position_in_log
                head, _, event = data.partition(b"\n")
                position = int(head)
                if position == END:
                    return
                if position > after:
                    yield event

    # ---- messages for the replica that runs the call ----------------------------------------------

    async def forward(self, session: Session, message: dict[str, Any]) -> None:
        """A response or cancellation this replica has no waiter for: publish it to the others."""
        await self._store.publish(_CHANNEL, _json.dumps({"s": session.id, "m": message}))

    async def _subscribe(self) -> None:
        if not self._subscribed:
            await self._store.subscribe(_CHANNEL, self._receive)
            self._subscribed = True

    def _receive(self, raw: bytes) -> None:
        try:
            envelope = _json.loads(raw)
        except _json.JSONDecodeError:
            return
        session_id = envelope.get("s") if isinstance(envelope, dict) else None
        session = self._local.get(session_id) if isinstance(session_id, str) else None
        message = envelope.get("m") if session is not None else None
        if session is None or not isinstance(message, dict):
            return
        if "method" not in message:
            session.answer(message)
        elif message.get("method") == "notifications/cancelled":
            params = message.get("params")
            request_id = params.get("requestId") if isinstance(params, dict) else None
            if request_id is not None:
                session.cancel(request_id)


def shared_session_store(store: Store, options: LegacySessionOptions) -> SharedSessionStore | None:
    """The session store for a shared `store` (None: keep sessions in memory)."""
    return SharedSessionStore(store, options) if store.shared else None
