"""The `--responses` file: canned answers, errors, input-required rounds and fault injection per tool.

YAML or JSON (YAML needs PyYAML, part of `mcpgen-runtime[mock]`), checked completely when the mock
starts; a bad entry stops it with a `ResponsesError` naming the file and the entry:

    defaults:                          # every call, unless a rule sets its own
      latency_ms: [5, 50]              # a fixed delay or a [low, high] range (ms)
      failure_rate: 0.05               # share of calls answered isError "injected failure"
    tools:
      get_weather_data:                # a tool name of the spec
        - match: {location: Berlin}    # a subset of the arguments (nested objects: subsets too)
          structured: {temperature: 21.5, conditions: sunny, humidity: 40}
        - match: {location: Atlantis}
          error: No weather for Atlantis            # an isError result with this text
        - match: {location: Mordor}
          rpc_error: {code: -32603, message: Upstream down}   # a JSON-RPC error instead of a result
        - match: {location: ask}
          elicit:                                   # an input-required round first (form elicitation),
            message: Celsius or Fahrenheit?         # then the rule's answer (generated if it has none);
            schema: {type: object, properties: {unit: {type: string, enum: [C, F]}}, required: [unit]}
        - match: {location: Antarctica}
          task:                                     # a task (tasks extension) ending 2 s later,
            after_ms: 2000                          # or [low, high] drawn per seed and arguments
            status: Asking the penguins             # its statusMessage while it works
            poll_interval_ms: 250                   # the pollIntervalMs it suggests
        - latency_ms: 200                           # no match: every other call of the tool
          failure_rate: 0.5
      get_weather:
        - text: Sunny                               # tools without an outputSchema may answer text

The first rule whose `match` is contained in the arguments applies. Answers: at most one of
`structured` (checked against the tool's outputSchema), `text` (a string or a list of them; tools
without outputSchema), `content` (content blocks as on the wire; with `structured` when the
tool has an outputSchema), `error`, `rpc_error`; none means a value generated from the schema.
A declined or cancelled elicitation is answered isError.

`task` (a mapping, or `true` for its defaults: no delay, no status) makes the call a task for a
client that declared the tasks extension: the client gets a `CreateTaskResult` at once and the task
completes `after_ms` later with the rule's answer (`rpc_error`: the task fails with that error).
Latency, injected failures and the rule's `elicit` then happen inside the task: the elicitation
parks it `input_required` until `tasks/update` answers. A tool whose definition says
`execution.taskSupport` `optional` or `required` runs as a task with the defaults when no rule
gives `task`. A client without the extension gets the same answer inline, after the same delay.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .. import _json
from ..content import CONTENT_BLOCKS
from ..schema import SchemaCompileError, compile_schema
from ..server.core.input_requests import Elicit
from ..tools import ToolSpec
from .files import read_bounded

__all__ = [
    "Answer",
    "FaultPlan",
    "ResponsesError",
    "Rule",
    "TaskPlan",
    "ToolResponses",
    "load_responses",
    "parse_responses",
]

MAX_FILE_BYTES: Final = 8 * 1024 * 1024
MAX_LATENCY_MS: Final = 600_000
_ANSWER_KEYS: Final = ("structured", "text", "content", "error", "rpc_error")
_RULE_KEYS: Final = frozenset({"match", "elicit", "task", "latency_ms", "failure_rate", *_ANSWER_KEYS})
_TASK_KEYS: Final = frozenset({"after_ms", "status", "poll_interval_ms"})
MAX_STATUS_CHARS: Final = 4096  # a task's statusMessage (the server cuts longer ones)
_FAULT_KEYS: Final = frozenset({"latency_ms", "failure_rate"})


class ResponsesError(ValueError):
    """The responses file is unreadable or an entry is invalid; the message names the entry."""


Fail = Callable[[str, str], ResponsesError]  # (where, why) -> the error to raise


@dataclass(frozen=True, slots=True)
class FaultPlan:
    """Latency (a [low, high] range in ms) and the share of calls that fail; None: not set here."""

    latency_ms: tuple[float, float] | None = None
    failure_rate: float | None = None


@dataclass(frozen=True, slots=True)
class TaskPlan:
    """A rule's `task`: the call becomes a task that ends `after_ms` ([low, high]) after it began."""

    after_ms: tuple[float, float] = (0.0, 0.0)
    status: str | None = None
    poll_interval_ms: int | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """What a rule answers with: one of the kinds below, or None fields for a generated value."""

    structured: Any = None
    has_structured: bool = False
    text: tuple[str, ...] | None = None
    content: tuple[dict[str, Any], ...] | None = None
    error: str | None = None
    rpc_error: tuple[int, str, Any] | None = None  # (code, message, data)

    @property
    def generated(self) -> bool:
        return not (
            self.has_structured
            or self.text is not None
            or self.content is not None
            or self.error is not None
            or self.rpc_error is not None
        )


@dataclass(frozen=True, slots=True)
class Rule:
    where: str  # "tools.NAME[i]", for messages
    match: Mapping[str, Any] | None
    answer: Answer
    elicit: Elicit | None = None
    faults: FaultPlan = FaultPlan()
    task: TaskPlan | None = None

    def matches(self, arguments: Mapping[str, Any]) -> bool:
        return self.match is None or _contains(arguments, self.match)


@dataclass(frozen=True, slots=True)
class ToolResponses:
    """Every tool's rules, in file order, and the file's defaults."""

    rules: Mapping[str, tuple[Rule, ...]] = field(default_factory=dict)
    defaults: FaultPlan = FaultPlan()

    def rule_for(self, tool: str, arguments: Mapping[str, Any]) -> Rule | None:
        for rule in self.rules.get(tool, ()):
            if rule.matches(arguments):
                return rule
        return None

    def faults_for(self, rule: Rule | None) -> FaultPlan:
        own = rule.faults if rule is not None else FaultPlan()
        return FaultPlan(
            own.latency_ms if own.latency_ms is not None else self.defaults.latency_ms,
            own.failure_rate if own.failure_rate is not None else self.defaults.failure_rate,
        )


def _contains(value: Any, pattern: Any) -> bool:
    """`pattern` is `value`, or (objects) each of its keys is in `value` with a contained value."""
    if isinstance(pattern, Mapping):
        return isinstance(value, Mapping) and all(
            k in value and _contains(value[k], v) for k, v in pattern.items()
        )
    if type(pattern) is not type(value) and not (_number(pattern) and _number(value)):
        return False  # True is not 1 in JSON
    return bool(pattern == value)


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


# ---- loading ---------------------------------------------------------------------------------


def load_responses(path: str | Path, tools: Mapping[str, ToolSpec]) -> ToolResponses:
    """Read and check a responses file (`.yaml`/`.yml` as YAML, anything else as JSON)."""
    path = Path(path)
    raw = read_bounded(path, MAX_FILE_BYTES, ResponsesError, "cannot read the responses file: ")
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError as exc:
            raise ResponsesError(
                f"{path}: reading YAML needs PyYAML: pip install 'mcpgen-runtime[mock]'"
            ) from exc
        from ..yaml_data import load_data

        try:
            data = load_data(raw, name=str(path))  # data only: no tags that build objects, no aliases
        except yaml.YAMLError as exc:
            raise ResponsesError(f"{path}: not valid YAML: {exc}") from exc
    else:
        try:
            data = _json.loads(raw)
        except _json.JSONDecodeError as exc:
            raise ResponsesError(f"{path}: not valid JSON: {exc}") from exc
    return parse_responses(data, tools, source=str(path))


def parse_responses(data: Any, tools: Mapping[str, ToolSpec], *, source: str = "responses") -> ToolResponses:
    """Check already-parsed responses data against the served tools."""

    def fail(where: str, why: str) -> ResponsesError:
        return ResponsesError(f"{source}: {where}: {why}")

    if data is None:
        return ToolResponses()
    if not isinstance(data, Mapping):
        raise fail("top level", "expected a mapping with 'tools' (and optionally 'defaults')")
    unknown = sorted(set(data) - {"tools", "defaults"})
    if unknown:
        raise fail(
            "top level", f"unknown key(s) {', '.join(map(repr, unknown))}; expected 'tools', 'defaults'"
        )
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, Mapping):
        raise fail("defaults", "expected a mapping")
    extra = sorted(set(defaults) - _FAULT_KEYS)
    if extra:
        raise fail(
            "defaults", f"unknown key(s) {', '.join(map(repr, extra))}; expected latency_ms, failure_rate"
        )
    plan = _faults(defaults, "defaults", fail)
    by_tool = data.get("tools") or {}
    if not isinstance(by_tool, Mapping):
        raise fail("tools", "expected a mapping of tool name to a list of rules")
    rules: dict[str, tuple[Rule, ...]] = {}
    for name, entries in by_tool.items():
        where = f"tools.{name}"
        tool = tools.get(name) if isinstance(name, str) else None
        if tool is None:
            hint = ", ".join(sorted(tools)[:20])
            raise fail(where, f"the spec has no tool {name!r} (tools: {hint})")
        if isinstance(entries, Mapping):
            entries = [entries]
        if not isinstance(entries, list):
            raise fail(where, "expected a list of rules (or one rule)")
        rules[name] = tuple(_rule(entry, f"{where}[{i}]", tool, fail) for i, entry in enumerate(entries))
    return ToolResponses(rules, plan)


def _rule(entry: Any, where: str, tool: ToolSpec, fail: Fail) -> Rule:
    if not isinstance(entry, Mapping):
        raise fail(where, "expected a mapping")
    unknown = sorted(set(entry) - _RULE_KEYS)
    if unknown:
        raise fail(
            where,
            f"unknown key(s) {', '.join(map(repr, unknown))}; expected some of "
            f"{', '.join(sorted(_RULE_KEYS))}",
        )
    match = entry.get("match")
    if match is not None:
        if not isinstance(match, Mapping):
            raise fail(f"{where}.match", "expected a mapping of argument names to values")
        _check_json(match, f"{where}.match", fail)
        properties = tool.input_schema.get("properties", {})
        if isinstance(properties, Mapping) and tool.input_schema.get("additionalProperties") is False:
            strays = sorted(str(k) for k in match if k not in properties)
            if strays:
                raise fail(f"{where}.match", f"tool {tool.name!r} has no argument(s) {', '.join(strays)}")
    kinds = [key for key in _ANSWER_KEYS if key in entry]
    if len(kinds) > 1 and sorted(kinds) != ["content", "structured"]:
        raise fail(where, f"give at most one of {', '.join(_ANSWER_KEYS)} (found {', '.join(kinds)})")
    answer = _answer(entry, where, tool, fail)
    elicit = None
    if "elicit" in entry:
        elicit = _elicit(entry["elicit"], f"{where}.elicit", fail)
    task = _task(entry["task"], f"{where}.task", fail) if "task" in entry else None
    return Rule(where, match, answer, elicit, _faults(entry, where, fail), task)


def _answer(entry: Mapping[str, Any], where: str, tool: ToolSpec, fail: Fail) -> Answer:
    has_output = tool.output_schema is not None
    if "structured" in entry:
        value = entry["structured"]
        _check_json(value, f"{where}.structured", fail)
        if has_output:
            assert tool.output_schema is not None
            try:
                issue = compile_schema(tool.output_schema)(value)
            except SchemaCompileError as exc:
                raise fail(f"{where}.structured", f"the tool's outputSchema cannot be used: {exc}") from exc
            if issue is not None:
                raise fail(
                    f"{where}.structured",
                    f"does not match the outputSchema of {tool.name!r} {issue.describe()}",
                )
        content = _content(entry, where, fail) if "content" in entry else None
        return Answer(structured=value, has_structured=True, content=content)
    if "text" in entry:
        text = entry["text"]
        texts = [text] if isinstance(text, str) else text
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise fail(f"{where}.text", "expected a string or a list of strings")
        if has_output:
            raise fail(
                f"{where}.text",
                f"tool {tool.name!r} has an outputSchema: answer with 'structured' (TOOLS-18)",
            )
        return Answer(text=tuple(texts))
    if "content" in entry:
        if has_output:
            raise fail(
                f"{where}.content", f"tool {tool.name!r} has an outputSchema: add 'structured' (TOOLS-18)"
            )
        return Answer(content=_content(entry, where, fail))
    if "error" in entry:
        error = entry["error"]
        if not isinstance(error, str) or not error:
            raise fail(f"{where}.error", "expected the error text (a non-empty string)")
        return Answer(error=error)
    if "rpc_error" in entry:
        spec = entry["rpc_error"]
        if not isinstance(spec, Mapping) or set(spec) - {"code", "message", "data"}:
            raise fail(f"{where}.rpc_error", "expected {code: INTEGER, message: TEXT, data: optional}")
        code, message = spec.get("code"), spec.get("message")
        if type(code) is not int or not isinstance(message, str) or not message:
            raise fail(f"{where}.rpc_error", "code must be an integer and message a non-empty string")
        _check_json(spec.get("data"), f"{where}.rpc_error.data", fail)
        return Answer(rpc_error=(code, message, spec.get("data")))
    return Answer()


def _content(entry: Mapping[str, Any], where: str, fail: Fail) -> tuple[dict[str, Any], ...]:
    blocks = entry["content"]
    if not isinstance(blocks, list) or not all(isinstance(b, Mapping) for b in blocks):
        raise fail(f"{where}.content", "expected a list of content blocks")
    _check_json(blocks, f"{where}.content", fail)
    try:
        CONTENT_BLOCKS.validate_python(blocks)
    except ValueError as exc:
        raise fail(f"{where}.content", f"not valid content blocks: {str(exc).splitlines()[0]}") from exc
    return tuple(dict(b) for b in blocks)


def _elicit(spec: Any, where: str, fail: Fail) -> Elicit:
    if not isinstance(spec, Mapping) or set(spec) - {"message", "schema"}:
        raise fail(where, "expected {message: TEXT, schema: {type: object, properties: {...}}}")
    message, schema = spec.get("message"), spec.get("schema")
    if not isinstance(message, str) or not message:
        raise fail(f"{where}.message", "expected a non-empty string")
    if not isinstance(schema, Mapping):
        raise fail(f"{where}.schema", "expected a flat object schema of primitive properties")
    _check_json(schema, f"{where}.schema", fail)
    try:
        compile_schema(schema)
        return Elicit(message, dict(schema), key="mock")
    except (ValueError, SchemaCompileError) as exc:
        raise fail(f"{where}.schema", str(exc)) from exc


def _task(spec: Any, where: str, fail: Fail) -> TaskPlan:
    if spec is True:
        return TaskPlan()
    if not isinstance(spec, Mapping) or set(spec) - _TASK_KEYS:
        raise fail(
            where, "expected true or {after_ms: MS or [low, high], status: TEXT, poll_interval_ms: MS}"
        )
    after = _milliseconds(spec, "after_ms", where, fail) or (0.0, 0.0)
    status = spec.get("status")
    if status is not None and (not isinstance(status, str) or not 0 < len(status) <= MAX_STATUS_CHARS):
        raise fail(f"{where}.status", f"expected a non-empty string of at most {MAX_STATUS_CHARS} characters")
    interval = spec.get("poll_interval_ms")
    if interval is not None and (type(interval) is not int or not 1 <= interval <= MAX_LATENCY_MS):
        raise fail(f"{where}.poll_interval_ms", f"expected whole milliseconds (1..{MAX_LATENCY_MS})")
    return TaskPlan(after, status, interval)


def _milliseconds(entry: Mapping[str, Any], key: str, where: str, fail: Fail) -> tuple[float, float] | None:
    """`key`: a duration in ms or a [low, high] range, at most MAX_LATENCY_MS; None when absent."""
    if key not in entry:
        return None
    value = entry[key]
    bounds = value if isinstance(value, list) else [value, value]
    if (
        len(bounds) != 2
        or not all(_number(b) and math.isfinite(b) for b in bounds)
        or not 0 <= bounds[0] <= bounds[1] <= MAX_LATENCY_MS
    ):
        raise fail(f"{where}.{key}", f"expected milliseconds (0..{MAX_LATENCY_MS}) or [low, high]")
    return (float(bounds[0]), float(bounds[1]))


def _faults(entry: Mapping[str, Any], where: str, fail: Fail) -> FaultPlan:
    latency = _milliseconds(entry, "latency_ms", where, fail)
    rate: float | None = None
    if "failure_rate" in entry:
        value = entry["failure_rate"]
        if not _number(value) or not 0 <= value <= 1:
            raise fail(f"{where}.failure_rate", "expected a number from 0 to 1")
        rate = float(value)
    return FaultPlan(latency, rate)


def _check_json(value: Any, where: str, fail: Fail) -> None:
    """JSON data only: YAML also makes dates, sets and non-string keys, which would not survive the wire."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            bad = next((k for k in item if not isinstance(k, str)), None)
            if bad is not None:
                raise fail(where, f"object key {bad!r} is not a string (quote it)")
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise fail(where, f"{item!r} is not a JSON number")
        elif item is not None and not isinstance(item, (str, int, float, bool)):
            raise fail(where, f"a {type(item).__name__} is not JSON data (quote dates and times)")
