"""PLACEHOLDER (issue 34, generator branch only): the typed surface of `AsyncTaskHandle` (and its
twin `TaskHandle`) from docs TASKS-DESIGN.md, so that generated code type-checks before the client
runtime lands. Every method raises NotImplementedError; the client engineer's module replaces this
one at merge."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from ...protocol.tasks import TaskState

__all__ = ["AsyncTaskHandle"]

T = TypeVar("T")


class AsyncTaskHandle(Generic[T]):
    """A client's typed view of one task (placeholder: no behaviour)."""

    tool: str
    task_id: str | None

    def __init__(self, tool: str, task_id: str | None) -> None:
        self.tool = tool
        self.task_id = task_id

    async def status(self) -> TaskState:
        raise NotImplementedError

    async def wait(self, timeout: float | None = None) -> TaskState:
        raise NotImplementedError

    async def result(self) -> T:
        raise NotImplementedError

    async def cancel(self) -> None:
        raise NotImplementedError

    async def respond(self, responses: Mapping[str, Any]) -> None:
        raise NotImplementedError
