"""Server-supplied text made safe for a terminal and for click's help formatter, and a tool's
result shown (`show_result`).

Descriptions, titles, enum values and tool results come from the server: untrusted. Printed
raw they could move the cursor or recolour the terminal (ANSI escapes), reorder what a person
reads (bidi controls), or steer click's help layout (a line holding only `\\b` stops rewrapping,
`\\f` cuts the rest of a help text). Every character that does not print is shown as its escape
instead, so what the server sent stays visible and inert (tool definitions are untrusted:
TOOLS-10).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, Final

import click

from ..content import ToolResult

__all__ = ["MAX_HELP_CHARS", "help_text", "json_text", "printable", "short_label", "show_result"]

MAX_HELP_CHARS: Final = 2000
_MAX_LABEL_CHARS: Final = 100


def printable(text: str, *, keep_newlines: bool = True) -> str:
    """`text` with every non-printing character (C0/C1 controls, ESC, bidi and other format
    characters, line and paragraph separators) written as its Python escape; newlines and tabs
    kept when `keep_newlines`."""
    if text.isprintable():
        return text
    out = []
    for char in text:
        if char.isprintable() or (keep_newlines and char in "\n\t"):
            out.append(char)
        else:
            out.append(char.encode("unicode_escape").decode("ascii"))
    return "".join(out)


def help_text(*parts: str | None) -> str:
    """Help for click: the parts that are set, joined, shortened, non-printing characters escaped
    (tabs become spaces: click rewraps paragraphs)."""
    text = " ".join(part.strip() for part in parts if isinstance(part, str) and part.strip())
    if len(text) > MAX_HELP_CHARS:
        text = text[: MAX_HELP_CHARS - 1] + "…"
    return printable(text.replace("\r\n", "\n").replace("\t", " "))


def short_label(value: Any) -> str | None:
    """An enum value as a choice a person types: a string as itself, anything else as its JSON
    text; None when it would not print as typed or is too long to offer as a choice."""
    label = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, allow_nan=False)
    if not label or len(label) > _MAX_LABEL_CHARS or not label.isprintable() or label != label.strip():
        return None
    return label


def json_text(value: Any) -> str:
    """Indented JSON for a terminal or a pipe: non-ASCII kept, and the characters JSON leaves raw
    that a terminal would act on (C1 controls, bidi and format characters, U+2028/U+2029)
    written as `\\uXXXX` (still the same JSON value)."""
    text = json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)
    if text.isprintable() or all(c.isprintable() or c in "\n" for c in text):
        return text
    return "".join(c if c.isprintable() or c == "\n" else _json_escape(c) for c in text)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON spells a character beyond the BMP as a UTF-16 surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def show_result(result: ToolResult, output: str) -> None:
    """A tool's result on stdout: `json` (the structured content, else the content blocks) or `text`."""
    if output == "json":
        if "structured_content" in result.model_fields_set:
            click.echo(json_text(result.structured_content))
        else:
            click.echo(json_text(result.model_dump(mode="json", by_alias=True, exclude_none=True)["content"]))
        return
    lines = [
        _block_text(block.model_dump(mode="json", by_alias=True, exclude_none=True))
        for block in result.content
    ]
    if not lines and "structured_content" in result.model_fields_set:
        lines = [json_text(result.structured_content)]
    text = "\n".join(lines)
    click.echo(printable(text) if sys.stdout.isatty() else text)


def _block_text(block: Mapping[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return str(block["text"])
    if kind in ("image", "audio"):
        return f"[{kind} {block.get('mimeType', '')}, {len(str(block.get('data', '')))} base64 characters]"
    if kind == "resource_link":
        return f"[resource link {block.get('uri', '')}]"
    if kind == "resource":
        resource = block.get("resource")
        if isinstance(resource, Mapping) and isinstance(resource.get("text"), str):
            return str(resource["text"])
        return f"[resource {resource.get('uri', '') if isinstance(resource, Mapping) else ''}]"
    return json_text(block)
