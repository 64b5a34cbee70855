"""The commands that write one package from one source: `mcpgen client` and `mcpgen server`
(a client may also be a project, or one package per server of an MCP config file: `--all`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import click

from ..errors import McpgenError, OutputConflictError
from ..load.mcp_config import split_config_source
from ..spec import NO_FILTER, ToolFilter
from ..write.manifest import recorded_source
from ..write.package import write_package
from . import stages
from .auth import login_options
from .common import (
    Failed,
    Source,
    add_stubs_option,
    batch,
    check_spec,
    display_path,
    era_option,
    gathers_source,
    header_option,
    line_length_option,
    max_response_option,
    mcp_config_options,
    output_option,
    report_error,
    reports_errors,
    selected_tools,
    skip_invalid_option,
    source_argument,
    stdio_option,
    strict_option,
    tool_filter_options,
    usable_spec,
)
from .config import header_path, project_root, project_style, relative_source
from .naming import default_package_name, package_names, project_meta, project_options
from .output import say
from .reports import Counts, Tally, print_project_report, print_report, report_handlers, tools_line
from .stages import Kind

if TYPE_CHECKING:
    from ..spec import LoadedSpec

__all__ = ["client", "server"]

_F = TypeVar("_F", bound=Callable[..., Any])


def _parse_package(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not (value.isascii() and value.isidentifier()):
        raise click.BadParameter(f"{value!r} is not a valid Python package name (use letters, digits, '_')")
    return value


force_option = click.option(
    "--force",
    is_flag=True,
    help="Replace a package generated from another source (its files' headers name the source); "
    "without it that is refused, so a second server never silently replaces the first's package.",
)


def _refuse_other_source(package_dir: Path, source: str, force: bool) -> None:
    """A usage error when `package_dir` holds a package generated from another source than
    `source` (unless `force`): regenerating from the same source is what the command is for, a
    different one is most often a second server given the same (default) package name."""
    try:
        recorded = recorded_source((package_dir / "__init__.py").read_bytes())
    except OSError:
        return
    if force or recorded is None or _same_source(recorded, source):
        return
    raise OutputConflictError(
        f"{display_path(package_dir)} was generated from {recorded}, not {source}: give --force to "
        "replace it, or --package NAME to write the new one beside it"
    )


_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def _same_source(recorded: str, source: str) -> bool:
    """Equal; or one server on this machine at two ports (a local server's port changes from run
    to run)."""
    if recorded == source:
        return True
    if "://" not in recorded or "://" not in source:
        return False
    old, new = urlsplit(recorded), urlsplit(source)
    return (
        old.hostname in _LOOPBACK
        and new.hostname in _LOOPBACK
        and (old.scheme, old.path) == (new.scheme, new.path)
    )


output_dir_option = output_option(
    directory=True, help_text="Directory to write the package into (the package is DIR/NAME/)."
)


def _package_option(kind: Kind) -> Callable[[_F], _F]:
    return click.option(
        "--package",
        metavar="NAME",
        callback=_parse_package,
        help=f"Python package name [default: the name a live server gives itself, else the package or "
        f"script --stdio starts, else SOURCE's host or file name: weather_{kind} for weather.json or a "
        f"server called weather; see the docs' Generate bindings, Names].",
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
@tool_filter_options
@stdio_option
@mcp_config_options
@click.option(
    "--all",
    "every_server",
    is_flag=True,
    help="With --config FILE: one package per server of the file (named after each server, "
    "e.g. github_client), into -o DIR; servers the file disables are left out.",
)
@force_option
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
    force: bool,
    filters: ToolFilter,
) -> None:
    """Generate a typed client package (sync Client and AsyncClient) from SOURCE.

    Every generated file is rewritten; files you add to the package are kept. The generated
    client talks to servers of either era (2026-07-28, or initialize-based) with the same methods.
    With --project DIR the package lands in DIR/src/ inside an installable project (pyproject.toml,
    README.md): see the docs' "Publish a client". SOURCE may also be a server of an MCP config file:
    --config FILE --server NAME (or FILE#NAME), or every server of it with --all.
    """
    if every_server:
        _every_server(
            source,
            out,
            project,
            package,
            strict,
            line_length=line_length,
            skip_invalid=skip_invalid,
            force=force,
            filters=filters,
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
            force=force,
            filters=filters,
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
        force=force,
        filters=filters,
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
@tool_filter_options
@stdio_option
@mcp_config_options
@force_option
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
    force: bool,
    filters: ToolFilter,
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
        force=force,
        filters=filters,
    )


def _header_source(shown: str, source: str | None, out: Path) -> str:
    """The source as generated headers record it (`shown`: the loaded spec's display name): a file
    relative to the project root (the nearest pyproject.toml's directory above `out`, else `out`),
    so every checkout writes the same bytes. URLs and stdio commands already carry their display
    names (no credentials, no query)."""
    if source is None or "://" in source:
        return shown
    in_config = split_config_source(source)
    if in_config is not None:  # FILE#NAME: the file as for a spec file, the server's name as given
        path, name = in_config
        return f"{header_path(path, project_root(out))}#{name}"
    return relative_source(Path(source), project_root(out))


def _every_server(
    source: Source,
    out: Path | None,
    project: Path | None,
    package: str | None,
    strict: bool,
    *,
    line_length: int | None,
    skip_invalid: bool,
    force: bool,
    filters: ToolFilter,
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
            say(f"skipped  {display_path(mcp_config)}#{entry.name}: disabled in the file")
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
                force=force,
                filters=filters,
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
    force: bool = False,
    filters: ToolFilter = NO_FILTER,
) -> Counts:
    """Generate one package from a resolved source; (tools generated, excluded, filtered out)."""
    source.require()
    style = project_style(out, line_length=line_length)
    listed = source.load()
    loaded = selected_tools(listed, filters).spec
    header = _header_source(loaded.source, source.where, out)
    name = package or default_package_name(source.where, source.stdio, kind, loaded.server_info)
    _refuse_other_source(out / name, header, force)  # before the spec's warnings: nothing is written
    checked = check_spec(loaded, strict, skip_invalid, model=True)
    validated = dataclasses.replace(usable_spec(checked), source=header)
    pkg = stages.build_package(kind, validated, name, style)
    report = write_package(out, pkg, overwrite_user_files=overwrite)
    print_report(report, "--overwrite-handlers" if kind == "server" else None)
    broken = kind == "server" and report_handlers(
        out / name,
        name,
        pkg.files,
        lambda: pkg.user_files.get("handlers.py"),
        add_stubs=add_stubs,
        generated=pkg.user_files.get("handlers.py"),
    )
    counts = _counts(listed, loaded, validated.tools)
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
    force: bool = False,
    filters: ToolFilter = NO_FILTER,
) -> None:
    from ..write.project import package_dir_of, write_project

    source.require()
    project_meta(package or "pkg", None, name, version)  # bad flags stop the run before a server is asked
    out = package_dir_of(project)
    style = project_style(out, line_length=line_length)
    listed = source.load()
    loaded = selected_tools(listed, filters).spec
    pkg_name = package or default_package_name(source.where, source.stdio, "client", loaded.server_info)
    meta = project_meta(pkg_name, loaded.server_info, name, version)  # before the work: errors first
    # relative to the project root above DIR: DIR's own pyproject.toml must not move it between runs
    header = _header_source(loaded.source, source.where, project.parent)
    _refuse_other_source(out / pkg_name, header, force)
    checked = check_spec(loaded, strict, skip_invalid, model=True)
    validated = dataclasses.replace(usable_spec(checked), source=header)
    built = stages.build_project(validated, pkg_name, meta, style)
    report = write_project(project, built)
    print_report(report.package, None)
    print_project_report(project, report)
    click.echo(tools_line(loaded.source, *_counts(listed, loaded, validated.tools)))


def _counts(listed: LoadedSpec, selected: LoadedSpec, generated: list[dict[str, Any]]) -> Counts:
    """(generated, excluded, filtered out: None without tool filters) of one package."""
    filtered = len(listed.tools) - len(selected.tools) if selected.filters else None
    return len(generated), len(selected.tools) - len(generated), filtered
