"""`mcpgen diff`: what changed between two tool lists (or a target's checked-in tools.json and its
source now), judged for clients and for servers of the tools."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

import click

from ..errors import McpgenError
from . import stages
from .common import (
    EXIT_FAILED,
    EXIT_USAGE,
    display_path,
    exit_for_bug,
    header_option,
    max_response_option,
    parse_stdio,
    print_diagnostics,
    pyproject_options,
    report_error,
    tool_filter_options,
)
from .config import ConfigError, TargetConfig, find_pyproject, load_config
from .output import say

if TYPE_CHECKING:
    from ..diff.compare import DiffReport
    from ..spec import LoadedSpec, ToolFilter

__all__ = ["diff"]

Side = Literal["client", "server", "both"]
ALLOW_ENV = "MCPGEN_ALLOW_BREAKING"  # any value but "" or "0": breaking changes are reported, exit 0
TRAILER = "Mcpgen-Allow-Breaking"  # with --commit-msg: the commit message trailer that accepts them


@click.command()
@click.argument("old", required=False, metavar="[OLD]")
@click.argument("new", required=False, metavar="[NEW]")
@click.option(
    "--old-stdio", metavar="CMD", callback=parse_stdio, help="Read OLD from CMD run as a stdio server."
)
@click.option(
    "--new-stdio", metavar="CMD", callback=parse_stdio, help="Read NEW from CMD run as a stdio server."
)
@click.option(
    "--target",
    "target_names",
    metavar="PACKAGE",
    multiple=True,
    help="Compare a [tool.mcpgen] target's checked-in tools.json (OLD) with its source now (NEW); "
    "repeatable.",
)
@click.option(
    "--all-targets", is_flag=True, help="Every [tool.mcpgen] target, as --target does (the pre-commit hook)."
)
@pyproject_options("pyproject.toml for --target [default: the nearest one from the current directory up].")
# Repeats in shape only (duplicates): click declares each option on its own; the choices differ.
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "markdown"]),
    default="table",
    show_default=True,
    help="table for a terminal (coloured on a tty), json for machines, markdown for a pull request.",
)
@click.option(
    "--fail-on",
    type=click.Choice(["breaking", "possibly-breaking", "any"]),
    default="breaking",
    show_default=True,
    help="Exit 1 when a change at least this severe is found.",
)
@click.option(
    "--for",
    "side",
    type=click.Choice(["client", "server", "both"]),
    default="both",
    show_default=True,
    help="Whose breakage counts for --fail-on.",
)
@click.option(
    "--against",
    metavar="REV",
    help="Compare FILE (or each --target's spec) as committed at the git revision REV with the file now "
    "(the pre-commit hook uses HEAD). A file that did not exist at REV is all new: nothing breaks.",
)
@click.option(
    "--allow-breaking",
    is_flag=True,
    help=(
        "Report what breaks but exit 0: the change is meant "
        "(also MCPGEN_ALLOW_BREAKING=1 in the environment)."
    ),
)
@click.option(
    "--commit-msg",
    "commit_msg",
    is_flag=True,
    help=f"The last argument is a commit message file (pre-commit's commit-msg stage passes it): a "
    f"`{TRAILER}: <why>` trailer in it accepts breaking changes as --allow-breaking does.",
)
@tool_filter_options
@header_option
@max_response_option
def diff(
    old: str | None,
    new: str | None,
    old_stdio: str | None,
    new_stdio: str | None,
    target_names: tuple[str, ...],
    all_targets: bool,
    pyproject: Path | None,
    fmt: str,
    fail_on: str,
    side: str,
    against: str | None,
    allow_breaking: bool,
    commit_msg: bool,
    headers: dict[str, str],
    max_response_bytes: int | None,
    filters: ToolFilter,
) -> None:
    """What changed between two tool lists, judged for clients and for servers of the tools.

    OLD and NEW are spec files or URLs (or --old-stdio/--new-stdio commands); OLD may be a generated
    package's directory (its tools.json, with the tool filters it was generated with); with --against REV, one
    FILE is compared with itself as committed at REV. Each change is breaking, possibly breaking,
    compatible or cosmetic, with the tool, JSON pointer and reason. --include-tools / --exclude-tools
    compare the tools they keep on both sides; a --target is compared with its own include_tools /
    exclude_tools.
    Exit codes: 0 nothing at the --fail-on level, 1 found, 2 usage or unreadable input, 3 a bug.
    """
    message_file: str | None = None
    if commit_msg:  # pre-commit appends the message file after every other argument
        message_file, old, new = (new, old, None) if new else (old, None, None)
        if message_file is None:
            raise click.UsageError("--commit-msg: give the commit message file as the last argument")
    old, filters = _package_tools(old, filters)
    try:
        from ..diff.formats import Format, render
        from ..diff.surfaces import diff_specs

        if filters and (target_names or all_targets):
            raise click.UsageError(
                "--target compares a target with the tool filters it is generated with (its include_tools "
                "and exclude_tools); give no --include-tools or --exclude-tools"
            )
        if against is not None:
            if new or old_stdio or new_stdio:
                raise click.UsageError(
                    "--against REV compares one FILE (or --target/--all-targets) with itself as committed "
                    "at REV; give no NEW or --old-stdio/--new-stdio"
                )
            if target_names or all_targets:
                if old:
                    raise click.UsageError("--target compares a target with its own source; give no FILE")
                files = _target_sources(target_names, all_targets, pyproject)
            elif not old or "://" in old:
                raise click.UsageError(
                    "--against REV needs a FILE (a spec or tools.json in a git repository)"
                )
            else:
                files = {(Path(old), filters): []}
            pairs = _against_pairs(files, against)
        elif target_names or all_targets:
            if old or new or old_stdio or new_stdio:
                raise click.UsageError("--target compares a target with its own source; give no OLD or NEW")
            pairs = _target_pairs(target_names, all_targets, pyproject)
        else:
            if not (old or old_stdio) or not (new or new_stdio):
                raise click.UsageError(
                    "give OLD and NEW (spec files or URLs), --old-stdio/--new-stdio, or --target"
                )
            old_spec = stages.load_spec(
                None if old_stdio else old, old_stdio, headers, max_response_bytes=max_response_bytes
            )
            new_spec = stages.load_spec(
                None if new_stdio else new, new_stdio, headers, max_response_bytes=max_response_bytes
            )
            pairs = [(*_filtered(old_spec, new_spec, filters), [])]
        reports = [_with_handlers(diff_specs(a, b), servers) for a, b, servers in pairs]
        colour = fmt == "table" and sys.stdout.isatty()
        style = (lambda text, c: click.style(text, fg=c)) if colour else (lambda text, _c: text)
        if fmt == "json" and len(reports) > 1:
            click.echo(json.dumps([report.wire() for report in reports], indent=2, ensure_ascii=False))
        else:
            click.echo("\n".join(render(report, cast("Format", fmt), style) for report in reports), nl=False)
    except (click.ClickException, click.exceptions.Exit, click.Abort):
        raise
    except McpgenError as exc:
        report_error(exc)
        sys.exit(EXIT_USAGE)
    except Exception:
        exit_for_bug()
    counted = {
        "breaking": ("breaking",),
        "possibly-breaking": ("breaking", "possibly-breaking"),
        "any": ("breaking", "possibly-breaking", "compatible", "cosmetic"),
    }[fail_on]
    if any(report.worst(cast("Side", side)) in counted for report in reports):
        trailer = _trailer(message_file) if message_file is not None else None
        if allow_breaking or os.environ.get(ALLOW_ENV, "").strip() not in ("", "0") or trailer:
            why = (
                f"the commit's {TRAILER} trailer: {trailer}"
                if trailer
                else f"--allow-breaking or {ALLOW_ENV}"
            )
            say(f"mcpgen diff: {fail_on} change(s) accepted ({why})", err=True)
            return
        how = (
            f"add a `{TRAILER}: <why>` trailer to the commit message"
            if message_file is not None
            else f"--allow-breaking, or for one commit: {ALLOW_ENV}=1 git commit ..."
        )
        click.echo(f"mcpgen diff: {fail_on} change(s) found (see above). Meant? Accept them: {how}", err=True)
        sys.exit(EXIT_FAILED)


def _package_tools(old: str | None, filters: ToolFilter) -> tuple[str | None, ToolFilter]:
    """OLD as given, or for a generated package's directory its tools.json and the filters it was
    generated with (`mcpgen diff PKG_DIR SOURCE`: the package against its source now)."""
    if old is None or "://" in old or not Path(old).is_dir():
        return old, filters
    from ..write.manifest import recorded_filters

    folder = Path(old)
    if not (folder / "tools.json").is_file():
        raise click.UsageError(
            f"{old} is a directory without tools.json: give a generated package's directory"
        )
    if filters:
        raise click.UsageError(
            f"{old} is compared with the tool filters it was generated with; give no --include-tools or "
            "--exclude-tools"
        )
    return str(folder / "tools.json"), recorded_filters(folder)


def _trailer(message_file: str) -> str | None:
    """The value of the message's `Mcpgen-Allow-Breaking:` trailer (its last paragraph, as git reads
    trailers; comment lines ignored), or None."""
    try:
        text = Path(message_file).read_text("utf-8", "replace")
    except OSError as exc:
        raise click.UsageError(f"--commit-msg: cannot read {message_file}: {exc.strerror or exc}") from exc
    lines = [line.rstrip() for line in text.splitlines() if not line.startswith("#")]
    while lines and not lines[-1]:
        lines.pop()
    paragraph = lines[len(lines) - lines[::-1].index("") :] if "" in lines else lines[1:]
    for line in paragraph:
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() == TRAILER.lower() and value.strip():
            return value.strip()[:200]
    return None


# (old, new, the server targets generated from them: an added tool their handlers.py implements
# does not break them)
Pair = tuple["LoadedSpec", "LoadedSpec", list[TargetConfig]]


def _with_handlers(report: DiffReport, servers: Sequence[TargetConfig]) -> DiffReport:
    """An added tool is compatible for servers when every server target of the spec has its handler
    (a method of `class Server` in handlers.py, for the tool base.py binds); breaking otherwise."""
    from ..diff.compare import handled_added_tools
    from ..write.handlers import implemented_tools

    if not servers or not any(change.kind == "tool-added" for change in report.changes):
        return report
    where: dict[str, list[str]] = {}
    for target in servers:
        handlers = display_path(target.output / target.package / "handlers.py")
        for tool, line in implemented_tools(target.output / target.package).items():
            where.setdefault(tool, []).append(f"{handlers}:{line}")
    handled = {tool: ", ".join(places) for tool, places in where.items() if len(places) == len(servers)}
    return handled_added_tools(report, handled)


def _filtered(old: LoadedSpec, new: LoadedSpec, filters: ToolFilter) -> tuple[LoadedSpec, LoadedSpec]:
    """Both sides with only the tools `filters` keeps (either may be left empty: everything removed
    or added); a warning for each glob that matches no tool on either side."""
    if not filters:
        return old, new
    from ..load.filters import select_tools, unmatched_warnings

    print_diagnostics(unmatched_warnings(new.source, new.pointer_prefix, filters, [old.tools, new.tools]))
    return (
        select_tools(old, filters, allow_empty=True).spec,
        select_tools(new, filters, allow_empty=True).spec,
    )


def _against_pairs(files: Mapping[tuple[Path, ToolFilter], list[TargetConfig]], rev: str) -> list[Pair]:
    """(FILE as committed at REV, FILE now, its server targets) for each file and the tool filters
    its targets are generated with; a file new since REV is said so, not compared."""
    from ..load.document import load_file
    from ..load.git import load_at_revision

    pairs: list[Pair] = []
    for (path, filters), servers in files.items():
        shown = display_path(path)
        now = load_file(shown)
        committed = load_at_revision(path, rev, shown)
        if committed.spec is None:
            say(f"{committed.why}: every tool in {shown} is new; nothing to compare", err=True)
            continue
        pairs.append((*_filtered(committed.spec, now, filters), servers))
    return pairs


def _target_sources(
    names: Sequence[str], every: bool, pyproject: Path | None
) -> dict[tuple[Path, ToolFilter], list[TargetConfig]]:
    """The spec file and tool filters of each named target (or of every target), once each, with its
    server targets."""
    sources: dict[tuple[Path, ToolFilter], list[TargetConfig]] = {}
    for target in _selected_targets(names, every, pyproject):
        if target.server is not None:  # a server of an MCP config file: no spec file in git
            say(f"{target.describe()}: a live server, not a file; --against skips it", err=True)
            continue
        servers = sources.setdefault((target.source_path.resolve(), target.filters), [])
        if target.kind == "server":
            servers.append(target)
    return sources


def _selected_targets(names: Sequence[str], every: bool, pyproject: Path | None) -> list[TargetConfig]:
    if pyproject is None:
        pyproject = find_pyproject(Path.cwd())
        if pyproject is None:
            raise ConfigError("no pyproject.toml in this directory or its parents; pass --pyproject PATH")
    targets = load_config(pyproject).targets
    unknown = sorted(set(names) - {t.package for t in targets})
    if unknown:
        raise ConfigError(
            f"{display_path(pyproject)} has no [tool.mcpgen] target with package {', '.join(unknown)}"
        )
    return [target for target in targets if every or target.package in names]


def _target_pairs(names: Sequence[str], every: bool, pyproject: Path | None) -> list[Pair]:
    """(checked-in tools.json, source now with the target's tool filters, server targets) of each named
    target (or of every target), once per pair."""
    from ..load.document import load_file

    pairs: dict[tuple[bytes, Path, ToolFilter], Pair] = {}
    for target in _selected_targets(names, every, pyproject):
        checked_in = target.output / target.package / "tools.json"
        if not checked_in.exists():
            raise ConfigError(
                f"{target.describe()} has no generated tools.json yet "
                f"({display_path(checked_in)}): run `mcpgen generate` first"
            )
        # a client and a server of one spec: once
        key = (checked_in.read_bytes(), target.source_path.resolve(), target.filters)
        if key not in pairs:
            # tools.json holds the tools alone: compare the tools (not resources, templates, prompts, skills)
            loaded = stages.load_spec(target.load_name(), None, {})
            now = dataclasses.replace(loaded, resources=[], resource_templates=[], prompts=[], skills=[])
            pairs[key] = (*_filtered(load_file(display_path(checked_in)), now, target.filters), [])
        if target.kind == "server":
            pairs[key][2].append(target)
    return list(pairs.values())
