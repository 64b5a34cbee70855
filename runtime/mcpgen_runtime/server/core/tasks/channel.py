"""`TaskChannel`: how a running task's handler reaches its client — every ask (`ctx.elicit`,
`ctx.sample`, `ctx.list_roots`, `ctx.need` + `ctx.ask`) parks the task `input_required` with the
request under a key unique over the task's life, and returns once a `tasks/update` answered it.

Asks made together (a `need`/`ask` round, or concurrent `elicit` calls) are pending together;
each is answered on its own (a partial `tasks/update` leaves the rest pending).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ...store import StoreUnavailable
from ..handler_errors import ClientRequestError
from .ledger import TaskLedger

__all__ = ["TaskChannel"]

_LOG = logging.getLogger("mcpgen.server")
_TOOL_LOG = logging.getLogger("mcpgen.tools")
_READ_BLOCK_S = 5.0


class TaskChannel:
    """The `ClientChannel` of a detached handler (context.py sends its asks here).

    `publish()` writes the task's current state (it reads `pending`); the worker supplies it."""

    __slots__ = (
        "_after",
        "_asks",
        "_keys",
        "_ledger",
        "_publish",
        "_reader",
        "_task_id",
        "_waiters",
        "pending",
        "protocol_version",
    )

    def __init__(
        self,
        ledger: TaskLedger,
        task_id: str,
        protocol_version: str,
        publish: Callable[[], Awaitable[None]],
        *,
        asks: bool = True,
    ) -> None:
        self.protocol_version = protocol_version
        self._asks = asks  # False: a 2025-11-25 task, whose client has no tasks/update
        self.pending: dict[str, dict[str, Any]] = {}  # key -> wire input request, in the record
        self._ledger = ledger
        self._task_id = task_id
        self._publish = publish
        self._waiters: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._keys = itertools.count(1)
        self._after = 0  # input log position read so far
        self._reader: asyncio.Task[None] | None = None

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Park the task with this request and return the client's answer (its inputResponses entry)."""
        if not self._asks:
            raise ClientRequestError(
                f"{method} cannot be asked inside a 2025-11-25 task: mcpgen asks for input inside "
                "tasks only through the tasks extension (2026-07-28, tasks/update)"
            )
        key = f"{method.partition('/')[0]}-{next(self._keys)}"  # never reused within the task
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[key] = {"method": method, "params": params}
        self._waiters[key] = answer
        try:
            await self._publish()
            if self._reader is None or self._reader.done():
                self._reader = asyncio.create_task(self._read_answers())
            return await answer
        finally:
            self.pending.pop(key, None)
            self._waiters.pop(key, None)

    async def _read_answers(self) -> None:
        while self._waiters:
            try:
                entries = await self._ledger.answers(self._task_id, self._after, _READ_BLOCK_S)
            except StoreUnavailable as exc:
                _LOG.warning("task input not read (retrying): %s", exc)
                await asyncio.sleep(1.0)
                continue
            answered = False
            for position, responses in entries:
                self._after = position
                for key, value in responses.items():
                    waiter = self._waiters.get(key)
                    if waiter is not None and not waiter.done() and isinstance(value, dict):
                        self.pending.pop(key, None)
                        waiter.set_result(value)
                        answered = True
            if answered:
                await self._publish()

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        """A task has no stream to send log messages on: they go to the server's log."""
        _TOOL_LOG.info("%s%s", f"{logger}: " if logger else "", data)

    async def close_stream(self) -> None:
        return None

    def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
