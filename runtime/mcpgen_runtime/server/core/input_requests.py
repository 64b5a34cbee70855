"""Input requests: the server's half of input-required results (multi round-trip requests, MRTR):
what a handler may ask the client for, how the answers are read, and how a round ends and resumes. The
client's half is `protocol/input_required.py`; the wire types both use are in
`protocol/inputs.py` (the answers a handler reads: `ElicitResult`, `CreateMessageResult`,
`ListRootsResult`).

A handler asks through its context (`RequestContext.elicit`, `.sample`, `.list_roots`, or
`.need(...)` several times and then `.ask()`). Each call either returns the client's answer
(found in the retry's `inputResponses`, or carried in the verified `requestState` from an
earlier round) or ends this round: the context raises `InputRequired`, which the dispatcher
turns into `{"resultType": "input_required", "inputRequests": ..., "requestState": ...}`
with `input_required_result`; on the retry `resume_round` checks the answers and opens the
state. The handler runs again from the top on the retry, so it must be deterministic up to
its asks; values it wants to keep between rounds go in `ctx.state` (integrity-protected, not
encrypted: never put secrets there).

Rules: MRTR-01..14, MRTR-21..24, IN-02/03, IN-14, IN-17/18 in docs/RULES.md.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from ...protocol import jsonrpc
from ...protocol.input_messages import (
    ELICIT,
    ROOTS,
    SAMPLE,
    CreateMessageResult,
    ElicitResult,
    ListRootsResult,
)
from ...schema import Validate, compile_schema
from .handler_errors import RpcError
from .request_state import StateCodec, StateError, canonical, principal_digest, request_digest

__all__ = [
    "MRTR_METHODS",
    "Elicit",
    "ElicitUrl",
    "InputRequest",
    "InputRequired",
    "ListRoots",
    "Pending",
    "Sample",
    "check_input_responses",
    "input_required_result",
    "resume_round",
]

_LOG = logging.getLogger("mcpgen.server")

T = TypeVar("T")

# MRTR-02: the only requests that may end with an InputRequiredResult.
MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})

# schema.ts `PrimitiveSchemaDefinition`: string, number/integer, boolean, (multi-select) enums.
_FORM_TYPES = frozenset({"string", "number", "integer", "boolean", "array"})

_VALIDATORS: dict[bytes, Validate] = {}


def _validator(schema: Mapping[str, Any]) -> Validate:
    """A compiled validator per distinct requestedSchema (handlers reuse a few schemas)."""
    cache_key = canonical(schema)
    validate = _VALIDATORS.get(cache_key)
    if validate is None:
        if len(_VALIDATORS) >= 256:
            _VALIDATORS.clear()
        validate = _VALIDATORS[cache_key] = compile_schema(schema)
    return validate


def _invalid(key: str, why: str) -> RpcError:
    return RpcError(jsonrpc.INVALID_PARAMS, f"inputResponses.{key}: {why}")


# ---- asks: what a handler sends, and how it reads the answer -------------------------------


class InputRequest(Generic[T]):
    """One server-to-client request carried in `inputRequests` (MRTR-04), and how to read its answer."""

    method: ClassVar[str]
    key: str | None

    def params(self) -> dict[str, Any]:
        raise NotImplementedError

    def missing_capability(self, capabilities: Mapping[str, Any]) -> dict[str, Any] | None:
        """The `requiredCapabilities` fragment this request needs but the client did not declare
        (MRTR-13, IN-02, IN-17), or None when it may be sent."""
        raise NotImplementedError

    def parse(self, key: str, value: Any) -> T:
        """The typed answer; `RpcError(-32602)` when the client's answer is malformed (MRTR-21)."""
        raise NotImplementedError

    def wire(self) -> dict[str, Any]:
        return {"method": self.method, "params": self.params()}


def _elicitation_modes(capabilities: Mapping[str, Any]) -> tuple[bool, bool]:
    """(form allowed, url allowed); `elicitation: {}` means form only
    (client-elicitation.mdx § Capabilities)."""
    declared = capabilities.get("elicitation")
    if not isinstance(declared, dict):
        return False, False
    if "form" not in declared and "url" not in declared:
        return True, False
    return isinstance(declared.get("form"), dict), isinstance(declared.get("url"), dict)


def _parse(key: str, read: Callable[[Mapping[str, Any]], T], value: Any) -> T:
    """An answer read with its type's `from_wire`; a malformed one is `-32602` (MRTR-21)."""
    try:
        return read(value)
    except ValueError as exc:
        raise _invalid(key, str(exc)) from exc


@dataclass(frozen=True, slots=True)
class Elicit(InputRequest[ElicitResult]):
    """Form-mode elicitation (IN-03): `requested_schema` is a flat object of primitive properties.

    Never ask for secrets this way (IN-05); use `ElicitUrl`. An accepted answer is checked
    against `requested_schema` by the context (IN-14).
    """

    method: ClassVar[str] = ELICIT
    message: str
    requested_schema: Mapping[str, Any]
    key: str | None = None

    def __post_init__(self) -> None:
        # IN-03: a flat object of primitive properties; anything else is a bug in the handler.
        schema = self.requested_schema
        properties = schema.get("properties")
        if schema.get("type") != "object" or not isinstance(properties, Mapping):
            raise ValueError('requestedSchema must be {"type": "object", "properties": {...}}')
        for name, prop in properties.items():
            if not isinstance(prop, Mapping) or prop.get("type") not in _FORM_TYPES or "properties" in prop:
                raise ValueError(
                    f"requestedSchema property {name!r} must be a primitive (string, number, "
                    "integer, boolean or enum)"
                )

    def params(self) -> dict[str, Any]:
        return {"mode": "form", "message": self.message, "requestedSchema": dict(self.requested_schema)}

    def missing_capability(self, capabilities: Mapping[str, Any]) -> dict[str, Any] | None:
        form, _ = _elicitation_modes(capabilities)
        if form:
            return None
        # `{}` is the minimal form declaration; a client that declared only `url` needs `form` named.
        return {"elicitation": {"form": {}} if isinstance(capabilities.get("elicitation"), dict) else {}}

    def parse(self, key: str, value: Any) -> ElicitResult:
        result = _parse(key, ElicitResult.from_wire, value)
        if result.accepted:
            issue = _validator(self.requested_schema)(dict(result.content or {}))  # IN-14
            if issue is not None:
                raise _invalid(key, f"content does not match requestedSchema {issue.describe()}")
        return result


@dataclass(frozen=True, slots=True)
class ElicitUrl(InputRequest[ElicitResult]):
    """URL-mode elicitation (IN-03, IN-11): the user completes an out-of-band flow at `url`.

    `accept` only means the user agreed to open the URL; the handler must check on its own
    side whether the flow finished (client-elicitation.mdx § URL Mode Elicitation Requests).
    """

    method: ClassVar[str] = ELICIT
    message: str
    url: str
    key: str | None = None

    def params(self) -> dict[str, Any]:
        return {"mode": "url", "message": self.message, "url": self.url}

    def missing_capability(self, capabilities: Mapping[str, Any]) -> dict[str, Any] | None:
        _, url = _elicitation_modes(capabilities)
        return None if url else {"elicitation": {"url": {}}}

    def parse(self, key: str, value: Any) -> ElicitResult:
        return _parse(key, ElicitResult.from_wire, value)


@dataclass(frozen=True, slots=True)
class Sample(InputRequest[CreateMessageResult]):
    """`sampling/createMessage` (deprecated in 2026-07-28 but still served: IN-15).

    `messages` is a list of SamplingMessages, or a string for one user text message.
    `options` adds other CreateMessageRequestParams (modelPreferences, temperature,
    stopSequences, includeContext, tools, toolChoice…).
    """

    method: ClassVar[str] = SAMPLE
    messages: str | Sequence[Mapping[str, Any]]
    max_tokens: int
    system_prompt: str | None = None
    key: str | None = None
    options: Mapping[str, Any] | None = None

    def params(self) -> dict[str, Any]:
        if isinstance(self.messages, str):
            messages: list[Any] = [{"role": "user", "content": {"type": "text", "text": self.messages}}]
        else:
            messages = [dict(m) for m in self.messages]
        params: dict[str, Any] = dict(self.options or {})
        params["messages"] = messages
        params["maxTokens"] = self.max_tokens
        if self.system_prompt is not None:
            params["systemPrompt"] = self.system_prompt
        return params

    def missing_capability(self, capabilities: Mapping[str, Any]) -> dict[str, Any] | None:
        declared = capabilities.get("sampling")
        options = self.options or {}
        needed: dict[str, Any] = {}
        if ("tools" in options or "toolChoice" in options) and not (
            isinstance(declared, dict) and isinstance(declared.get("tools"), dict)
        ):
            needed["tools"] = {}  # IN-17
        if options.get("includeContext") in ("thisServer", "allServers") and not (
            isinstance(declared, dict) and isinstance(declared.get("context"), dict)
        ):
            needed["context"] = {}  # IN-18
        if isinstance(declared, dict) and not needed:
            return None
        return {"sampling": needed}

    def parse(self, key: str, value: Any) -> CreateMessageResult:
        return _parse(key, CreateMessageResult.from_wire, value)


@dataclass(frozen=True, slots=True)
class ListRoots(InputRequest[ListRootsResult]):
    """`roots/list` (deprecated in 2026-07-28 but still served: IN-15). Validate paths against
    the roots you get and expect them to change (IN-25)."""

    method: ClassVar[str] = ROOTS
    key: str | None = None

    def params(self) -> dict[str, Any]:
        return {}

    def missing_capability(self, capabilities: Mapping[str, Any]) -> dict[str, Any] | None:
        return None if isinstance(capabilities.get("roots"), dict) else {"roots": {}}

    def parse(self, key: str, value: Any) -> ListRootsResult:
        return _parse(key, ListRootsResult.from_wire, value)


# ---- control flow -------------------------------------------------------------------------


class Pending(Generic[T]):
    """A request registered with `ctx.need(...)`; `value` is readable once `await ctx.ask()` returned."""

    __slots__ = ("_answered", "_value", "key", "request")

    def __init__(self, key: str, request: InputRequest[T]) -> None:
        self.key = key
        self.request = request
        self._answered = False
        self._value: T | None = None

    @property
    def answered(self) -> bool:
        return self._answered

    @property
    def value(self) -> T:
        if not self._answered:
            raise RuntimeError(f"input {self.key!r} has no answer yet: await ctx.ask() first")
        return self._value  # type: ignore[return-value]  # set together with _answered

    def _set(self, value: T) -> None:
        self._value = value
        self._answered = True


class InputRequired(BaseException):
    """Ends the current round with an InputRequiredResult. Raised by the context; the server
    catches it. A BaseException so that a handler's `except Exception` cannot swallow it."""

    def __init__(
        self,
        requests: dict[str, dict[str, Any]],
        carried: dict[str, Any],
        state: dict[str, Any],
        single_use: bool = False,
    ) -> None:
        super().__init__("input required")
        self.single_use = single_use  # the requestState of this round may be redeemed once (MRTR-11)
        self.requests = requests  # key -> wire InputRequest (MRTR-03/04)
        self.carried = carried  # answers of earlier rounds, carried in the next requestState
        self.state = state  # the handler's ctx.state


def check_input_responses(value: Any) -> Mapping[str, Any]:
    """`params.inputResponses` must be an object of objects (MRTR-21); -32602 otherwise.

    Entries are only checked for shape here; each answer is parsed against the request that
    asked for it when the handler reads it, and entries nobody asked for are ignored (MRTR-23).
    """
    if not isinstance(value, dict):
        raise RpcError(
            jsonrpc.INVALID_PARAMS, "params.inputResponses must be an object keyed by input request"
        )
    for key, item in value.items():
        if not isinstance(item, dict):
            raise _invalid(
                key,
                "each input response must be an object (ElicitResult, CreateMessageResult or "
                "ListRootsResult)",
            )
    return value


# ---- rounds: end one, resume on the retry ------------------------------------------------------


class Resumable(Protocol):
    """What `resume_round` fills in: the request context of the retry."""

    input_responses: Mapping[str, Any] | None
    request_state: str | None

    def _resume(self, carried: dict[str, Any], asked: Sequence[str], state: dict[str, Any]) -> None: ...


def resume_round(
    ctx: Resumable,
    method: str,
    params: Mapping[str, Any],
    *,
    codec: Callable[[], StateCodec],
    principal_id: str | None,
) -> tuple[str, int] | None:
    """Check `inputResponses` (MRTR-21) and verify `requestState` (MRTR-05..10) of a retry.

    `codec` is asked for only when the retry carries a state (making one may warn about its key).
    Returns (nonce, expiry in epoch ms) of a single-use state, which the caller must claim in its
    store before the handler runs (MRTR-11); None otherwise."""
    if "inputResponses" in params:
        ctx.input_responses = check_input_responses(params["inputResponses"])
    token = params.get("requestState")
    if token is None:
        return None
    if type(token) is not str:
        raise RpcError(jsonrpc.INVALID_PARAMS, "params.requestState must be a string")
    try:
        body = codec().open(
            token,
            principal=principal_digest(principal_id),
            request=request_digest(method, params),
        )
    except StateError as exc:
        _LOG.info("rejected requestState for %s: %s", method, exc)
        raise RpcError(jsonrpc.INVALID_PARAMS, f"Invalid requestState: {exc}") from exc
    carried, asked, state = body.get("c"), body.get("a"), body.get("s")
    ctx.request_state = token
    ctx._resume(
        carried if isinstance(carried, dict) else {},
        [k for k in asked if isinstance(k, str)] if isinstance(asked, list) else [],
        state if isinstance(state, dict) else {},
    )
    nonce = body.get("n")
    if body.get("u") == 1 and isinstance(nonce, str):
        return nonce, body["exp"]
    return None


def input_required_result(
    ask: InputRequired,
    method: str,
    params: Mapping[str, Any],
    *,
    codec: StateCodec,
    principal_id: str | None,
    meta: dict[str, Any] | None,
    single_use: bool = False,
) -> dict[str, Any]:
    """An InputRequiredResult (MRTR-01/04/12): never cacheable, so no hints (CACHE-02). Its state
    is single-use when the ask or the caller (a tool option) says so (MRTR-11).
    TypeError or ValueError when `ctx.state` is not JSON or too large (a handler bug)."""
    token = codec.seal(
        principal=principal_digest(principal_id),
        request=request_digest(method, params),
        asked=list(ask.requests),
        carried=ask.carried,
        state=ask.state,
        single_use=single_use or ask.single_use,
    )
    result: dict[str, Any] = {
        "resultType": jsonrpc.RESULT_INPUT_REQUIRED,
        "inputRequests": ask.requests,
        "requestState": token,
    }
    if meta is not None:
        result["_meta"] = meta
    return result
