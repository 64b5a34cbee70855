"""A tool's input schema as click options, and the options given back as the wire `arguments`.

One option per top-level property, named by the input model's Python field name with `-` for
`_` (`max_results` -> `--max-results`); the model's alias is the wire name. What the option
accepts follows the property's schema (`$ref`s into the same schema followed):

- integer / number: parsed and range-checked (`minimum`, `maximum`, the exclusive bounds)
- `enum` / `const`: a choice (values that would not print as typed are taken as JSON text)
- boolean: `--flag/--no-flag`
- array: the option repeats, one item each (items parsed by their own schema)
- object: a JSON object, and `--opt.sub value` for each scalar property of it
- anything else (unions, no type): JSON when it parses, else the text as a string

Nothing is required at the click level: `--json ARGS` may supply any property, so required
properties are checked once the two are merged (a missing one is click's own usage error).
Whatever else the schema says (`pattern`, `format`, lengths, nested required keys) is checked by
the client against the tool's inputSchema before anything is sent (exit 2 with the JSON pointer).
Everything shown in `--help` went through `text.help_text` (the server's text is untrusted).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import click

from .text import help_text, short_label

__all__ = ["RESERVED_OPTIONS", "JsonValue", "Number", "OptionPlan", "arguments_from", "plan_options"]

RESERVED_OPTIONS: Final = frozenset({"--json", "--help"})
_MAX_REF_HOPS: Final = 32
_MAX_CHOICES: Final = 200
_SUB_NAME: Final = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}\Z")
_NUMBER: Final = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\Z")
_INTEGER: Final = re.compile(r"[+-]?\d+\Z")


@dataclass(frozen=True, slots=True)
class OptionPlan:
    """One click option and where its value goes in the arguments object."""

    option: click.Option
    path: tuple[str, ...]  # wire keys: (property,) or (property, sub-property)
    required: bool  # a top-level property the schema requires
    choices: Mapping[str, Any] | None = None  # choice label -> the enum value it stands for


# ------------------------------------------------------------------------------------ param types


class Number(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.2; 8.1 is supported
    """A JSON number (or integer) within the schema's bounds; whole numbers stay integers."""

    def __init__(self, *, integer: bool, schema: Mapping[str, Any]) -> None:
        self.integer = integer
        self.name = "integer" if integer else "number"
        self.bounds = [
            (key, schema[key])
            for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")
            if _is_number(schema.get(key))
        ]

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number: int | float = value
        else:
            text = str(value).strip()
            if _INTEGER.match(text):
                number = int(text)
            elif not self.integer and _NUMBER.match(text):
                number = float(text)
                if not math.isfinite(number):
                    self.fail(f"{text!r} is too large for a JSON number", param, ctx)
            else:
                self.fail(f"{text!r} is not {'an integer' if self.integer else 'a number'}", param, ctx)
        for key, bound in self.bounds:
            broken = {
                "minimum": number < bound,
                "exclusiveMinimum": number <= bound,
                "maximum": number > bound,
                "exclusiveMaximum": number >= bound,
            }[key]
            if broken:
                sign = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[
                    key
                ]
                self.fail(f"{number} is not {sign} {bound}", param, ctx)
        return number


class JsonValue(click.ParamType):  # type: ignore[type-arg]
    """A JSON value; text that is not JSON is taken as a string where strings are allowed."""

    name = "json"

    def __init__(self, *, objects_only: bool = False, strings: bool = True) -> None:
        self.objects_only = objects_only
        self.strings = strings and not objects_only
        self.name = "value" if self.strings else "json"  # the metavar: VALUE or JSON

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        try:
            parsed = json.loads(value)
        except ValueError:
            if self.strings:
                return value
            self.fail(f"{_preview(value)} is not valid JSON", param, ctx)
        if self.objects_only and not isinstance(parsed, dict):
            self.fail(f"{_preview(value)} is not a JSON object", param, ctx)
        return parsed


def _preview(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# ---------------------------------------------------------------------------------------- schemas


def resolve(schema: Any, root: Mapping[str, Any]) -> Mapping[str, Any]:
    """`schema` with same-document `$ref`s followed (at most a few hops); {} when unresolvable."""
    for _ in range(_MAX_REF_HOPS):
        if not isinstance(schema, Mapping):
            return {}
        ref = schema.get("$ref")
        if not isinstance(ref, str):
            return schema
        if not ref.startswith("#"):
            return {}
        target: Any = root
        for part in ref[1:].split("/")[1:] if ref != "#" else []:
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, Mapping) else None
        schema = target
    return {}


def _types(schema: Mapping[str, Any]) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    return set()


def _kind(schema: Mapping[str, Any]) -> str:
    """'enum', 'boolean', 'integer', 'number', 'string', 'array', 'object' or 'json'."""
    if "const" in schema or isinstance(schema.get("enum"), list):
        return "enum"
    types = _types(schema) - {"null"}
    if len(types) == 1 and not any(key in schema for key in ("anyOf", "oneOf", "allOf", "not", "if")):
        kind = next(iter(types))
        if kind in ("boolean", "integer", "number", "string", "array", "object"):
            return kind
    return "json"


def _choices(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """label -> value for an enum or const, or None when some value cannot be offered as a choice."""
    values = [schema["const"]] if "const" in schema else schema.get("enum", [])
    if not values or len(values) > _MAX_CHOICES:
        return None
    labels: dict[str, Any] = {}
    for value in values:
        if value is None:
            continue  # null is not typed on a command line (--json can send it)
        try:
            label = short_label(value)
        except ValueError:
            return None
        if label is None or label in labels:
            return None
        labels[label] = value
    return labels or None


def _scalar_type(
    schema: Mapping[str, Any], kind: str
) -> tuple[click.ParamType[Any, Any], dict[str, Any] | None]:
    if kind == "enum":
        choices = _choices(schema)
        if choices is not None:
            return click.Choice(list(choices)), choices
        return JsonValue(), None
    if kind in ("integer", "number"):
        return Number(integer=kind == "integer", schema=schema), None
    if kind == "boolean":
        return click.BOOL, None
    if kind == "string":
        return click.STRING, None
    return JsonValue(
        objects_only=kind == "object", strings="string" in _types(schema) or not _types(schema)
    ), None


# ---------------------------------------------------------------------------------------- options


def _option_name(python_name: str, taken: set[str]) -> str:
    """`--max-results` for `max_results` (`--class` for `class_`), unless that is taken."""
    full = "--" + python_name.replace("_", "-")
    candidates = ["--" + (python_name.rstrip("_") or python_name).replace("_", "-"), full, f"{full}-arg"]
    decl = next((c for c in candidates if c not in taken), None)
    number = 2
    while decl is None:
        decl = f"{full}-arg{number}" if f"{full}-arg{number}" not in taken else None
        number += 1
    return decl


def _required_note(required: bool) -> str | None:
    return "[required]" if required else None


def _one_option(
    decl: str,
    dest: str,
    schema: Mapping[str, Any],
    root: Mapping[str, Any],
    *,
    required: bool,
    path: tuple[str, ...],
) -> OptionPlan:
    kind = _kind(schema)
    description = help_text(
        schema.get("description")
        if isinstance(schema.get("description"), str)
        else schema.get("title")
        if isinstance(schema.get("title"), str)
        else None,
        _default_note(schema),
        _required_note(required),
    )
    if kind == "boolean":
        negative = "--no-" + decl[2:]
        option = click.Option([f"{decl}/{negative}", dest], default=None, help=description)
        return OptionPlan(option, path, required)
    if kind == "array":
        items = resolve(schema.get("items", {}), root)
        item_kind = _kind(items)
        item_type, choices = _scalar_type(items, item_kind)
        option = click.Option(
            [decl, dest], type=item_type, multiple=True, help=help_text(description, "(repeatable)")
        )
        return OptionPlan(option, path, required, choices)
    param_type, choices = _scalar_type(schema, kind)
    option = click.Option([decl, dest], type=param_type, default=None, help=description)
    return OptionPlan(option, path, required, choices)


def _default_note(schema: Mapping[str, Any]) -> str | None:
    if "default" not in schema:
        return None
    try:
        text = json.dumps(schema["default"], ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return f"(server default: {text if len(text) <= 80 else text[:79] + '…'})"


def plan_options(input_schema: Mapping[str, Any], fields: Sequence[tuple[str, str]]) -> list[OptionPlan]:
    """The options of one tool: `fields` are the input model's (Python name, wire name) pairs."""
    properties = input_schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required_list = input_schema.get("required")
    required = [r for r in required_list if isinstance(r, str)] if isinstance(required_list, list) else []
    ordered = sorted(
        fields, key=lambda f: (f[1] not in required, required.index(f[1]) if f[1] in required else 0)
    )
    taken: set[str] = set(RESERVED_OPTIONS)
    plans: list[OptionPlan] = []
    for python_name, wire in ordered:
        decl = _option_name(python_name, taken)
        taken.add(decl)
        schema = resolve(properties.get(wire, {}), input_schema)
        plans.append(
            _one_option(
                decl, f"arg{len(plans)}", schema, input_schema, required=wire in required, path=(wire,)
            )
        )
        if _kind(schema) == "object":
            plans += _sub_options(decl, schema, input_schema, wire, taken, len(plans))
    return plans


def _sub_options(
    decl: str, schema: Mapping[str, Any], root: Mapping[str, Any], wire: str, taken: set[str], first: int
) -> list[OptionPlan]:
    """`--opt.sub value` for each property of an object option that is not an object itself."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    names = {sub: f"{decl}.{sub.replace('_', '-')}" for sub in properties if _SUB_NAME.match(sub)}
    counts: dict[str, int] = {}
    for name in names.values():
        counts[name] = counts.get(name, 0) + 1
    plans: list[OptionPlan] = []
    for sub, sub_decl in names.items():
        sub_schema = resolve(properties[sub], root)
        if counts[sub_decl] > 1 or sub_decl in taken or _kind(sub_schema) == "object":
            continue  # ambiguous, or deeper nesting: the JSON form of the parent carries it
        taken.add(sub_decl)
        plans.append(
            _one_option(
                sub_decl, f"arg{first + len(plans)}", sub_schema, root, required=False, path=(wire, sub)
            )
        )
    return plans


# -------------------------------------------------------------------------------------- arguments


def arguments_from(
    plans: Sequence[OptionPlan], values: Mapping[str, Any], base: Mapping[str, Any], ctx: click.Context
) -> dict[str, Any]:
    """The wire arguments: `base` (from `--json`), then every option given on top of it. Raises
    click's usage errors for a required property that is still missing."""
    arguments = dict(base)
    for plan in plans:
        value = values.get(plan.option.name or "")
        if value is None or (plan.option.multiple and not value):
            continue
        if plan.choices is not None:
            value = [plan.choices[v] for v in value] if plan.option.multiple else plan.choices[value]
        elif plan.option.multiple:
            value = list(value)
        if len(plan.path) == 1:
            existing = arguments.get(plan.path[0])
            if isinstance(existing, dict) and isinstance(value, dict):
                value = {**existing, **value}
            arguments[plan.path[0]] = value
            continue
        parent, sub = plan.path
        holder = arguments.setdefault(parent, {})
        if not isinstance(holder, dict):
            raise click.UsageError(
                f"{plan.option.opts[0]} needs {parent!r} to be an object, "
                f"but it was given as {type(holder).__name__}",
                ctx,
            )
        holder[sub] = value
    for plan in plans:
        if plan.required and plan.path[0] not in arguments:
            raise click.MissingParameter(ctx=ctx, param=plan.option)
    return arguments
