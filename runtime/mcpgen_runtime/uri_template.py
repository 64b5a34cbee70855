"""RFC 6570 URI templates, levels 1 to 4: `parse` (with the reason a template is refused) and `expand`.

Resource templates (server-resources.mdx § Resource Templates) name their parameters in a URI
template; a generated client's typed method fills them in here, never by pasting strings:

    expand("file:///{path}", {"path": "a b/../c"})        -> "file:///a%20b%2F..%2Fc"
    expand("file:///{+path}", {"path": "a b/../c"})       -> "file:///a%20b/../c"   (reserved kept)
    expand("search{?q,lang}", {"q": "ü?#", "lang": None}) -> "search?q=%C3%BC%3F%23"

Every value is percent-encoded as its operator says (RFC 6570 § 3.2): outside `{+...}` and
`{#...}` only unreserved characters stay as they are, so `/`, `?`, `#`, `..` segments and spaces
cannot change the shape of the URI; non-ASCII is encoded as UTF-8. A value that is None (or an
empty list or mapping) is undefined and leaves its variable out (§ 2.3).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

__all__ = [
    "Expression",
    "UriTemplate",
    "UriTemplateError",
    "VarSpec",
    "expand",
    "parse",
]

_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_RESERVED: Final = frozenset(":/?#[]@!$&'()*+,;=")
_HEX: Final = frozenset("0123456789ABCDEFabcdef")
# operator -> (first, separator, named, if-empty, allow reserved)   RFC 6570 Appendix A
_OPERATORS: Final[dict[str, tuple[str, str, bool, str, bool]]] = {
    "": ("", ",", False, "", False),
    "+": ("", ",", False, "", True),
    ".": (".", ".", False, "", False),
    "/": ("/", "/", False, "", False),
    ";": (";", ";", True, "", False),
    "?": ("?", "&", True, "=", False),
    "&": ("&", "&", True, "=", False),
    "#": ("#", ",", False, "", True),
}
_FUTURE_OPERATORS: Final = frozenset("=,!@|")
_VARNAME: Final = re.compile(r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*\Z")
_MAX_LENGTH: Final = re.compile(r"[1-9][0-9]{0,3}\Z")
# Characters a literal may not hold (RFC 6570 § 2.1): CTL, space, and "'%<>\^`{|} (a "%" only as pct-encoded)
_BAD_LITERAL: Final = frozenset("\"'<>\\^`{|} ") | frozenset(chr(c) for c in range(0x20)) | {"\x7f"}
MAX_TEMPLATE_LENGTH: Final = 8192


class UriTemplateError(ValueError):
    """A template that is not an RFC 6570 template; `position` is the offending character's index."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} (at character {position})")
        self.reason = message
        self.position = position


@dataclass(frozen=True, slots=True)
class VarSpec:
    name: str
    explode: bool = False
    max_length: int | None = None  # the `:n` prefix modifier


@dataclass(frozen=True, slots=True)
class Expression:
    operator: str  # "", "+", ".", "/", ";", "?", "&" or "#"
    variables: tuple[VarSpec, ...]


@dataclass(frozen=True, slots=True)
class UriTemplate:
    """A parsed template: literal text and expressions, in order."""

    text: str
    parts: tuple[str | Expression, ...]

    @property
    def variables(self) -> tuple[VarSpec, ...]:
        """Every variable, first occurrence first (a name may appear in several expressions)."""
        seen: dict[str, VarSpec] = {}
        for part in self.parts:
            if isinstance(part, Expression):
                for var in part.variables:
                    seen.setdefault(var.name, var)
        return tuple(seen.values())

    def operators(self, name: str) -> frozenset[str]:
        """The operators of the expressions that use variable `name`."""
        return frozenset(
            part.operator
            for part in self.parts
            if isinstance(part, Expression) and any(var.name == name for var in part.variables)
        )

    def expand(self, values: Mapping[str, Any]) -> str:
        out: list[str] = []
        for part in self.parts:
            out.append(_literal(part) if isinstance(part, str) else _expression(part, values))
        return "".join(out)


@lru_cache(maxsize=1024)
def parse(text: str) -> UriTemplate:
    """`text` as an RFC 6570 template, or `UriTemplateError` saying what is wrong and where."""
    if len(text) > MAX_TEMPLATE_LENGTH:
        raise UriTemplateError(f"longer than {MAX_TEMPLATE_LENGTH} characters", MAX_TEMPLATE_LENGTH)
    parts: list[str | Expression] = []
    literal: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "{":
            end = text.find("}", i + 1)
            if end < 0:
                raise UriTemplateError("an expression '{' is never closed", i)
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append(_parse_expression(text[i + 1 : end], i + 1))
            i = end + 1
            continue
        if char == "}":
            raise UriTemplateError("'}' outside an expression", i)
        if char == "%":
            if len(text) < i + 3 or text[i + 1] not in _HEX or text[i + 2] not in _HEX:
                raise UriTemplateError("'%' not followed by two hex digits", i)
        elif char in _BAD_LITERAL or 0xD800 <= ord(char) <= 0xDFFF:
            raise UriTemplateError(f"character {char!r} is not allowed in a URI template", i)
        literal.append(char)
        i += 1
    if literal:
        parts.append("".join(literal))
    return UriTemplate(text, tuple(parts))


def _parse_expression(body: str, start: int) -> Expression:
    operator = body[:1] if body[:1] in _OPERATORS and body[:1] != "" else ""
    if body[:1] in _FUTURE_OPERATORS:
        raise UriTemplateError(f"operator {body[0]!r} is reserved for future extensions", start)
    specs = body[len(operator) :]
    if not specs:
        raise UriTemplateError("an empty expression", start)
    variables: list[VarSpec] = []
    offset = start + len(operator)
    for spec in specs.split(","):
        name, explode, max_length = spec, False, None
        if spec.endswith("*"):
            name, explode = spec[:-1], True
        elif ":" in spec:
            name, _, length = spec.partition(":")
            if not _MAX_LENGTH.match(length):
                raise UriTemplateError(f"prefix length {length!r:.20} is not 1..9999", offset + len(name) + 1)
            max_length = int(length)
        if not _VARNAME.match(name):
            raise UriTemplateError(
                f"{name!r:.60} is not a variable name (letters, digits, '_', '.', %XX)", offset
            )
        variables.append(VarSpec(name, explode, max_length))
        offset += len(spec) + 1
    return Expression(operator, tuple(variables))


def _encode(text: str, allow_reserved: bool) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char in _UNRESERVED or (allow_reserved and char in _RESERVED):
            out.append(char)
        elif allow_reserved and char == "%" and text[i + 1 : i + 2] in _HEX and text[i + 2 : i + 3] in _HEX:
            out.append(text[i : i + 3])  # a pct-encoded triplet stays as it is in {+...} and {#...}
            i += 3
            continue
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
        i += 1
    return "".join(out)


def _literal(text: str) -> str:
    """Literal text: URI characters and pct-encoded triplets kept, anything else encoded."""
    return _encode(text, allow_reserved=True)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise TypeError(
        f"a URI template value must be a str, int, float, bool, list or mapping, not {type(value)}"
    )


def _expression(expression: Expression, values: Mapping[str, Any]) -> str:
    first, sep, named, if_empty, allow = _OPERATORS[expression.operator]
    pieces: list[str] = []
    for var in expression.variables:
        value = values.get(var.name)
        if value is None:
            continue
        name = var.name
        if isinstance(value, Mapping):
            pairs = [
                (_encode(str(k), allow), _encode(_scalar(v), allow))
                for k, v in value.items()
                if v is not None
            ]
            if not pairs:
                continue
            if var.explode:
                pieces.append(sep.join(f"{k}={v}" if v or not named else f"{k}{if_empty}" for k, v in pairs))
            else:
                joined = ",".join(f"{k},{v}" for k, v in pairs)
                pieces.append(_named(name, joined, if_empty) if named else joined)
        elif isinstance(value, Sequence) and not isinstance(value, str):
            items = [_encode(_scalar(v), allow) for v in value if v is not None]
            if not items:
                continue
            if var.explode:
                pieces.append(sep.join(_named(name, v, if_empty) if named else v for v in items))
            else:
                joined = ",".join(items)
                pieces.append(_named(name, joined, if_empty) if named else joined)
        else:
            text = _scalar(value)
            if var.max_length is not None:
                text = text[: var.max_length]
            encoded = _encode(text, allow)
            pieces.append(_named(name, encoded, if_empty) if named else encoded)
    if not pieces:
        return ""
    return first + sep.join(pieces)


def _named(name: str, value: str, if_empty: str) -> str:
    return f"{name}={value}" if value else f"{name}{if_empty}"


def expand(template: str, values: Mapping[str, Any]) -> str:
    """`template` (RFC 6570, parsed once and cached) with `values` filled in."""
    return parse(template).expand(values)
