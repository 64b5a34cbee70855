"""The steps a `ClientCore` flow yields to its driver, and the flow type itself."""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ..transport.limits import Timeout
from .input_responses import InputNeeded

__all__ = ["Flow", "InputNeeded", "Notify", "Outgoing", "Step"]

T = TypeVar("T")


@dataclass(slots=True)
class Outgoing:
    """A request a flow wants sent."""

    message: dict[str, Any]
    headers: Mapping[str, str]
    timeout: Timeout  # seconds, or a `Deadline` that the call's progress pushes back
    # stdio only: a late reply to an earlier request given up on that this accepts ends the wait
    # too, as the reply (the fallback `initialize` hears a timed-out probe's answer this way)
    also: Callable[[dict[str, Any]], bool] | None = None
    # a plain call waiting on a task: the `tasks/cancel` to send if the caller interrupts it here
    abort: Outgoing | None = None


@dataclass(slots=True)
class Notify:
    """A notification a flow wants sent (legacy era: `notifications/initialized`, and
    `notifications/cancelled` over HTTP). With `best_effort` a failure to send is ignored."""

    message: dict[str, Any]
    headers: Mapping[str, str]
    best_effort: bool = False


Step = Outgoing | InputNeeded | Notify
Flow = Generator[Step, Any, T]
"""Yields steps; is sent a `Reply` for an `Outgoing`, `{key: answer}` for an `InputNeeded`,
None for a `Notify`."""
