"""Input-required results (multi round-trip requests, MRTR), the client's half, without I/O
(basic-patterns-mrtr.mdx). The server's half is in `server/`; the wire types both
use are in `protocol/input_messages.py`.

A flow in `ClientCore` (or surface_flows.py) that gets an `input_required` result runs one
round with `input_round_flow`: it calls `parse_input_required`, picks a callback per request
(`plan_round`), yields the resulting `InputNeeded` step to its driver (which runs the
callbacks — blocking, or awaited — and sends back their answers), turns the answers into wire
`inputResponses` (`answer_wire`) and returns the params of the retry (`retry_params`). Rules:

- MRTR-04/12: every `inputRequests` value is a `{method, params}` request of a known kind, and
  a result carries `inputRequests`, `requestState` or both; anything else is a ProtocolError.
- MRTR-15: every request is answered before the retry; a kind without a callback stops the
  loop with `InputRequiredError` (which carries what is needed to resume by hand).
- MRTR-16/17/18: `requestState` is echoed byte for byte and never looked into; absent stays absent.
- MRTR-19 / TOOLS-06: the retry repeats the original params plus `inputResponses` (and the
  state); the caller sends it as a new request, so it gets a new id.
- MRTR-20: all of this lives in one flow's locals, so parallel requests never share it.
- IN-02/IN-16: a URL-mode elicitation the client did not declare, or tool-enabled sampling
  without `sampling.tools`, is refused (ProtocolError) rather than shown to a callback.
- IN-07: an accepted form answer is checked against `requestedSchema` before it is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import InputRequiredError, InputRequiredRoundsExceededError, ProtocolError
from ..protocol.input_messages import (
    ELICIT,
    ROOTS,
    SAMPLE,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    InputRequest,
    ListRootsRequest,
    ListRootsResult,
    SamplingMessage,
    parse_sampling_content,
)

DEFAULT_MAX_INPUT_ROUNDS = 10
# A round with only `requestState` (the server is busy, or waiting on something): retry after
# a short pause that doubles up to a cap, and resets when a round asks for input again.
STATE_ONLY_DELAY = 0.05
STATE_ONLY_DELAY_CAP = 0.25

_RESULT_TYPES: dict[str, type[Any]] = {
    ELICIT: ElicitResult,
    SAMPLE: CreateMessageResult,
    ROOTS: ListRootsResult,
}
_CALLBACK_NAMES = {ELICIT: "on_elicit", SAMPLE: "on_sample", ROOTS: "on_roots"}


@dataclass(frozen=True, slots=True)
class InputRound:
    """One `input_required` result, parsed."""

    requests: dict[str, InputRequest]
    raw_requests: dict[str, Any]  # `inputRequests` as received
    state: str | None  # `requestState`, verbatim


@dataclass(slots=True)
class InputNeeded:
    """A step a flow yields to its driver: run each `(key, callback, request)` and send back
    `{key: answer}`; sleep `delay` seconds first. Without calls it is a pause (between task polls).
    `abort`: the `tasks/cancel` (a steps.py `Outgoing`) to send if the caller interrupts it."""

    calls: list[tuple[str, Callable[[Any], Any], InputRequest]]
    delay: float = 0.0
    abort: Any = None


def parse_input_required(result: Mapping[str, Any], *, method: str, name: str | None) -> InputRound:
    raw = result.get("inputRequests")
    state = result.get("requestState")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ProtocolError(f"{method}: inputRequests is not an object: {raw!r:.200}")
    if state is not None and not isinstance(state, str):
        raise ProtocolError(f"{method}: requestState is not a string: {state!r:.200}")
    if not raw and state is None:
        raise ProtocolError(
            f"{method}: an input_required result needs inputRequests or requestState (MRTR-12)"
        )
    requests = {key: parse_request(key, value, method=method, name=name) for key, value in raw.items()}
    return InputRound(requests, raw, state)


def _fail(key: str, why: str) -> ProtocolError:
    return ProtocolError(f"input request {key!r}: {why} (MRTR-04)")


def parse_request(key: str, value: Any, *, method: str, name: str | None) -> InputRequest:
    """One `inputRequests` entry as a typed request."""
    if not isinstance(value, dict):
        raise _fail(key, f"not a request object: {value!r:.200}")
    kind = value.get("method")
    params = value.get("params")
    if params is None and kind == ROOTS:
        params = {}
    if not isinstance(params, dict):
        raise _fail(key, f"params is not an object: {params!r:.200}")
    context: dict[str, Any] = {"key": key, "origin_method": method, "origin_name": name, "params": params}
    if kind == ELICIT:
        return _elicit(key, params, context)
    if kind == SAMPLE:
        return _sample(key, params, context)
    if kind == ROOTS:
        return ListRootsRequest(**context)
    raise _fail(key, f"unknown input request method {kind!r:.100}")


def _elicit(key: str, params: dict[str, Any], context: dict[str, Any]) -> ElicitRequest:
    message = params.get("message")
    mode = params.get("mode", "form")
    if not isinstance(message, str):
        raise _fail(key, "elicitation/create needs a string `message`")
    if mode == "url":
        url = params.get("url")
        if not isinstance(url, str):
            raise _fail(key, "a URL-mode elicitation needs a string `url`")
        return ElicitRequest(message=message, mode="url", url=url, **context)
    if mode != "form":
        raise _fail(key, f"unknown elicitation mode {mode!r:.50}")
    schema = params.get("requestedSchema")
    if not isinstance(schema, dict):
        raise _fail(key, "a form-mode elicitation needs a `requestedSchema` object")
    return ElicitRequest(message=message, mode="form", requested_schema=schema, **context)


def _sample(key: str, params: dict[str, Any], context: dict[str, Any]) -> CreateMessageRequest:
    raw_messages = params.get("messages")
    max_tokens = params.get("maxTokens")
    if not isinstance(raw_messages, list) or type(max_tokens) is not int:
        raise _fail(key, "sampling/createMessage needs `messages` (array) and `maxTokens` (integer)")
    messages: list[SamplingMessage] = []
    for raw in raw_messages:
        role = raw.get("role") if isinstance(raw, dict) else None
        if role not in ("user", "assistant") or "content" not in raw:
            raise _fail(key, f"malformed sampling message {raw!r:.200}")
        try:
            content = parse_sampling_content(raw["content"])
        except ValueError as exc:
            raise _fail(key, f"malformed sampling content: {exc}") from exc
        messages.append(SamplingMessage(role, content))

    def opt(name: str, kind: type | tuple[type, ...]) -> Any:
        value = params.get(name)
        return value if isinstance(value, kind) else None

    return CreateMessageRequest(
        messages=messages,
        max_tokens=max_tokens,
        system_prompt=opt("systemPrompt", str),
        temperature=opt("temperature", (int, float)),
        stop_sequences=opt("stopSequences", list),
        model_preferences=opt("modelPreferences", dict),
        include_context=opt("includeContext", str),
        metadata=opt("metadata", dict),
        tools=opt("tools", list),
        tool_choice=opt("toolChoice", dict),
        **context,
    )


def plan_round(
    round_: InputRound,
    callbacks: Mapping[str, Callable[[Any], Any]],
    capabilities: Mapping[str, Any],
    *,
    method: str,
    tool: str | None,
    arguments: Mapping[str, Any] | None,
    state_only_delay: float,
) -> InputNeeded:
    """Pick a callback for every request of the round, or raise `InputRequiredError` naming
    the kinds that have none (MRTR-15)."""
    calls: list[tuple[str, Callable[[Any], Any], InputRequest]] = []
    missing: list[str] = []
    for key, request in round_.requests.items():
        check_declared(request, capabilities)
        callback = callbacks.get(request.method)
        if callback is None:
            missing.append(f"{key!r} ({request.method}: no {_CALLBACK_NAMES[request.method]} callback)")
        else:
            calls.append((key, callback, request))
    if missing:
        raise InputRequiredError(
            f"{method} {tool!r} needs input the client "
            f"cannot give: {', '.join(missing)}; answer it and resume with "
            "call_tool(name, arguments, input_responses=..., request_state=...)",
            input_requests=round_.raw_requests,
            request_state=round_.state,
            requests=round_.requests,
            tool=tool,
            arguments=arguments,
        )
    return InputNeeded(calls, 0.0 if round_.requests else state_only_delay)


class InputSettings(Protocol):
    """What answering a round needs of its `ClientCore`: the callbacks, the declared capabilities
    and the round limit."""

    input_callbacks: dict[str, Callable[[Any], Any]]
    capabilities: dict[str, Any]
    max_input_rounds: int


def input_round_flow(
    core: InputSettings,
    result: Mapping[str, Any],
    base: dict[str, Any],
    *,
    method: str,
    name: str,
    rounds: int,
    delay: float,
) -> Generator[InputNeeded, Any, tuple[dict[str, Any], float]]:
    """Round `rounds` of a request whose `result` asks for input, as a flow (core.py): every
    input request answered by its callback (MRTR-15), then the params of the retry, a new
    request with a new id (MRTR-19), and the pause before the next round (a state-only round
    doubles it, up to a cap). `tools/call` and the surface flows (surface_flows.py) loop over this."""
    what = f"tool {name!r}" if method == "tools/call" else f"{method} {name!r:.200}"
    check_rounds(rounds, core.max_input_rounds, what)
    round_ = parse_input_required(result, method=method, name=name)
    step = plan_round(
        round_,
        core.input_callbacks,
        core.capabilities,
        method=method,
        tool=name,
        arguments=base.get("arguments"),
        state_only_delay=delay,
    )
    answers = yield step
    responses = {key: answer_wire(request, answers[key]) for key, _, request in step.calls}
    delay = STATE_ONLY_DELAY if round_.requests else min(delay * 2, STATE_ONLY_DELAY_CAP)
    return retry_params(base, responses, round_.state), delay


def check_rounds(rounds: int, max_rounds: int, what: str) -> None:
    """Stop a call still asking for input after `max_rounds` answered rounds (MRTR-19)."""
    if rounds > max_rounds:
        raise InputRequiredRoundsExceededError(
            f"{what} still needs input after {max_rounds} rounds; "
            "raise max_input_rounds on the client to allow more",
            max_rounds=max_rounds,
        )


def check_declared(request: InputRequest, capabilities: Mapping[str, Any]) -> None:
    if isinstance(request, ElicitRequest) and request.mode == "url":
        elicitation = capabilities.get("elicitation")
        if not (isinstance(elicitation, Mapping) and "url" in elicitation):
            raise ProtocolError(
                f"input request {request.key!r}: URL-mode elicitation, which this client "
                "did not declare (IN-02); pass elicitation_modes=('form', 'url') to accept it"
            )
    elif isinstance(request, CreateMessageRequest) and (
        request.tools is not None or request.tool_choice is not None
    ):
        sampling = capabilities.get("sampling")
        if not (isinstance(sampling, Mapping) and "tools" in sampling):
            raise ProtocolError(
                f"input request {request.key!r}: tool-enabled sampling, which this client did "
                "not declare (IN-16); pass sampling_tools=True to accept it"
            )


def answer_wire(request: InputRequest, answer: Any) -> dict[str, Any]:
    """A callback's answer as the wire result for `request` (typed result or raw mapping)."""
    expected = _RESULT_TYPES[request.method]
    if isinstance(answer, expected):
        wire: dict[str, Any] = answer.wire()
    elif isinstance(answer, Mapping):
        wire = dict(answer)
    else:
        raise TypeError(
            f"{_CALLBACK_NAMES[request.method]} answered input request {request.key!r} with "
            f"{type(answer).__name__}; expected {expected.__name__} (or a mapping)"
        )
    if isinstance(request, ElicitRequest) and request.requested_schema is not None:
        _check_form_answer(request, wire)
    return wire


def _check_form_answer(request: ElicitRequest, wire: Mapping[str, Any]) -> None:
    """IN-07: an accepted form answer must match `requestedSchema` (a server schema this
    runtime cannot compile is not held against the answer)."""
    content = wire.get("content")
    if wire.get("action") != "accept" or content is None:
        return
    from ..schema import SchemaCompileError, compile_schema  # elicitation only; keeps import time low

    assert request.requested_schema is not None
    try:
        validate = compile_schema(request.requested_schema)
    except SchemaCompileError:
        return
    issue = validate(content)
    if issue is not None:
        raise ValueError(
            f"on_elicit answer for {request.key!r} does not match its requestedSchema: {issue.describe()}"
        )


def answers_wire(answers: Mapping[str, Any]) -> dict[str, Any]:
    """`inputResponses` for a hand-made resume: typed results or raw mappings, by key."""
    wire: dict[str, Any] = {}
    for key, answer in answers.items():
        if isinstance(answer, ElicitResult | CreateMessageResult | ListRootsResult):
            wire[key] = answer.wire()
        elif isinstance(answer, Mapping):
            wire[key] = dict(answer)
        else:
            raise TypeError(
                f"input_responses[{key!r}] is {type(answer).__name__}; expected ElicitResult, "
                "CreateMessageResult, ListRootsResult or a mapping"
            )
    return wire


def retry_params(
    base: Mapping[str, Any], responses: Mapping[str, Any] | None, state: str | None
) -> dict[str, Any]:
    """The original params plus `inputResponses` and the echoed `requestState` (MRTR-16/18/19)."""
    params = dict(base)
    if responses:
        params["inputResponses"] = responses
    if state is not None:
        params["requestState"] = state
    return params


def resume_params(
    base: dict[str, Any],
    input_responses: Mapping[str, Any] | None,
    request_state: str | None,
) -> dict[str, Any]:
    """The first request's params: `base`, or a call resumed by hand (`input_responses`,
    `request_state` from an `InputRequiredError`) as its retry."""
    if input_responses is None and request_state is None:
        return base
    return retry_params(base, answers_wire(input_responses or {}), request_state)
