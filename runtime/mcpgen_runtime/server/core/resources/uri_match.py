"""Which resource template a `resources/read` URI belongs to, and its variables (RFC 6570, read
backwards), without I/O.

`UriPattern(template)` reads a URI template (levels 1-4: `{var}`, `{+var}`, `{#var}`, `{.var}`,
`{/var}`, `{;var}`, `{?var}`, `{&var}`, several variables per expression, `:n` prefixes and `*`
explode); `match(uri)` returns the variables percent-decoded, or None. Where each expression lies
is found by uri_spans.py, in time linear in the URI's length (its docstring says how ambiguous URIs
split, e.g. `{a}{b}`). Exploded list variables (`{/path*}`, `{?list*}`) give lists of strings.

A raw `{var}` (simple expansion) never spans a `/`, `?`, `#` or `,` of the URI, but its value is
decoded after matching: `..%2F..%2Fetc` would become `../../etc`. So by default a `{var}` value
that holds `/`, `\\`, NUL or is `..` once decoded does not match (RES-06): the URI is not one this
template serves. `UriPattern(template, raw_values=True)` (per template: `add_resource_template(...,
raw_values=True)`) gives such values as decoded. Path-like kinds (`{+path}`, `{/segments*}`) keep
their `/` and `..`: read them through `safe_join` (safe_paths.py).

URIs are capped before any matching: `check_uri_length` (`ServerConfig.max_uri_length`, default
`MAX_URI_LENGTH`) refuses a longer one with `-32602` naming the limit.

A malformed template raises ValueError when compiled (`uri_template.parse`, the rules the generator
validates spec files with, then the checks below): a server with such a template does not start.
"""

from __future__ import annotations

from urllib.parse import unquote

from ....protocol import jsonrpc
from ....uri_template import Expression, parse
from ..handler_errors import RpcError
from .uri_spans import Piece, Span, spans

__all__ = ["UriPattern", "Variables", "check_uri_length", "unsafe_value"]

Variables = dict[str, "str | list[str]"]


def check_uri_length(uri: str, limit: int) -> None:
    """Refuse (`RpcError` -32602, `data.maxUriLength`) a URI longer than `limit` characters: call it
    before matching a URI a client sent against templates."""
    if len(uri) > limit:
        raise RpcError(
            jsonrpc.INVALID_PARAMS,
            f"URI of {len(uri)} characters is over this server's limit of {limit} (max_uri_length)",
            {"maxUriLength": limit},
        )


def unsafe_value(value: str) -> bool:
    """True when a decoded value could name another path: `/`, `\\`, NUL, or `..`."""
    return "/" in value or "\\" in value or "\x00" in value or value == ".."


def _decode(value: str) -> str:
    return unquote(value, errors="replace") if "%" in value else value


def _decode_all(values: list[str]) -> list[str]:
    return [unquote(v, errors="replace") if "%" in v else v for v in values]


class UriPattern:
    """One compiled URI template (see the module docstring)."""

    __slots__ = ("_groups", "_pieces", "raw_values", "template", "variables")

    def __init__(self, template: str, *, raw_values: bool = False) -> None:
        if not isinstance(template, str) or not template:
            raise ValueError("a URI template must be a non-empty string")
        parsed = parse(template)  # UriTemplateError (a ValueError) says what is wrong and where
        self.template = template
        self.raw_values = raw_values
        self._pieces: list[Piece] = []
        # (operator, variable names, explode flags), one per expression
        self._groups: list[tuple[str, tuple[str, ...], tuple[bool, ...]]] = []
        names: list[str] = []
        for part in parsed.parts:
            if not isinstance(part, Expression):
                self._pieces.append(part)
                continue
            variables = tuple(v.name for v in part.variables)
            explode = tuple(v.explode for v in part.variables)
            self._groups.append((part.operator, variables, explode))
            self._pieces.append(Span.of(part.operator, len(variables), any(explode)))
            names.extend(variables)
        if len(set(names)) != len(names):
            raise ValueError(f"URI template {template!r} names a variable twice")
        self.variables: tuple[str, ...] = tuple(names)

    def match(self, uri: str) -> Variables | None:
        """The template's variables in `uri` (percent-decoded), or None when it does not match
        (or, unless `raw_values`, when a `{var}` value is unsafe: `unsafe_value`)."""
        first, last = self._pieces[0], self._pieces[-1]
        if isinstance(first, str) and not uri.startswith(first):
            return None
        if isinstance(last, str) and not uri.endswith(last):
            return None
        found = spans(self._pieces, uri)
        if found is None:
            return None
        out: Variables = {}
        for (start, end), (operator, variables, explode) in zip(found, self._groups, strict=True):
            text = uri[start:end]
            if operator in ("", "+", "#"):
                if operator == "#":
                    text = text[1:]
                if len(variables) == 1:
                    out[variables[0]] = _decode_all(text.split(",")) if explode[0] else _decode(text)
                else:
                    values = text.split(",")
                    if len(values) != len(variables):
                        return None
                    for name, value in zip(variables, values, strict=True):
                        out[name] = _decode(value)
                if operator == "" and not self.raw_values and _any_unsafe(out, variables):
                    return None
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
                values = text.split(prefix)[1:] if text else []
                if len(variables) == 1 and explode[0]:
                    out[variables[0]] = _decode_all(values)
                else:
                    if len(values) > len(variables):
                        return None
                    for name, value in zip(variables, values, strict=False):
                        out[name] = _decode(value)
        return out


def _any_unsafe(values: Variables, names: tuple[str, ...]) -> bool:
    for name in names:
        value = values.get(name)
        items = value if isinstance(value, list) else [value or ""]
        if any(unsafe_value(item) for item in items):
            return True
    return False
