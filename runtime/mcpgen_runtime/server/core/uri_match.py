"""Which resource template a `resources/read` URI belongs to, and its variables (RFC 6570, read
backwards), without I/O.

`UriPattern(template)` compiles a URI template (levels 1-4: `{var}`, `{+var}`, `{#var}`, `{.var}`,
`{/var}`, `{;var}`, `{?var}`, `{&var}`, several variables per expression, `:n` prefixes and `*`
explode) into one anchored regular expression; `match(uri)` returns the variables percent-decoded,
or None. Values of `{var}` (simple expansion) never span a `/`, `?`, `#` or `,`: a client that
expanded `../etc` correctly sent `..%2Fetc`, which matches as the one value `../etc`, and never
as two path segments. Exploded list variables (`{/path*}`, `{?list*}`) give lists of strings.

A malformed template raises ValueError when compiled (`uri_template.parse`, the rules the generator
validates spec files with, then the checks below): a server with such a template does not start.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from ...uri_template import parse

__all__ = ["UriPattern", "Variables"]

Variables = dict[str, "str | list[str]"]

_VARNAME = re.compile(r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*")
_VARSPEC = re.compile(rf"({_VARNAME.pattern})(\*|:[1-9][0-9]{{0,3}})?")
_OPERATORS = "+#./;?&"
# One value of each kind of expression: what its expansion can contain.
_SIMPLE = r"[^/?#,&]*"
_RESERVED = r"[^,]*?"
_LABEL = r"[^/?#.]*"  # a list value, not exploded, keeps its commas: "a,b"
_SEGMENT = r"[^/?#;]*"


def _decode(value: str) -> str:
    return unquote(value, errors="replace")


class UriPattern:
    """One compiled URI template (see the module docstring)."""

    __slots__ = ("_groups", "_regex", "template", "variables")

    def __init__(self, template: str) -> None:
        if not isinstance(template, str) or not template:
            raise ValueError("a URI template must be a non-empty string")
        parse(template)  # UriTemplateError (a ValueError) says what is wrong and where
        self.template = template
        parts: list[str] = []
        # (group name, operator, variable names, explode flags)
        self._groups: list[tuple[str, str, tuple[str, ...], tuple[bool, ...]]] = []
        names: list[str] = []
        pos = 0
        for found in re.finditer(r"\{([^{}]*)\}", template):
            literal = template[pos : found.start()]
            if "{" in literal or "}" in literal:
                raise ValueError(f"unbalanced braces in URI template {template!r}")
            parts.append(re.escape(literal))
            expression = found.group(1)
            operator = expression[:1] if expression[:1] in _OPERATORS else ""
            specs = expression[len(operator) :].split(",")
            variables: list[str] = []
            explode: list[bool] = []
            for spec in specs:
                match = _VARSPEC.fullmatch(spec)
                if match is None:
                    raise ValueError(f"invalid expression {{{expression}}} in URI template {template!r}")
                variables.append(match.group(1))
                explode.append(match.group(2) == "*")
            group = f"g{len(self._groups)}"
            self._groups.append((group, operator, tuple(variables), tuple(explode)))
            names.extend(variables)
            parts.append(f"(?P<{group}>{self._expression(operator, len(variables), any(explode))})")
            pos = found.end()
        tail = template[pos:]
        if "{" in tail or "}" in tail:
            raise ValueError(f"unbalanced braces in URI template {template!r}")
        parts.append(re.escape(tail))
        if len(set(names)) != len(names):
            raise ValueError(f"URI template {template!r} names a variable twice")
        self.variables: tuple[str, ...] = tuple(names)
        self._regex = re.compile("".join(parts), re.DOTALL)

    @staticmethod
    def _expression(operator: str, count: int, explode: bool) -> str:
        if operator in ("", "+", "#"):
            value = _SIMPLE if operator == "" else _RESERVED
            if explode:
                value = r"[^/?#&]*" if operator == "" else r".*?"
            body = ",".join([value] * count) if not explode else value
            return rf"\#{body}" if operator == "#" else body
        if operator == ".":
            return rf"(?:\.{_LABEL})*"
        if operator == "/":
            return rf"(?:/{_SEGMENT})*"
        if operator == ";":
            return r"(?:;[^/?#;]*)*"
        if operator == "?":
            return r"(?:\?[^#]*)?"
        return r"(?:&[^#]*)?"  # "&"

    def match(self, uri: str) -> Variables | None:
        """The template's variables in `uri` (percent-decoded), or None when it does not match."""
        found = self._regex.fullmatch(uri)
        if found is None:
            return None
        out: Variables = {}
        for group, operator, variables, explode in self._groups:
            text = found.group(group) or ""
            if operator in ("", "+", "#"):
                if operator == "#":
                    text = text[1:]
                if len(variables) == 1:
                    out[variables[0]] = [_decode(v) for v in text.split(",")] if explode[0] else _decode(text)
                else:
                    values = text.split(",")
                    if len(values) != len(variables):
                        return None
                    for name, value in zip(variables, values, strict=True):
                        out[name] = _decode(value)
            elif operator in ("?", "&", ";"):
                separator = ";" if operator == ";" else "&"
                pairs = [p for p in text[1:].split(separator)] if text else []
                if operator == ";":
                    pairs = [p for p in text.split(";") if p]
                given: dict[str, list[str]] = {}
                for pair in pairs:
                    key, _, value = pair.partition("=")
                    given.setdefault(key, []).append(_decode(value))  # names as the template spells them
                for name, exploded in zip(variables, explode, strict=True):
                    if name in given:
                        values = given[name]
                        out[name] = values if exploded else ",".join(values)
                if any(exploded for exploded in explode) and len(variables) == 1 and variables[0] not in out:
                    # {?list*} with keys other than the name: an associative explode, kept as "k=v" items
                    items = [f"{_decode(k)}={v}" for k, vs in given.items() for v in vs]
                    if items:
                        out[variables[0]] = items
            else:  # "." and "/": one value per prefixed item
                prefix = "." if operator == "." else "/"
                values = [_decode(v) for v in text.split(prefix)[1:]] if text else []
                if len(variables) == 1 and explode[0]:
                    out[variables[0]] = values
                else:
                    if len(values) > len(variables):
                        return None
                    for name, value in zip(variables, values, strict=False):
                        out[name] = value
        return out
