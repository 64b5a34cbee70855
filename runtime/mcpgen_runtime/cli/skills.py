"""The command line's skills commands (the skills extension, SEP-2640), on every generated package:

    python -m PKG --url URL skills                       # the skills the server lists (nothing else fetched)
    python -m PKG --url URL skill NAME_OR_URI            # its SKILL.md, verified
    python -m PKG --url URL skill NAME --file references/GUIDE.md   # one of its files, verified

A tool whose command is `skills` or `skill` keeps it; these are then `mcp-skills` / `mcp-skill`.
Exit codes: 1 a file that fails verification (never printed), 3 a protocol or transport error (or a
server without the extension), as a tool's call.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from typing import Final

import click

from ..client import Client
from ..errors import McpRuntimeError
from ..masking import masked
from .text import json_text, printable

__all__ = ["NAMES", "skills_commands"]

NAMES: Final = ("skills", "skill")
EXIT_VERIFICATION: Final = 1
EXIT_PROTOCOL: Final = 3

Connect = Callable[[click.Context], AbstractContextManager[Client]]


def _fail(message: str, code: int) -> int:
    click.echo(f"Error: {printable(masked(message))}", err=True)
    return code


def skills_commands(connect: Connect, taken: Collection[str] = ()) -> dict[str, click.Command]:
    """`skills` and `skill` (`mcp-` in front of a name a tool's command already has)."""
    help_options = {"help_option_names": ["-h", "--help"]}

    def named(name: str) -> str:
        return name if name not in taken else f"mcp-{name}"

    @click.command(
        named("skills"),
        help="List the skills the server serves (SEP-2640): name, description, SKILL.md URI, files.",
        context_settings=help_options,
    )
    @click.pass_context
    def skills(ctx: click.Context) -> int:
        try:
            with connect(ctx) as client:
                listed = client.list_skills()
        except McpRuntimeError as exc:
            return _fail(f"{type(exc).__name__}: {exc}", EXIT_PROTOCOL)
        if str(getattr(ctx.obj, "output", "json")) == "json":
            click.echo(
                json_text(
                    [skill.model_dump(mode="json", by_alias=True, exclude_unset=True) for skill in listed]
                )
            )
        else:
            for skill in listed:
                files = "dynamic" if skill.resources == "dynamic" else f"{len(skill.resources)} file(s)"
                click.echo(printable(f"{skill.name}\t{skill.uri}\t{files}\t{skill.description}"))
        return 0

    @click.command(
        named("skill"),
        help="Print a skill's SKILL.md (or, with --file, one of its files), read and verified against "
        "the server's entry (size, digest, frontmatter). NAME_OR_URI: a listed name or a SKILL.md URI.",
        context_settings=help_options,
    )
    @click.argument("name_or_uri")
    @click.option("--file", "path", metavar="PATH", help="A file of the skill, relative to its root.")
    @click.option("--allow-dynamic", is_flag=True, help="Load a skill whose files carry no digests.")
    @click.pass_context
    def skill(ctx: click.Context, name_or_uri: str, path: str | None, allow_dynamic: bool) -> int:
        from ..skills import SkillVerificationError  # its models: only when a skill is loaded

        try:
            with connect(ctx) as client:
                loaded = client.load_skill(name_or_uri, allow_dynamic=allow_dynamic)
                text = loaded.text if path is None else loaded.read_text(path)
        except SkillVerificationError as exc:
            return _fail(str(exc), EXIT_VERIFICATION)
        except McpRuntimeError as exc:
            return _fail(f"{type(exc).__name__}: {exc}", EXIT_PROTOCOL)
        click.echo(printable(text) if sys.stdout.isatty() else text, nl=False)  # a terminal: escapes shown
        return 0

    return {command.name: command for command in (skills, skill) if command.name is not None}
