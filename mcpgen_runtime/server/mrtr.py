"""Multi round-trip requests (MRTR) on the server side: what a handler may ask the client for,
the typed answers it gets back, and the control flow that ends a round.

A handler asks through its context (`RequestContext.elicit`, `.sample`, `.list_roots`, or
`.need(...)` several times and then `.ask()`). Each call either returns the client's answer
(found in the retry's `inputResponses`, or carried in the verified `requestState` from an
earlier round) or ends this round: the context raises `InputRequired`, which the server core
turns into `{"resultType": "input_required", "inputRequests": ..., "requestState": ...}`.
The handler runs again from the top on the retry, so it must be deterministic up to its
asks; values it wants to keep between rounds go in `ctx.state` (integrity-protected, not
encrypted: never put secrets there).

Rules: MRTR-01..04, MRTR-12..14, MRTR-21..24, IN-02/03, IN-17/18 in docs/RULES.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Literal, TypeVar

from ..protocol import jsonrpc
from ..schema import Validate, compile_schema
from ._errors import RpcError
from .state import canonical

__all__ = [
    "MRTR_METHODS",
    "Elicit",
    "ElicitResult",
    "ElicitUrl",
    "InputRequest",
    "InputRequired",
    "ListRoots",
    "Pending",
    "Root",
    "RootsResult",
    "Sample",
    "SamplingResult",
    "check_input_responses",
]

T = TypeVar("T")

# MRTR-02: the only requests that may end with an InputRequiredResult.
MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})

_ELICIT_ACTIONS = frozenset({"accept", "decline", "cancel"})
_ROLES = frozenset({"user", "assistant"})
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


# ---- answers ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ElicitResult:
    """The user's answer to an elicitation (schema.ts `ElicitResult`).

    `content` is empty unless the user accepted a form. Handle `decline` and `cancel`
    (IN-09): they are answers, not errors.
    """

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        return self.action == "accept"

    def get(self, name: str, default: Any = None) -> Any:
        return self.content.get(name, default)


@dataclass(frozen=True, slots=True)
class SamplingResult:
    """A `sampling/createMessage` answer (schema.ts `CreateMessageResult`); `content` as sent."""

    role: str
    content: tuple[Mapping[str, Any], ...]
    model: str
    stop_reason: str | None = None

    @property
    def text(self) -> str:
        """The text blocks joined by newlines."""
        return "\n".join(str(b.get("text", "")) for b in self.content if b.get("type") == "text")


@dataclass(frozen=True, slots=True)
class Root:
    uri: str
    name: str | None = None


@dataclass(frozen=True, slots=True)
class RootsResult:
    """A `roots/list` answer (schema.ts `ListRootsResult`)."""

    roots: tuple[Root, ...]


# ---- requests -----------------------------------------------------------------------------


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
    """(form allowed, url allowed); `elicitation: {}` means form only (client-elicitation.mdx § Capabilities)."""
    declared = capabilities.get("elicitation")
    if not isinstance(declared, dict):
        return False, False
    if "form" not in declared and "url" not in declared:
        return True, False
    return isinstance(declared.get("form"), dict), isinstance(declared.get("url"), dict)


def _parse_elicit(key: str, value: Any) -> ElicitResult:
    action = value.get("action")
    if action not in _ELICIT_ACTIONS:
        raise _invalid(key, 'an ElicitResult needs "action": "accept", "decline" or "cancel"')
    content = value.get("content")
    if content is None:
        content = {}
    elif not isinstance(content, dict):
        raise _invalid(key, "ElicitResult content must be an object")
    for name, item in content.items():
        ok = isinstance(item, (str, int, float, bool)) or (
            isinstance(item, list) and all(isinstance(x, str) for x in item)
        )
        if not ok:
            raise _invalid(key, f"ElicitResult content.{name} must be a string, number, boolean or list of strings")
    return ElicitResult(action, content)


@dataclass(frozen=True, slots=True)
class Elicit(InputRequest[ElicitResult]):
    """Form-mode elicitation (IN-03): `requested_schema` is a flat object of primitive properties.

    Never ask for secrets this way (IN-05); use `ElicitUrl`. An accepted answer is checked
    against `requested_schema` by the context (IN-14).
    """

    method: ClassVar[str] = "elicitation/create"
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
                raise ValueError(f"requestedSchema property {name!r} must be a primitive (string, number, "
                                 "integer, boolean or enum)")

    def params(self) -> dict[str, Any]:
        return {"mode": "form", "message": self.message, "requestedSchema": dict(self.requested_schema)}

    def missing_capability(self, capabilities: Mapping[str, Any]) -> dict[str, Any] | None:
        form, _ = _elicitation_modes(capabilities)
        if form:
            return None
        # `{}` is the minimal form declaration; a client that declared only `url` needs `form` named.
        return {"elicitation": {"form": {}} if isinstance(capabilities.get("elicitation"), dict) else {}}

    def parse(self, key: str, value: Any) -> ElicitResult:
        result = _parse_elicit(key, value)
        if result.accepted:
            issue = _validator(self.requested_schema)(dict(result.content))  # IN-14
            if issue is not None:
                raise _invalid(key, f"content does not match requestedSchema {issue.describe()}")
        return result


@dataclass(frozen=True, slots=True)
class ElicitUrl(InputRequest[ElicitResult]):
    """URL-mode elicitation (IN-03, IN-11): the user completes an out-of-band flow at `url`.

    `accept` only means the user agreed to open the URL; the handler must check on its own
    side whether the flow finished (client-elicitation.mdx § URL Mode Elicitation Requests).
    """

    method: ClassVar[str] = "elicitation/create"
    message: str
    url: str
    key: str | None = None

    def params(self) -> dict[str, Any]:
        return {"mode": "url", "message": self.message, "url": self.url}

    def missing_capability(self, capabilities: Mapping[str, Any]) -> dict[str, Any] | None:
        _, url = _elicitation_modes(capabilities)
        return None if url else {"elicitation": {"url": {}}}

    def parse(self, key: str, value: Any) -> ElicitResult:
        return _parse_elicit(key, value)


@dataclass(frozen=True, slots=True)
class Sample(InputRequest[SamplingResult]):
    """`sampling/createMessage` (deprecated in 2026-07-28 but still served: IN-15).

    `messages` is a list of SamplingMessages, or a string for one user text message.
    `options` adds other CreateMessageRequestParams (modelPreferences, temperature,
    stopSequences, includeContext, tools, toolChoice…).
    """

    method: ClassVar[str] = "sampling/createMessage"
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

    def parse(self, key: str, value: Any) -> SamplingResult:
        role = value.get("role")
        if role not in _ROLES:
            raise _invalid(key, 'a CreateMessageResult needs "role": "user" or "assistant"')
        model = value.get("model")
        if not isinstance(model, str):
            raise _invalid(key, 'a CreateMessageResult needs a string "model"')
        content = value.get("content")
        blocks = content if isinstance(content, list) else [content]
        if not blocks or not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in blocks):
            raise _invalid(key, "CreateMessageResult content must be a content block or a list of them")
        stop = value.get("stopReason")
        return SamplingResult(role, tuple(blocks), model, stop if isinstance(stop, str) else None)


@dataclass(frozen=True, slots=True)
class ListRoots(InputRequest[RootsResult]):
    """`roots/list` (deprecated in 2026-07-28 but still served: IN-15). Validate paths against
    the roots you get and expect them to change (IN-25)."""

    method: ClassVar[str] = "roots/list"
    key: str | None = None

    def params(self) -> dict[str, Any]:
        return {}

    def missing_capability(self, capabilities: Mapping[str, Any]) -> dict[str, Any] | None:
        return None if isinstance(capabilities.get("roots"), dict) else {"roots": {}}

    def parse(self, key: str, value: Any) -> RootsResult:
        roots = value.get("roots")
        if not isinstance(roots, list):
            raise _invalid(key, 'a ListRootsResult needs a "roots" array')
        parsed: list[Root] = []
        for item in roots:
            if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
                raise _invalid(key, 'every root needs a string "uri"')
            name = item.get("name")
            parsed.append(Root(item["uri"], name if isinstance(name, str) else None))
        return RootsResult(tuple(parsed))


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

    def __init__(self, requests: dict[str, dict[str, Any]], carried: dict[str, Any], state: dict[str, Any]) -> None:
        super().__init__("input required")
        self.requests = requests  # key -> wire InputRequest (MRTR-03/04)
        self.carried = carried  # answers of earlier rounds, carried in the next requestState
        self.state = state  # the handler's ctx.state


def check_input_responses(value: Any) -> Mapping[str, Any]:
    """`params.inputResponses` must be an object of objects (MRTR-21); -32602 otherwise.

    Entries are only checked for shape here; each answer is parsed against the request that
    asked for it when the handler reads it, and entries nobody asked for are ignored (MRTR-23).
    """
    if not isinstance(value, dict):
        raise RpcError(jsonrpc.INVALID_PARAMS, "params.inputResponses must be an object keyed by input request")
    for key, item in value.items():
        if not isinstance(item, dict):
            raise _invalid(key, "each input response must be an object (ElicitResult, CreateMessageResult or "
                                "ListRootsResult)")
    return value
