"""Typed `tools/call` results: content blocks and the result envelope (schema.ts `CallToolResult`).

Blocks tolerate extra fields (servers add annotations and `_meta`); an unknown block type
is kept as `UnknownContent` rather than failing the whole call.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter


class _Block(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class TextContent(_Block):
    type: Literal["text"] = "text"
    text: str


class ImageContent(_Block):
    type: Literal["image"] = "image"
    data: str  # base64
    mime_type: str = Field(alias="mimeType")


class AudioContent(_Block):
    type: Literal["audio"] = "audio"
    data: str  # base64
    mime_type: str = Field(alias="mimeType")


# Resource's fields again (schema.ts: ResourceLink extends Resource), on purpose: a block keeps its
# `type` first on the wire and the blocks' config; a shared base with surfaces.py `Resource` would not.
class ResourceLink(_Block):
    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = Field(default=None, alias="mimeType")
    size: int | None = None


class ResourceContents(BaseModel):
    """Text (`text`) or binary (`blob`, base64) contents of an embedded resource."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)
    uri: str
    mime_type: str | None = Field(default=None, alias="mimeType")
    text: str | None = None
    blob: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class EmbeddedResource(_Block):
    type: Literal["resource"] = "resource"
    resource: ResourceContents


class UnknownContent(_Block):
    """A block of a type this runtime does not know; its fields stay available as extras."""

    type: str


_KNOWN = frozenset({"text", "image", "audio", "resource_link", "resource"})


def _block_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in _KNOWN else "unknown"


ContentBlock = Annotated[
    Annotated[TextContent, Tag("text")]
    | Annotated[ImageContent, Tag("image")]
    | Annotated[AudioContent, Tag("audio")]
    | Annotated[ResourceLink, Tag("resource_link")]
    | Annotated[EmbeddedResource, Tag("resource")]
    | Annotated[UnknownContent, Tag("unknown")],
    Discriminator(_block_tag),
]


class ToolResult(BaseModel):
    """A complete `tools/call` result: content blocks, optional structured content, error flag."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)
    content: list[ContentBlock] = Field(default_factory=list)
    structured_content: Any = Field(default=None, alias="structuredContent")
    is_error: bool = Field(default=False, alias="isError")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")

    @property
    def text(self) -> str:
        """All text blocks joined by newlines (handy for logs and for language models)."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))


CONTENT_BLOCKS: TypeAdapter[list[ContentBlock]] = TypeAdapter(list[ContentBlock])
