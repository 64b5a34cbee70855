"""MCP request headers: names, value encoding (`=?base64?…?=`) and decoding.

Rules: XHDR-13..17, HDR-01..12 in docs/RULES.md.
"""

from __future__ import annotations

import base64
import binascii
import re

PROTOCOL_VERSION = "MCP-Protocol-Version"
METHOD = "Mcp-Method"
NAME = "Mcp-Name"
PARAM_PREFIX = "Mcp-Param-"
# Initialize-based revisions only (protocol/legacy/handshake.py): the session, and SSE resumption.
SESSION_ID = "Mcp-Session-Id"
LAST_EVENT_ID = "Last-Event-ID"

# Lower-case forms, as ASGI servers hand header names over.
PROTOCOL_VERSION_LC = PROTOCOL_VERSION.lower()
METHOD_LC = METHOD.lower()
NAME_LC = NAME.lower()
SESSION_ID_LC = SESSION_ID.lower()
LAST_EVENT_ID_LC = LAST_EVENT_ID.lower()

# Methods whose `Mcp-Name` mirrors a body field (HDR-08; the tasks extension adds its methods' taskId).
NAME_FIELD_BY_METHOD = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

_SENTINEL_PREFIX = "=?base64?"
_SENTINEL_SUFFIX = "?="
# Plain-safe: visible ASCII with interior spaces only; tabs are unsafe (XHDR-14).
_PLAIN_SAFE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?\Z")
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?\Z")
# RFC 9110 token (tchar): header names, incl. those built from x-mcp-header.
TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
# RFC 9110 field-value characters: visible ASCII, space and tab (no CR, LF, NUL or other controls).
FIELD_VALUE = re.compile(r"[\t\x20-\x7e]*\Z")


class HeaderValueError(ValueError):
    """A header value that is not validly encoded (bad sentinel Base64 or UTF-8)."""


def encode_value(value: str) -> str:
    """Encode a string for a header: plain when safe, else the Base64 sentinel (XHDR-14, XHDR-16)."""
    if value == "":
        return ""
    if _PLAIN_SAFE.match(value) and not (
        value.startswith(_SENTINEL_PREFIX) and value.endswith(_SENTINEL_SUFFIX)
    ):
        return value
    return _SENTINEL_PREFIX + base64.b64encode(value.encode("utf-8")).decode("ascii") + _SENTINEL_SUFFIX


def decode_value(raw: str) -> str:
    """Decode a received header value; raise HeaderValueError for a malformed sentinel (XHDR-22)."""
    value = raw.strip(" \t")
    if not (value.startswith(_SENTINEL_PREFIX) and value.endswith(_SENTINEL_SUFFIX)) or len(value) < len(
        _SENTINEL_PREFIX
    ) + len(_SENTINEL_SUFFIX):
        return value
    payload = value[len(_SENTINEL_PREFIX) : -len(_SENTINEL_SUFFIX)]
    if not _BASE64.match(payload):
        raise HeaderValueError("malformed Base64 in =?base64?…?= header value")
    try:
        return base64.b64decode(payload, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise HeaderValueError(f"undecodable =?base64?…?= header value: {exc}") from exc


def param_value_text(value: object) -> str | None:
    """Header text for an x-mcp-header argument, or None when no header is sent (XHDR-13, XHDR-19).

    Strings as-is, integers in decimal, booleans as `true`/`false`; null/absent omit the header.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return value
    return None
