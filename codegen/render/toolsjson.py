"""tools.json: the validated tool definitions as data, exactly as `json.dumps` writes them.

Generated packages load it at import (`mcpgen_runtime.tools.load_package_tools`): the runtime
validates against these original schemas, so nothing a Python type cannot say is lost. Written
without `json`'s pure-Python indenting encoder, which is about 5x slower.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import InternalGeneratorError

__all__ = ["surfaces_json", "tools_json"]

_encode_ascii = json.encoder.encode_basestring_ascii  # the C encoder json.dumps uses
_SURROGATE = re.compile("[\ud800-\udfff]")


def _encode_string(text: str) -> str:
    # JSON text may spell a lone surrogate ("\ud800"), but no UTF-8 encoder can send one and the
    # runtime's JSON reader refuses it: tools.json carries U+FFFD in its place.
    return _encode_ascii(_SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text)


def _json_lines(value: Any, out: list[str]) -> None:
    """`value` as `json.dumps(value, indent=2, ensure_ascii=True, allow_nan=False)` writes it, without
    its pure-Python encoder (about 5x slower): an explicit stack, C-encoded strings."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, indent = stack.pop()
        if isinstance(item, str) and indent == "\x00":  # a pre-rendered fragment
            out.append(item)
            continue
        if isinstance(item, str):
            out.append(_encode_string(item))
        elif item is None:
            out.append("null")
        elif item is True:
            out.append("true")
        elif item is False:
            out.append("false")
        elif isinstance(item, int):
            out.append(int.__repr__(item))
        elif isinstance(item, float):
            if item != item or item in (float("inf"), float("-inf")):
                raise InternalGeneratorError(f"non-finite number {item!r} in a tool definition")
            out.append(float.__repr__(item))
        elif isinstance(item, dict):
            if not item:
                out.append("{}")
                continue
            inner = indent + "  "
            pending: list[tuple[Any, str]] = [("\n" + indent + "}", "\x00")]
            for position, (key, child) in enumerate(reversed(item.items())):
                if not isinstance(key, str):
                    raise InternalGeneratorError(f"tool definition key {key!r} is not a string")
                pending.append((child, inner))
                lead = "{\n" if position == len(item) - 1 else ",\n"
                pending.append((lead + inner + _encode_string(key) + ": ", "\x00"))
            stack.extend(pending)
        elif isinstance(item, list):
            if not item:
                out.append("[]")
                continue
            inner = indent + "  "
            pending = [("\n" + indent + "]", "\x00")]
            for position, child in enumerate(reversed(item)):
                pending.append((child, inner))
                pending.append((("[\n" if position == len(item) - 1 else ",\n") + inner, "\x00"))
            stack.extend(pending)
        else:
            raise InternalGeneratorError(f"tool definitions hold a {type(item).__name__}, not JSON")


_TOOLS_JSON: dict[int, tuple[Any, str]] = {}


def tools_json(definitions: Iterable[Mapping[str, Any]]) -> str:
    """tools.json: the validated definitions, exactly as `json.dumps(..., indent=2, ensure_ascii=True)`
    writes them (ASCII only: every other character escaped; a lone surrogate becomes U+FFFD). The
    last result is reused."""
    hit = _TOOLS_JSON.get(id(definitions))
    if hit is not None and hit[0] is definitions:
        return hit[1]
    out: list[str] = []
    _json_lines({"tools": list(definitions)}, out)
    text = "".join(out) + "\n"
    _TOOLS_JSON.clear()
    _TOOLS_JSON[id(definitions)] = (definitions, text)
    return text


def surfaces_json(
    resources: Iterable[Mapping[str, Any]],
    resource_templates: Iterable[Mapping[str, Any]],
    prompts: Iterable[Mapping[str, Any]],
) -> str:
    """surfaces.json: a server's validated resources, resource templates and prompts, written as
    tools.json is (ASCII only, data never code); `load_package_surfaces` reads it."""
    out: list[str] = []
    _json_lines(
        {
            "resources": list(resources),
            "resourceTemplates": list(resource_templates),
            "prompts": list(prompts),
        },
        out,
    )
    return "".join(out) + "\n"
