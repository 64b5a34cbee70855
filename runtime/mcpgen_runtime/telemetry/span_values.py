"""What a span may hold (the telemetry package): text a peer controls is cut to a documented size, and
captured tool arguments lose the values of headers (`Mcp-Param-*`) and of secret-looking names.

A span stays in memory until its exporter takes it (the OpenTelemetry SDK's batch processor queues
up to 2,048): a name or attribute as long as the request that carried it (a 4 MiB resource URI)
would hold that much per queued span while the exporter is slow. So:

- a span name is cut to `SPAN_NAME_MAX` characters, every string attribute value and the status
  text to `ATTRIBUTE_MAX`, captured content (`gen_ai.tool.call.arguments` / `.result`, JSON) to
  `CONTENT_MAX`; a cut value ends with `CUT_MARK`. The SDK's `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`
  cuts attributes shorter still;
- with content capture on, an argument whose name says it is a credential (`masking.looks_secret`,
  at any depth: `apiKey`, `db_password`, `auth.token`) is recorded as `MASK`, as is one the tool
  mirrors into an `Mcp-Param-*` header.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from .. import _json
from ..masking import looks_secret

__all__ = [
    "ATTRIBUTE_MAX",
    "CONTENT_MAX",
    "CUT_MARK",
    "MASK",
    "SPAN_NAME_MAX",
    "captured",
    "clip",
    "clip_attributes",
    "masked_arguments",
]

SPAN_NAME_MAX: Final = 256
ATTRIBUTE_MAX: Final = 1024
CONTENT_MAX: Final = 8192
CUT_MARK: Final = "…"
MASK: Final = "[redacted]"
_MAX_DEPTH: Final = 32  # below this, a captured argument is masked whole rather than walked


def clip(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and `CUT_MARK`."""
    return text if len(text) <= limit else text[:limit] + CUT_MARK


def clip_attributes(attributes: dict[str, Any]) -> None:
    """Cut every string value of `attributes` to `ATTRIBUTE_MAX` (in place)."""
    for name, value in attributes.items():
        if type(value) is str and len(value) > ATTRIBUTE_MAX:
            attributes[name] = value[:ATTRIBUTE_MAX] + CUT_MARK


def captured(value: Any) -> str:
    """`value` as JSON text for a content attribute, cut to `CONTENT_MAX`."""
    try:
        text = _json.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return clip(text, CONTENT_MAX)


def masked_arguments(arguments: Any, header_paths: Iterable[tuple[str, ...]]) -> Any:
    """A copy of `arguments` for telemetry: the values at `header_paths` (mirrored into
    Mcp-Param-* headers) and those of secret-looking names replaced by `MASK`; `arguments`
    itself is never changed."""
    if type(arguments) is not dict:
        return arguments
    copy = _masked(arguments, 0)
    for path in header_paths:
        node: Any = copy
        for key in path[:-1]:
            node = node.get(key) if type(node) is dict else None
        if type(node) is dict and path[-1] in node:
            node[path[-1]] = MASK
    return copy


def _masked(value: Any, depth: int) -> Any:
    """A copy of the objects and arrays in `value` with secret-looking members masked."""
    if type(value) is dict:
        if depth >= _MAX_DEPTH:
            return MASK
        return {
            key: MASK if type(key) is str and looks_secret(key) else _masked(item, depth + 1)
            for key, item in value.items()
        }
    if type(value) is list:
        if depth >= _MAX_DEPTH:
            return MASK
        return [_masked(item, depth + 1) for item in value]
    return value
