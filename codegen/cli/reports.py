"""What the write commands print: the files a write created, updated or removed, a stale target's
file diffs, what the user's handlers.py lacks or names in vain (with `--add-stubs`, appended), and
the last line, which counts the tools generated and excluded (MCPGEN-EXCLUDED): a tool left out of
the bindings (an invalid pattern, a bad x-mcp-header) is a warning without `--strict`, and a CI log
shows its end."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..write.check import FileDiff
from ..write.package import WriteReport
from .common import display_path
from .output import say

if TYPE_CHECKING:
    from ..write.project import ProjectReport
    from .config import TargetConfig

__all__ = [
    "Counts",
    "Tally",
    "listed",
    "print_diffs",
    "print_project_report",
    "print_report",
    "report_handlers",
    "tools_line",
    "tools_on_disk",
]


def print_project_report(project: Path, report: ProjectReport) -> None:
    for label, paths in (("created", report.created), ("updated", report.updated)):
        for rel in paths:
            say(f"{label:<8} {display_path(project / rel)}")
    state = "up to date" if not (report.created or report.updated) else "written"
    say(f"{display_path(project)}: project files {state} (the sections marked 'yours' are kept)")


def print_report(report: WriteReport, user_hint: str | None) -> None:
    base = report.package_dir
    for label, paths in (
        ("created", report.created),
        ("updated", report.updated),
        ("removed", report.removed),
    ):
        for shown in listed(paths):
            say(f"{label:<8} {display_path(base / shown[0])}{shown[1]}")
    for rel in report.preserved:
        hint = f"; {user_hint} replaces it" if user_hint else ""
        say(f"{'kept':<8} {display_path(base / rel)} (yours{hint})")
    if report.changed:
        say(
            f"{display_path(base)}: {len(report.created)} created, {len(report.updated)} updated, "
            f"{len(report.unchanged)} unchanged, {len(report.removed)} removed"
        )
    else:
        say(f"{display_path(base)}: up to date ({len(report.unchanged)} file(s) unchanged)")


HEADER_NAMES_SHOWN = 5
FILES_SHOWN_PER_FOLDER = 5


def listed(paths: Iterable[str]) -> list[tuple[str, str]]:
    """What to print of `paths` (relative, "/"-separated): each file, except that a folder holding
    more than FILES_SHOWN_PER_FOLDER of them (a large catalog's `_models/`) is one line with a count."""
    by_folder: dict[str, list[str]] = {}
    for rel in paths:
        by_folder.setdefault(rel.rpartition("/")[0], []).append(rel)
    shown: list[tuple[str, str]] = []
    for folder, files in by_folder.items():
        if folder and len(files) > FILES_SHOWN_PER_FOLDER:
            shown.append((folder + "/", f" ({len(files)} files)"))
        else:
            shown.extend((rel, "") for rel in files)
    return shown


_SAID = {
    "missing": "missing",
    "extra": "no longer generated",
    "differs": "differ",
    "header": "differ only in the header",
    "conflict": "in conflict",
}


def print_diffs(diffs: Iterable[FileDiff], *, tools_shown: bool = False) -> None:
    """A summary line, then each file's diff; files whose only change is their header are named on
    one line, and tools.json's diff is left out when its tool changes were `tools_shown`."""
    diffs = list(diffs)
    header_only = [diff for diff in diffs if diff.status == "header"]
    counts: Counter[str] = Counter(diff.status for diff in diffs)
    click.echo(
        "  files: "
        + ", ".join(f"{counts[status]} {said}" for status, said in _SAID.items() if counts[status])
    )
    for diff in diffs:
        if diff.status == "header":
            continue
        if tools_shown and diff.path == "tools.json" and diff.status == "differs":
            click.echo(f"  {diff.status:<8} {display_path(diff.file)} (the tool changes above)")
            continue
        click.echo(f"  {diff.status:<8} {display_path(diff.file)}")
        for line in diff.detail.splitlines():
            click.echo(f"    {line}")
    if header_only:
        # a large catalog has hundreds of models modules: name a few, count the rest
        shown = [diff.path for diff in header_only[:HEADER_NAMES_SHOWN]]
        more = len(header_only) - len(shown)
        names = ", ".join(shown) + (f" and {more} more" if more else "")
        click.echo(f"  header   only the first-line header (the spec's sha256) differs in: {names}")


def report_handlers(
    package_dir: Path,
    package: str,
    files: dict[str, bytes],
    scaffold: Callable[[], bytes | None],
    *,
    add_stubs: bool,
    generated: bytes | None = None,
    check: bool = False,
) -> bool:
    """Say what the user's handlers.py lacks or names in vain (`write.handlers`), each with what
    really happens when the server runs; with `add_stubs`, append the missing methods. True when the
    run fails: the package cannot serve until handlers.py is fixed, or (`check`) handlers.py uses
    something the spec no longer has. Generating only warns of the latter, so a user half-way through
    a rename gets the new models to finish it with; `--check` (the pre-commit hook, CI) refuses it.
    `generated`: the scaffold this run built from `files`; a handlers.py still equal to it
    implements every tool and imports only names they define, so it is not parsed (3 large
    modules for a 1,000-tool server)."""
    from ..write.handlers import add_stubs as appended
    from ..write.handlers import check_handlers
    from ..write.package import write_file_atomic

    if generated is not None and _same_bytes(package_dir / "handlers.py", generated):
        return False
    report = check_handlers(package_dir, package, files, None)
    if report is None or report.clean:
        return False
    if report.unimplemented:
        report = check_handlers(package_dir, package, files, scaffold()) or report
    shown = display_path(report.path)
    drift = "error" if check else "warning"  # what the server survives: `--check` fails on it
    tell_drift = click.echo if check else say  # a warning is quiet under -q, an error never
    if report.problem:
        click.echo(f"error: {shown}: {report.problem}", err=True)
    for missing in report.missing:
        said = f"{shown}:{missing.line}: `{missing.name}` is not defined in {missing.module}.py any more "
        said += "(its tool was removed or renamed in the spec)"
        if missing.when == "import":
            click.echo(
                f"error: {said}; Python evaluates it when it imports handlers.py, so the server cannot "
                "start until you change or delete that code",
                err=True,
            )
        elif missing.when == "call":
            tell_drift(
                f"{drift}: {said}; the server starts, but `{missing.function}` fails when it reaches this "
                "line; change or delete that code",
                err=True,
            )
        else:
            tell_drift(
                f"{drift}: {said}; only in an annotation, which is never evaluated: the server starts, "
                "but type checkers report it; change or delete that code",
                err=True,
            )
    for line, method in report.stale_methods:
        say(
            f"note: {shown}:{line}: method `{method}` handles no tool any more (removed from the spec?); "
            "the server never calls it: delete it",
            err=True,
        )
    for read in report.stale_reads:
        now = ", ".join(read.fields) if read.fields else "no fields"
        tell_drift(
            f"{drift}: {shown}:{read.line}: {read.method} reads args.{read.attribute}, which the spec no "
            f"longer has (renamed? the input now has: {now}); the server starts, but its calls fail when "
            "they reach this line",
            err=True,
        )
    if report.unimplemented:
        tools = ", ".join(repr(name) for name, _method in report.unimplemented)
        if add_stubs:
            write_file_atomic(report.path, appended(report))
            say(f"{'stubbed':<8} {shown}: class Server now has a method for {tools}")
        else:
            say(
                f"warning: {shown}: class Server implements no method for {len(report.unimplemented)} "
                f'tool(s): {tools}; the server starts and their calls answer "not implemented". Add '
                "with --add-stubs, or paste into class Server:",
                err=True,
            )
            for text in report.imports:
                say(f"    {text}    # at the top of handlers.py", err=True)
            for text in report.stubs.splitlines():
                say(f"    {text}".rstrip(), err=True)
    return report.broken or (check and report.drifted)


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        return path.is_file() and not path.is_symlink() and path.read_bytes() == data
    except OSError:
        return False


def tools_line(source: str, generated: int, excluded: int, filtered: int | None = None) -> str:
    """The last line of `client`/`server` for one package; `filtered`: the tools the tool filters
    left out, when there are filters (they are not exclusions)."""
    line = f"{source}: {generated} tool(s) generated, {excluded} excluded"
    if filtered is not None:
        line += f", {filtered} filtered out"
    if excluded:
        line += " (the warnings above say why; --strict makes an exclusion an error)"
    return line


# (tools generated, excluded, filtered out: None without tool filters) for one package
Counts = tuple[int, int, int | None]


@dataclasses.dataclass
class Tally:
    """Tools generated, excluded and filtered out over several packages (`generate`, `client
    --all`); `filtering`: some package had tool filters, so the line says how many they left out."""

    generated: int = 0
    excluded: int = 0
    filtered: int = 0
    filtering: bool = False

    def __iadd__(self, counts: Counts) -> Tally:
        self.generated += counts[0]
        self.excluded += counts[1]
        filtered = counts[2]
        if filtered is not None:
            self.filtered += filtered
            self.filtering = True
        return self

    def line(self, packages: str) -> str:
        filtered = f", {self.filtered} filtered out" if self.filtering else ""
        line = f"{self.generated} tool(s) generated, {self.excluded} excluded{filtered} ({packages})"
        if self.excluded:
            line += "; `mcpgen validate` says why, and --strict (strict = true) makes an exclusion an error"
        return line


def tools_on_disk(target: TargetConfig) -> list[object]:
    """The tools of a fresh target's package: its tools.json, which the manifest vouches for."""
    try:
        document = json.loads((target.output / target.package / "tools.json").read_bytes())
    except (OSError, ValueError):
        return []
    tools = document.get("tools") if isinstance(document, dict) else None
    return tools if isinstance(tools, list) else []
