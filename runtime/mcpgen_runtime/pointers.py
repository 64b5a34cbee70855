"""Where a pydantic `ValidationError` points in the value that was validated.

One helper for both sides: the client names the field of a rejected argument or output
(`ToolArgumentsError`, `ToolOutputError`), the server the field of rejected tool arguments.
A leaf module (pydantic only), so importing it costs nothing on the client's import path.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

__all__ = ["first_error"]


def first_error(exc: ValidationError, value: Any) -> tuple[str, str]:
    """The first error as (JSON pointer into `value`, message). Parts of pydantic's `loc` that
    do not index into the value (union members such as `int`, validator names) are left out;
    a missing key or item ends the pointer where it belongs. The message counts the other errors."""
    errors = exc.errors()
    first = errors[0]
    parts: list[str] = []
    for part in first["loc"]:
        present = (
            part in value
            if isinstance(value, dict)
            else (isinstance(value, list) and isinstance(part, int) and -len(value) <= part < len(value))
        )
        if present:
            value = value[part]
        elif isinstance(value, dict | list):
            parts.append(str(part))  # a missing key or item: the pointer names where it belongs
            break
        else:
            continue
        parts.append(str(part))
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return "/" + "/".join(parts), first["msg"] + more
