"""The commands that write packages: `mcpgen client` and `mcpgen server` (one package from a source),
and `mcpgen generate` (every `[tool.mcpgen]` target of a pyproject.toml, or `--check` for drift)."""

from __future__ import annotations

import dataclasses
import functools
import re
import shlex
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import click

from ..errors import McpgenError
from ..load.mcp_config import split_config_source
from ..write.check import FileDiff, check_package
from ..write.manifest import is_fresh
from ..write.package import WriteReport, write_package
from . import stages
from .auth import login_options
from .common import (
    Checked,
    Failed,
    add_stubs_option,
    batch,
    check_spec,
    display_path,
    era_option,
    header_option,
    line_length_option,
    max_response_option,
    mcp_config_options,
    output_option,
    report_error,
    reports_errors,
    skip_invalid_option,
    source_argument,
    stdio_option,
    strict_option,
    usable_spec,
)
from .config import (
    ConfigError,
    GenerateConfig,
    TargetConfig,
    find_pyproject,
    header_path,
    load_config,
    project_root,
    project_style,
    relative_source,
)
from .project import project_meta, project_options
from .source import Source, gathers_source
from .stages import Kind
from .tally import Tally, excluded_counts, tools_line, tools_on_disk

if TYPE_CHECKING:
    from ..parallel import Beside
    from ..spec import GeneratedPackage, LoadedSpec, ValidatedSpec
    from ..write.project import ProjectReport

__all__ = ["client", "default_package_name", "generate", "package_names", "server"]

_F = TypeVar("_F", bound=Callable[..., Any])


def default_package_name(source: str | None, stdio: str | None, kind: Kind) -> str:
    """`specs/weather.json` → `weather_client`; `https://api.example.com/mcp` → `api_example_com_client`;
    `--stdio "python -m some_server"` → `some_server_client`; `.mcp.json#github` → `github_client`."""
    base = ""
    in_config = split_config_source(source) if source else None
    if in_config is not None:
        base = in_config[1]
    elif source:
        base = (urlsplit(source).hostname or "") if "://" in source else Path(source).stem
    elif stdio:
        try:
            argv = shlex.split(stdio)
        except ValueError:
            argv = stdio.split()
        base = Path(argv[-1]).stem if argv else ""
    return f"{_identifier(base)}_{kind}"


def _identifier(base: str) -> str:
    ident = re.sub(r"[^0-9A-Za-z]+", "_", base).strip("_").lower() or "mcp"
    return f"mcp_{ident}" if ident[0].isdigit() else ident


def _parse_package(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not (value.isascii() and value.isidentifier()):
        raise click.BadParameter(f"{value!r} is not a valid Python package name (use letters, digits, '_')")
    return value


output_dir_option = output_option(
    directory=True, help_text="Directory to write the package into (the package is DIR/NAME/)."
)


def _package_option(kind: Kind) -> Callable[[_F], _F]:
    return click.option(
        "--package",
        metavar="NAME",
        callback=_parse_package,
        help=f"Python package name [default: from SOURCE, e.g. weather_{kind} for weather.json].",
    )


@click.command()
@source_argument
@output_option(
    directory=True,
    help_text="Directory to write the package into (the package is DIR/NAME/); or give --project.",
    required=False,
)
@project_options
@_package_option("client")
@line_length_option
@strict_option
@skip_invalid_option
@stdio_option
@mcp_config_options
@click.option(
    "--all",
    "every_server",
    is_flag=True,
    help="With --config FILE: one package per server of the file (named after each server, "
    "e.g. github_client), into -o DIR; servers the file disables are left out.",
)
@header_option
@era_option
@max_response_option
@login_options
@reports_errors
@batch
@gathers_source()
def client(
    source: Source,
    out: Path | None,
    project: Path | None,
    project_name: str | None,
    project_version: str | None,
    package: str | None,
    line_length: int | None,
    strict: bool,
    skip_invalid: bool,
    every_server: bool,
) -> None:
    """Generate a typed client package (sync Client and AsyncClient) from SOURCE.

    Every generated file is rewritten; files you add to the package are kept. The generated
    client talks to servers of either era (2026-07-28, or initialize-based) with the same methods.
    With --project DIR the package lands in DIR/src/ inside an installable project (pyproject.toml,
    README.md): see the README's "Publishing a client". SOURCE may also be a server of an MCP config
    file: --config FILE --server NAME (or FILE#NAME), or every server of it with --all.
    """
    if every_server:
        _every_server(
            source, out, project, package, strict, line_length=line_length, skip_invalid=skip_invalid
        )
        return
    source = source.resolved()
    if (out is None) == (project is None):
        raise click.UsageError("give either -o/--output DIR or --project DIR")
    if project is None and (project_name is not None or project_version is not None):
        raise click.UsageError("--project-name and --project-version need --project DIR")
    if project is not None:
        _generate_project(
            source,
            project,
            package,
            strict,
            line_length=line_length,
            name=project_name,
            version=project_version,
            skip_invalid=skip_invalid,
        )
        return
    assert out is not None
    _generate_one(
        "client",
        source,
        out,
        package,
        strict,
        overwrite=False,
        line_length=line_length,
        skip_invalid=skip_invalid,
    )


@click.command()
@source_argument
@output_dir_option
@_package_option("server")
@click.option(
    "--overwrite-handlers",
    is_flag=True,
    help="Replace handlers.py with a fresh scaffold (by default it is created once and then yours).",
)
@add_stubs_option
@line_length_option
@strict_option
@skip_invalid_option
@stdio_option
@mcp_config_options
@header_option
@login_options
@reports_errors
@batch
@gathers_source()
def server(
    source: Source,
    out: Path,
    package: str | None,
    overwrite_handlers: bool,
    add_stubs: bool,
    line_length: int | None,
    strict: bool,
    skip_invalid: bool,
) -> None:
    """Generate a server package from SOURCE: a regenerated typed base and your handlers.py.

    handlers.py is created only when absent; base.py, models.py and the rest are rewritten every run.
    """
    _generate_one(
        "server",
        source.resolved(),
        out,
        package,
        strict,
        overwrite=overwrite_handlers,
        line_length=line_length,
        skip_invalid=skip_invalid,
        add_stubs=add_stubs,
    )


def _header_source(spec: ValidatedSpec, source: str | None, out: Path) -> ValidatedSpec:
    """A file source as generated headers record it: relative to the project root (the nearest
    pyproject.toml's directory above `out`, else `out`), so every checkout writes the same bytes.
    URLs and stdio commands already carry their display names (no credentials, no query)."""
    if source is None or "://" in source:
        return spec
    in_config = split_config_source(source)
    if in_config is not None:  # FILE#NAME: the file as for a spec file, the server's name as given
        path, name = in_config
        return dataclasses.replace(spec, source=f"{header_path(path, project_root(out))}#{name}")
    return dataclasses.replace(spec, source=relative_source(Path(source), project_root(out)))


def _every_server(
    source: Source,
    out: Path | None,
    project: Path | None,
    package: str | None,
    strict: bool,
    *,
    line_length: int | None,
    skip_invalid: bool,
) -> None:
    """`client --config FILE --all -o DIR`: one package per enabled server, each named after its
    server (`package_names`); a server that fails is reported and the others are still generated."""
    from ..load.mcp_config import read_config

    mcp_config = source.mcp_config
    if mcp_config is None:
        raise click.UsageError("--all needs --config FILE (every server of that file)")
    if (
        source.server_name is not None
        or source.where is not None
        or source.stdio is not None
        or source.headers
    ):
        raise click.UsageError(
            "--all generates every server of --config FILE: give no SOURCE, --server, --stdio or --header"
        )
    if package is not None or project is not None:
        raise click.UsageError("--all names each package after its server: give no --package or --project")
    if out is None:
        raise click.UsageError("--all needs -o/--output DIR")
    config = read_config(mcp_config)
    enabled = [entry.name for entry in config.entries.values() if not entry.disabled]
    for entry in config.entries.values():
        if entry.disabled:
            click.echo(f"skipped  {display_path(mcp_config)}#{entry.name}: disabled in the file")
    if not enabled:
        click.echo(f"error: {display_path(mcp_config)}: no enabled server to generate", err=True)
        raise Failed
    failed = 0
    tally = Tally()
    for name, pkg in package_names(enabled, "client").items():
        try:
            tally += _generate_one(
                "client",
                dataclasses.replace(source, where=f"{mcp_config}#{name}", mcp_config=None),
                out,
                pkg,
                strict,
                overwrite=False,
                line_length=line_length,
                skip_invalid=skip_invalid,
            )
        except Failed:
            failed += 1
        except McpgenError as exc:
            failed += 1
            report_error(exc)
    click.echo(f"{len(enabled) - failed} of {len(enabled)} server(s) generated into {display_path(out)}")
    click.echo(tally.line(f"in the {len(enabled) - failed} package(s) generated"))
    if failed:
        raise Failed


def package_names(servers: Iterable[str], kind: Kind) -> dict[str, str]:
    """A package name per server name, in order: the name made an identifier plus `_client`
    (`my-server` → `my_server_client`); a name taken by an earlier server gets `_2`, `_3`, ..."""
    taken: set[str] = set()
    names: dict[str, str] = {}
    for server_name in servers:
        base = _identifier(server_name)
        candidate, number = f"{base}_{kind}", 1
        while candidate in taken:
            number += 1
            candidate = f"{base}_{number}_{kind}"
        taken.add(candidate)
        names[server_name] = candidate
    return names


def _generate_one(
    kind: Kind,
    source: Source,
    out: Path,
    package: str | None,
    strict: bool,
    overwrite: bool,
    line_length: int | None,
    skip_invalid: bool = False,
    add_stubs: bool = False,
) -> tuple[int, int]:
    """Generate one package from a resolved source; (tools generated, tools excluded)."""
    source.require()
    style = project_style(out, line_length=line_length)
    loaded = source.load()
    checked = check_spec(loaded, strict, skip_invalid, model=True)
    validated = _header_source(usable_spec(checked), source.where, out)
    name = package or default_package_name(source.where, source.stdio, kind)
    pkg = stages.build_package(kind, validated, name, style)
    report = write_package(out, pkg, overwrite_user_files=overwrite)
    _print_report(report, "--overwrite-handlers" if kind == "server" else None)
    broken = kind == "server" and _report_handlers(
        out / name,
        name,
        pkg.files,
        lambda: pkg.user_files.get("handlers.py"),
        add_stubs=add_stubs,
        generated=pkg.user_files.get("handlers.py"),
    )
    counts = len(validated.tools), len(loaded.tools) - len(validated.tools)
    click.echo(tools_line(loaded.source, *counts))
    if broken:
        raise Failed
    return counts


def _generate_project(
    source: Source,
    project: Path,
    package: str | None,
    strict: bool,
    *,
    line_length: int | None,
    name: str | None,
    version: str | None,
    skip_invalid: bool = False,
) -> None:
    from ..write.project import package_dir_of, write_project

    source.require()
    project_meta(package or "pkg", None, name, version)  # bad flags stop the run before a server is asked
    out = package_dir_of(project)
    style = project_style(out, line_length=line_length)
    loaded = source.load()
    pkg_name = package or default_package_name(source.where, source.stdio, "client")
    meta = project_meta(pkg_name, loaded.server_info, name, version)  # before the work: errors first
    # relative to the project root above DIR: DIR's own pyproject.toml must not move it between runs
    checked = check_spec(loaded, strict, skip_invalid, model=True)
    validated = _header_source(usable_spec(checked), source.where, project.parent)
    built = stages.build_project(validated, pkg_name, meta, style)
    report = write_project(project, built)
    _print_report(report.package, None)
    _print_project_report(project, report)
    click.echo(tools_line(loaded.source, len(validated.tools), len(loaded.tools) - len(validated.tools)))


def _print_project_report(project: Path, report: ProjectReport) -> None:
    for label, paths in (("created", report.created), ("updated", report.updated)):
        for rel in paths:
            click.echo(f"{label:<8} {display_path(project / rel)}")
    state = "up to date" if not (report.created or report.updated) else "written"
    click.echo(f"{display_path(project)}: project files {state} (the sections marked 'yours' are kept)")


def _print_report(report: WriteReport, user_hint: str | None) -> None:
    base = report.package_dir
    for label, paths in (
        ("created", report.created),
        ("updated", report.updated),
        ("removed", report.removed),
    ):
        for shown in _listed(paths):
            click.echo(f"{label:<8} {display_path(base / shown[0])}{shown[1]}")
    for rel in report.preserved:
        hint = f"; {user_hint} replaces it" if user_hint else ""
        click.echo(f"{'kept':<8} {display_path(base / rel)} (yours{hint})")
    if report.changed:
        click.echo(
            f"{display_path(base)}: {len(report.created)} created, {len(report.updated)} updated, "
            f"{len(report.unchanged)} unchanged, {len(report.removed)} removed"
        )
    else:
        click.echo(f"{display_path(base)}: up to date ({len(report.unchanged)} file(s) unchanged)")


HEADER_NAMES_SHOWN = 5
FILES_SHOWN_PER_FOLDER = 5


def _listed(paths: Iterable[str]) -> list[tuple[str, str]]:
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


def _print_diffs(diffs: Iterable[FileDiff], *, tools_shown: bool = False) -> None:
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


@click.command()
@click.option("--check", is_flag=True, help="Write nothing; show what is stale and exit 1 if anything is.")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help=(
        "pyproject.toml with [tool.mcpgen] targets [default: the nearest one from the current directory up]."
    ),
)
@skip_invalid_option
@add_stubs_option
@reports_errors
@batch
def generate(check: bool, config_path: Path | None, skip_invalid: bool, add_stubs: bool) -> None:
    """Regenerate every [[tool.mcpgen.targets]] table of pyproject.toml.

    Each target has source (a spec file relative to pyproject.toml), kind (client or server),
    output (a directory) and package; strict, skip_invalid and line-length are optional (--skip-invalid
    sets skip_invalid for every target). With --check nothing is written: stale
    targets are listed with a short diff and the exit code is 1.
    """
    if check and add_stubs:
        raise click.UsageError("--add-stubs writes handlers.py; --check writes nothing: use one or the other")
    if config_path is None:
        config_path = find_pyproject(Path.cwd())
        if config_path is None:
            raise ConfigError("no pyproject.toml in this directory or its parents; pass --config")
    config = load_config(config_path)
    if skip_invalid:
        config = dataclasses.replace(
            config, targets=tuple(dataclasses.replace(t, skip_invalid=True) for t in config.targets)
        )
    tally = Tally()
    failed, stale = _run_targets(config, check=check, add_stubs=add_stubs, tally=tally)
    if check:
        fresh = len(config.targets) - stale - failed
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


def _input_key(
    target: TargetConfig, loaded: dict[Path, LoadedSpec | McpgenError], digests: dict[Path, str]
) -> str | None:
    """pipeline.input_key of the target (None when its source does not load: reported later)."""
    from ..pipeline import input_key

    _loaded_for(target, loaded)
    spec = loaded[target.source_path]
    if isinstance(spec, McpgenError):
        return None
    if target.source_path not in digests:
        digests[target.source_path] = spec.digest
    return input_key(
        digest=digests[target.source_path],
        source=target.source,
        kind=target.kind,
        package=target.package,
        strict=target.strict,
        style=target.style,
        cli=target.cli,
        skip_invalid=target.skip_invalid,
    )


def _run_targets(
    config: GenerateConfig, *, check: bool, add_stubs: bool = False, tally: Tally | None = None
) -> tuple[int, int]:
    """Build every target (each source loaded and validated once); returns (failed, stale).

    A target whose manifest records the same input key and whose files still have their recorded
    digests is fresh without being built (`write.is_fresh`). A package is written by a forked copy
    while the next target builds (`_Writing`); one write at a time, reported in target order."""
    checked: dict[tuple[Path, bool, bool], Checked | McpgenError] = {}
    loaded: dict[Path, LoadedSpec | McpgenError] = {}
    digests: dict[Path, str] = {}
    failed = stale = 0
    writing: _Writing | None = None
    tally = Tally() if tally is None else tally
    for target in config.targets:
        try:
            if target.project is not None:
                failed += _finish(writing, config, add_stubs)
                writing = None
                stale += _run_project_target(target, loaded, checked, check=check)
                tally += excluded_counts(loaded, target, _validated_for(target, loaded, checked).tools)
                continue
            key = _input_key(target, loaded, digests)
            if key is not None and is_fresh(target.output, target.package, key):
                failed += _finish(writing, config, add_stubs)
                writing = None
                click.echo(
                    f"fresh: {display_path(target.output / target.package)}"
                    if check
                    else f"{display_path(target.output / target.package)}: up to date"
                )
                if target.kind == "server" and _report_fresh_handlers(
                    target, loaded, checked, add_stubs=add_stubs
                ):
                    failed += 1
                tally += excluded_counts(loaded, target, tools_on_disk(target))
                continue
            validated = _validated_for(target, loaded, checked)
            tally += excluded_counts(loaded, target, validated.tools)
            built = stages.build_package(target.kind, validated, target.package, target.style, target.cli)
            pkg = dataclasses.replace(built, input_key=key)
            failed += _finish(writing, config, add_stubs)
            writing = None
            if not check:
                writing = _Writing.start(target, pkg)
                continue
            diffs = check_package(target.output, pkg)
            if diffs:
                stale += 1
                where = display_path(target.output / target.package)
                click.echo(f"stale: {where} (target #{target.index})")
                # tools.json as generated: the definitions are those on disk, no tool changed
                tools_changed = any(diff.path == "tools.json" for diff in diffs)
                shown = tools_changed and _print_tool_changes(target, validated)
                _print_diffs(diffs, tools_shown=shown)
            else:
                click.echo(f"fresh: {display_path(target.output / target.package)}")
            if _handlers_broken(target, pkg, add_stubs):
                raise Failed
        except Failed:
            failed += 1
        except McpgenError as exc:
            failed += 1
            report_error(exc, prefix=f"{target.describe()}: ")
    return failed + _finish(writing, config, add_stubs), stale


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


def _finish(writing: _Writing | None, config: GenerateConfig, add_stubs: bool) -> int:
    """Wait for a target's write and report it (and a server's handlers.py): 1 when it failed."""
    if writing is None:
        return 0
    target = writing.target
    try:
        _print_report(writing.report.result(), None)
        _remind_console_script(config, target)
        if _handlers_broken(target, writing.package, add_stubs):
            return 1
    except McpgenError as exc:
        report_error(exc, prefix=f"{target.describe()}: ")
        return 1
    return 0


def _handlers_broken(target: TargetConfig, pkg: GeneratedPackage, add_stubs: bool) -> bool:
    """A server target's handlers.py against the package just built (`_report_handlers`)."""
    return target.kind == "server" and _report_handlers(
        target.output / target.package,
        target.package,
        pkg.files,
        functools.partial(pkg.user_files.get, "handlers.py"),
        add_stubs=add_stubs,
        generated=pkg.user_files.get("handlers.py"),
    )


def _run_project_target(
    target: TargetConfig,
    loaded: dict[Path, LoadedSpec | McpgenError],
    checked: dict[tuple[Path, bool, bool], Checked | McpgenError],
    *,
    check: bool,
) -> int:
    """A target with `project`: always built (the project files hold the user's sections, so no
    manifest can vouch for them); 1 when `check` finds it stale."""
    from ..write.project import check_project, write_project

    assert target.project is not None
    validated = _validated_for(target, loaded, checked)
    spec = loaded[target.source_path]
    server_info = None if isinstance(spec, McpgenError) else spec.server_info
    meta = project_meta(target.package, server_info, target.project_name, target.project_version)
    built = stages.build_project(validated, target.package, meta, target.style)
    shown = display_path(target.project)
    if not check:
        report = write_project(target.project, built)
        _print_report(report.package, None)
        _print_project_report(target.project, report)
        return 0
    diffs = check_project(target.project, built)
    if not diffs:
        click.echo(f"fresh: {shown}")
        return 0
    click.echo(f"stale: {shown} (target #{target.index})")
    _print_diffs(diffs)
    _print_tool_changes(target, validated)
    return 1


def _report_fresh_handlers(
    target: TargetConfig,
    loaded: dict[Path, LoadedSpec | McpgenError],
    checked: dict[tuple[Path, bool, bool], Checked | McpgenError],
    *,
    add_stubs: bool,
) -> bool:
    """handlers.py of a fresh server target, against base.py and models.py on disk (they are what
    generating would write); the scaffold for stubs is built only when a tool lacks a method."""
    package_dir = target.output / target.package
    try:
        files = {name: (package_dir / name).read_bytes() for name in ("base.py", "models.py")}
    except OSError:
        return False

    def scaffold() -> bytes | None:
        validated = _validated_for(target, loaded, checked)
        built = stages.build_package(target.kind, validated, target.package, target.style, target.cli)
        return built.user_files.get("handlers.py")

    return _report_handlers(package_dir, target.package, files, scaffold, add_stubs=add_stubs)


def _report_handlers(
    package_dir: Path,
    package: str,
    files: dict[str, bytes],
    scaffold: Callable[[], bytes | None],
    *,
    add_stubs: bool,
    generated: bytes | None = None,
) -> bool:
    """Say what the user's handlers.py lacks or names in vain (`write.handlers`); with `add_stubs`,
    append the missing methods. True when the package cannot serve until handlers.py is fixed.
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
    if report.problem:
        click.echo(f"error: {shown}: {report.problem}", err=True)
    for missing in report.missing:
        click.echo(
            f"error: {shown}:{missing.line}: `{missing.name}` is not defined in {missing.module}.py any more "
            "(its tool was removed or renamed in the spec); change or delete the code that uses it: "
            "the server cannot start until then",
            err=True,
        )
    for line, method in report.stale_methods:
        click.echo(
            f"note: {shown}:{line}: method `{method}` handles no tool any more (removed from the spec?); "
            "delete it",
            err=True,
        )
    if report.unimplemented:
        tools = ", ".join(repr(name) for name, _method in report.unimplemented)
        if add_stubs:
            write_file_atomic(report.path, appended(report))
            click.echo(f"{'stubbed':<8} {shown}: class Server now has a method for {tools}")
        else:
            click.echo(
                f"warning: {shown}: class Server implements no method for {len(report.unimplemented)} "
                f'tool(s): {tools}; their calls answer "not implemented". Add with --add-stubs, or paste '
                "into class Server:",
                err=True,
            )
            for text in report.imports:
                click.echo(f"    {text}    # at the top of handlers.py", err=True)
            for text in report.stubs.splitlines():
                click.echo(f"    {text}".rstrip(), err=True)
    return report.broken


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        return path.is_file() and not path.is_symlink() and path.read_bytes() == data
    except OSError:
        return False


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
        click.echo(
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


def _loaded_for(target: TargetConfig, loaded: dict[Path, LoadedSpec | McpgenError]) -> None:
    if target.source_path not in loaded:
        try:
            spec = stages.load_spec(target.load_name(), None, {})
            # The display name goes into generated headers: relative to pyproject.toml's directory
            # (config.relative_source), so the output depends neither on the checkout's path nor
            # on where mcpgen runs.
            loaded[target.source_path] = dataclasses.replace(spec, source=target.source)
        except McpgenError as exc:
            loaded[target.source_path] = exc


def _validated_for(
    target: TargetConfig,
    loaded: dict[Path, LoadedSpec | McpgenError],
    checked: dict[tuple[Path, bool, bool], Checked | McpgenError],
) -> ValidatedSpec:
    key = (target.source_path, target.strict, target.skip_invalid)
    if key not in checked:
        _loaded_for(target, loaded)
        spec_or_error = loaded[target.source_path]
        if isinstance(spec_or_error, McpgenError):
            checked[key] = spec_or_error
        else:
            result = check_spec(spec_or_error, target.strict, target.skip_invalid, model=True)
            checked[key] = result
            if result.usable:  # warnings once per source; errors are reported per target below
                for diagnostic in result.warnings:
                    click.echo(str(diagnostic), err=True)
    entry = checked[key]
    if isinstance(entry, McpgenError):
        raise entry
    if entry.validated is None or not entry.usable:
        for diagnostic in entry.diagnostics:
            click.echo(str(diagnostic), err=True)
        click.echo(f"error: {target.describe()}: {entry.summary()}", err=True)
        raise Failed
    return entry.validated
