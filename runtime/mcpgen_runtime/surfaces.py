"""Typed resources, resource templates, prompts and completions (schema.ts `Resource`,
`ResourceTemplate`, `ReadResourceResult`, `Prompt`, `GetPromptResult`, `CompleteResult`).

What a client gets back from `resources/list`, `resources/templates/list`, `resources/read`,
`prompts/list`, `prompts/get` and `completion/complete`, in both protocol eras. Like content
blocks (content.py), the models tolerate extra fields (servers add `_meta`, icons, annotations)
and keep them available as extras.

Resource contents are two distinct types: `TextResourceContents` (`text: str`) and
`BlobResourceContents` (`blob: bytes`, decoded from the wire's base64 once, strictly: a blob
that is not base64 makes the result malformed instead of yielding garbage bytes).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

from .content import ContentBlock, TextContent

__all__ = [
    "BlobResourceContents",
    "CompleteResult",
    "Completion",
    "Page",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptRef",
    "PromptResult",
    "ReadResourceResult",
    "Resource",
    "ResourceContentsItem",
    "ResourceTemplate",
    "ResourceTemplateRef",
    "TextResourceContents",
]

T = TypeVar("T")
# validators built on first use: importing the client costs no pydantic build for what it may never read
_CONFIG = ConfigDict(extra="allow", populate_by_name=True, frozen=True, defer_build=True)


# content.py `ResourceLink` repeats these fields on purpose (schema.ts: it extends Resource): a
# content block keeps `type` first on the wire, so the two share no base.
class Resource(BaseModel):
    """A resource `resources/list` names (server-resources.mdx § Resource)."""

    model_config = _CONFIG
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = Field(default=None, alias="mimeType")
    size: int | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ResourceTemplate(BaseModel):
    """A parameterized resource (RFC 6570 `uriTemplate`) from `resources/templates/list`."""

    model_config = _CONFIG
    uri_template: str = Field(alias="uriTemplate")
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = Field(default=None, alias="mimeType")
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class TextResourceContents(BaseModel):
    model_config = _CONFIG
    uri: str
    mime_type: str | None = Field(default=None, alias="mimeType")
    text: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class BlobResourceContents(BaseModel):
    """Binary contents: `blob` holds the bytes (the wire's base64, decoded)."""

    model_config = _CONFIG
    uri: str
    mime_type: str | None = Field(default=None, alias="mimeType")
    blob: bytes
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")

    @field_validator("blob", mode="before")
    @classmethod
    def _decode(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise ValueError(f"blob is not base64: {exc}") from None
        return value


def _contents_tag(value: Any) -> str | None:
    if isinstance(value, Mapping):
        return "text" if "text" in value else "blob" if "blob" in value else None
    return "text" if isinstance(value, TextResourceContents) else "blob"


ResourceContentsItem = Annotated[
    Annotated[TextResourceContents, Tag("text")] | Annotated[BlobResourceContents, Tag("blob")],
    Discriminator(_contents_tag),
]


class ReadResourceResult(BaseModel):
    """A complete `resources/read` result: one or more contents, text or binary."""

    model_config = _CONFIG
    contents: list[ResourceContentsItem]
    ttl_ms: int | None = Field(default=None, alias="ttlMs")
    cache_scope: str | None = Field(default=None, alias="cacheScope")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")

    @property
    def text(self) -> str:
        """Every text content joined by newlines."""
        return "\n".join(c.text for c in self.contents if isinstance(c, TextResourceContents))

    @property
    def blob(self) -> bytes:
        """Every binary content's bytes, concatenated (one binary resource: its bytes)."""
        return b"".join(c.blob for c in self.contents if isinstance(c, BlobResourceContents))


class PromptArgument(BaseModel):
    model_config = _CONFIG
    name: str
    title: str | None = None
    description: str | None = None
    required: bool | None = None


class Prompt(BaseModel):
    """A prompt `prompts/list` names (server-prompts.mdx § Prompt)."""

    model_config = _CONFIG
    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] = Field(default_factory=list)
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class PromptMessage(BaseModel):
    """One message of a prompt: a role and one content block (text, image, audio, resource link,
    embedded resource)."""

    model_config = _CONFIG
    role: Literal["user", "assistant"]
    content: ContentBlock


class PromptResult(BaseModel):
    """A complete `prompts/get` result."""

    model_config = _CONFIG
    description: str | None = None
    messages: list[PromptMessage]
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")

    @property
    def text(self) -> str:
        """The text of every text message, joined by newlines."""
        return "\n".join(m.content.text for m in self.messages if isinstance(m.content, TextContent))


class Completion(BaseModel):
    model_config = _CONFIG
    values: list[str] = Field(max_length=100)
    total: int | None = None
    has_more: bool | None = Field(default=None, alias="hasMore")


class CompleteResult(BaseModel):
    model_config = _CONFIG
    completion: Completion
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


@dataclass(frozen=True, slots=True)
class PromptRef:
    """What `complete()` completes an argument of: a prompt, by name."""

    name: str

    def wire(self) -> dict[str, Any]:
        return {"type": "ref/prompt", "name": self.name}


@dataclass(frozen=True, slots=True)
class ResourceTemplateRef:
    """What `complete()` completes a variable of: a resource template (or URI), by its URI."""

    uri: str

    def wire(self) -> dict[str, Any]:
        return {"type": "ref/resource", "uri": self.uri}


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a list: `next_cursor` is opaque, `""` is a cursor too (PAGE-06/07)."""

    items: list[T]
    next_cursor: str | None
    ttl_ms: int = 0
    cache_scope: str | None = None
    cached: bool = False
    listed: tuple[Any, ...] = ()  # the page's entries as the server sent them, malformed ones included
