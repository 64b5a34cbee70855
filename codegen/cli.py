"""The `mcpgen` command line: flags in, pipeline stages called, report and exit code out.

Exit codes: 0 success; 1 an invalid spec, a refused write, a load failure or `generate --check`
drift (every McpgenError, message on stderr, no traceback); 2 usage errors (click's own);
3 an unexpected exception, which is a bug in mcpgen.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import shlex
import sys
import tomllib
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, TypeVar, cast
from urllib.parse import urlsplit

import click

from mcpgen_runtime._version import PROTOCOL_VERSION, __version__

from .auth_cli import Login, auth_group, login_options
from .config import (
    ConfigError,
    GenerateConfig,
    TargetConfig,
    check_line_length,
    find_pyproject,
    load_config,
    project_root,
    project_style,
    relative_source,
)
from .errors import Diagnostic, InternalGeneratorError, McpgenError, SpecValidationError
from .write import FileDiff, WriteReport, check_package, is_fresh, write_file_atomic, write_package

if TYPE_CHECKING:
    from mcpgen_runtime.protocol.legacy.detect import EraChoice

    from .fmt import Style
    from .spec import GeneratedPackage, LoadedSpec, ValidatedSpec

__all__ = ["default_package_name", "main"]

P = ParamSpec("P")
_F = TypeVar("_F", bound=Callable[..., Any])
Kind = Literal["client", "server"]
Side = Literal["client", "server", "both"]

EXIT_OK = 0
EXIT_FAILED = 1  # invalid input, refused write, --check drift
EXIT_BUG = 3

_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


# ------------------------------------------------------------------------------ pipeline entry points
# Imported lazily so `mcpgen --help` stays fast; tests may monkeypatch these three functions.


def _load(source: str | None, stdio: str | None, headers: Mapping[str, str],
          login: Login | None = None, era: str = "auto", max_response_bytes: int | None = None) -> LoadedSpec:
    from .load import load_source

    eras = cast("EraChoice", era)
    if login is None or stdio is not None or source is None or "://" not in source:
        return load_source(source, stdio=stdio, headers=dict(headers) or None, era=eras,
                           max_response_bytes=max_response_bytes)
    return load_source(source, headers=login.headers(headers) or None, auth=login.oauth(), era=eras,
                       max_response_bytes=max_response_bytes)


def _validate(spec: LoadedSpec, strict: bool) -> ValidatedSpec:
    from .validate import validate

    return validate(spec, strict=strict)


def _build(kind: Kind, spec: ValidatedSpec, package: str, style: Style, cli: str | None = None) -> GeneratedPackage:
    from .pipeline import build_client, build_server

    if kind == "client":
        return build_client(spec, package=package, style=style, cli_name=cli)
    return build_server(spec, package=package, style=style)


# ------------------------------------------------------------------------------------------- helpers


class _Failed(Exception):
    """Already reported on stderr; exit 1."""


def _reports_errors(func: Callable[P, None]) -> Callable[P, None]:
    """Map exceptions to exit codes: McpgenError → 1 (message only), anything unexpected → 3."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            func(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except _Failed:
            sys.exit(EXIT_FAILED)
        except BrokenPipeError:  # `mcpgen generate --check | head`: stop quietly
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(EXIT_FAILED)
        except McpgenError as exc:
            _error(exc)
            sys.exit(EXIT_FAILED)
        except Exception:
            traceback.print_exc(file=sys.stderr)
            click.echo(
                "mcpgen: internal error: this is a bug in mcpgen, not in your input. Please report it "
                "with the traceback above and the command you ran.",
                err=True,
            )
            sys.exit(EXIT_BUG)

    return wrapper


def _error(exc: McpgenError, prefix: str = "") -> None:
    click.echo(f"error: {prefix}{exc}", err=True)
    if isinstance(exc, InternalGeneratorError):
        click.echo("(this is a bug in mcpgen; please report it with the command you ran)", err=True)


def _rel(path: Path) -> str:
    """`path` relative to the current directory, as users see paths in messages."""
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)


def default_package_name(source: str | None, stdio: str | None, kind: Kind) -> str:
    """`specs/weather.json` → `weather_client`; `https://api.example.com/mcp` → `api_example_com_client`;
    `--stdio "python -m some_server"` → `some_server_client`."""
    base = ""
    if source:
        base = (urlsplit(source).hostname or "") if "://" in source else Path(source).stem
    elif stdio:
        try:
            argv = shlex.split(stdio)
        except ValueError:
            argv = stdio.split()
        base = Path(argv[-1]).stem if argv else ""
    ident = re.sub(r"[^0-9A-Za-z]+", "_", base).strip("_").lower() or "mcp"
    if ident[0].isdigit():
        ident = f"mcp_{ident}"
    return f"{ident}_{kind}"


def _parse_headers(_ctx: click.Context, _param: click.Parameter, values: Sequence[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in values:
        name, sep, value = item.partition(":")
        name = name.strip()
        if not sep or not _HEADER_NAME.fullmatch(name):
            raise click.BadParameter("expected 'Name: value', e.g. --header 'Authorization: Bearer TOKEN'")
        if any(ch in value for ch in "\r\n\x00"):
            raise click.BadParameter(f"the value of header {name!r} contains a line break or NUL")
        headers[name] = value.strip()
    return headers


def _parse_stdio(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        argv = shlex.split(value)
    except ValueError as exc:
        raise click.BadParameter(f"cannot split the command: {exc}") from exc
    if not argv:
        raise click.BadParameter("the command is empty")
    return value


def _parse_package(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not (value.isascii() and value.isidentifier()):
        raise click.BadParameter(f"{value!r} is not a valid Python package name (use letters, digits, '_')")
    return value


def _require_source(
    source: str | None, stdio: str | None, headers: Mapping[str, str], what: str = "SOURCE"
) -> None:
    if source is None and stdio is None:
        raise click.UsageError(f"give {what} (a spec file or server URL) or --stdio CMD")
    if source is not None and stdio is not None:
        raise click.UsageError(f"give {what} or --stdio CMD, not both")
    if headers and (stdio is not None or "://" not in (source or "")):
        raise click.UsageError("--header applies to server URLs only")


@dataclasses.dataclass(frozen=True)
class _Checked:
    loaded: LoadedSpec
    validated: ValidatedSpec | None  # None: not usable
    diagnostics: list[Diagnostic]  # warnings and errors, sorted

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity != "error"]

    @property
    def usable(self) -> bool:
        # A spec whose every tool was excluded is not usable, even when validate did not raise.
        return self.validated is not None and (bool(self.validated.tools) or not self.loaded.tools)

    def summary(self) -> str:
        source = self.loaded.source
        warned = f", {len(self.warnings)} warning(s)"
        if self.validated is None:
            tools = {d.tool for d in self.errors if d.tool is not None}
            in_tools = f" in {len(tools)} tool(s)" if tools else ""
            return f"{source}: not usable: {len(self.errors)} error(s){in_tools}{warned}"
        usable = len(self.validated.tools)
        excluded = len(self.loaded.tools) - usable
        verdict = "" if self.usable else "not usable: "
        return f"{source}: {verdict}{usable} tool(s) usable, {excluded} excluded{warned}"


def _check(loaded: LoadedSpec, strict: bool) -> _Checked:
    try:
        validated = _validate(loaded, strict)
    except SpecValidationError as exc:
        return _Checked(loaded, None, list(exc.diagnostics))
    return _Checked(loaded, validated, sorted(validated.warnings, key=Diagnostic.sort_key))


def _usable(checked: _Checked) -> ValidatedSpec:
    """The validated spec, or report every diagnostic on stderr and fail."""
    if checked.validated is not None and checked.usable:
        for diagnostic in checked.warnings:
            click.echo(str(diagnostic), err=True)
        return checked.validated
    for diagnostic in checked.diagnostics:
        click.echo(str(diagnostic), err=True)
    click.echo(f"error: {checked.summary()}", err=True)
    raise _Failed


def _print_report(report: WriteReport, user_hint: str | None) -> None:
    base = report.package_dir
    for label, paths in (("created", report.created), ("updated", report.updated), ("removed", report.removed)):
        for rel in paths:
            click.echo(f"{label:<8} {_rel(base / rel)}")
    for rel in report.preserved:
        hint = f"; {user_hint} replaces it" if user_hint else ""
        click.echo(f"{'kept':<8} {_rel(base / rel)} (yours{hint})")
    if report.changed:
        click.echo(
            f"{_rel(base)}: {len(report.created)} created, {len(report.updated)} updated, "
            f"{len(report.unchanged)} unchanged, {len(report.removed)} removed"
        )
    else:
        click.echo(f"{_rel(base)}: up to date ({len(report.unchanged)} file(s) unchanged)")


def _print_diffs(diffs: Iterable[FileDiff]) -> None:
    for diff in diffs:
        click.echo(f"  {diff.status:<8} {_rel(diff.file)}")
        for line in diff.detail.splitlines():
            click.echo(f"    {line}")


# ------------------------------------------------------------------------------------------ commands

_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

source_argument = click.argument("source", required=False, metavar="[SOURCE]")
stdio_option = click.option(
    "--stdio",
    "stdio",
    metavar="CMD",
    callback=_parse_stdio,
    help="Start CMD (split like a shell would) as an MCP server over stdio and read its tools "
    "instead of SOURCE/URL.",
)
header_option = click.option(
    "--header",
    "headers",
    multiple=True,
    metavar="'NAME: VALUE'",
    callback=_parse_headers,
    help="Extra HTTP header for a live server (e.g. authorization); repeatable.",
)
era_option = click.option(
    "--era",
    type=click.Choice(["auto", "modern", "legacy"]),
    default="auto",
    show_default=True,
    help="Protocol era of a live server: auto detects a 2026-07-28 server or an initialize-based "
    "(2025-11-25/2025-06-18/2025-03-26) one; modern or legacy skips the detection.",
)

max_response_option = click.option(
    "--max-response-bytes",
    type=click.IntRange(min=1),
    default=None,
    metavar="BYTES",
    help="Largest reply (HTTP body, SSE event or stdio line) read from a live server; more is an error. "
    "Default: 64 MiB.",
)


def _parse_line_length(_ctx: click.Context, _param: click.Parameter, value: int | None) -> int | None:
    if value is None:
        return None
    try:
        return check_line_length(value, "--line-length")
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from exc


line_length_option = click.option(
    "--line-length",
    type=int,
    metavar="N",
    callback=_parse_line_length,
    help="Lay generated code out for this line length [default: line-length from the [tool.black] "
    "table black reads for the output directory, else black's 88].",
)
strict_option = click.option(
    "--strict",
    is_flag=True,
    help="Make SHOULD-level findings (unusual tool names, _meta keys, secret-looking header "
    "parameters) errors instead of warnings.",
)


@click.group(context_settings=_CONTEXT)
@click.version_option(
    __version__, "--version", prog_name="mcpgen", message=f"%(prog)s %(version)s (MCP protocol {PROTOCOL_VERSION})"
)
def main() -> None:
    """Typed Python clients and servers from MCP tool definitions.

    SOURCE is a JSON spec file ({"tools": [...]}, as tools/list returns them) or the URL of a live
    MCP server (every tools/list page is read). Exit codes: 0 ok, 1 invalid input or stale output,
    2 usage error, 3 a bug in mcpgen.
    """


@main.command()
@source_argument
@stdio_option
@strict_option
@header_option
@login_options
@_reports_errors
def validate(source: str | None, stdio: str | None, strict: bool, headers: dict[str, str], login: Login) -> None:
    """Check SOURCE's tool definitions and print every diagnostic.

    Exits 0 when the spec is usable (warnings allowed), 1 when it is not.
    """
    _require_source(source, stdio, headers)
    checked = _check(_load(source, stdio, headers, login), strict)
    for diagnostic in checked.diagnostics:
        click.echo(str(diagnostic))
    click.echo(checked.summary())
    if not checked.usable:
        raise _Failed


def _header_source(spec: ValidatedSpec, source: str | None, out: Path) -> ValidatedSpec:
    """A file source as generated headers record it: relative to the project root (the nearest
    pyproject.toml's directory above `out`, else `out`), so every checkout writes the same bytes.
    URLs and stdio commands already carry their display names (no credentials, no query)."""
    if source is None or "://" in source:
        return spec
    return dataclasses.replace(spec, source=relative_source(Path(source), project_root(out)))


def _generate_one(
    kind: Kind,
    source: str | None,
    stdio: str | None,
    headers: dict[str, str],
    out: Path,
    package: str | None,
    strict: bool,
    overwrite: bool,
    login: Login,
    line_length: int | None,
    era: str = "auto",
    max_response_bytes: int | None = None,
) -> None:
    _require_source(source, stdio, headers)
    style = project_style(out, line_length=line_length)
    loaded = _load(source, stdio, headers, login, era, max_response_bytes)
    validated = _header_source(_usable(_check(loaded, strict)), source, out)
    name = package or default_package_name(source, stdio, kind)
    report = write_package(out, _build(kind, validated, name, style), overwrite_user_files=overwrite)
    _print_report(report, "--overwrite-handlers" if kind == "server" else None)


def _output_option(*, directory: bool, help_text: str) -> Callable[[_F], _F]:
    """`-o/--output` (required): a directory to write a package into, or a file to write."""
    return click.option(
        "-o",
        "--output",
        "out",
        required=True,
        type=click.Path(file_okay=not directory, dir_okay=directory, path_type=Path),
        help=help_text,
    )


output_dir_option = _output_option(
    directory=True, help_text="Directory to write the package into (the package is DIR/NAME/)."
)


def _package_option(kind: Kind) -> Callable[[_F], _F]:
    return click.option(
        "--package",
        metavar="NAME",
        callback=_parse_package,
        help=f"Python package name [default: from SOURCE, e.g. weather_{kind} for weather.json].",
    )


@main.command()
@source_argument
@output_dir_option
@_package_option("client")
@line_length_option
@strict_option
@stdio_option
@header_option
@era_option
@max_response_option
@login_options
@_reports_errors
def client(
    source: str | None,
    out: Path,
    package: str | None,
    line_length: int | None,
    strict: bool,
    stdio: str | None,
    headers: dict[str, str],
    era: str,
    max_response_bytes: int | None,
    login: Login,
) -> None:
    """Generate a typed client package (sync Client and AsyncClient) from SOURCE.

    Every generated file is rewritten; files you add to the package are kept. The generated
    client talks to servers of either era (2026-07-28, or initialize-based) with the same methods.
    """
    _generate_one("client", source, stdio, headers, out, package, strict, overwrite=False, login=login,
                  line_length=line_length, era=era, max_response_bytes=max_response_bytes)


@main.command()
@source_argument
@output_dir_option
@_package_option("server")
@click.option(
    "--overwrite-handlers",
    is_flag=True,
    help="Replace handlers.py with a fresh scaffold (by default it is created once and then yours).",
)
@line_length_option
@strict_option
@stdio_option
@header_option
@login_options
@_reports_errors
def server(
    source: str | None,
    out: Path,
    package: str | None,
    overwrite_handlers: bool,
    line_length: int | None,
    strict: bool,
    stdio: str | None,
    headers: dict[str, str],
    login: Login,
) -> None:
    """Generate a server package from SOURCE: a regenerated typed base and your handlers.py.

    handlers.py is created only when absent; base.py, models.py and the rest are rewritten every run.
    """
    _generate_one("server", source, stdio, headers, out, package, strict, overwrite=overwrite_handlers,
                  login=login, line_length=line_length)


@main.command()
@click.argument("url", required=False, metavar="[URL]")
@_output_option(directory=False, help_text="Spec file to write, e.g. specs/example.json.")
@stdio_option
@header_option
@era_option
@max_response_option
@login_options
@_reports_errors
def snapshot(url: str | None, out: Path, stdio: str | None, headers: dict[str, str], era: str,
             max_response_bytes: int | None, login: Login) -> None:
    """Save a live server's complete tool list (every page) as a spec file for offline builds.

    The file is {"tools": [...]} in the server's order, pretty-printed, replaced atomically.
    """
    _require_source(url, stdio, headers, "URL")
    loaded = _load(url, stdio, headers, login, era, max_response_bytes)
    text = json.dumps({"tools": loaded.tools}, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if write_file_atomic(out, text.encode("utf-8")):
        click.echo(f"saved {len(loaded.tools)} tool(s) from {loaded.source} to {_rel(out)}")
    else:
        click.echo(f"{_rel(out)}: up to date ({len(loaded.tools)} tool(s))")


EXIT_USAGE = 2  # click's own code for usage errors; `diff` also uses it for inputs that do not load


@main.command()
@click.argument("old", required=False, metavar="[OLD]")
@click.argument("new", required=False, metavar="[NEW]")
@click.option("--old-stdio", metavar="CMD", callback=_parse_stdio, help="Read OLD from CMD run as a stdio server.")
@click.option("--new-stdio", metavar="CMD", callback=_parse_stdio, help="Read NEW from CMD run as a stdio server.")
@click.option("--target", "target_names", metavar="PACKAGE", multiple=True,
              help="Compare a [tool.mcpgen] target's checked-in tools.json (OLD) with its source now (NEW); "
              "repeatable.")
@click.option("--all-targets", is_flag=True, help="Every [tool.mcpgen] target, as --target does (the pre-commit hook).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="pyproject.toml for --target [default: the nearest one from the current directory up].")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True,
              help="table for a terminal (coloured on a tty), json for machines, markdown for a pull request.")
@click.option("--fail-on", type=click.Choice(["breaking", "possibly-breaking", "any"]), default="breaking",
              show_default=True, help="Exit 1 when a change at least this severe is found.")
@click.option("--for", "side", type=click.Choice(["client", "server", "both"]), default="both", show_default=True,
              help="Whose breakage counts for --fail-on.")
@header_option
@max_response_option
def diff(old: str | None, new: str | None, old_stdio: str | None, new_stdio: str | None,
         target_names: tuple[str, ...], all_targets: bool, config_path: Path | None, fmt: str, fail_on: str,
         side: str, headers: dict[str, str], max_response_bytes: int | None) -> None:
    """What changed between two tool lists, judged for clients and for servers of the tools.

    OLD and NEW are spec files or URLs (or --old-stdio/--new-stdio commands). Each change is
    breaking, possibly breaking, compatible or cosmetic, with the tool, JSON pointer and reason.
    Exit codes: 0 nothing at the --fail-on level, 1 found, 2 usage or unreadable input, 3 a bug.
    """
    try:
        from .diff import diff_tools
        from .diffview import Format, render

        if target_names or all_targets:
            if old or new or old_stdio or new_stdio:
                raise click.UsageError("--target compares a target with its own source; give no OLD or NEW")
            pairs = _target_pairs(target_names, all_targets, config_path)
        else:
            if not (old or old_stdio) or not (new or new_stdio):
                raise click.UsageError("give OLD and NEW (spec files or URLs), --old-stdio/--new-stdio, or --target")
            pairs = [(_load(None if old_stdio else old, old_stdio, headers, max_response_bytes=max_response_bytes),
                      _load(None if new_stdio else new, new_stdio, headers, max_response_bytes=max_response_bytes))]
        reports = [diff_tools(a.tools, b.tools, old_source=a.source, new_source=b.source) for a, b in pairs]
        colour = fmt == "table" and sys.stdout.isatty()
        style = (lambda text, c: click.style(text, fg=c)) if colour else (lambda text, _c: text)
        if fmt == "json" and len(reports) > 1:
            click.echo(json.dumps([report.wire() for report in reports], indent=2, ensure_ascii=False))
        else:
            click.echo("\n".join(render(report, cast("Format", fmt), style) for report in reports), nl=False)
    except (click.ClickException, click.exceptions.Exit, click.Abort):
        raise
    except McpgenError as exc:
        _error(exc)
        sys.exit(EXIT_USAGE)
    except Exception:
        traceback.print_exc(file=sys.stderr)
        click.echo("mcpgen: internal error: this is a bug in mcpgen, not in your input. Please report it.", err=True)
        sys.exit(EXIT_BUG)
    counted = {"breaking": ("breaking",), "possibly-breaking": ("breaking", "possibly-breaking"),
               "any": ("breaking", "possibly-breaking", "compatible", "cosmetic")}[fail_on]
    if any(report.worst(cast("Side", side)) in counted for report in reports):
        sys.exit(EXIT_FAILED)


def _target_pairs(names: Sequence[str], every: bool,
                  config_path: Path | None) -> list[tuple[LoadedSpec, LoadedSpec]]:
    """(checked-in tools.json, source now) of each named target (or of every target), once per pair."""
    from .load import load_file

    if config_path is None:
        config_path = find_pyproject(Path.cwd())
        if config_path is None:
            raise ConfigError("no pyproject.toml in this directory or its parents; pass --config")
    targets = load_config(config_path).targets
    unknown = sorted(set(names) - {t.package for t in targets})
    if unknown:
        raise ConfigError(f"{_rel(config_path)} has no [tool.mcpgen] target with package {', '.join(unknown)}")
    pairs: dict[tuple[bytes, Path], tuple[LoadedSpec, LoadedSpec]] = {}
    for target in targets:
        if not every and target.package not in names:
            continue
        checked_in = target.output / target.package / "tools.json"
        if not checked_in.exists():
            raise ConfigError(f"{target.describe()} has no generated tools.json yet ({_rel(checked_in)}): "
                              "run `mcpgen generate` first")
        key = (checked_in.read_bytes(), target.source_path.resolve())  # a client and a server of one spec: once
        if key not in pairs:
            pairs[key] = (load_file(_rel(checked_in)), load_file(_rel(target.source_path)))
    return list(pairs.values())


@main.command()
@click.argument("spec", metavar="SPEC")
@click.option("--http", "transport", flag_value="http", default=True, help="Serve Streamable HTTP (the default).")
@click.option("--stdio", "transport", flag_value="stdio", help="Serve stdin/stdout instead.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="TCP port.")
@click.option("--seed", type=int, default=0, show_default=True, help="The same seed gives the same answers.")
@click.option("--responses", type=click.Path(dir_okay=False, exists=True, path_type=Path), metavar="FILE",
              help="Canned answers, errors, elicitation rounds, latency and failures per tool (YAML or JSON).")
@header_option
@_reports_errors
def mock(spec: str, transport: str, host: str, port: int, seed: int, responses: Path | None,
         headers: dict[str, str]) -> None:
    """Serve SPEC's tools with made-up answers that are valid against each tool's outputSchema.

    SPEC is a spec file, a generated package's tools.json, or a live server's URL. Arguments and
    x-mcp-header are checked as a generated server checks them. Needs `pip install 'mcpgen[mock]'`.
    """
    import logging

    from mcpgen_runtime.mock import MockDependencyError, MockServer, ResponsesError, serve_mock
    from mcpgen_runtime.mock.command import keep_hypothesis_files_in_the_cache

    _require_source(spec, None, headers)
    keep_hypothesis_files_in_the_cache()  # before hypothesis builds (and stores) its unicode tables
    validated = _usable(_check(_load(spec, None, headers), strict=False))
    try:
        server = MockServer(validated.tools, seed=seed, responses=responses)
    except (ResponsesError, MockDependencyError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        raise _Failed from None
    logging.basicConfig(stream=sys.stderr, level="WARNING", format="%(levelname)s %(name)s: %(message)s")
    where = "stdio" if transport == "stdio" else f"http://{host}:{port}/mcp"
    click.echo(f"mcpgen mock: {len(validated.tools)} tool(s) from {validated.source} on {where} (seed {seed})",
               err=True)  # stderr: on stdio, stdout carries protocol messages only (STDIO-03)
    serve_mock(server, "stdio" if transport == "stdio" else "http", host, port)


@main.command()
@click.option("--check", is_flag=True, help="Write nothing; show what is stale and exit 1 if anything is.")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="pyproject.toml with [tool.mcpgen] targets [default: the nearest one from the current directory up].",
)
@_reports_errors
def generate(check: bool, config_path: Path | None) -> None:
    """Regenerate every [[tool.mcpgen.targets]] table of pyproject.toml.

    Each target has source (a spec file relative to pyproject.toml), kind (client or server),
    output (a directory) and package; strict and line-length are optional. With --check nothing is written: stale
    targets are listed with a short diff and the exit code is 1.
    """
    if config_path is None:
        config_path = find_pyproject(Path.cwd())
        if config_path is None:
            raise ConfigError("no pyproject.toml in this directory or its parents; pass --config")
    config = load_config(config_path)
    failed, stale = _run_targets(config, check=check)
    if check:
        fresh = len(config.targets) - stale - failed
        click.echo(f"{stale} stale, {fresh} up to date, {failed} failed (of {len(config.targets)} targets)")
        if stale:
            click.echo("run `mcpgen generate` to update the stale targets")
    if failed or stale:
        raise _Failed


def _input_key(target: TargetConfig, loaded: dict[Path, LoadedSpec | McpgenError],
               digests: dict[Path, str]) -> str | None:
    """pipeline.input_key of the target (None when its source does not load: reported later)."""
    from .pipeline import input_key

    _loaded_for(target, loaded)
    spec = loaded[target.source_path]
    if isinstance(spec, McpgenError):
        return None
    if target.source_path not in digests:
        digests[target.source_path] = spec.digest
    return input_key(digest=digests[target.source_path], source=target.source, kind=target.kind,
                     package=target.package, strict=target.strict, style=target.style, cli=target.cli)


def _run_targets(config: GenerateConfig, *, check: bool) -> tuple[int, int]:
    """Build every target (each source loaded and validated once); returns (failed, stale).

    A target whose manifest records the same input key and whose files still have their recorded
    digests is fresh without being built (`write.is_fresh`)."""
    checked: dict[tuple[Path, bool], _Checked | McpgenError] = {}
    loaded: dict[Path, LoadedSpec | McpgenError] = {}
    digests: dict[Path, str] = {}
    failed = stale = 0
    for target in config.targets:
        try:
            key = _input_key(target, loaded, digests)
            if key is not None and is_fresh(target.output, target.package, key):
                click.echo(f"fresh: {_rel(target.output / target.package)}" if check
                           else f"{_rel(target.output / target.package)}: up to date")
                continue
            validated = _validated_for(target, loaded, checked)
            pkg = dataclasses.replace(_build(target.kind, validated, target.package, target.style, target.cli),
                                      input_key=key)
            if check:
                diffs = check_package(target.output, pkg)
                if diffs:
                    stale += 1
                    click.echo(f"stale: {_rel(target.output / target.package)} (target #{target.index})")
                    _print_diffs(diffs)
                    _print_tool_changes(target, validated)
                else:
                    click.echo(f"fresh: {_rel(target.output / target.package)}")
            else:
                _print_report(write_package(target.output, pkg), None)
                _remind_console_script(config, target)
        except _Failed:
            failed += 1
        except McpgenError as exc:
            failed += 1
            _error(exc, prefix=f"{target.describe()}: ")
    return failed, stale


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
        click.echo(f"note: to install the command {target.cli!r}, add to [project.scripts] of the distribution "
                   f"that ships {target.package}: {target.cli} = \"{entry}\"")


def _print_tool_changes(target: TargetConfig, validated: ValidatedSpec) -> None:
    """When a stale target's tools changed, say whom the change breaks (`mcpgen diff` in short)."""
    from .diff import diff_tools
    from .diffview import summary_line
    from .load import load_file

    checked_in = target.output / target.package / "tools.json"
    if not checked_in.exists():
        return
    report = diff_tools(load_file(_rel(checked_in)).tools, validated.tools, old_source=_rel(checked_in),
                        new_source=target.source)
    if report.changes:
        click.echo(f"  tools: {summary_line(report)}")
        for change in report.changes:
            if "breaking" in (change.client, change.server):
                click.echo(f"    {change.tool}{change.pointer}: {change.reason} (clients: {change.client}, "
                           f"servers: {change.server})")
        click.echo(f"  details: mcpgen diff --target {target.package}")


def _loaded_for(target: TargetConfig, loaded: dict[Path, LoadedSpec | McpgenError]) -> None:
    if target.source_path not in loaded:
        try:
            spec = _load(_rel(target.source_path), None, {})
            # The display name goes into generated headers: relative to pyproject.toml's directory
            # (config.relative_source), so the output depends neither on the checkout's path nor
            # on where mcpgen runs.
            loaded[target.source_path] = dataclasses.replace(spec, source=target.source)
        except McpgenError as exc:
            loaded[target.source_path] = exc


def _validated_for(
    target: TargetConfig,
    loaded: dict[Path, LoadedSpec | McpgenError],
    checked: dict[tuple[Path, bool], _Checked | McpgenError],
) -> ValidatedSpec:
    key = (target.source_path, target.strict)
    if key not in checked:
        _loaded_for(target, loaded)
        spec_or_error = loaded[target.source_path]
        if isinstance(spec_or_error, McpgenError):
            checked[key] = spec_or_error
        else:
            result = _check(spec_or_error, target.strict)
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
        raise _Failed
    return entry.validated


main.add_command(auth_group)


if __name__ == "__main__":  # pragma: no cover - `python -m codegen.cli`
    main()
