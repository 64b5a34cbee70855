"""`TaskWatch`: `notifications/tasks` for the `subscriptions/listen` streams of this replica.

A stream lists `taskIds`; only the caller's own existing tasks are acknowledged (`admit`). Every
change of a task, made on any replica, is announced on the store's `tasks:changed` channel
(worker.py); the watch reads the task again and queues its newest state (the full DetailedTask) on
the streams listening to it. Every `refresh_s` it also reads the tasks it watches that have not
ended: a task whose worker died then turns `failed` (its lease lapsed) and the streams hear it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any

from ....protocol.tasks import MAX_TASK_ID_LENGTH, mask_task_id
from ...store import Store, StoreUnavailable, Unsubscribe
from ..listen import SubscriptionHub
from .ledger import TaskLedger
from .records import CHANGED_CHANNEL

__all__ = ["TaskWatch"]

_LOG = logging.getLogger("mcpgen.server")


class TaskWatch:
    """The tasks the listen streams of one replica watch (see the module docstring)."""

    __slots__ = (
        "_last",
        "_owners",
        "_refresher",
        "_unsubscribe",
        "hub",
        "ledger",
        "max_ids",
        "refresh_s",
        "store",
    )

    def __init__(
        self, store: Store, ledger: TaskLedger, hub: SubscriptionHub, *, refresh_s: float, max_ids: int
    ) -> None:
        self.store = store
        self.ledger = ledger
        self.hub = hub
        self.refresh_s = refresh_s
        self.max_ids = max_ids  # task ids one stream may listen to; the rest are left out of its ack
        self._owners: dict[str, str | None] = {}  # watched task -> its owner (reads are owner-scoped)
        self._last: dict[str, dict[str, Any]] = {}  # watched task -> the state last queued
        self._unsubscribe: Unsubscribe | None = None
        self._refresher: asyncio.Task[None] | None = None

    async def admit(self, task_ids: Sequence[str], owner: str | None) -> dict[str, dict[str, Any]]:
        """The caller's own existing tasks among `task_ids` (at most `max_ids`), with their states."""
        await self._start()
        kept: dict[str, dict[str, Any]] = {}
        for task_id in task_ids:
            if len(kept) >= self.max_ids:
                break
            if not task_id or len(task_id) > MAX_TASK_ID_LENGTH:
                continue
            record = await self.ledger.read(task_id, owner)
            if record is not None:
                state = kept[task_id] = record.state.wire()
                self._owners[task_id] = owner
                self._last[task_id] = state
        return kept

    async def _start(self) -> None:
        if self._unsubscribe is None:
            self._unsubscribe = await self.store.subscribe(CHANGED_CHANNEL, self._changed)
        if self._refresher is None or self._refresher.done():
            self._refresher = asyncio.get_running_loop().create_task(self._refresh())

    def _changed(self, message: bytes) -> None:
        task_id = message.decode(errors="replace")
        if task_id in self._owners:
            asyncio.get_running_loop().create_task(self._push(task_id))

    async def _push(self, task_id: str) -> None:
        if task_id not in self._owners:
            return
        try:
            record = await self.ledger.read(task_id, self._owners[task_id])
        except StoreUnavailable as exc:
            _LOG.warning("task %s: change not read: %s", mask_task_id(task_id), exc)
            return
        if record is None:  # expired: nothing more will be said about it
            self._forget(task_id)
            return
        state = record.state.wire()
        if self._last.get(task_id) != state:
            self._last[task_id] = state
            self.hub.publish_task(task_id, state)

    async def _refresh(self) -> None:
        """Read the watched tasks that have not ended now and then (a dead worker's lease lapses
        without anyone announcing it); ends when no stream watches a task any more."""
        while True:
            await asyncio.sleep(self.refresh_s)
            watched = self.hub.watched_tasks()
            for task_id in [t for t in self._owners if t not in watched]:
                self._forget(task_id)
            if not self._owners:
                return
            for task_id in list(self._owners):
                if self._last.get(task_id, {}).get("status") in ("working", "input_required", None):
                    await self._push(task_id)

    def _forget(self, task_id: str) -> None:
        self._owners.pop(task_id, None)
        self._last.pop(task_id, None)

    async def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._refresher is not None:
            self._refresher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refresher
