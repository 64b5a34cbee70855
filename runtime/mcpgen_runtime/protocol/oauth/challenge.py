"""`WWW-Authenticate` read and written: the Bearer challenge of RFC 6750 (and the DPoP challenge of
RFC 9449 §7.1, which takes the same parameters) with the `resource_metadata` parameter of RFC 9728
(AUTH-01, AUTH-07, AUTH-21).

    parse_challenges('Bearer error="invalid_token", scope="a b", resource_metadata="https://…"')
    -> [Challenge("bearer", {"error": "invalid_token", "scope": "a b", "resource_metadata": "https://…"})]

The reader follows RFC 9110 §11.6.1 (`auth-scheme [ token68 / #auth-param ]`, several challenges
in one field, quoted strings with backslash escapes) and never raises: text it cannot read
ends the parse and what was read so far is returned.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["Challenge", "bearer_challenge", "bearer_of", "challenge_of", "parse_challenges"]

MAX_HEADER = 8192  # longer challenges are cut: a peer's header is untrusted input

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_SCHEME = re.compile(rf"\s*,*\s*({_TOKEN})")
_PARAM = re.compile(rf'\s*({_TOKEN})\s*=\s*(?:({_TOKEN})|"((?:[^"\\]|\\.)*)")\s*', re.DOTALL)
_TOKEN68 = re.compile(r"\s*([A-Za-z0-9\-._~+/]+=*)\s*(?=,|$)")
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


@dataclass(frozen=True)
class Challenge:
    """One challenge: the scheme (lower case) and its parameters (names lower case)."""

    scheme: str
    params: Mapping[str, str] = field(default_factory=dict)

    @property
    def error(self) -> str | None:
        return self.params.get("error")

    @property
    def scopes(self) -> tuple[str, ...] | None:
        """The challenged scopes (None when the challenge names none)."""
        scope = self.params.get("scope")
        return None if scope is None else tuple(scope.split())

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata")


def parse_challenges(value: str) -> list[Challenge]:
    """Every challenge in a `WWW-Authenticate` value (several header lines joined with `,`)."""
    text = value[:MAX_HEADER]
    found: list[Challenge] = []
    pos = 0
    while pos < len(text):
        scheme = _SCHEME.match(text, pos)
        if scheme is None:
            break
        pos = scheme.end()
        params: dict[str, str] = {}
        separated = False  # the comma before the next challenge is already consumed
        token68 = _TOKEN68.match(text, pos)
        if token68 is not None and "=" not in text[pos : token68.end()].rstrip("= \t"):
            pos = token68.end()  # a token68 credential hint: nothing MCP reads
        else:
            while True:
                param = _PARAM.match(text, pos)
                if param is None:
                    break
                name = param[1].lower()
                params.setdefault(name, param[2] if param[2] is not None else _ESCAPE.sub(r"\1", param[3]))
                pos = param.end()
                if not text.startswith(",", pos):
                    break
                # a comma ends this parameter; the next item may be a parameter or a new scheme
                after = pos + 1
                if _PARAM.match(text, after) is None:
                    pos, separated = after, True
                    break
                pos = after
        found.append(Challenge(scheme[1].lower(), params))
        rest = text[pos:].lstrip()
        if rest and not separated and not rest.startswith(","):
            break  # not a parameter, not the next challenge: unreadable from here on
    return found


def bearer_of(value: str | None) -> Challenge | None:
    """The Bearer challenge of a `WWW-Authenticate` value, if it has one."""
    if not value:
        return None
    return next((c for c in parse_challenges(value) if c.scheme == "bearer"), None)


def challenge_of(value: str | None, *, prefer_dpop: bool = False) -> Challenge | None:
    """The challenge a client acts on: Bearer or DPoP (the one it presents tokens with first, when
    the server sends both), the other when only that one is there."""
    if not value:
        return None
    found = {c.scheme: c for c in reversed(parse_challenges(value)) if c.scheme in ("bearer", "dpop")}
    order = ("dpop", "bearer") if prefer_dpop else ("bearer", "dpop")
    return next((found[scheme] for scheme in order if scheme in found), None)


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def bearer_challenge(
    *,
    resource_metadata: str | None = None,
    scopes: Iterable[str] = (),
    error: str | None = None,
    description: str | None = None,
    realm: str | None = None,
) -> str:
    """A `WWW-Authenticate: Bearer …` value (RFC 6750 §3, RFC 9728 §5.1)."""
    parts = []
    if realm is not None:
        parts.append(f"realm={_quoted(realm)}")
    if error is not None:
        parts.append(f"error={_quoted(error)}")
    if description is not None:
        parts.append(f"error_description={_quoted(description)}")
    scope = " ".join(scopes)
    if scope:
        parts.append(f"scope={_quoted(scope)}")
    if resource_metadata is not None:
        parts.append(f"resource_metadata={_quoted(resource_metadata)}")
    return "Bearer " + ", ".join(parts) if parts else "Bearer"
