"""The MCP request headers checked against the body (HTTP only; stdio has no header layer).

- `check_standard_headers`: `Mcp-Method` and `Mcp-Name` (HDR-07..12).
- `check_param_headers`: a tool's `Mcp-Param-*` headers against its arguments (XHDR-22..25).

Each returns the problem as text (the dispatcher answers `-32020` with it), or None.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from ...protocol.headers import (
    FIELD_VALUE,
    METHOD_LC,
    NAME_FIELD_BY_METHOD,
    NAME_LC,
    HeaderValueError,
    decode_value,
    param_value_text,
)
from ...protocol.xheader import HeaderParam, extract

__all__ = ["check_param_headers", "check_standard_headers"]

_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")


def check_standard_headers(headers: Mapping[str, str], method: str, params: Mapping[str, Any]) -> str | None:
    """Mcp-Method and Mcp-Name against the body (HDR-07..12); the problem, or None."""
    header_method = headers.get(METHOD_LC)
    if header_method is None:
        return "Missing Mcp-Method header"
    if header_method != method and header_method.strip(" \t") != method:
        return "Mcp-Method header does not match the request method"
    name_field = NAME_FIELD_BY_METHOD.get(method)
    if name_field is None:
        return None
    raw = headers.get(NAME_LC)
    if raw is None:
        return "Missing Mcp-Name header"
    expected = params.get(name_field)
    # The common case: a plain name exactly as in the body (HTTP servers strip surrounding
    # whitespace, and a sentinel starts with "=?"): nothing to decode.
    if raw == expected and not raw.startswith("=?"):
        return None
    try:
        name = decode_value(raw)
    except HeaderValueError:
        return "Mcp-Name header has a malformed =?base64?...?= value"
    if name != expected:
        return f"Mcp-Name header does not match params.{name_field}"
    return None


def check_param_headers(
    header_params: tuple[tuple[HeaderParam, str], ...],
    arguments: Mapping[str, Any],
    headers: Mapping[str, str],
) -> str | None:
    """Mcp-Param-* against the arguments (XHDR-22..25); the problem, or None.

    `header_params` is a tool's table of (param, lower-case header name)."""
    for param, header_lc in header_params:
        value = extract(arguments, param.path)
        raw = headers.get(header_lc)
        if value is None:
            # XHDR-24: not expected; a header claiming a value the body lacks is a mismatch.
            if raw is not None:
                return f"{param.header} header is present but the argument is absent or null"
            continue
        expected = param_value_text(value)
        if expected is None:
            continue  # not a header-mirrorable value; input validation reports it
        if raw is None:
            return f"Missing {param.header} header for argument {'/'.join(param.path)!r}"
        if not FIELD_VALUE.match(raw):  # XHDR-22 "invalid characters"
            return f"{param.header} header contains invalid characters"  # XHDR-22
        try:
            text = decode_value(raw)
        except HeaderValueError:
            return f"{param.header} header has a malformed =?base64?...?= value"  # XHDR-22
        if param.type == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
            # XHDR-25: numeric comparison, so 42.0 equals 42.
            if not _JSON_NUMBER.match(text):
                return f"{param.header} header is not a number"
            try:
                equal = Decimal(text) == Decimal(value)
            except InvalidOperation:  # pragma: no cover - the regex admits only valid numbers
                equal = False
            if not equal:
                return f"{param.header} header does not match argument {'/'.join(param.path)!r}"
        elif text != expected:
            return f"{param.header} header does not match argument {'/'.join(param.path)!r}"
    return None
