"""What every `mcpgen` command shares: exit codes and error reporting, the options that name a source
(a spec file, a URL with headers, a stdio command) and the `Source` value a command gathers them
into (`gathers_source`), and a loaded spec checked for use.

Exit codes: 0 success; 1 an invalid spec, a refused write, a load failure or `generate --check`
drift (every McpgenError, message on stderr, no traceback); 2 usage errors (click's own);
3 an unexpected exception, which is a bug in mcpgen; 130 interrupted (Ctrl-C, app.py).
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import os
import re
import shlex
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, ParamSpec, TypeVar

import click

from mcpgen_runtime.masking import masked

from ..errors import Diagnostic, InternalGeneratorError, McpgenError, SpecValidationError
from ..spec import ToolFilter
from . import stages
from .config import ConfigError, check_line_length
from .output import say

if TYPE_CHECKING:
    from ..load.filters import Selection
    from ..spec import LoadedSpec, ValidatedSpec
    from .auth import Login

__all__ = [
    "CONTEXT_SETTINGS",
    "EXIT_BUG",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "INTERRUPTED_NOTE",
    "Checked",
    "Failed",
    "Source",
    "add_stubs_option",
    "check_spec",
    "config_source",
    "display_path",
    "era_option",
    "exit_for_bug",
    "gathers_source",
    "header_option",
    "line_length_option",
    "max_response_option",
    "mcp_config_options",
    "output_option",
    "parse_stdio",
    "print_diagnostics",
    "pyproject_options",
    "report_error",
    "reports_errors",
    "require_source",
    "selected_tools",
    "skip_invalid_option",
    "source_argument",
    "stdio_option",
    "strict_option",
    "tool_filter_options",
    "usable_spec",
]

P = ParamSpec("P")
_F = TypeVar("_F", bound=Callable[..., Any])

EXIT_OK = 0
EXIT_FAILED = 1  # invalid input, refused write, --check drift
EXIT_USAGE = 2  # click's own code for usage errors; `diff` also uses it for inputs that do not load
EXIT_BUG = 3
EXIT_INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as shells report it

# what the one-line message of an interrupted command adds (`ctx.meta`): a writing command's promise
INTERRUPTED_NOTE = "mcpgen.interrupted_note"

_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


class Failed(Exception):
    """Already reported on stderr; exit 1."""


# the context object of a command run as the `mcpgen` program (app.py), not under CliRunner
PROGRAM = object()


def batch(func: Callable[P, None]) -> Callable[P, None]:
    """A command that runs once and ends (client, server, generate). As the `mcpgen` program it runs
    with CPython's cyclic garbage collector off: what it builds lives until it ends and forms few
    cycles, and each full collection walked it all again (for 1,000 tools, tenths of a second after
    every stage; the peak memory measured the same). Called any other way, the collector is left
    as it is."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
        context = click.get_current_context(silent=True)
        if context is not None:
            # every write replaces a whole file or package (write/), so an interrupt leaves none half done
            context.meta[INTERRUPTED_NOTE] = "; every package is written whole or left as it was"
            if context.find_root().obj is PROGRAM:
                gc.disable()
        func(*args, **kwargs)

    return wrapper


def reports_errors(func: Callable[P, None]) -> Callable[P, None]:
    """Map exceptions to exit codes: McpgenError → 1 (message only), anything unexpected → 3."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            func(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Failed:
            sys.exit(EXIT_FAILED)
        except BrokenPipeError:  # `mcpgen generate --check | head`: stop quietly
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(EXIT_FAILED)
        except McpgenError as exc:
            report_error(exc)
            sys.exit(EXIT_FAILED)
        except Exception:
            exit_for_bug()

    return wrapper


def exit_for_bug() -> NoReturn:
    """The exception being handled is a bug in mcpgen: its traceback, a plea to report it, exit 3."""
    traceback.print_exc(file=sys.stderr)
    click.echo(
        "mcpgen: internal error: this is a bug in mcpgen, not in your input. Please report it "
        "with the traceback above and the command you ran.",
        err=True,
    )
    sys.exit(EXIT_BUG)


def report_error(exc: McpgenError, prefix: str = "") -> None:
    click.echo(f"error: {prefix}{masked(str(exc))}", err=True)
    if isinstance(exc, InternalGeneratorError):
        click.echo("(this is a bug in mcpgen; please report it with the command you ran)", err=True)


def display_path(path: Path) -> str:
    """`path` relative to the current directory, as users see paths in messages."""
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)


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


def parse_stdio(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        argv = shlex.split(value)
    except ValueError as exc:
        raise click.BadParameter(f"cannot split the command: {exc}") from exc
    if not argv:
        raise click.BadParameter("the command is empty")
    return value


def require_source(
    source: str | None, stdio: str | None, headers: Mapping[str, str], what: str = "SOURCE"
) -> None:
    if source is None and stdio is None:
        raise click.UsageError(
            f"give {what} (a spec file or server URL), --stdio CMD or --config FILE --server NAME"
        )
    if source is not None and stdio is not None:
        raise click.UsageError(f"give {what} or --stdio CMD, not both")
    if headers and (stdio is not None or "://" not in (source or "")):
        raise click.UsageError("--header applies to server URLs only")


def mcp_config_options(func: _F) -> _F:
    """`--config FILE --server NAME`: a server defined in an MCP config file (the `FILE#NAME` source)."""
    func = click.option(
        "--server",
        "server_name",
        metavar="NAME",
        help="The server of --config FILE to read (`mcpgen servers --config FILE` lists them).",
    )(func)
    return click.option(
        "--config",
        "mcp_config",
        type=click.Path(dir_okay=False, exists=True, path_type=Path),
        metavar="FILE",
        help="An MCP config file holding the server: claude_desktop_config.json, .cursor/mcp.json, "
        ".mcp.json, Windsurf's mcp_config.json, .vscode/mcp.json or Codex's config.toml. Its command, "
        "args, env and cwd, or its URL and headers, are used as the file says.",
    )(func)


def _refuse_config(_ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        raise click.UsageError(
            f"--config names an MCP config file (.mcp.json) in mcpgen; give the pyproject.toml with "
            f"--pyproject {value}"
        )


# the hidden old spelling's help (`mcpgen generate --help` does not show it)
_OLD = "Refused: the pyproject.toml is --pyproject PATH (--config is an MCP config file)."


def pyproject_options(help_text: str) -> Callable[[_F], _F]:
    """`--pyproject PATH` (passed as `pyproject`), and the old spelling `--config` refused with a
    message naming it: `--config` is an MCP config file everywhere else."""

    def decorate(func: _F) -> _F:
        func = click.option("--config", callback=_refuse_config, expose_value=False, hidden=True, help=_OLD)(
            func
        )
        return click.option(
            "--pyproject",
            "pyproject",
            type=click.Path(dir_okay=False, exists=True, path_type=Path),
            metavar="PATH",
            help=help_text,
        )(func)

    return decorate


def config_source(
    mcp_config: Path | None,
    server_name: str | None,
    source: str | None,
    stdio: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> str | None:
    """SOURCE as the loaders take it: `FILE#NAME` for `--config FILE --server NAME`, else `source`."""
    if mcp_config is None:
        if server_name is not None:
            raise click.UsageError("--server NAME needs --config FILE")
        return source
    if source is not None or stdio is not None:
        raise click.UsageError("give SOURCE, --stdio CMD or --config FILE --server NAME, not several")
    if headers:
        raise click.UsageError("--header: a config file's server gets the headers the file gives it")
    if server_name is None:
        raise click.UsageError(
            f"--config {display_path(mcp_config)} needs --server NAME "
            f"(`mcpgen servers --config {display_path(mcp_config)}` lists them)"
        )
    return f"{mcp_config}#{server_name}"


@dataclasses.dataclass(frozen=True)
class Source:
    """Where the tools come from (`where`: SOURCE, or `FILE#NAME` once `resolved`) and how a live
    server is reached."""

    where: str | None
    stdio: str | None = None
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    mcp_config: Path | None = None  # --config FILE, until `resolved`
    server_name: str | None = None  # --server NAME, until `resolved`
    era: str = "auto"
    max_response_bytes: int | None = None
    login: Login | None = None

    def resolved(self) -> Source:
        """`--config FILE --server NAME` as the `FILE#NAME` source the loaders take (usage errors
        for options that do not go together)."""
        where = config_source(self.mcp_config, self.server_name, self.where, self.stdio, self.headers)
        return dataclasses.replace(self, where=where, mcp_config=None, server_name=None)

    def require(self, what: str = "SOURCE") -> None:
        """A usage error unless exactly one of `where` and `stdio` is given (and headers fit)."""
        require_source(self.where, self.stdio, self.headers, what)

    def load(self) -> LoadedSpec:
        return stages.load_spec(
            self.where, self.stdio, self.headers, self.login, self.era, self.max_response_bytes
        )


def gathers_source(
    argument: str = "source", stdio: str = "stdio"
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Pass the command's source options (the `argument` and `stdio` parameters, the rest by their
    usual names, each only when the command has it) to the function as one `source: Source`."""

    def decorate(func: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> None:
            kwargs["source"] = Source(
                where=kwargs.pop(argument),
                stdio=kwargs.pop(stdio, None),
                headers=kwargs.pop("headers", {}),
                mcp_config=kwargs.pop("mcp_config", None),
                server_name=kwargs.pop("server_name", None),
                era=kwargs.pop("era", "auto"),
                max_response_bytes=kwargs.pop("max_response_bytes", None),
                login=kwargs.pop("login", None),
            )
            func(*args, **kwargs)

        return wrapper

    return decorate


@dataclasses.dataclass(frozen=True)
class Checked:
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

    def summary(self, filtered: int | None = None) -> str:
        """One line: usable or not, the counts; `filtered`: the tools tool filters left out, when
        there are filters (they are not exclusions)."""
        source = self.loaded.source
        warned = f", {len(self.warnings)} warning(s)"
        if self.validated is None:
            tools = {d.tool for d in self.errors if d.tool is not None}
            in_tools = f" in {len(tools)} tool(s)" if tools else ""
            hint = (
                "; --skip-invalid (a target's skip_invalid = true) leaves those tools out "
                "and generates the rest"
                if tools and len(tools) < len(self.loaded.tools)
                else ""
            )
            return f"{source}: not usable: {len(self.errors)} error(s){in_tools}{warned}{hint}"
        usable = len(self.validated.tools)
        excluded = len(self.loaded.tools) - usable
        verdict = "" if self.usable else "not usable: "
        extra = "".join(
            f", {len(kept)} of {len(listed)} {what}(s)"
            for what, kept, listed in (
                ("resource", self.validated.resources, self.loaded.resources),
                ("resource template", self.validated.resource_templates, self.loaded.resource_templates),
                ("prompt", self.validated.prompts, self.loaded.prompts),
            )
            if listed
        )
        left_out = "" if filtered is None else f", {filtered} filtered out"
        return f"{source}: {verdict}{usable} tool(s) usable, {excluded} excluded{left_out}{extra}{warned}"


def check_spec(
    loaded: LoadedSpec,
    strict: bool,
    skip_invalid: bool = False,
    *,
    python_names: bool = True,
    model: bool = False,
) -> Checked:
    """Validate `loaded`; with `python_names`, also warn about every tool or parameter the
    generated code names differently from its wire name (model/renames.py). `model`: packages are
    built next (stages.validate_spec)."""
    try:
        validated = stages.validate_spec(loaded, strict, skip_invalid, model=model)
    except SpecValidationError as exc:
        return Checked(loaded, None, list(exc.diagnostics))
    warnings = list(validated.warnings)
    if python_names:
        from ..model.renames import rename_warnings

        warnings += rename_warnings(loaded, validated)
    return Checked(loaded, validated, sorted(warnings, key=Diagnostic.sort_key))


def usable_spec(checked: Checked) -> ValidatedSpec:
    """The validated spec, or report every diagnostic on stderr and fail."""
    if checked.validated is not None and checked.usable:
        print_diagnostics(checked.warnings)
        return checked.validated
    print_diagnostics(checked.diagnostics)
    click.echo(f"error: {checked.summary()}", err=True)
    raise Failed


def print_diagnostics(diagnostics: Sequence[Diagnostic], *, err: bool = True) -> None:
    """Each diagnostic on a line; with -q/--quiet the errors only."""
    for diagnostic in diagnostics:
        if diagnostic.severity == "error":
            click.echo(masked(str(diagnostic)), err=err)
        else:
            say(masked(str(diagnostic)), err=err)


CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


source_argument = click.argument("source", required=False, metavar="[SOURCE]")


stdio_option = click.option(
    "--stdio",
    "stdio",
    metavar="CMD",
    callback=parse_stdio,
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


add_stubs_option = click.option(
    "--add-stubs",
    is_flag=True,
    help="Append a stub method to class Server in handlers.py for each tool it does not implement "
    "(the rest of the file is left as it is).",
)


skip_invalid_option = click.option(
    "--skip-invalid",
    is_flag=True,
    help="Generate the usable tools of a server you do not control: a tool with errors is left out, "
    "its errors printed as warnings (default: any error stops generation).",
)


strict_option = click.option(
    "--strict",
    is_flag=True,
    help="Make SHOULD-level findings (unusual tool names, _meta keys, secret-looking header "
    "parameters) and every problem that would leave a tool out (an invalid pattern, a bad "
    "x-mcp-header) errors instead of warnings.",
)


def tool_filter_options(func: Callable[P, None]) -> Callable[..., None]:
    """`--include-tools GLOB` and `--exclude-tools GLOB` (repeatable), passed to the command as one
    `filters: ToolFilter` (load/filters.py: what they mean)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        kwargs["filters"] = ToolFilter.of(kwargs.pop("include_tools"), kwargs.pop("exclude_tools"))
        func(*args, **kwargs)

    wrapper = click.option(
        "--exclude-tools",
        "exclude_tools",
        multiple=True,
        metavar="GLOB",
        help="Leave out the tools whose wire name matches GLOB (after --include-tools); repeatable.",
    )(wrapper)
    return click.option(
        "--include-tools",
        "include_tools",
        multiple=True,
        metavar="GLOB",
        help="Only the tools whose wire name matches GLOB (case-sensitive shell glob: *, ?, [seq]); "
        "repeatable: a tool matching any is kept. Filtered tools are left out, not excluded: --strict "
        "ignores them; a GLOB matching no tool is a warning.",
    )(wrapper)


def selected_tools(loaded: LoadedSpec, filters: ToolFilter) -> Selection:
    """The tools of `loaded` that `filters` keeps (load/filters.py), a warning printed for each glob
    that matches none; a ToolFilterError when none is kept."""
    from ..load.filters import select_tools

    selection = select_tools(loaded, filters)
    print_diagnostics(selection.warnings)
    return selection


def output_option(*, directory: bool, help_text: str, required: bool = True) -> Callable[[_F], _F]:
    """`-o/--output` (required unless said otherwise): a directory to write a package into, or a file."""
    return click.option(
        "-o",
        "--output",
        "out",
        required=required,
        type=click.Path(file_okay=not directory, dir_okay=directory, path_type=Path),
        help=help_text,
    )
