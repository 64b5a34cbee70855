"""Elicitation forms asked on the terminal: the CLI's `on_elicit` callback.

The server's message is shown (escaped: it is untrusted text), then the person picks accept,
decline or cancel (IN-06), then each field of the form-mode `requestedSchema` is asked with a
prompt typed by its schema: numbers parsed and range-checked, booleans as y/n, single-select
enums as choices, multi-select as a comma-separated list; schema defaults are offered (IN-07)
and optional fields may be left empty. The answers are checked against `requestedSchema`
before they are sent (IN-07); a form that still fails after a few tries is cancelled. The end
of input (Ctrl-D, a closed pipe) cancels. Prompts go to stderr, so stdout stays the result.

With `--no-input` the callback records the request and refuses: the command ends with
`EXIT_INPUT` instead of waiting for a person.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import click

from ..errors import McpRuntimeError
from ..protocol.input_messages import ElicitRequest, ElicitResult
from ..schema import SchemaCompileError, compile_schema
from .options import Number, resolve
from .text import help_text, printable, short_label

__all__ = ["InputRefusedError", "TerminalElicitation"]

_MAX_FIELDS: Final = 100
_MAX_TRIES: Final = 3
_ACTIONS: Final = ("accept", "decline", "cancel")


class InputRefusedError(McpRuntimeError):
    """The server asked for input and the CLI runs with `--no-input`."""


class _EndOfInput(Exception):
    pass


class TerminalElicitation:
    """`on_elicit` for `Client`: asks on the terminal, or refuses when `interactive` is False."""

    def __init__(self, *, interactive: bool, server: str) -> None:
        self.interactive = interactive
        self.server = server
        self.refused: ElicitRequest | None = None  # the request `--no-input` refused

    def __call__(self, request: ElicitRequest) -> ElicitResult:
        if not self.interactive:
            self.refused = request
            raise InputRefusedError(
                f"the server asks for input ({printable(request.message[:200])!r}) and --no-input is set"
            )
        try:
            return self._ask(request)
        except _EndOfInput:
            click.echo("(no more input: cancelled)", err=True)
            return ElicitResult.cancel()

    def _ask(self, request: ElicitRequest) -> ElicitResult:
        click.echo(f"{printable(self.server)} asks: {help_text(request.message)}", err=True)
        action = _prompt("Answer", type=click.Choice(_ACTIONS), default="accept")  # click shows the choices
        if action != "accept":
            return ElicitResult.decline() if action == "decline" else ElicitResult.cancel()
        schema = request.requested_schema or {}
        check = _compiled(schema)
        for _ in range(_MAX_TRIES):
            content = self._form(schema)
            issue = check(content) if check is not None else None
            if issue is None:
                return ElicitResult.accept(content)
            click.echo(
                f"The answers do not fit the form: {printable(issue.describe())}; try again.", err=True
            )
        click.echo("Too many tries: cancelled.", err=True)
        return ElicitResult.cancel()

    def _form(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return {}
        required_list = schema.get("required")
        required = set(required_list) if isinstance(required_list, list) else set()
        content: dict[str, Any] = {}
        for name, raw in list(properties.items())[:_MAX_FIELDS]:
            field = resolve(raw, schema)
            value = _ask_field(str(name), field, required=name in required)
            if value is not None:
                content[str(name)] = value
        return content


def _compiled(schema: Mapping[str, Any]) -> Callable[[Any], Any] | None:
    try:
        return compile_schema(schema)
    except SchemaCompileError:
        return None


def _prompt(text: str, **kwargs: Any) -> Any:
    try:
        return click.prompt(text, err=True, **kwargs)
    except click.exceptions.Abort as exc:  # EOF on stdin (Ctrl-C raises KeyboardInterrupt first)
        raise _EndOfInput from exc


def _options(field: Mapping[str, Any]) -> dict[str, Any] | None:
    """label -> value of a single-select field (`enum`, or `oneOf`/`anyOf` of `const`s)."""
    values: list[Any] = []
    if isinstance(field.get("enum"), list):
        values = list(field["enum"])
    else:
        for key in ("oneOf", "anyOf"):
            branches = field.get(key)
            if (
                isinstance(branches, list)
                and branches
                and all(isinstance(b, Mapping) and "const" in b for b in branches)
            ):
                values = [b["const"] for b in branches]
    labels = {label: value for value in values if (label := short_label(value)) is not None}
    return labels if values and len(labels) == len(values) else None


def _ask_field(name: str, field: Mapping[str, Any], *, required: bool) -> Any:
    """One prompt; None when an optional field is left empty."""
    title = field.get("title") if isinstance(field.get("title"), str) else None
    label = help_text(
        title or name, field.get("description") if isinstance(field.get("description"), str) else None
    )
    label = label if required else f"{label} (optional)"
    default = field.get("default")
    kind = field.get("type")
    options = _options(field)
    if kind == "array":
        choices = _options(resolve(field.get("items", {}), field))
        hint = f" [{', '.join(choices)}]" if choices else ""
        text = _prompt(
            f"{label}, comma-separated{hint}", default="" if not required else None, show_default=False
        )
        picked = [part.strip() for part in str(text).split(",") if part.strip()]
        if not picked and not required:
            return None
        return [choices.get(part, part) for part in picked] if choices else picked
    param_type: click.ParamType[Any, Any]
    shown: Any = None
    if options is not None:
        label = f"{label} [{'|'.join(options)}]"
        param_type, shown = click.Choice(list(options)), short_label(default) if default is not None else None
    elif kind == "boolean":
        param_type, shown = click.BOOL, default if isinstance(default, bool) else None
    elif kind in ("integer", "number"):
        param_type = Number(integer=kind == "integer", schema=field)
        shown = default if isinstance(default, (int, float)) and not isinstance(default, bool) else None
    else:
        param_type, shown = click.STRING, default if isinstance(default, str) else None
    if shown is None and not required:
        param_type, shown = _Optional(param_type), ""
    answer = _prompt(
        label, type=param_type, default=shown, show_default=shown not in (None, ""), show_choices=False
    )
    if options is not None and answer is not None:
        return options[answer]
    return answer


class _Optional(click.ParamType):  # type: ignore[type-arg]
    """A number prompt where an empty answer means "leave it out"."""

    def __init__(self, inner: click.ParamType[Any, Any]) -> None:
        self.inner = inner
        self.name = inner.name

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "" or value is None:
            return None
        return self.inner.convert(value, param, ctx)
