"""What a server may ask a client for in the middle of a request, and the client's answers.

A 2026-07-28 server asks through multi-round-trip requests (MRTR): a `tools/call` result with
`resultType: "input_required"` carries `inputRequests`, each an `elicitation/create`,
`sampling/createMessage` or `roots/list` request. The client answers them through callbacks
registered on `Client` / `AsyncClient` (`on_elicit`, `on_sample`, `on_roots`), which receive
the typed requests below and return the typed results; `protocol/input_required.py` turns
them into the retry's `inputResponses`.

Result shapes follow schema.ts exactly: `ElicitResult` (`action`, optional `content`),
`CreateMessageResult` (a `SamplingMessage` plus `model` and `stopReason`), `ListRootsResult`
(`roots`, each a `file://` URI: IN-23). A callback may also return a plain mapping, sent as
is (the escape hatch for fields this runtime does not model).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

from pydantic import BaseModel

from .content import CONTENT_BLOCKS, AudioContent, ContentBlock, ImageContent, TextContent

__all__ = [
    "AsyncElicitCallback",
    "AsyncRootsCallback",
    "AsyncSampleCallback",
    "CreateMessageRequest",
    "CreateMessageResult",
    "ElicitCallback",
    "ElicitRequest",
    "ElicitResult",
    "InputRequest",
    "InputResult",
    "ListRootsRequest",
    "ListRootsResult",
    "ProgressCallback",
    "Root",
    "RootsCallback",
    "SampleCallback",
    "SamplingMessage",
]

ELICIT: Final = "elicitation/create"
SAMPLE: Final = "sampling/createMessage"
ROOTS: Final = "roots/list"

ElicitAction = Literal["accept", "decline", "cancel"]
ElicitValue: TypeAlias = str | int | float | bool | list[str]


# -- requests (built by the runtime from the wire; read by callbacks) ---------------------------


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
    role: Literal["user", "assistant"]
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


# -- results (returned by callbacks) -------------------------------------------------------------


def _block_wire(block: Any) -> Any:
    if isinstance(block, BaseModel):
        return block.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(block, Mapping):
        return dict(block)
    raise TypeError(f"sampling content must be content blocks or mappings, not {type(block).__name__}")


@dataclass(frozen=True, slots=True)
class ElicitResult:
    """The user's answer: `accept` (with `content` for form mode), `decline` or `cancel`."""

    action: ElicitAction
    content: Mapping[str, ElicitValue] | None = None

    @classmethod
    def accept(cls, content: Mapping[str, ElicitValue] | None = None) -> ElicitResult:
        return cls("accept", content)

    @classmethod
    def decline(cls) -> ElicitResult:
        return cls("decline")

    @classmethod
    def cancel(cls) -> ElicitResult:
        return cls("cancel")

    def wire(self) -> dict[str, Any]:
        if self.action not in ("accept", "decline", "cancel"):
            raise ValueError(f"ElicitResult.action must be accept, decline or cancel, not {self.action!r}")
        result: dict[str, Any] = {"action": self.action}
        if self.content is not None:
            result["content"] = dict(self.content)
        return result


@dataclass(frozen=True, slots=True)
class CreateMessageResult:
    """The sampled message. `CreateMessageResult.text("Paris", model="m")` covers the common case."""

    content: TextContent | ImageContent | AudioContent | Mapping[str, Any] | Sequence[Any]
    model: str
    role: Literal["user", "assistant"] = "assistant"
    stop_reason: str | None = "endTurn"

    @classmethod
    def text(cls, text: str, *, model: str, stop_reason: str | None = "endTurn") -> CreateMessageResult:
        return cls(TextContent(text=text), model=model, stop_reason=stop_reason)

    def wire(self) -> dict[str, Any]:
        content = self.content
        wire_content = (
            [_block_wire(block) for block in content]
            if isinstance(content, Sequence) and not isinstance(content, str | bytes)
            else _block_wire(content)
        )
        result: dict[str, Any] = {"role": self.role, "content": wire_content, "model": self.model}
        if self.stop_reason is not None:
            result["stopReason"] = self.stop_reason
        return result


@dataclass(frozen=True, slots=True)
class Root:
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


@dataclass(frozen=True, slots=True)
class ListRootsResult:
    roots: Sequence[Root]

    def wire(self) -> dict[str, Any]:
        return {"roots": [root.wire() for root in self.roots]}


InputResult: TypeAlias = ElicitResult | CreateMessageResult | ListRootsResult

# Callbacks. A sync `Client` takes the plain forms; an `AsyncClient` also takes coroutine functions.
ElicitCallback: TypeAlias = Callable[[ElicitRequest], ElicitResult | Mapping[str, Any]]
SampleCallback: TypeAlias = Callable[[CreateMessageRequest], CreateMessageResult | Mapping[str, Any]]
RootsCallback: TypeAlias = Callable[[ListRootsRequest], ListRootsResult | Mapping[str, Any]]
AsyncElicitCallback: TypeAlias = Callable[
    [ElicitRequest], ElicitResult | Mapping[str, Any] | Awaitable[ElicitResult | Mapping[str, Any]]
]
AsyncSampleCallback: TypeAlias = Callable[
    [CreateMessageRequest], CreateMessageResult | Mapping[str, Any] | Awaitable[CreateMessageResult | Mapping[str, Any]]
]
AsyncRootsCallback: TypeAlias = Callable[
    [ListRootsRequest], ListRootsResult | Mapping[str, Any] | Awaitable[ListRootsResult | Mapping[str, Any]]
]
ProgressCallback: TypeAlias = Callable[[float, float | None, str | None], None]
"""`on_progress(progress, total, message)`: called for each `notifications/progress` of a call."""


def parse_sampling_content(value: Any) -> list[ContentBlock]:
    """`SamplingMessage.content` (one block or a list) as typed blocks."""
    return CONTENT_BLOCKS.validate_python(value if isinstance(value, list) else [value])
