"""tools.json: the validated tool definitions as data, exactly as `json.dumps` writes them.

Generated packages load it at import (`mcpgen_runtime.tools.load_package_tools`): the runtime
validates against these original schemas, so nothing a Python type cannot say is lost. Written
without `json`'s pure-Python indenting encoder, which is about 5x slower.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from mcpgen_runtime.pins import pin_all

from ..errors import InternalGeneratorError

__all__ = ["surfaces_json", "tools_json"]

_encode_ascii = json.encoder.encode_basestring_ascii  # the C encoder json.dumps uses
_SURROGATE = re.compile("[\ud800-\udfff]")


def _encode_string(text: str) -> str:
    # JSON text may spell a lone surrogate ("\ud800"), but no UTF-8 encoder can send one and the
    # runtime's JSON reader refuses it: tools.json carries U+FFFD in its place.
    if text.isascii() or not _SURROGATE.search(text):
        return _encode_ascii(text)
    return _encode_ascii(_SURROGATE.sub("\ufffd", text))


def _scalar(item: Any) -> str:
    """A JSON value that is neither a string nor a non-empty container."""
    if item is None:
        return "null"
    if item is True:
        return "true"
    if item is False:
        return "false"
    if isinstance(item, int):
        return int.__repr__(item)
    if isinstance(item, float):
        if item != item or item in (float("inf"), float("-inf")):
            raise InternalGeneratorError(f"non-finite number {item!r} in a tool definition")
        return float.__repr__(item)
    if isinstance(item, (dict, list)):
        return "{}" if isinstance(item, dict) else "[]"
    raise InternalGeneratorError(f"tool definitions hold a {type(item).__name__}, not JSON")


def _json_lines(value: Any, out: list[str]) -> None:
    """`value` as `json.dumps(value, indent=2, ensure_ascii=True, allow_nan=False)` writes it, without
    its pure-Python encoder (about 5x slower): each container's entries written in one loop, an
    explicit stack of the containers left open, C-encoded strings."""
    write = out.append
    keys: dict[str, str] = {}  # each key's `"key": ` (a few dozen keys recur all over the schemas)
    # The container being written: its remaining entries, whether they are (key, value) pairs, the
    # indentation of its entries and what goes before the next one. `stack` holds the outer ones.
    entries: Iterator[Any] = iter((value,))  # the value itself, as the one entry of a list
    is_dict, indent, lead = False, "", ""
    stack: list[tuple[Iterator[Any], bool, str, str]] = []
    while True:
        for entry in entries:
            if is_dict:
                key, item = entry
                prefix = keys.get(key)
                if prefix is None:
                    if not isinstance(key, str):
                        raise InternalGeneratorError(f"tool definition key {key!r} is not a string")
                    prefix = keys[key] = _encode_string(key) + ": "
                prefix = lead + prefix
            else:
                item, prefix = entry, lead
            lead = ",\n" + indent
            if isinstance(item, str):
                write(prefix + _encode_string(item))
            elif item and isinstance(item, (dict, list)):
                stack.append((entries, is_dict, indent, lead))
                indent += "  "
                lead = "\n" + indent
                if isinstance(item, dict):
                    write(prefix + "{")
                    entries, is_dict = iter(item.items()), True
                else:
                    write(prefix + "[")
                    entries, is_dict = iter(item), False
                break  # write the inner container's entries first
            else:
                write(prefix + _scalar(item))
        else:  # every entry written: close the container, go on with the one around it
            if not stack:
                return
            closing = "}" if is_dict else "]"
            entries, is_dict, indent, lead = stack.pop()
            write("\n" + indent + closing)


_TOOLS_JSON: dict[tuple[int, bool], tuple[Any, str]] = {}


def tools_json(definitions: Iterable[Mapping[str, Any]], *, pinned: bool = False) -> str:
    """tools.json: the validated definitions, exactly as `json.dumps(..., indent=2, ensure_ascii=True)`
    writes them (ASCII only: every other character escaped; a lone surrogate becomes U+FFFD). The
    last result is reused. `pinned` (a client's): after them, `pins`, each tool's digest as the
    runtime computes it (`mcpgen_runtime.pins`), which the client's drift check compares."""
    hit = _TOOLS_JSON.get((id(definitions), pinned))
    if hit is not None and hit[0] is definitions:
        return hit[1]
    out: list[str] = []
    document: dict[str, Any] = {"tools": list(definitions)}
    if pinned:
        document["pins"] = pin_all(document["tools"])
    _json_lines(document, out)
    text = "".join(out) + "\n"
    _TOOLS_JSON.clear()
    _TOOLS_JSON[(id(definitions), pinned)] = (definitions, text)
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
