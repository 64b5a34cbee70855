"""The command line of a generated client package: `python -m PKG --url URL TOOL --opt value`.

The generated `__main__.py` hands `run_cli` its `Client` class, its models module and one `CliTool`
per tool (wire name, Python method name, the names of its input and output models); the tool
definitions themselves are the package's tools.json, read as data. Each tool is a subcommand named
by its method with `-` for `_`, built only when it is used (`--help` lists the tools from their
definitions): a call imports and builds the models of its own tool only.

While a call runs, its progress is shown on stderr (`progress.py`; `--quiet` shows none).
`--timeout` is the silence the call allows (its progress notifications restart the clock) and
`--max-time` bounds the whole call (CANCEL-06): the client's `timeout` and `max_time`.

Exit codes (`python -m PKG --help` says the same):

    0  the tool ran
    1  the tool reported an error (`isError: true`); its result is printed all the same
    2  usage: an unknown tool or option, a value of the wrong type, a required option missing,
       arguments the tool's inputSchema refuses (checked before anything is sent)
    3  protocol or transport: the server could not be reached or started, timed out, answered a
       JSON-RPC error, or broke the protocol (a result that does not match the outputSchema too)
    4  the server asked for input the CLI cannot give: `--no-input` is set, or it needs
       sampling or roots (a terminal answers elicitation forms only; the server may say so
       with -32021 before asking)
  130  interrupted (Ctrl-C)

`TOOL ... --no-wait` starts the call and prints its task id when the server makes a task of it;
`task status|wait|cancel ID` (cli/tasks.py; `mcp-task` when a tool's command is `task`) follow it.
`check` (cli/drift.py; `mcp-check` when a tool's command is `check`) compares the server's tools with
the package's pins: exit 0 unchanged, 1 drifted, 3 not reachable. A tool's call warns of drift on
stderr (the client's default `on_drift="warn"`).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Final, NoReturn

import click
from pydantic import BaseModel, RootModel

from ..client import Client
from ..client.drift import DriftMode
from ..content import ToolResult
from ..errors import (
    InputRequiredError,
    McpRuntimeError,
    MissingClientCapabilityError,
    RequestTimeoutError,
    ToolArgumentsError,
    ToolError,
)
from ..masking import KNOWN, masked
from ..protocol.input_messages import ElicitRequest, ElicitResult
from ..tools import PackageTools
from .drift import ALTERNATIVE_NAME as ALTERNATIVE_CHECK_COMMAND
from .drift import NAME as CHECK_COMMAND
from .drift import check_command
from .options import JsonValue, arguments_from, plan_options
from .progress import ProgressDisplay
from .prompts import InputRefusedError, TerminalElicitation
from .skills import skills_commands
from .surfaces import surface_commands
from .tasks import ALTERNATIVE_NAME as ALTERNATIVE_TASK_COMMAND
from .tasks import NAME as TASK_COMMAND
from .tasks import Connect as TaskConnect
from .tasks import task_commands
from .text import help_text, printable, show_result

__all__ = ["EXIT_INPUT", "EXIT_PROTOCOL", "EXIT_TOOL_ERROR", "EXIT_USAGE", "CliTool", "build_cli", "run_cli"]

EXIT_TOOL_ERROR: Final = 1
EXIT_USAGE: Final = 2
EXIT_PROTOCOL: Final = 3
EXIT_INPUT: Final = 4
EXIT_INTERRUPTED: Final = 130
_MAX_JSON_FILE: Final = 16 * 1024 * 1024
DEFAULT_MAX_TIME: Final = 3600.0  # --max-time when not given (or --timeout, when that is longer)

_EXIT_CODES_HELP: Final = (
    "\b\nExit codes:\n  0 the tool ran\n  1 the tool reported an error (isError); check: a tool drifted\n"
    "  2 usage: bad or missing options, arguments the inputSchema refuses\n"
    "  3 protocol or transport error\n"
    "  4 the server asked for input that cannot be given (--no-input; sampling, roots)\n"
    "  130 interrupted"
)


@dataclass(frozen=True, slots=True)
class CliTool:
    """One tool of a generated package, as its `__main__.py` lists it."""

    name: str  # wire name
    method: str  # the client's Python method; the subcommand is this with `-` for `_`
    # a model class, or its name in the models module given to `run_cli` (imported on use)
    input_model: type[BaseModel] | str
    output_model: type[BaseModel] | str | None = None  # None: the tool has no outputSchema

    @property
    def command(self) -> str:
        return self.method.replace("_", "-")


@dataclass
class _Settings:
    """The group's options, handed to the subcommand."""

    url: str | None
    stdio: str | None
    headers: dict[str, str]
    token_env: str | None
    timeout: float | None
    output: str
    interactive: bool
    era: str
    max_time: float | None = None
    quiet: bool = False
    workload_token_file: str | None = None
    workload_token_env: str | None = None
    client_id: str | None = None

    @property
    def workload(self) -> bool:
        return self.workload_token_file is not None or self.workload_token_env is not None

    def call_max_time(self) -> float:
        """What bounds the whole call: --max-time, else an hour (or --timeout when longer)."""
        if self.max_time is not None:
            return self.max_time
        return max(DEFAULT_MAX_TIME, self.timeout or 0.0)


def _header(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition(":")
        if not sep or not name.strip():
            raise click.BadParameter(f"{value!r} is not NAME: VALUE", ctx, param)
        headers[name.strip()] = text.strip()
    return headers


def _check_settings(ctx: click.Context, settings: _Settings) -> None:
    if (settings.url is None) == (settings.stdio is None):
        raise click.UsageError("give exactly one of --url URL or --stdio COMMAND", ctx)
    if settings.stdio is not None:
        try:
            if not shlex.split(settings.stdio):
                raise ValueError("it is empty")
        except ValueError as exc:
            raise click.UsageError(f"--stdio: cannot split the command: {exc}", ctx) from exc
    if settings.token_env is not None and not os.environ.get(settings.token_env):
        raise click.UsageError(f"--token-env {settings.token_env}: that environment variable is not set", ctx)
    if settings.stdio is not None and (settings.headers or settings.token_env or settings.workload):
        raise click.UsageError(
            "--header, --token-env and the workload token apply to --url only (a stdio server takes "
            "its credentials from its environment)",
            ctx,
        )
    if settings.workload and (
        settings.token_env is not None
        or None not in (settings.workload_token_file, settings.workload_token_env)
    ):
        raise click.UsageError(
            "pick one way in: --token-env, --workload-token-file or --workload-token-env", ctx
        )
    if settings.client_id is not None and not settings.workload:
        raise click.UsageError("--client-id goes with --workload-token-file or --workload-token-env", ctx)
    # What this command line sends a server is never shown back: an error that echoes a header.
    KNOWN.update(settings.headers.values())
    if settings.token_env is not None:
        KNOWN.add(os.environ[settings.token_env])
    if settings.url is not None:
        KNOWN.add_url(settings.url)


# `-h` as well as `--help`, on the group and on every tool's command (options are long: no clash).
_HELP_OPTIONS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}


class _ToolGroup(click.Group):
    """The package's command: tools as subcommands, built on first use; exit codes as documented."""

    def __init__(
        self,
        client_class: type[Client],
        tools: Sequence[CliTool],
        models: ModuleType | None,
        surfaces: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.client_class = client_class
        self.models = models
        self.by_command = {tool.command: tool for tool in tools}
        # resources, read, prompts, prompt, complete (cli/surfaces.py): a tool of the same name wins
        self.builtins: dict[str, click.Command] = (
            {
                name: command
                for name, command in surface_commands(_surface_connect(client_class)).items()
                if name not in self.by_command
            }
            if surfaces
            else {}
        )
        # task status|wait|cancel (cli/tasks.py); `mcp-task` when a tool's command is `task`
        task_group = TASK_COMMAND if TASK_COMMAND not in self.by_command else ALTERNATIVE_TASK_COMMAND
        self.builtins[task_group] = task_commands(_task_connect(client_class), task_group)
        # check: the drift check (cli/drift.py); `mcp-check` when a tool's command is `check`
        check = CHECK_COMMAND if CHECK_COMMAND not in self.by_command else ALTERNATIVE_CHECK_COMMAND
        self.builtins[check] = check_command(_drift_connect(client_class), check)
        # skills, skill NAME (cli/skills.py); `mcp-skills` / `mcp-skill` when a tool has the name
        self.builtins.update(skills_commands(_surface_connect(client_class), self.by_command))
        source = getattr(client_class, "_tool_definitions_", None)  # not `or`: len() would read it all
        self._source: Sequence[Mapping[str, Any]] = () if source is None else source
        self._definitions: dict[str, Mapping[str, Any]] | None = None

    def definition(self, name: str) -> Mapping[str, Any]:
        """The definition of the tool `name` ({} when there is none). A generated package's
        tools.json is parsed for that tool alone until the whole list is needed (`--help`)."""
        if self._definitions is None and isinstance(self._source, PackageTools):
            return self._source.find(name) or {}
        return self.definitions.get(name, {})

    @property
    def definitions(self) -> dict[str, Mapping[str, Any]]:
        """Every definition by wire name (tools.json parsed whole)."""
        if self._definitions is None:
            self._definitions = {str(d.get("name")): d for d in self._source if isinstance(d, Mapping)}
        return self._definitions

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.by_command, *self.builtins]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        tool = self.by_command.get(cmd_name)
        if tool is None:
            return self.builtins.get(cmd_name)
        return _tool_command(self.client_class, self._resolved(tool), self.definition(tool.name))

    def _resolved(self, tool: CliTool) -> CliTool:
        """`tool` with its models as classes: a name is looked up in the models module only now."""
        if isinstance(tool.input_model, str) or isinstance(tool.output_model, str):
            if self.models is None:
                raise TypeError(f"tool {tool.name!r}: model names need run_cli(..., models=MODULE)")
            models = self.models

            def model(value: type[BaseModel] | str | None) -> Any:
                return getattr(models, value) if isinstance(value, str) else value

            return replace(tool, input_model=model(tool.input_model), output_model=model(tool.output_model))
        return tool

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The tool list of `--help`, from the definitions alone: no subcommand (and no model) is built."""
        if not self.by_command and not self.builtins:
            return
        limit = formatter.width - 6 - max(len(name) for name in [*self.by_command, *self.builtins])
        rows = []
        for name, tool in self.by_command.items():
            definition = self.definitions.get(tool.name, {})
            title, description = _text(definition, "title"), _text(definition, "description")
            # the help texts `_tool_command` gives the command, shortened by click's own rule
            listed = click.Command(
                name,
                help=help_text(description or title or f"Call the {tool.name!r} tool."),
                short_help=help_text(title) if title else None,
            )
            rows.append((name, listed.get_short_help_str(limit)))
        rows += [(name, command.get_short_help_str(limit)) for name, command in self.builtins.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> NoReturn:
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as exc:
            exc.show()
            sys.exit(EXIT_USAGE if isinstance(exc, click.UsageError) else exc.exit_code)
        except (click.exceptions.Abort, KeyboardInterrupt):
            click.echo("Interrupted.", err=True)
            sys.exit(EXIT_INTERRUPTED)
        sys.exit(code if isinstance(code, int) else 0)


def _text(definition: Mapping[str, Any], key: str) -> str | None:
    value = definition.get(key)
    return value if isinstance(value, str) else None


def _tool_command(client_class: type[Client], tool: CliTool, definition: Mapping[str, Any]) -> click.Command:
    schema = definition.get("inputSchema")
    schema = schema if isinstance(schema, Mapping) else {}
    fields: list[tuple[str, str]] = []
    input_model = _model(tool.input_model)
    if not issubclass(input_model, RootModel):  # an input that is not one object: --json only
        for name, info in input_model.model_fields.items():
            alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
            fields.append((name, alias or name))
    plans = plan_options(schema, fields)
    description = _text(definition, "description")
    title = _text(definition, "title")
    json_option = click.Option(
        ["--json", "json_arguments"],
        type=_JsonArguments(),
        default=None,
        metavar="ARGS",
        help=(
            "All arguments as one JSON object (@FILE reads it from a file); "
            "options given too override its keys."
        ),
    )

    def callback(**values: Any) -> int:
        ctx = click.get_current_context()
        no_wait = bool(values.pop("mcp_no_wait"))
        base = values.pop("json_arguments") or {}
        arguments = arguments_from(plans, values, base, ctx)
        settings: _Settings = ctx.find_object(_Settings)  # type: ignore[assignment]
        _check_settings(ctx, settings)  # here, not in the group: `TOOL --help` needs no server
        return _call(ctx, client_class, settings, tool, arguments, no_wait=no_wait)

    taken = {flag for plan in plans for flag in plan.option.opts}
    no_wait_option = click.Option(
        ["--no-wait" if "--no-wait" not in taken else "--mcp-no-wait", "mcp_no_wait"],
        is_flag=True,
        default=False,
        help="Start the call and print its task id instead of waiting (the server may answer at once: "
        "then the result as usual); then `task status|wait|cancel ID`.",
    )

    return click.Command(
        tool.command,
        callback=callback,
        params=[*(plan.option for plan in plans), json_option, no_wait_option],
        help=help_text(description or title or f"Call the {tool.name!r} tool."),
        short_help=help_text(title) if title else None,
        context_settings=_HELP_OPTIONS,
    )


def _model(model: type[BaseModel] | str) -> type[BaseModel]:
    if isinstance(model, str):  # pragma: no cover - _ToolGroup resolves names before building
        raise TypeError(f"model {model!r} was not resolved")
    return model


class _JsonArguments(JsonValue):
    """`--json ARGS`: a JSON object, or `@FILE` holding one."""

    def __init__(self) -> None:
        super().__init__(objects_only=True)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.startswith("@"):
            path = Path(value[1:])
            try:
                if path.stat().st_size > _MAX_JSON_FILE:
                    self.fail(f"{path} is larger than {_MAX_JSON_FILE // (1024 * 1024)} MiB", param, ctx)
                value = path.read_text("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                self.fail(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}", param, ctx)
        return super().convert(value, param, ctx)


def _connect(
    client_class: type[Client],
    settings: _Settings,
    on_elicit: Callable[[ElicitRequest], ElicitResult],
    on_progress: ProgressDisplay | None,
    on_drift: DriftMode = "warn",
) -> Client:
    # every request bounded by --timeout (SEC-09), the call's silence only: its progress restarts
    # the clock, and --max-time bounds it all (CANCEL-06); elicitation answered on the terminal
    options: dict[str, Any] = {
        "timeout": settings.timeout,
        "max_time": settings.call_max_time(),
        "on_progress": on_progress,
        "on_elicit": on_elicit,
        "era": settings.era,
        "on_drift": on_drift,
    }
    if settings.stdio is not None:
        return client_class.stdio(shlex.split(settings.stdio), **options)
    if settings.workload:
        return client_class(
            settings.url, headers=settings.headers or None, auth=_workload_login(settings), **options
        )
    token_env = settings.token_env
    token_provider: Callable[[], str] | None = None
    if token_env is not None:

        def token_provider() -> str:  # read per request; never printed (tokens stay out of errors and logs)
            return os.environ.get(token_env, "")

    return client_class(
        settings.url, headers=settings.headers or None, token_provider=token_provider, **options
    )


def _workload_login(settings: _Settings) -> Any:
    """Workload identity (SEP-1933): a JWT-bearer grant with the workload's token, read at each login
    and never printed; tokens live in memory for this run only (nothing written)."""
    try:
        from ..client.oauth import MemoryTokenStore, OAuth, workload_token
        from ..protocol.oauth import grants  # noqa: F401  (Authlib: the login needs it)
    except ImportError:
        raise click.UsageError(
            "a workload login needs the auth extra: pip install 'mcpgen-runtime[auth]'"
        ) from None
    token = workload_token(file=settings.workload_token_file, env=settings.workload_token_env)
    return OAuth(client_id=settings.client_id, assertion=token, store=MemoryTokenStore())


def _surface_connect(client_class: type[Client]) -> Callable[[click.Context], Client]:
    """How the commands beyond tools (cli/surfaces.py) open their client: as a tool's command does."""

    def connect(ctx: click.Context) -> Client:
        settings: _Settings = ctx.find_object(_Settings)  # type: ignore[assignment]
        _check_settings(ctx, settings)
        server = masked(settings.url or settings.stdio or "the server")
        asker = TerminalElicitation(interactive=settings.interactive, server=server)
        return _connect(client_class, settings, asker, None)  # no progress display: reads and prompts

    return connect


def _drift_connect(client_class: type[Client]) -> Callable[[click.Context], Client]:
    """How `check` (cli/drift.py) opens its client: as a tool's command does, reporting drift
    itself rather than through the client's warning."""

    def connect(ctx: click.Context) -> Client:
        settings: _Settings = ctx.find_object(_Settings)  # type: ignore[assignment]
        _check_settings(ctx, settings)
        server = masked(settings.url or settings.stdio or "the server")
        return _connect(
            client_class, settings, TerminalElicitation(interactive=False, server=server), None, "ignore"
        )

    return connect


def _task_connect(client_class: type[Client]) -> TaskConnect:
    """How the task commands (cli/tasks.py) open their client: as a tool's command does."""

    def connect(ctx: click.Context, display: ProgressDisplay | None) -> Client:
        settings: _Settings = ctx.find_object(_Settings)  # type: ignore[assignment]
        _check_settings(ctx, settings)
        server = masked(settings.url or settings.stdio or "the server")
        asker = TerminalElicitation(interactive=settings.interactive, server=server)
        return _connect(
            client_class, settings, asker if display is None else _pausing(display, asker), display
        )

    return connect


def _call(
    ctx: click.Context,
    client_class: type[Client],
    settings: _Settings,
    tool: CliTool,
    arguments: dict[str, Any],
    *,
    no_wait: bool = False,
) -> int:
    server = masked(settings.url or settings.stdio or "the server")
    asker = TerminalElicitation(interactive=settings.interactive, server=server)
    display = None if settings.quiet else ProgressDisplay(sys.stderr, tool.command)
    on_elicit: Callable[[ElicitRequest], ElicitResult] = (
        asker if display is None else _pausing(display, asker)
    )
    try:
        with _connect(client_class, settings, on_elicit, display) as client:
            failed: ToolResult | None = None
            started: str | None = None  # --no-wait: the task's id
            with display if display is not None else contextlib.nullcontext():  # erased before output
                try:
                    if no_wait:
                        handle = client._start_task(tool.name, arguments, _model(tool.input_model))
                        started = handle.task_id
                        if started is None:  # answered at once: shown as any call's result
                            result = handle.result()
                    else:
                        result = client._call(tool.name, arguments, _model(tool.input_model))
                except ToolError as exc:
                    failed = exc.result
            if started is not None:
                click.echo(started)  # the task id (a secret of this principal): for `task wait ID`
                return 0
            if failed is not None:
                if asker.refused is not None:  # a legacy server's request, refused inside the session
                    return _refused(asker.refused)
                show_result(failed, settings.output)
                return EXIT_TOOL_ERROR
            if tool.output_model is not None:
                client._core.checks.structured(
                    tool.name, result, _model(tool.output_model)
                )  # TOOLS-20: checked, then shown
    except ToolArgumentsError as exc:
        raise click.UsageError(printable(str(exc)), ctx) from exc
    except (InputRefusedError, InputRequiredError) as exc:  # --no-input; or sampling/roots, unanswerable here
        return _fail(str(exc), EXIT_INPUT)
    except MissingClientCapabilityError as exc:  # -32021: it wants sampling or roots, which a terminal lacks
        return _fail(f"the server needs input this command line cannot give: {exc.message}", EXIT_INPUT)
    except McpRuntimeError as exc:
        if asker.refused is not None:
            return _refused(asker.refused)
        hint = " (see --timeout and --max-time)" if isinstance(exc, RequestTimeoutError) else ""
        return _fail(f"{type(exc).__name__}: {exc}{hint}", EXIT_PROTOCOL)
    if asker.refused is not None:
        return _refused(asker.refused)
    show_result(result, settings.output)
    return 0


def _pausing(display: ProgressDisplay, asker: TerminalElicitation) -> Callable[[ElicitRequest], ElicitResult]:
    """`asker` with the progress line put away while a form is asked on the same terminal."""

    def ask(request: ElicitRequest) -> ElicitResult:
        with display.pause():
            return asker(request)

    return ask


def _refused(request: ElicitRequest) -> int:
    return _fail(f"the server asks for input ({request.message[:200]!r}) and --no-input is set", EXIT_INPUT)


def _fail(message: str, code: int) -> int:
    click.echo(f"Error: {printable(masked(message))}", err=True)  # a server may echo a --header value
    return code


def build_cli(
    client_class: type[Client],
    tools: Sequence[CliTool],
    *,
    prog: str,
    models: ModuleType | None = None,
    surfaces: bool = False,
) -> click.Group:
    """The click group for one generated package (what `run_cli` runs; tests invoke it directly).
    `models`: the module the names of model given as `str` in `tools` are looked up in; `surfaces`:
    offer `resources`, `read`, `prompts`, `prompt` and `complete` (cli/surfaces.py)."""

    def group_callback(
        url: str | None,
        stdio: str | None,
        headers: dict[str, str],
        token_env: str | None,
        timeout: float | None,
        output: str,
        no_input: bool,
        era: str,
        max_time: float | None,
        quiet: bool,
        workload_token_file: str | None,
        workload_token_env: str | None,
        client_id: str | None,
    ) -> None:
        ctx = click.get_current_context()
        ctx.obj = _Settings(
            url,
            stdio,
            headers,
            token_env,
            timeout,
            output,
            not no_input,
            era,
            max_time,
            quiet,
            workload_token_file,
            workload_token_env,
            client_id,
        )

    params: list[click.Parameter] = [
        click.Option(
            ["--url"],
            metavar="URL",
            help="The server's Streamable HTTP endpoint (e.g. http://127.0.0.1:8000/mcp).",
        ),
        click.Option(
            ["--stdio"],
            metavar="COMMAND",
            help="Start the server as a subprocess and talk over stdio "
            "(one string, split like a shell does: --stdio 'python -m my_server --stdio').",
        ),
        click.Option(
            ["--header", "headers"],
            multiple=True,
            metavar="'NAME: VALUE'",
            callback=_header,
            help="An HTTP header sent with every request (repeatable).",
        ),
        click.Option(
            ["--token-env"],
            metavar="NAME",
            help="Send the bearer token held in this environment "
            "variable (tokens on the command line would show in the process list).",
        ),
        click.Option(
            ["--workload-token-file"],
            metavar="PATH",
            help="Log in as a workload (OAuth JWT-bearer grant, workload identity) with the JWT in "
            "this file, read at each login (a Kubernetes service-account token, say).",
        ),
        click.Option(
            ["--workload-token-env"],
            metavar="NAME",
            help="Log in as a workload with the JWT held in this environment variable.",
        ),
        click.Option(
            ["--client-id"],
            metavar="ID",
            help="With a workload token: the client id registered with the server's authorization server.",
        ),
        click.Option(
            ["--timeout"],
            type=click.FloatRange(min=0, min_open=True),
            default=30.0,
            show_default=True,
            help="Seconds of silence allowed: a call ends when neither its response nor a progress "
            "notification arrives for this long (each progress notification restarts the clock).",
        ),
        click.Option(
            ["--max-time"],
            type=click.FloatRange(min=0, min_open=True),
            default=None,
            metavar="SECONDS",
            help="Seconds the whole call may take, progress or not "
            f"[default: {DEFAULT_MAX_TIME:g}, or --timeout when longer].",
        ),
        click.Option(
            ["--quiet"],
            is_flag=True,
            default=False,
            help="Show no progress on stderr (by default: a bar or spinner on a terminal, "
            "a line per progress notification otherwise).",
        ),
        click.Option(
            ["--format", "output"],
            type=click.Choice(["json", "text"]),
            default="json",
            show_default=True,
            help="json: the structured content when the tool returns one, else the content blocks; "
            "text: the text blocks.",
        ),
        click.Option(
            ["--no-input"],
            is_flag=True,
            default=False,
            help="Never prompt: fail with exit code 4 when the server asks for input.",
        ),
        click.Option(
            ["--era"],
            type=click.Choice(["auto", "modern", "legacy"]),
            default="auto",
            show_default=True,
            help="Protocol era: find out (auto), 2026-07-28 (modern), or an initialize-based revision.",
        ),
    ]
    group = _ToolGroup(
        client_class,
        tools,
        models,
        surfaces,
        name=prog,
        params=params,
        callback=group_callback,
        help=f"Call the tools of this MCP server from a shell: {prog} --url URL TOOL --option value."
        f"\n\n{_EXIT_CODES_HELP}",
        no_args_is_help=True,
        context_settings={**_HELP_OPTIONS, "max_content_width": 110},
    )
    return group


def run_cli(
    client_class: type[Client],
    tools: Sequence[CliTool],
    *,
    prog: str,
    args: Sequence[str] | None = None,
    models: ModuleType | None = None,
    surfaces: bool = False,
) -> NoReturn:
    """Run the command line (what a generated `__main__.py` calls) and exit with its code."""
    build_cli(client_class, tools, prog=prog, models=models, surfaces=surfaces).main(args, prog_name=prog)
