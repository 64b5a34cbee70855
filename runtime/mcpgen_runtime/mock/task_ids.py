"""Task ids as cassettes and fault decisions see them: `task-1`, `task-2`, … in order of first sight.

A task id is a bearer secret of the principal that created the task: whoever holds it may read
the task's result or cancel it until its TTL ends (on a server without authentication, anyone).
A cassette is meant to be committed and shared, so the recording proxy never writes a real id:
each becomes `task-N` wherever it appears (`taskId` members, `Mcp-Name` headers of `tasks/*`
requests, and inside other strings when it is long enough to be recognised: 16 characters).
Replay then hands the client these names, and its polls match the recorded ones. Numbering by
first sight also makes the same traffic give the same cassette, whatever ids the server drew.

Fault injection numbers ids the same way, so that whether a poll fails depends on the seed and
the order of tasks, not on the random id the server drew.
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["MAX_NAMED", "TaskIdNames"]

MAX_NAMED: Final = 100_000  # ids remembered per recording (a peer must not grow it without bound)
_IN_TEXT_MIN: Final = 16  # shorter ids are renamed as `taskId` values only (never inside other text)
_WORDS: Final = re.compile(rf"[A-Za-z0-9_-]{{{_IN_TEXT_MIN},}}")


class TaskIdNames:
    """Real task ids → `task-N`, learnt from `taskId` members wherever they appear."""

    __slots__ = ("_names", "_next")

    def __init__(self) -> None:
        self._names: dict[str, str] = {}
        self._next = 1

    def name(self, task_id: str) -> str:
        """The placeholder of `task_id` (a new one the first time it is seen)."""
        known = self._names.get(task_id)
        if known is not None:
            return known
        placeholder = f"task-{self._next}"
        self._next += 1
        if len(self._names) >= MAX_NAMED:
            del self._names[next(iter(self._names))]  # the oldest first
        self._names[task_id] = placeholder
        return placeholder

    def learn(self, value: Any) -> None:
        """Name every `taskId` string member of a JSON value."""
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                task_id = item.get("taskId")
                if isinstance(task_id, str) and task_id:
                    self.name(task_id)
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)

    def task_id(self, value: str) -> str:
        """A value in a task id's place (`taskId`, the `Mcp-Name` of a `tasks/*` request), named."""
        return self.name(value) if value else value

    def text(self, value: str) -> str:
        """Any other text, with the known ids of 16 characters or more it is or contains replaced
        (a shorter id could be any word: "1" is an argument too)."""
        if len(value) < _IN_TEXT_MIN or not self._names:
            return value
        exact = self._names.get(value)
        if exact is not None:
            return exact
        return _WORDS.sub(lambda m: self._names.get(m.group(), m.group()), value)

    def rename(self, value: Any) -> Any:
        """A JSON value with every known id replaced (a new value; ids learnt from it first)."""
        self.learn(value)
        return self._renamed(value) if self._names else value

    def _renamed(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self._renamed(item) for item in value]
        if isinstance(value, dict):
            return {
                key: self.task_id(item) if key == "taskId" and isinstance(item, str) else self._renamed(item)
                for key, item in value.items()
            }
        return value
