"""The wire models of input-required results (multi round-trip requests, MRTR), one set for
client and server: what a server may ask a client for in the middle of a request, and the
client's answers (schema.ts shapes).

A 2026-07-28 server that needs input answers `tools/call` (or `prompts/get`,
`resources/read`) with `resultType: "input_required"` and `inputRequests`, each an
`elicitation/create`, `sampling/createMessage` or `roots/list` request; the client retries
with the answers in `inputResponses`.

- Requests as a client receives them: `ElicitRequest`, `CreateMessageRequest`,
  `ListRootsRequest`, read by the callbacks registered on `Client` / `AsyncClient`
  (`on_elicit`, `on_sample`, `on_roots`). A server builds its asks with the classes of
  `server/input_required.py` (`Elicit`, `ElicitUrl`, `Sample`, `ListRoots`).
- Answers: `ElicitResult`, `CreateMessageResult`, `ListRootsResult` (of `Root`s). Client
  callbacks build them (`ElicitResult.accept(...)`, `CreateMessageResult.text(...)`) and
  `wire()` gives the JSON sent; a server reads what it received with `from_wire()` (ValueError
  saying what is malformed) and its handlers use `.accepted`, `.get()`, `.text`, `.roots`.

Fields optional in schema.ts default to absent (None): `ElicitResult.content`,
`CreateMessageResult.stop_reason`, `Root.name`. `CreateMessageResult.role` defaults to
`"assistant"` (always sent: a sampled reply is the assistant's turn).

The rules of the feature live in two halves: `client/input_responses.py` (the client's:
parse a round, run callbacks, retry) and `server/input_required.py` (the server's: ask, read
answers, carry state between rounds).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, TypeAlias, overload

from pydantic import BaseModel

from ..content import CONTENT_BLOCKS, AudioContent, ContentBlock, ImageContent, TextContent

__all__ = [
    "ELICIT",
    "ROOTS",
    "SAMPLE",
    "AsyncElicitCallback",
    "AsyncRootsCallback",
    "AsyncSampleCallback",
    "CreateMessageRequest",
    "CreateMessageResult",
    "ElicitAction",
    "ElicitCallback",
    "ElicitRequest",
    "ElicitResult",
    "ElicitValue",
    "InputRequest",
    "InputResult",
    "ListRootsRequest",
    "ListRootsResult",
    "ProgressCallback",
    "Root",
    "RootsCallback",
    "SampleCallback",
    "SamplingMessage",
    "parse_sampling_content",
]

ELICIT: Final = "elicitation/create"
SAMPLE: Final = "sampling/createMessage"
ROOTS: Final = "roots/list"

ElicitAction = Literal["accept", "decline", "cancel"]
ElicitValue: TypeAlias = str | int | float | bool | list[str]
Role = Literal["user", "assistant"]

_ELICIT_ACTIONS: Final = frozenset({"accept", "decline", "cancel"})
_ROLES: Final = frozenset({"user", "assistant"})


# -- requests (built by the client runtime from the wire; read by callbacks) --------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class _InputRequestBase:
    key: str
    """The server-assigned `inputRequests` key this request arrived under."""
    origin_method: str
    """The request that needs the input, e.g. `"tools/call"`."""
    origin_name: str | None
    """The tool (or prompt) name of that request, when it has one."""
    params: Mapping[str, Any]
    """The request's `params` exactly as sent (fields this runtime does not model are here)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ElicitRequest(_InputRequestBase):
    """`elicitation/create`: ask the user. Form mode carries `requested_schema` (a flat object
    of primitive properties); URL mode carries `url`, to be opened only with the user's
    consent and never fetched by the client (IN-12)."""

    message: str
    mode: Literal["form", "url"] = "form"  # absent on the wire means form (IN-04)
    requested_schema: Mapping[str, Any] | None = None
    url: str | None = None

    method: Literal["elicitation/create"] = "elicitation/create"


@dataclass(frozen=True, slots=True)
class SamplingMessage:
    role: Role
    content: list[ContentBlock]
    """Text, image and audio blocks are typed; tool_use/tool_result blocks stay `UnknownContent`."""

    @property
    def text(self) -> str:
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))


@dataclass(frozen=True, kw_only=True, slots=True)
class CreateMessageRequest(_InputRequestBase):
    """`sampling/createMessage` (deprecated in 2026-07-28, IN-15): ask the client's model.
    Keep a human in the loop and respect `max_tokens` (IN-20/21)."""

    messages: list[SamplingMessage]
    max_tokens: int
    system_prompt: str | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    model_preferences: Mapping[str, Any] | None = None
    include_context: str | None = None
    metadata: Mapping[str, Any] | None = None
    tools: list[Mapping[str, Any]] | None = None
    tool_choice: Mapping[str, Any] | None = None

    method: Literal["sampling/createMessage"] = "sampling/createMessage"


@dataclass(frozen=True, kw_only=True, slots=True)
class ListRootsRequest(_InputRequestBase):
    """`roots/list` (deprecated in 2026-07-28, IN-15): which `file://` roots may the server use."""

    method: Literal["roots/list"] = "roots/list"


InputRequest: TypeAlias = ElicitRequest | CreateMessageRequest | ListRootsRequest


def parse_sampling_content(value: Any) -> list[ContentBlock]:
    """`SamplingMessage.content` (one block or a list) as typed blocks."""
    return CONTENT_BLOCKS.validate_python(value if isinstance(value, list) else [value])


# -- answers (built by client callbacks; read by server handlers) -------------------------------


def _one_of(value: Mapping[str, Any], name: str, allowed: frozenset[str], why: str) -> Any:
    found = value.get(name)
    if found not in allowed:
        raise ValueError(why)
    return found


@dataclass(frozen=True, slots=True)
class ElicitResult:
    """The user's answer to an elicitation: `accept` (with `content` for a form), `decline` or
    `cancel`. A server handler must treat decline and cancel as answers, not errors (IN-09)."""

    action: ElicitAction
    content: Mapping[str, ElicitValue] | None = None  # only for an accepted form (schema.ts)

    @classmethod
    def accept(cls, content: Mapping[str, ElicitValue] | None = None) -> ElicitResult:
        return cls("accept", content)

    @classmethod
    def decline(cls) -> ElicitResult:
        return cls("decline")

    @classmethod
    def cancel(cls) -> ElicitResult:
        return cls("cancel")

    @property
    def accepted(self) -> bool:
        return self.action == "accept"

    def get(self, name: str, default: Any = None) -> Any:
        """One submitted form value (`default` when absent, or when nothing was submitted)."""
        content = self.content
        return default if content is None else content.get(name, default)

    def wire(self) -> dict[str, Any]:
        if self.action not in _ELICIT_ACTIONS:
            raise ValueError(f"ElicitResult.action must be accept, decline or cancel, not {self.action!r}")
        if self.content is None:
            return {"action": self.action}
        return {"action": self.action, "content": dict(self.content)}

    @classmethod
    def from_wire(cls, value: Mapping[str, Any]) -> ElicitResult:
        """An answer as received; ValueError when it is not a well-formed ElicitResult."""
        action = _one_of(
            value,
            "action",
            _ELICIT_ACTIONS,
            'an ElicitResult needs "action": "accept", "decline" or "cancel"',
        )
        content = value.get("content")
        if content is not None:
            if not isinstance(content, dict):
                raise ValueError("ElicitResult content must be an object")
            for name, item in content.items():
                ok = isinstance(item, (str, int, float, bool)) or (
                    isinstance(item, list) and all(isinstance(x, str) for x in item)
                )
                if not ok:
                    raise ValueError(
                        f"ElicitResult content.{name} must be a string, number, boolean or list of strings"
                    )
        return cls(action, content)


# What a sampled message may hold: typed blocks, wire mappings, or a sequence of either.
SamplingContent: TypeAlias = TextContent | ImageContent | AudioContent | Mapping[str, Any] | Sequence[Any]


class _TextFactory(Protocol):
    def __call__(
        self, text: str, *, model: str, stop_reason: str | None = "endTurn"
    ) -> CreateMessageResult: ...


class _Text:
    """`CreateMessageResult.text`: on the class, the constructor of a one-text-block result
    (what an `on_sample` callback usually returns); on an instance, the text blocks joined by
    newlines (what a server handler usually reads)."""

    @overload
    def __get__(self, instance: None, owner: type[CreateMessageResult]) -> _TextFactory: ...

    @overload
    def __get__(self, instance: CreateMessageResult, owner: type[CreateMessageResult]) -> str: ...

    def __get__(
        self, instance: CreateMessageResult | None, owner: type[CreateMessageResult]
    ) -> _TextFactory | str:
        if instance is None:
            return owner._of_text
        return "\n".join(_block_text(block) for block in instance.blocks if _is_text(block))


def _is_text(block: Any) -> bool:
    return isinstance(block, TextContent) or (isinstance(block, Mapping) and block.get("type") == "text")


def _block_text(block: Any) -> str:
    return block.text if isinstance(block, TextContent) else str(block.get("text", ""))


def _block_wire(block: Any) -> Any:
    if isinstance(block, BaseModel):
        return block.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(block, Mapping):
        return dict(block)
    raise TypeError(f"sampling content must be content blocks or mappings, not {type(block).__name__}")


def _is_block_sequence(content: Any) -> bool:
    return isinstance(content, Sequence) and not isinstance(content, str | bytes)


@dataclass(frozen=True, slots=True)
class CreateMessageResult:
    """The sampled message (a SamplingMessage plus `model` and `stop_reason`).

    `CreateMessageResult.text("Paris", model="m")` builds the common answer; on a received
    result, `.text` is its text and `.blocks` its content blocks (wire mappings, as sent).
    """

    content: SamplingContent
    model: str
    role: Role = "assistant"
    stop_reason: str | None = None

    text = _Text()  # a descriptor, not a field

    @classmethod
    def _of_text(cls, text: str, *, model: str, stop_reason: str | None = "endTurn") -> CreateMessageResult:
        return cls(TextContent(text=text), model=model, stop_reason=stop_reason)

    @property
    def blocks(self) -> tuple[Any, ...]:
        """The content as a tuple of blocks (schema.ts allows one block or an array)."""
        content = self.content
        return tuple(content) if _is_block_sequence(content) else (content,)

    def wire(self) -> dict[str, Any]:
        content = self.content
        wire_content = (
            [_block_wire(block) for block in content] if _is_block_sequence(content) else _block_wire(content)
        )
        result: dict[str, Any] = {"role": self.role, "content": wire_content, "model": self.model}
        if self.stop_reason is not None:
            result["stopReason"] = self.stop_reason
        return result

    @classmethod
    def from_wire(cls, value: Mapping[str, Any]) -> CreateMessageResult:
        """An answer as received (content kept as wire blocks); ValueError when malformed."""
        role = _one_of(value, "role", _ROLES, 'a CreateMessageResult needs "role": "user" or "assistant"')
        model = value.get("model")
        if not isinstance(model, str):
            raise ValueError('a CreateMessageResult needs a string "model"')
        content = value.get("content")
        blocks = content if isinstance(content, list) else [content]
        if not blocks or not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in blocks):
            raise ValueError("CreateMessageResult content must be a content block or a list of them")
        stop = value.get("stopReason")
        return cls(tuple(blocks), model, role, stop if isinstance(stop, str) else None)


@dataclass(frozen=True, slots=True)
class Root:
    """A `file://` root (IN-23: a client builds only those; `from_wire` reads what was sent)."""

    uri: str
    name: str | None = None
    meta: Mapping[str, Any] | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.uri, str) or not self.uri.startswith("file://"):
            raise ValueError(f"a root URI must start with file:// (IN-23), got {self.uri!r:.200}")

    def wire(self) -> dict[str, Any]:
        root: dict[str, Any] = {"uri": self.uri}
        if self.name is not None:
            root["name"] = self.name
        if self.meta is not None:
            root["_meta"] = dict(self.meta)
        return root

    @classmethod
    def _received(cls, uri: str, name: str | None, meta: Mapping[str, Any] | None) -> Root:
        """A root as a client sent it: IN-23 binds the client, so the server takes any URI."""
        root = object.__new__(cls)
        object.__setattr__(root, "uri", uri)
        object.__setattr__(root, "name", name)
        object.__setattr__(root, "meta", meta)
        return root


@dataclass(frozen=True, slots=True)
class ListRootsResult:
    roots: Sequence[Root]

    def wire(self) -> dict[str, Any]:
        return {"roots": [root.wire() for root in self.roots]}

    @classmethod
    def from_wire(cls, value: Mapping[str, Any]) -> ListRootsResult:
        """An answer as received (`roots` a tuple); ValueError when malformed."""
        roots = value.get("roots")
        if not isinstance(roots, list):
            raise ValueError('a ListRootsResult needs a "roots" array')
        parsed: list[Root] = []
        for item in roots:
            if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
                raise ValueError('every root needs a string "uri"')
            name, meta = item.get("name"), item.get("_meta")
            parsed.append(
                Root._received(
                    item["uri"],
                    name if isinstance(name, str) else None,
                    meta if isinstance(meta, dict) else None,
                )
            )
        return cls(tuple(parsed))


InputResult: TypeAlias = ElicitResult | CreateMessageResult | ListRootsResult


# -- client callbacks over these types -----------------------------------------------------------

# A sync `Client` takes the plain forms; an `AsyncClient` also takes coroutine functions.
ElicitCallback: TypeAlias = Callable[[ElicitRequest], ElicitResult | Mapping[str, Any]]
SampleCallback: TypeAlias = Callable[[CreateMessageRequest], CreateMessageResult | Mapping[str, Any]]
RootsCallback: TypeAlias = Callable[[ListRootsRequest], ListRootsResult | Mapping[str, Any]]
AsyncElicitCallback: TypeAlias = Callable[
    [ElicitRequest], ElicitResult | Mapping[str, Any] | Awaitable[ElicitResult | Mapping[str, Any]]
]
AsyncSampleCallback: TypeAlias = Callable[
    [CreateMessageRequest],
    CreateMessageResult | Mapping[str, Any] | Awaitable[CreateMessageResult | Mapping[str, Any]],
]
AsyncRootsCallback: TypeAlias = Callable[
    [ListRootsRequest], ListRootsResult | Mapping[str, Any] | Awaitable[ListRootsResult | Mapping[str, Any]]
]
ProgressCallback: TypeAlias = Callable[[float, float | None, str | None], None]
"""`on_progress(progress, total, message)`: called for each `notifications/progress` of a call
(not an input type; kept with the other client callbacks)."""
