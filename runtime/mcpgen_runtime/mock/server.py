"""`MockServer`: the runtime's real `ToolServer`, serving a spec's tools with made-up answers.

Each tool is added with `add_tool(definition, handler)`, so arguments, `x-mcp-header` mirrors,
protocol versions and input-required rounds are checked exactly as in a generated server
(core/dispatch/); only the handler is the mock's. A call's answer, in order of precedence:

1. the first rule of the responses file whose `match` the arguments contain (responses.py):
   a task (its `task`, or by default for a tool marked `execution.taskSupport`, when the client
   declared the tasks extension), latency, an injected failure, an elicitation round, the task's
   delay, then its answer;
2. otherwise, for a tool with an `outputSchema`, a value generated from that schema
   (values.py) — `examples`, `default` and `const` first — checked against the schema before
   it is sent, as structuredContent plus its JSON text (TOOLS-18/19);
3. otherwise a short text naming the tool and its arguments.

Everything is a function of `seed`, the tool and the canonical arguments (and, for injected
faults and task delays, of how many times those arguments were sent), never of time or process
(task ids excepted: the server's, random like any server's).

Every call that reaches a handler is recorded in `calls` (once per call, not per input round;
the latest `MAX_TRACKED`), and, with `record=PATH`, appended to PATH as JSON lines for a test in
another process.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import secrets
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .. import _json
from .._version import __version__
from ..content import ToolResult
from ..server.core.catalog import ToolHandler
from ..server.core.config import ServerConfig
from ..server.core.context import RpcError, ToolContext, ToolExecutionError
from ..server.core.request_state import STATE_SECRET_ENV
from ..server.tool_server import ToolServer
from ..tools import ToolSpec, tool_table
from .canonical import canonical_json, derive_seed, unit_interval
from .responses import Answer, ResponsesError, Rule, TaskPlan, ToolResponses, load_responses
from .values import ValueGenerationError, ValueMaker, require_generator

__all__ = ["MOCK_NAME", "MockCall", "MockServer", "read_record"]

MOCK_NAME: Final = "mcpgen-mock"
_CALL_KEY: Final = "mockCall"  # ctx.state: which recorded call a later input round belongs to
_NUMBER_KEY: Final = "mockNumber"  # ctx.state: how many times these arguments had been sent
MAX_OPEN_ROUNDS: Final = 1000
# A long-running mock keeps the latest calls and argument counts only (a peer must not grow it without bound).
MAX_TRACKED: Final = 100_000
TEXT_LIMIT: Final = 1000  # characters of the arguments quoted in a text answer


@dataclass
class MockCall:
    """One tool call the mock answered: the tool, its arguments as sent, and (when a rule asked)
    the elicitation answer, `{"action": ..., "content": ...}`."""

    tool: str
    arguments: dict[str, Any]
    elicited: dict[str, Any] | None = field(default=None)

    def wire(self) -> dict[str, Any]:
        return {"tool": self.tool, "arguments": self.arguments, "elicited": self.elicited}


class MockServer(ToolServer):
    """Serves `definitions` (tool objects as `tools/list` lists them) with generated or canned answers.

    `responses` is a path to a responses file or an already-loaded `ToolResponses`. Raises
    `ValueError` for a tool the runtime cannot serve, `ResponsesError` for a bad responses
    file and `MockDependencyError` when a tool needs generated values and hypothesis is missing.
    """

    __slots__ = (
        "_asking",
        "_counts",
        "_ids",
        "_lock",
        "_makers",
        "_record",
        "_task_tools",
        "calls",
        "responses",
        "seed",
    )

    def __init__(
        self,
        definitions: Iterable[Mapping[str, Any]],
        *,
        seed: int = 0,
        responses: ToolResponses | str | Path | None = None,
        record: str | Path | None = None,
        config: ServerConfig | None = None,
    ) -> None:
        if config is None:
            # MRTR-05: requestState is signed; a mock process lives for one session, so its own key will do.
            keys = None if os.environ.get(STATE_SECRET_ENV) else (secrets.token_bytes(32),)
            config = ServerConfig(name=MOCK_NAME, version=__version__, state_secrets=keys)
        super().__init__(config)
        definitions = [dict(d) for d in definitions]
        specs = tool_table(definitions)  # ValueError naming the tool
        if isinstance(responses, (str, Path)):
            responses = load_responses(responses, specs)
        self.responses = responses if responses is not None else ToolResponses()
        unknown = sorted(set(self.responses.rules) - set(specs))
        if unknown:
            raise ResponsesError(f"responses for tools the spec does not have: {', '.join(unknown)}")
        self.seed = seed
        self.calls: list[MockCall] = []
        self._counts: dict[tuple[str, bytes], int] = {}  # how often each (tool, arguments) was sent
        self._ids = itertools.count()
        self._asking: dict[int, MockCall] = {}  # calls waiting for an elicitation answer, by id
        self._lock = threading.Lock()
        self._makers: dict[str, ValueMaker] = {}
        self._task_tools = frozenset(d["name"] for d in definitions if _task_support(d) is not None)
        if any(spec.output_schema is not None for spec in specs.values()):
            require_generator()
        for definition in definitions:
            spec = specs[definition["name"]]
            self.add_tool(definition, self._handler(spec), notify=False)
        self._record = Path(record) if record is not None else None
        if self._record is not None:
            self._record.write_bytes(b"")

    # ---- what tests read ----------------------------------------------------------------

    def reset_calls(self) -> None:
        """Forget the calls so far (injected faults keep counting, as they do out of process)."""
        with self._lock:
            self.calls.clear()

    # ---- answering ----------------------------------------------------------------------

    def _handler(self, spec: ToolSpec) -> ToolHandler:
        async def answer(arguments: dict[str, Any], ctx: ToolContext) -> Any:
            return await self._answer(spec, arguments, ctx)

        return answer

    async def _answer(self, spec: ToolSpec, arguments: dict[str, Any], ctx: ToolContext) -> Any:
        name = spec.name
        rule = self.responses.rule_for(name, arguments)
        state = ctx.state
        if _CALL_KEY in state:  # a later input round of a recorded call
            call_id, number = state[_CALL_KEY], state[_NUMBER_KEY]
        else:
            call_id, number = self._note_call(
                name, arguments, asking=rule is not None and rule.elicit is not None
            )
            state[_CALL_KEY], state[_NUMBER_KEY] = call_id, number
        task = self._task_plan(name, rule)
        if task is not None:
            # False for a client without the extension: the same answer, inline.
            await ctx.run_as_task(poll_interval_ms=task.poll_interval_ms, status_message=task.status)
        faults = self.responses.faults_for(rule)
        if faults.latency_ms is not None:
            await asyncio.sleep(self._delay(faults.latency_ms, "latency", name, arguments, number))
        if (
            faults.failure_rate
            and unit_interval(self.seed, "failure", name, arguments, number) < faults.failure_rate
        ):
            raise ToolExecutionError(
                f"Injected failure (failure_rate {faults.failure_rate:g}) in tool {name!r}"
            )
        if rule is not None and rule.elicit is not None:
            pending = ctx.need(rule.elicit)
            await ctx.ask()  # ends this round with input_required until the client has answered
            elicited = pending.value
            self._note_elicitation(call_id, elicited.wire())
            if not elicited.accepted:
                raise ToolExecutionError(f"Tool {name!r}: the user did not accept ({elicited.action})")
        if task is not None:
            await asyncio.sleep(self._delay(task.after_ms, "task", name, arguments, number))
        answer = rule.answer if rule is not None else Answer()
        if not answer.generated:
            return _canned(answer)
        if spec.output_schema is None:
            quoted = canonical_json(arguments).decode()
            more = "…" if len(quoted) > TEXT_LIMIT else ""
            return f"mcpgen mock: {name} called with {quoted[:TEXT_LIMIT]}{more}"
        maker = self._makers.get(name)
        if maker is None:
            maker = self._makers[name] = ValueMaker(spec.output_schema)
        try:
            # hypothesis is synchronous; a thread keeps the event loop serving other calls.
            return await asyncio.to_thread(maker.make, derive_seed(self.seed, name, arguments))
        except ValueGenerationError as exc:
            raise ToolExecutionError(
                f"mcpgen mock cannot generate a value valid against the outputSchema of {name!r} ({exc}); "
                "give this tool a canned answer in --responses"
            ) from exc

    def _task_plan(self, name: str, rule: Rule | None) -> TaskPlan | None:
        if rule is not None and rule.task is not None:
            return rule.task
        return TaskPlan() if name in self._task_tools else None

    def _delay(
        self, bounds: tuple[float, float], kind: str, name: str, arguments: dict[str, Any], number: int
    ) -> float:
        """Seconds in [low, high] ms, the same for the same seed, call and repetition."""
        low, high = bounds
        return (low + (high - low) * unit_interval(self.seed, kind, name, arguments, number)) / 1000

    def _note_call(self, name: str, arguments: dict[str, Any], *, asking: bool) -> tuple[int, int]:
        """Record a new call; returns its id and how many times these arguments came before."""
        key = (name, canonical_json(arguments))
        call = MockCall(name, arguments)
        with self._lock:
            number = self._counts.pop(key, 0)  # re-inserted last: the oldest entries go first
            self._counts[key] = number + 1
            if len(self._counts) > MAX_TRACKED:
                del self._counts[next(iter(self._counts))]
            call_id = next(self._ids)
            self.calls.append(call)
            if len(self.calls) > MAX_TRACKED + MAX_TRACKED // 10:  # trimmed now and then, not per call
                del self.calls[:-MAX_TRACKED]
            if asking:
                while len(self._asking) >= MAX_OPEN_ROUNDS:  # rounds clients never finished
                    del self._asking[next(iter(self._asking))]
                self._asking[call_id] = call
        self._append_record({"call": call_id, "tool": name, "arguments": arguments})
        return call_id, number

    def _note_elicitation(self, call_id: int, elicited: dict[str, Any]) -> None:
        with self._lock:
            call = self._asking.pop(call_id, None)
            if call is not None:
                call.elicited = elicited
        self._append_record({"call": call_id, "elicited": elicited})

    def _append_record(self, line: dict[str, Any]) -> None:
        if self._record is not None:
            with self._record.open("ab") as out:
                out.write(_json.dumps(line) + b"\n")


def _task_support(definition: Mapping[str, Any]) -> str | None:
    """`optional` or `required` when the definition marks the tool for tasks, else None."""
    execution = definition.get("execution")
    support = execution.get("taskSupport") if isinstance(execution, Mapping) else None
    return support if support in ("optional", "required") else None


def _canned(answer: Answer) -> Any:
    if answer.rpc_error is not None:
        code, message, data = answer.rpc_error
        raise RpcError(code, message, data)
    if answer.error is not None:
        raise ToolExecutionError(answer.error)
    if answer.text is not None:
        return list(answer.text)
    if answer.has_structured:
        content = (
            list(answer.content)
            if answer.content is not None
            else [
                {"type": "text", "text": _json.dumps(answer.structured).decode()}  # TOOLS-18
            ]
        )
        return ToolResult.model_validate({"content": content, "structuredContent": answer.structured})
    return ToolResult.model_validate({"content": list(answer.content or ())})


def read_record(path: str | Path) -> list[MockCall]:
    """The calls a mock in another process wrote with `record=PATH`."""
    calls: dict[int, MockCall] = {}
    try:
        lines = Path(path).read_bytes().splitlines()
    except FileNotFoundError:
        return []
    for line in lines:
        if not line.strip():
            continue
        try:
            entry = _json.loads(line)
        except _json.JSONDecodeError:
            break  # a line still being written
        if "tool" in entry:
            calls[entry["call"]] = MockCall(entry["tool"], entry["arguments"])
        elif entry.get("call") in calls:
            calls[entry["call"]].elicited = entry.get("elicited")
    return list(calls.values())
