"""`mcpgen generate`: every `[tool.mcpgen]` target of a pyproject.toml written, or `--check` for drift."""

from __future__ import annotations

import dataclasses
import functools
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import McpgenError
from ..write.check import check_package
from ..write.manifest import is_fresh
from ..write.package import WriteReport, write_package
from . import stages
from .common import (
    Checked,
    Failed,
    add_stubs_option,
    batch,
    check_spec,
    display_path,
    print_diagnostics,
    pyproject_options,
    report_error,
    reports_errors,
    selected_tools,
    skip_invalid_option,
)
from .config import ConfigError, GenerateConfig, TargetConfig, find_pyproject, load_config
from .naming import project_meta
from .output import say
from .reports import (
    Counts,
    Tally,
    print_diffs,
    print_project_report,
    print_report,
    report_handlers,
    tools_on_disk,
)

if TYPE_CHECKING:
    from ..load.filters import Selection
    from ..parallel import Beside
    from ..spec import GeneratedPackage, LoadedSpec, ToolFilter, ValidatedSpec

__all__ = ["generate"]


@click.command()
@click.option("--check", is_flag=True, help="Write nothing; show what is stale and exit 1 if anything is.")
@pyproject_options(
    "pyproject.toml with [tool.mcpgen] targets [default: the nearest one from the current directory up]."
)
@skip_invalid_option
@add_stubs_option
@reports_errors
@batch
def generate(check: bool, pyproject: Path | None, skip_invalid: bool, add_stubs: bool) -> None:
    """Regenerate every [[tool.mcpgen.targets]] table of pyproject.toml.

    Each target has source (a spec file relative to pyproject.toml), kind (client or server),
    output (a directory) and package; strict, skip_invalid, line-length and the tool filters
    include_tools / exclude_tools (lists of globs, as --include-tools / --exclude-tools) are optional
    (--skip-invalid sets skip_invalid for every target). With --check nothing is written: stale
    targets (a changed filter makes its target stale) are listed with a short diff and the exit code
    is 1.
    """
    if check and add_stubs:
        raise click.UsageError("--add-stubs writes handlers.py; --check writes nothing: use one or the other")
    if pyproject is None:
        pyproject = find_pyproject(Path.cwd())
        if pyproject is None:
            raise ConfigError("no pyproject.toml in this directory or its parents; pass --pyproject PATH")
    config = load_config(pyproject)
    if skip_invalid:
        config = dataclasses.replace(
            config, targets=tuple(dataclasses.replace(t, skip_invalid=True) for t in config.targets)
        )
    tally = Tally()
    outcome = _run_targets(config, check=check, add_stubs=add_stubs, tally=tally)
    failed, stale, fresh = outcome.counts()
    if check:
        click.echo(f"{stale} stale, {fresh} up to date, {failed} failed (of {len(config.targets)} targets)")
        if stale:
            click.echo("run `mcpgen generate` to update the stale targets")
    click.echo(
        tally.line(
            f"in the {len(config.targets) - failed} of {len(config.targets)} target(s) that did not fail"
        )
    )
    if failed or stale:
        raise Failed


@dataclasses.dataclass
class _Outcome:
    """Which targets failed and which `--check` found stale, by target number: a target is counted
    once, as failed when it is both (a stale server target whose handlers.py is broken), so the
    three counts always add up to the number of targets."""

    targets: int
    failed: set[int] = dataclasses.field(default_factory=set)
    stale: set[int] = dataclasses.field(default_factory=set)

    def counts(self) -> tuple[int, int, int]:
        """(failed, stale, up to date)."""
        stale = self.stale - self.failed
        return len(self.failed), len(stale), self.targets - len(self.failed) - len(stale)


@dataclasses.dataclass
class _Inputs:
    """What the targets read, each once: a source loaded (its digest computed once, on first use), its
    tools selected by a target's filters (`selected_tools`: a glob's warning said once), that
    selection validated per strict and skip_invalid."""

    loaded: dict[Path, LoadedSpec | McpgenError] = dataclasses.field(default_factory=dict)
    selected: dict[tuple[Path, ToolFilter], Selection | McpgenError] = dataclasses.field(default_factory=dict)
    checked: dict[tuple[Path, ToolFilter, bool, bool], Checked | McpgenError] = dataclasses.field(
        default_factory=dict
    )

    def source(self, target: TargetConfig) -> LoadedSpec:
        """The target's source as loaded (every tool); raises its load error."""
        if target.source_path not in self.loaded:
            try:
                listed = stages.load_spec(target.load_name(), None, {})
                # The display name goes into generated headers: relative to pyproject.toml's
                # directory (config.relative_source), so the output depends neither on the
                # checkout's path nor on where mcpgen runs.
                self.loaded[target.source_path] = dataclasses.replace(listed, source=target.source)
            except McpgenError as exc:
                self.loaded[target.source_path] = exc
        spec = self.loaded[target.source_path]
        if isinstance(spec, McpgenError):
            raise spec
        return spec

    def selection(self, target: TargetConfig) -> Selection:
        """The tools of the target's source its filters keep; raises a load or filter error."""
        key = (target.source_path, target.filters)
        if key not in self.selected:
            try:
                self.selected[key] = selected_tools(self.source(target), target.filters)
            except McpgenError as exc:
                self.selected[key] = exc
        selection = self.selected[key]
        if isinstance(selection, McpgenError):
            raise selection
        return selection

    def input_key(self, target: TargetConfig) -> str | None:
        """pipeline.input_key of the target (None when its source does not load: reported later)."""
        from ..pipeline import input_key

        try:
            spec = self.source(target)
        except McpgenError:
            return None
        return input_key(
            digest=spec.digest,
            source=target.source,
            kind=target.kind,
            package=target.package,
            strict=target.strict,
            style=target.style,
            cli=target.cli,
            skip_invalid=target.skip_invalid,
            filters=target.filters,
        )

    def validated(self, target: TargetConfig) -> ValidatedSpec:
        key = (target.source_path, target.filters, target.strict, target.skip_invalid)
        if key not in self.checked:
            try:
                spec = self.selection(target).spec
            except McpgenError as exc:
                self.checked[key] = exc
            else:
                result = check_spec(spec, target.strict, target.skip_invalid, model=True)
                self.checked[key] = result
                if result.usable:  # warnings once per selection; errors are reported per target below
                    print_diagnostics(result.warnings)
        entry = self.checked[key]
        if isinstance(entry, McpgenError):
            raise entry
        if entry.validated is None or not entry.usable:
            print_diagnostics(entry.diagnostics)
            click.echo(f"error: {target.describe()}: {entry.summary()}", err=True)
            raise Failed
        return entry.validated

    def counts(self, target: TargetConfig, tools: Sequence[object]) -> Counts:
        """(generated, excluded, filtered out: None without filters) for a target whose package
        holds `tools` of its source."""
        try:
            selection = self.selection(target)
        except McpgenError:
            return len(tools), 0, None
        filtered = selection.filtered if target.filters else None
        return len(tools), len(selection.spec.tools) - len(tools), filtered


def _run_targets(
    config: GenerateConfig, *, check: bool, add_stubs: bool = False, tally: Tally | None = None
) -> _Outcome:
    """Build every target (each source loaded and validated once); which failed, which are stale.

    A target whose manifest records the same input key and whose files still have their recorded
    digests is fresh without being built (`write.is_fresh`). A package is written by a forked copy
    while the next target builds (`_Writing`); one write at a time, reported in target order."""
    inputs = _Inputs()
    outcome = _Outcome(len(config.targets))
    writing: _Writing | None = None
    tally = Tally() if tally is None else tally
    for target in config.targets:
        try:
            if target.project is not None:
                _finish(writing, config, add_stubs, outcome)
                writing = None
                if _run_project_target(target, inputs, check=check):
                    outcome.stale.add(target.index)
                tally += inputs.counts(target, inputs.validated(target).tools)
                continue
            key = inputs.input_key(target)
            if key is not None and is_fresh(target.output, target.package, key):
                _finish(writing, config, add_stubs, outcome)
                writing = None
                say(
                    f"fresh: {display_path(target.output / target.package)}"
                    if check
                    else f"{display_path(target.output / target.package)}: up to date"
                )
                if target.kind == "server" and _report_fresh_handlers(
                    target, inputs, add_stubs=add_stubs, check=check
                ):
                    outcome.failed.add(target.index)
                tally += inputs.counts(target, tools_on_disk(target))
                continue
            validated = inputs.validated(target)
            tally += inputs.counts(target, validated.tools)
            built = stages.build_package(target.kind, validated, target.package, target.style, target.cli)
            pkg = dataclasses.replace(built, input_key=key)
            _finish(writing, config, add_stubs, outcome)
            writing = None
            if not check:
                writing = _Writing.start(target, pkg)
                continue
            diffs = check_package(target.output, pkg)
            if diffs:
                outcome.stale.add(target.index)
                where = display_path(target.output / target.package)
                click.echo(f"stale: {where} (target #{target.index})")
                # tools.json as generated: the definitions are those on disk, no tool changed
                tools_changed = any(diff.path == "tools.json" for diff in diffs)
                shown = tools_changed and _print_tool_changes(target, validated)
                print_diffs(diffs, tools_shown=shown)
            else:
                say(f"fresh: {display_path(target.output / target.package)}")
            if _handlers_broken(target, pkg, add_stubs, check=True):
                raise Failed
        except Failed:
            outcome.failed.add(target.index)
        except McpgenError as exc:
            outcome.failed.add(target.index)
            report_error(exc, prefix=f"{target.describe()}: ")
    _finish(writing, config, add_stubs, outcome)
    return outcome


@dataclasses.dataclass(frozen=True)
class _Writing:
    """A target's package being written (`write_package`) by a forked copy of this process while
    the next target builds (`parallel.Beside`; written here, when it is joined, where no copy can
    be forked). A failed write is done again here, raising its error."""

    target: TargetConfig
    package: GeneratedPackage
    report: Beside[WriteReport]

    @classmethod
    def start(cls, target: TargetConfig, package: GeneratedPackage) -> _Writing:
        from ..parallel import Beside

        return cls(target, package, Beside(functools.partial(write_package, target.output, package)))


def _finish(writing: _Writing | None, config: GenerateConfig, add_stubs: bool, outcome: _Outcome) -> None:
    """Wait for a target's write and report it (and a server's handlers.py); a failure is noted in
    `outcome`."""
    if writing is None:
        return
    target = writing.target
    try:
        print_report(writing.report.result(), None)
        _remind_console_script(config, target)
        if _handlers_broken(target, writing.package, add_stubs):
            outcome.failed.add(target.index)
    except McpgenError as exc:
        report_error(exc, prefix=f"{target.describe()}: ")
        outcome.failed.add(target.index)


def _handlers_broken(
    target: TargetConfig, pkg: GeneratedPackage, add_stubs: bool, *, check: bool = False
) -> bool:
    """A server target's handlers.py against the package just built (`report_handlers`)."""
    return target.kind == "server" and report_handlers(
        target.output / target.package,
        target.package,
        pkg.files,
        functools.partial(pkg.user_files.get, "handlers.py"),
        add_stubs=add_stubs,
        generated=pkg.user_files.get("handlers.py"),
        check=check,
    )


def _run_project_target(target: TargetConfig, inputs: _Inputs, *, check: bool) -> bool:
    """A target with `project`: always built (the project files hold the user's sections, so no
    manifest can vouch for them); True when `check` finds it stale."""
    from ..write.project import check_project, write_project

    assert target.project is not None
    validated = inputs.validated(target)
    server_info = inputs.source(target).server_info
    meta = project_meta(target.package, server_info, target.project_name, target.project_version)
    built = stages.build_project(validated, target.package, meta, target.style)
    shown = display_path(target.project)
    if not check:
        report = write_project(target.project, built)
        print_report(report.package, None)
        print_project_report(target.project, report)
        return False
    diffs = check_project(target.project, built)
    if not diffs:
        say(f"fresh: {shown}")
        return False
    click.echo(f"stale: {shown} (target #{target.index})")
    print_diffs(diffs)
    _print_tool_changes(target, validated)
    return True


def _report_fresh_handlers(target: TargetConfig, inputs: _Inputs, *, add_stubs: bool, check: bool) -> bool:
    """handlers.py of a fresh server target, against base.py and models.py on disk (they are what
    generating would write); the scaffold for stubs is built only when a tool lacks a method."""
    package_dir = target.output / target.package
    try:
        files = {name: (package_dir / name).read_bytes() for name in ("base.py", "models.py")}
    except OSError:
        return False

    def scaffold() -> bytes | None:
        validated = inputs.validated(target)
        built = stages.build_package(target.kind, validated, target.package, target.style, target.cli)
        return built.user_files.get("handlers.py")

    return report_handlers(package_dir, target.package, files, scaffold, add_stubs=add_stubs, check=check)


def _remind_console_script(config: GenerateConfig, target: TargetConfig) -> None:
    """A target with `cli = "NAME"`: say which `[project.scripts]` line installs the command,
    unless the pyproject.toml already has it (mcpgen never edits it)."""
    if target.cli is None:
        return
    entry = f"{target.package}.__main__:main"
    try:
        with config.path.open("rb") as fh:
            scripts = tomllib.load(fh).get("project", {}).get("scripts", {})
    except (OSError, tomllib.TOMLDecodeError, AttributeError):
        scripts = {}
    if not isinstance(scripts, dict) or scripts.get(target.cli) != entry:
        say(
            f"note: to install the command {target.cli!r}, add to [project.scripts] of the distribution "
            f'that ships {target.package}: {target.cli} = "{entry}"'
        )


def _print_tool_changes(target: TargetConfig, validated: ValidatedSpec) -> bool:
    """When a stale target's tools changed, say whom the change breaks (`mcpgen diff` in short);
    whether anything was said."""
    from ..diff.compare import diff_tools
    from ..diff.formats import summary_line
    from ..load.document import load_file

    checked_in = target.output / target.package / "tools.json"
    if not checked_in.exists():
        return False
    shown = display_path(checked_in)
    report = diff_tools(load_file(shown).tools, validated.tools, old_source=shown, new_source=target.source)
    if report.changes:
        click.echo(f"  tools: {summary_line(report)}")
        for change in report.changes:
            if "breaking" in (change.client, change.server):
                click.echo(
                    f"    {change.tool}{change.pointer}: {change.reason} (clients: {change.client}, "
                    f"servers: {change.server})"
                )
        click.echo(f"  details: mcpgen diff --target {target.package}")
    return bool(report.changes)
