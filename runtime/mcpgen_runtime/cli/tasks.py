"""The command line's task commands (the tasks extension): a call started with `TOOL ... --no-wait`
prints its task id, and

    python -m PKG --url URL task status ID    # the task now, as JSON (status, statusMessage, ...)
    python -m PKG --url URL task wait ID      # wait to the end; print the tool's result
    python -m PKG --url URL task cancel ID    # tasks/cancel

`wait` shows progress (the task's status messages) on a terminal, answers input the task asks for
as a tool's call does, and exits with a tool call's codes: 0 the tool ran, 1 it reported an error
(isError), 3 the task failed (its JSON-RPC error), was cancelled or is unknown (or a protocol or
transport error), 4 input that cannot be given, 130 interrupted (the task goes on). When a tool's
command is `task`, these commands are `mcp-task` instead.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Final

import click

from ..client import Client
from ..errors import InputRequiredError, McpRuntimeError, ToolError
from ..masking import masked
from .progress import ProgressDisplay
from .prompts import InputRefusedError
from .text import json_text, printable, show_result

__all__ = ["ALTERNATIVE_NAME", "NAME", "task_commands"]

NAME: Final = "task"
ALTERNATIVE_NAME: Final = "mcp-task"  # when a tool's command is `task`
EXIT_TOOL_ERROR: Final = 1
EXIT_PROTOCOL: Final = 3
EXIT_INPUT: Final = 4

Connect = Callable[[click.Context, ProgressDisplay | None], AbstractContextManager[Client]]
"""Opens the client the group's options describe, with this progress display (or none)."""


def task_commands(connect: Connect, name: str = NAME) -> click.Group:
    """The `task` group (`name`: `mcp-task` when a tool has the command `task`)."""
    group = click.Group(
        name,
        help="A task started with TOOL ... --no-wait (its id is a secret: keep it as such): "
        "status, wait (exit codes as for a tool's call), cancel.",
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @group.command("status")
    @click.argument("task_id", metavar="ID")
    @click.pass_context
    def status(ctx: click.Context, task_id: str) -> int:
        """The task now, as JSON (one tasks/get)."""
        try:
            with connect(ctx, None) as client:
                state = client.tasks.get(task_id)
        except McpRuntimeError as exc:
            return _fail(f"{type(exc).__name__}: {exc}", EXIT_PROTOCOL)
        click.echo(json_text(state.wire()))
        return 0

    @group.command("wait")
    @click.argument("task_id", metavar="ID")
    @click.pass_context
    def wait(ctx: click.Context, task_id: str) -> int:
        """Wait for the task to end and print the tool's result."""
        settings: Any = ctx.obj
        display = None if getattr(settings, "quiet", False) else ProgressDisplay(sys.stderr, name)
        failed = None
        try:
            with connect(ctx, display) as client, display if display is not None else nullcontext():
                try:
                    result = client._resume_task(NAME, task_id).result()
                except ToolError as exc:
                    failed = exc.result
        except (InputRefusedError, InputRequiredError) as exc:  # --no-input; or sampling/roots
            return _fail(str(exc), EXIT_INPUT)
        except McpRuntimeError as exc:
            return _fail(f"{type(exc).__name__}: {exc}", EXIT_PROTOCOL)
        output = getattr(settings, "output", "json")
        if failed is not None:
            show_result(failed, output)
            return EXIT_TOOL_ERROR
        show_result(result, output)
        return 0

    @group.command("cancel")
    @click.argument("task_id", metavar="ID")
    @click.pass_context
    def cancel(ctx: click.Context, task_id: str) -> int:
        """Ask the server to cancel the task (tasks/cancel; it may still end otherwise)."""
        try:
            with connect(ctx, None) as client:
                client.tasks.cancel(task_id)
        except McpRuntimeError as exc:
            return _fail(f"{type(exc).__name__}: {exc}", EXIT_PROTOCOL)
        return 0

    return group


def _fail(message: str, code: int) -> int:
    click.echo(f"Error: {printable(masked(message))}", err=True)
    return code
