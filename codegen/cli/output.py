"""What a command prints besides errors, its output and its last line: warnings, notes and progress
lines, each through `say`, which -q/--quiet silences (a leaf of `cli/`: every command module may use it)."""

from __future__ import annotations

import click

__all__ = ["is_quiet", "quiet_option", "say"]

_QUIET = "mcpgen.quiet"  # `ctx.meta` (shared by a command and its group): -q/--quiet was given


def _set_quiet(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[_QUIET] = True


def quiet_option() -> click.Option:
    """`-q/--quiet`, which every command of `mcpgen` takes (app.py adds it to each)."""
    return click.Option(
        ["-q", "--quiet"],
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_set_quiet,
        help="Print errors and the last line (the counts) only: no warnings, notes or progress lines.",
    )


def is_quiet() -> bool:
    context = click.get_current_context(silent=True)
    return context is not None and bool(context.meta.get(_QUIET))


def say(message: str, *, err: bool = False) -> None:
    """A warning, note or progress line: printed unless the command runs with -q/--quiet. Errors,
    a command's output and its last line (the counts) go through click.echo and always print."""
    if not is_quiet():
        click.echo(message, err=err)
