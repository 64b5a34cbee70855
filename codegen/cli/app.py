"""The `mcpgen` command group: every command of the command line, added under one click group."""

from __future__ import annotations

import gc
from typing import Any

import click

from mcpgen_runtime._version import PROTOCOL_VERSION, __version__

from .auth import auth_group
from .common import CONTEXT_SETTINGS, EXIT_INTERRUPTED, INTERRUPTED_NOTE, PROGRAM
from .diff import diff
from .generate import client, server
from .inspect import servers, snapshot, validate
from .lint import lint
from .mock import mock
from .output import quiet_option
from .targets import generate

__all__ = ["main"]


class _Program(click.Group):
    """The group as a program (`mcpgen`, `main()`): the process ends when the command does."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self.main(*args, obj=PROGRAM, **kwargs)
        finally:
            # The interpreter's last act is a full collection over every object still alive: for
            # a 1,000-tool package, half a second spent looking for cycles in memory about to be
            # dropped. Frozen objects are left out of it (CliRunner calls `main`, not this).
            gc.freeze()

    def invoke(self, ctx: click.Context) -> Any:
        # click turns Ctrl-C into "Aborted!" and exit 1; a shell and CI expect 128 + SIGINT
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo(f"\nmcpgen: interrupted{ctx.meta.get(INTERRUPTED_NOTE, '')}", err=True)
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None


@click.group(cls=_Program, context_settings=CONTEXT_SETTINGS)
@click.version_option(
    __version__,
    "--version",
    prog_name="mcpgen",
    message=f"%(prog)s %(version)s (MCP protocol {PROTOCOL_VERSION})",
)
def main() -> None:
    """Typed Python clients and servers from MCP tool definitions.

    SOURCE is a JSON spec file ({"tools": [...]}, as tools/list returns them) or the URL of a live
    MCP server (every tools/list page is read). Exit codes: 0 ok, 1 invalid input or stale output,
    2 usage error, 3 a bug in mcpgen, 130 interrupted (Ctrl-C).
    """


def _quiet_everywhere(command: click.Command) -> None:
    """-q/--quiet on `command` and, for a group, on each of its commands (`mcpgen -q auth login`
    and `mcpgen auth login -q` alike)."""
    command.params.append(quiet_option())
    for sub in command.commands.values() if isinstance(command, click.Group) else ():
        _quiet_everywhere(sub)


for _command in (validate, client, server, snapshot, diff, mock, generate, servers, lint, auth_group):
    main.add_command(_command)
_quiet_everywhere(main)
