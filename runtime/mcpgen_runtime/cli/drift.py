"""The command line's drift check: `python -m PKG --url URL check` (`mcp-check` when a tool's
command is `check`) lists the server's tools and compares them with the pins the package was
generated with (`Client.check_drift`, client/drift.py).

It prints one line per drifted tool (what changed, by JSON pointer; a tool the server no longer
lists) or that nothing drifted, and exits 0 when nothing drifted, 1 when something did, 3 when the
server could not be asked (a protocol or transport error), as a tool's call does.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Final

import click

from ..client import Client
from ..errors import McpRuntimeError
from ..masking import masked
from .text import printable

__all__ = ["ALTERNATIVE_NAME", "NAME", "check_command"]

NAME: Final = "check"
ALTERNATIVE_NAME: Final = "mcp-check"  # when a tool's command is `check`
EXIT_DRIFT: Final = 1
EXIT_PROTOCOL: Final = 3

Connect = Callable[[click.Context], AbstractContextManager[Client]]
"""Opens the client the group's options describe (its own drift mode `ignore`: this reports)."""


def check_command(connect: Connect, name: str = NAME) -> click.Command:
    """The `check` command (`name`: `mcp-check` when a tool has the command `check`)."""

    @click.command(
        name,
        help="Compare the server's tool definitions with the ones this package was generated from "
        "(name, title, description, schemas, annotations): exit 1 when any changed or is gone.",
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    @click.pass_context
    def check(ctx: click.Context) -> int:
        try:
            with connect(ctx) as client:
                report = client.check_drift(refresh=True)
        except McpRuntimeError as exc:
            click.echo(f"Error: {printable(masked(f'{type(exc).__name__}: {exc}'))}", err=True)
            return EXIT_PROTOCOL
        if not report:
            click.echo(printable(report.describe()))
            return 0
        for drift in report.drifts:
            click.echo(f"drift: {printable(drift.describe())}")
        return EXIT_DRIFT

    return check
