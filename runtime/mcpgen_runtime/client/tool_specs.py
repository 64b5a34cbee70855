"""What `client.tool_specs(provider)` returns, less the call itself: the client's tools declared in
one model provider's request shape (lowered by that provider's profile, renamed where the provider
refuses a name), the tools that cannot be sent and why, and a model's tool call mapped back to the
tool (`prepare`) and its answer made into the provider's reply (`reply`). The call is each
driver's own (`_async/tool_specs.py`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..content import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent, ToolResult
from ..providers import PROFILES, Problem, lint_tool
from ..providers.calls import (
    PROVIDERS,
    ModelCallError,
    declaration,
    parse_arguments,
    reply_message,
    sent_arguments,
    tools_parameter,
)
from ..tools import ToolSpec

__all__ = ["ModelCallError", "ToolReply", "ToolSpecsBase", "Unsendable"]


@dataclass(frozen=True)
class Unsendable:
    """A tool left out of the specs: the problems its input schema has under the provider's
    profile, at least one of which has no faithful lowering."""

    tool: str
    problems: tuple[Problem, ...]

    def __str__(self) -> str:
        reasons = "; ".join(
            f"{problem.pointer or '/'}: {problem.message}"
            for problem in self.problems
            if not problem.faithful
        )
        return f"{self.tool}: {reasons}"


@dataclass(frozen=True)
class ToolReply:
    """A model's tool call, answered: `output` is the text for the model (the structured result as
    JSON when the tool has one, else its content as text), `is_error` whether it failed (the tool
    said so, or the call could not be made as asked: `output` says why), `result` the tool's
    `ToolResult` (None when it was not called). `message()` is the reply in the provider's shape."""

    provider: str
    name: str
    call_id: str | None
    output: str
    is_error: bool
    result: ToolResult | None = None

    def message(self) -> Any:
        """The reply as the provider takes it back: a JSON object (typed `Any` so that it passes for
        the provider SDK's own TypedDict): OpenAI's `function_call_output` item, Chat Completions'
        `tool` message, Anthropic's `tool_result` block, Gemini's `function_response` part."""
        structured = self.result.structured_content if self.result is not None and not self.is_error else None
        return reply_message(
            self.provider, self.name, self.call_id, self.output, is_error=self.is_error, value=structured
        )


@dataclass(frozen=True)
class _Entry:
    wire: str
    schema: dict[str, Any]
    nullable_optional: frozenset[str]


class ToolSpecsBase:
    """The specs of one client's tools for one provider (see `AsyncClient.tool_specs`)."""

    provider: str
    tools: list[Any]
    """The request's `tools` value: pass it as is (JSON objects in the provider's shape, typed `Any`
    so that they pass for the provider SDK's own TypedDicts)."""
    unsendable: tuple[Unsendable, ...]
    """The tools left out, each with the problems that have no faithful lowering."""

    def __init__(self, provider: str, tools: Mapping[str, ToolSpec], only: Iterable[str] | None) -> None:
        if provider not in PROVIDERS:
            raise ValueError(f"unknown provider {provider!r} (one of {', '.join(PROVIDERS)})")
        profile = PROFILES[PROVIDERS[provider]]
        chosen = list(tools) if only is None else list(dict.fromkeys(only))
        unknown = [name for name in chosen if name not in tools]
        if unknown:
            raise ValueError(f"no such tool: {', '.join(map(repr, unknown))}")
        self.provider = provider
        self._entries: dict[str, _Entry] = {}
        declarations: list[dict[str, Any]] = []
        unsendable: list[Unsendable] = []
        results = [lint_tool(profile, tools[wire].definition) for wire in chosen]
        # a name the provider takes as it is keeps it; a mapped one that another tool already has
        # (as its own name, or mapped alike) is made distinct with a digest of its wire name
        taken = {wire for wire, result in zip(chosen, results, strict=True) if result.name == wire}
        for wire, lowered in zip(chosen, results, strict=True):
            if lowered.schema is None:
                unsendable.append(Unsendable(wire, lowered.problems))
                continue
            name = lowered.name
            if name != wire and name in taken:
                name = name[:55] + "_" + hashlib.sha256(wire.encode("utf-8")).hexdigest()[:8]
            taken.add(name)
            self._entries[name] = _Entry(wire, lowered.schema, frozenset(lowered.nullable_optional))
            definition = tools[wire].definition
            description = definition.get("description") or definition.get("title")
            text = description if isinstance(description, str) else None
            declarations.append(declaration(provider, name, text, lowered.schema))
        self.tools = tools_parameter(provider, declarations)
        self.unsendable = tuple(unsendable)

    @property
    def names(self) -> dict[str, str]:
        """The provider's name of each tool sent -> its wire name (they differ only where the
        provider refuses the wire name)."""
        return {name: entry.wire for name, entry in self._entries.items()}

    def __len__(self) -> int:
        return len(self._entries)

    def prepare(self, name: str, arguments: str | Mapping[str, Any] | None) -> tuple[str, dict[str, Any]]:
        """A model's call (the provider's tool name and its arguments, JSON text or an object) as
        the wire name and the arguments to send; ModelCallError when it cannot be made as asked."""
        entry = self._entries.get(name)
        if entry is None:
            raise ModelCallError(f"there is no tool named {name[:100]!r}")
        payload = parse_arguments(arguments)
        return entry.wire, sent_arguments(payload, entry.schema, entry.nullable_optional)

    def refusal(self, name: str, call_id: str | None, reason: str) -> ToolReply:
        """The reply to a call that was not made (or failed before it gave a result): the reason."""
        return ToolReply(self.provider, name, call_id, reason, True)

    def reply(self, name: str, call_id: str | None, result: ToolResult) -> ToolReply:
        return ToolReply(self.provider, name, call_id, result_text(result), result.is_error, result)


def result_text(result: ToolResult) -> str:
    """A tool result as text for a model: its structured content as JSON when it has one, else each
    content block (text as it is; images, audio and resources as a line naming them)."""
    if result.structured_content is not None and not result.is_error:
        return json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
    lines: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            lines.append(block.text)
        elif isinstance(block, (ImageContent, AudioContent)):
            lines.append(f"[{block.type} {block.mime_type}, {len(block.data) * 3 // 4} bytes]")
        elif isinstance(block, ResourceLink):
            lines.append(f"[resource {block.uri}]")
        elif isinstance(block, EmbeddedResource):
            text = block.resource.text
            lines.append(text if text is not None else f"[resource {block.resource.uri}]")
    return "\n".join(lines)
