"""The regex matcher uri_match.py used before issue 31, kept only as the reference of
test_uri_match_differential.py: one backtracking regular expression per template, exponential on
hostile URIs (so the tests give it short ones). Its answers define the split of ambiguous URIs."""

from __future__ import annotations

import re
from urllib.parse import unquote

from mcpgen_runtime.uri_template import parse

Variables = dict[str, "str | list[str]"]

_VARNAME = re.compile(r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*")
_VARSPEC = re.compile(rf"({_VARNAME.pattern})(\*|:[1-9][0-9]{{0,3}})?")
_OPERATORS = "+#./;?&"
_SIMPLE = r"[^/?#,&]*"
_RESERVED = r"[^,]*?"
_LABEL = r"[^/?#.]*"
_SEGMENT = r"[^/?#;]*"


def _decode(value: str) -> str:
    return unquote(value, errors="replace")


class RegexUriPattern:
    def __init__(self, template: str) -> None:
        parse(template)
        self.template = template
        parts: list[str] = []
        self._groups: list[tuple[str, str, tuple[str, ...], tuple[bool, ...]]] = []
        pos = 0
        for found in re.finditer(r"\{([^{}]*)\}", template):
            parts.append(re.escape(template[pos : found.start()]))
            expression = found.group(1)
            operator = expression[:1] if expression[:1] in _OPERATORS else ""
            variables: list[str] = []
            explode: list[bool] = []
            for spec in expression[len(operator) :].split(","):
                match = _VARSPEC.fullmatch(spec)
                assert match is not None
                variables.append(match.group(1))
                explode.append(match.group(2) == "*")
            group = f"g{len(self._groups)}"
            self._groups.append((group, operator, tuple(variables), tuple(explode)))
            parts.append(f"(?P<{group}>{self._expression(operator, len(variables), any(explode))})")
            pos = found.end()
        parts.append(re.escape(template[pos:]))
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
        return r"(?:&[^#]*)?"

    def match(self, uri: str) -> Variables | None:
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
                    given.setdefault(key, []).append(_decode(value))
                for name, exploded in zip(variables, explode, strict=True):
                    if name in given:
                        values = given[name]
                        out[name] = values if exploded else ",".join(values)
                if any(explode) and len(variables) == 1 and variables[0] not in out:
                    items = [f"{_decode(k)}={v}" for k, vs in given.items() for v in vs]
                    if items:
                        out[variables[0]] = items
            else:
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

    def spans(self, uri: str) -> list[tuple[int, int]] | None:
        found = self._regex.fullmatch(uri)
        return None if found is None else [found.span(group) for group, *_ in self._groups]
