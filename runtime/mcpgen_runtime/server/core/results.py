"""Handler return values -> `CallToolResult`s, and the results a server sends in a tool's place.

`shape_result` takes what a handler returned: the output model (or root value) of a tool with
an `outputSchema`, checked against that schema (TOOLS-18/19); else text, content blocks, a
`ToolResult`, or plain JSON data. `error_result` and `rate_limited_result` are the
`isError: true` results of failed or refused calls. Every function stamps `resultType`
(BASE-08) and the server's `_meta` (`meta`, BASE-37) when it has one.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from pydantic import BaseModel, ValidationError

from ... import _json
from ...content import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    ToolResult,
    UnknownContent,
)
from ...protocol import jsonrpc
from .catalog import ServedTool
from .ratelimit import RETRY_AFTER_KEY

# Same shape as dispatch/served.py's head (duplicates): an import list, __all__ and the logger.
__all__ = ["complete", "error_result", "rate_limited_result", "shape_result"]

_LOG = logging.getLogger("mcpgen.server")

_CONTENT_TYPES = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource, UnknownContent)
_CONTENT_KINDS = frozenset({"text", "image", "audio", "resource_link", "resource"})


def complete(result: dict[str, Any], meta: dict[str, Any] | None) -> dict[str, Any]:
    """Stamp `resultType` (BASE-08) and `serverInfo` (BASE-37) on a result."""
    result["resultType"] = jsonrpc.RESULT_COMPLETE
    if meta is not None:
        result["_meta"] = meta
    return result


def error_result(text: str, meta: dict[str, Any] | None) -> dict[str, Any]:
    """A tool result with `isError: true` and `text` (TOOLS-22)."""
    return complete({"content": [{"type": "text", "text": text}], "isError": True}, meta)


def rate_limited_result(name: str, wait: float, meta: dict[str, Any] | None) -> dict[str, Any]:
    """SEC-03. A tool result with `isError: true`, not a JSON-RPC error: the call was refused
    before the tool ran, but it is the model that must slow down and can, given the delay
    (TOOLS-22); no JSON-RPC code means "rate limited" and inventing one in the reserved
    range is forbidden (ERR-03, ERR-06); and it reads the same over HTTP and stdio."""
    retry_ms = max(1, math.ceil(wait * 1000))
    text = f"Rate limit exceeded for tool {name!r}: too many calls; retry in {retry_ms / 1000:.3g} s"
    result = error_result(text, meta)
    result["_meta"] = {**result.get("_meta", {}), RETRY_AFTER_KEY: retry_ms}
    return result


def _structured_result(structured: Any, meta: dict[str, Any] | None) -> dict[str, Any]:
    # TOOLS-18: the same JSON as text, for clients that only read content.
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": _json.dumps(structured).decode()}],
        "structuredContent": structured,
        "isError": False,
        "resultType": jsonrpc.RESULT_COMPLETE,
    }
    if meta is not None:
        result["_meta"] = meta
    return result


def shape_result(tool: ServedTool, value: Any, meta: dict[str, Any] | None) -> dict[str, Any]:
    """Turn a handler's return value into a CallToolResult."""
    name = tool.spec.name
    if isinstance(value, ToolResult):
        return _passthrough(tool, value, meta)
    try:
        if tool.validate_output is not None:
            if tool.output_is_root:
                value = _as_output(tool, value)
            structured = _dump(value, exclude_none=False)
            issue = tool.validate_output(structured)
            if issue is not None and isinstance(value, BaseModel):
                # Generated models default optional fields to None, which a non-nullable
                # property rejects; retry without the Nones before calling it invalid.
                retry = _dump(value, exclude_none=True)
                if tool.validate_output(retry) is None:
                    structured, issue = retry, None
            if issue is not None:
                return _invalid_output(name, issue.describe(), meta)
            return _structured_result(structured, meta)
        content = _as_content(value)
        if content is None:  # plain JSON data from a tool without outputSchema
            structured = (
                value.model_dump(mode="json", by_alias=True) if isinstance(value, BaseModel) else value
            )
            return _structured_result(structured, meta)
    except (ValidationError, TypeError, ValueError) as exc:  # model rejected the value, or not JSON
        return _invalid_output(name, str(exc).splitlines()[0], meta)
    result: dict[str, Any] = {"content": content, "isError": False, "resultType": jsonrpc.RESULT_COMPLETE}
    if meta is not None:
        result["_meta"] = meta
    return result


def _invalid_output(name: str, why: str, meta: dict[str, Any] | None) -> dict[str, Any]:
    # TOOLS-19: never send structuredContent that breaks outputSchema; it is a server bug.
    _LOG.error("tool %r returned output that does not match its outputSchema: %s", name, why)
    return error_result(f"Tool {name!r} produced invalid output", meta)


def _as_output(tool: ServedTool, value: Any) -> Any:
    """A root value becomes its RootModel, so it serializes like any output model."""
    model = tool.output_model
    if model is not None and not isinstance(value, model):
        return model.model_validate(value)
    return value


def _passthrough(tool: ServedTool, value: ToolResult, meta: dict[str, Any] | None) -> dict[str, Any]:
    result = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    result.setdefault("content", [])
    if tool.validate_output is not None and not result.get("isError"):
        if "structuredContent" not in result:
            return _invalid_output(tool.spec.name, "no structuredContent", meta)
        issue = tool.validate_output(result["structuredContent"])
        if issue is not None:
            return _invalid_output(tool.spec.name, issue.describe(), meta)
    result["resultType"] = jsonrpc.RESULT_COMPLETE
    if meta is not None:
        result["_meta"] = {**result.get("_meta", {}), **meta}
    return result


def _dump(value: Any, *, exclude_none: bool) -> Any:
    """JSON data for structuredContent; plain values pass through (orjson rejects non-JSON later)."""
    if isinstance(value, BaseModel):
        # model_dump without its Python wrapper (an instance's serializer is always built).
        return value.__pydantic_serializer__.to_python(
            value, mode="json", by_alias=True, exclude_unset=True, exclude_none=exclude_none, warnings=False
        )
    return value


def _as_content(value: Any) -> list[dict[str, Any]] | None:
    """Content blocks for a handler value, or None when the value is data (structured content)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if isinstance(value, _CONTENT_TYPES):
        return [value.model_dump(mode="json", by_alias=True, exclude_none=True)]
    if isinstance(value, dict):
        return [value] if value.get("type") in _CONTENT_KINDS else None
    if isinstance(value, (list, tuple)) and value:
        blocks: list[dict[str, Any]] = []
        for item in value:
            if isinstance(item, _CONTENT_TYPES):
                blocks.append(item.model_dump(mode="json", by_alias=True, exclude_none=True))
            elif isinstance(item, str):
                blocks.append({"type": "text", "text": item})
            elif isinstance(item, dict) and item.get("type") in _CONTENT_KINDS:
                blocks.append(item)
            else:
                return None
        return blocks
    return None
