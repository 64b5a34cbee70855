"""Secrets in text: the one policy for everything mcpgen prints or writes.

A secret is a value given to this process to reach a server: an MCP config entry's env and header
values and every `${env:…}` / `${input:…}` it expands, `--header` and `--token` values (and the
credentials of `Bearer CREDENTIALS`), each query value, the userinfo and the fragment of a URL,
and literal arguments that carry credentials (`--api-key VALUE`, `--token=VALUE`, a token-shaped
argument, a URL's credentials). Every such value of `MIN_SECRET_CHARS` characters or more is
replaced wherever it appears: in messages, log lines and passed-through stderr by `MASK`, in
cassettes by `[scrubbed]`. Shorter values ("1", "on") are too common to replace.

`KNOWN` holds the secrets this process was given (`remember`), `remembering` those of work under
way; `masked` applies them all.

A loaded tool definition holding a credential is refused, never scrubbed (`Secrets.locate` finds
where). Credentials are the secrets whose name or shape says so: a `${input:…}` value, `--token`,
a URL's userinfo, the value of an option, env variable, header or query parameter named for one
(`looks_secret`: `API_KEY`, `Authorization`, `?access_token=`), and any token-shaped string
(`TOKEN_SHAPES`). Other config values (`LOG_LEVEL=info`, `?format=json`, a directory) are masked in
output but may appear in a definition: refusing them would stop generation for harmless text.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit

__all__ = [
    "KNOWN",
    "MASK",
    "MIN_SECRET_CHARS",
    "TOKEN_SHAPES",
    "MaskingFilter",
    "Secrets",
    "looks_secret",
    "mask_log_handlers",
    "masked",
    "masked_bytes",
    "remember",
    "remembering",
]

MIN_SECRET_CHARS: Final = 3
MASK: Final = "***"

# Strings shaped like credentials, whoever gave them: `Bearer …`, JWTs, `sk-…`, `ghp_…`, `xox?-…`,
# `AKIA…`, `AIza…`.
TOKEN_SHAPES: Final = re.compile(
    r"(?:\b(?:[Bb]earer|[Bb]asic)\s+[A-Za-z0-9._~+/=-]{8,})"
    r"|(?:\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*)"
    r"|(?:\b(?:sk|pk|rk)[-_](?:live[-_]|test[-_]|proj[-_])?[A-Za-z0-9_-]{16,})"
    r"|(?:\bgh[pousr]_[A-Za-z0-9]{20,})|(?:\bgithub_pat_[A-Za-z0-9_]{20,})"
    r"|(?:\bxox[abposr]-[A-Za-z0-9-]{10,})|(?:\bAKIA[0-9A-Z]{16}\b)|(?:\bAIza[0-9A-Za-z_-]{30,})"
)
# Words (or two adjacent words joined: api+key) in a name that say its value is a credential.
SECRET_WORDS: Final = frozenset(
    {
        "password",
        "passwd",
        "passphrase",
        "token",
        "secret",
        "auth",
        "authorization",
        "key",
        "apikey",
        "credential",
        "credentials",
        "cookie",
    }
)
_WORD: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def looks_secret(name: str) -> bool:
    """Whether a value called `name` (an argument, option, header or parameter) is a credential:
    `api_key`, `apiKey`, `X-Api-Key`, `authToken`, `client_secret` yes; `max_tokens`, `keyword` no."""
    words = [word.lower() for word in _WORD.findall(name)]
    return any(word in SECRET_WORDS for word in words) or any(
        a + b in SECRET_WORDS for a, b in itertools.pairwise(words)
    )


def _secret_option(arg: str) -> bool:
    """`--api-key`, `--token`, `-password`, `--client-secret`: an option named for a credential."""
    return arg.startswith("-") and looks_secret(arg)


class Secrets:
    """A set of secret values and the one way of hiding them (see the module docstring), with the
    subset that are credentials (`credentials`): those a loaded definition may not hold."""

    __slots__ = ("_credentials", "_found", "_pattern", "_values")

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values: set[str] = set()
        self._credentials: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._found: re.Pattern[str] | None = None
        self.update(values)

    def add(self, value: str, *, credential: bool = True) -> None:
        """`value`, and the credentials of `SCHEME CREDENTIALS` (`Bearer abc…`), when long enough.
        A value that is not a `credential` is still masked; the credentials inside it (a token
        shape, a URL's userinfo) count as credentials."""
        for candidate in (value, value.strip()):
            if len(candidate) >= MIN_SECRET_CHARS and candidate not in self._values:
                self._values.add(candidate)
                self._pattern = None
            if credential and len(candidate) >= MIN_SECRET_CHARS and candidate not in self._credentials:
                self._credentials.add(candidate)
                self._found = None
        scheme, _, rest = value.strip().partition(" ")
        rest = rest.strip()
        if rest and scheme.isalpha() and not any(char.isspace() for char in rest):
            self.add(rest, credential=credential)
        if not credential:
            for match in TOKEN_SHAPES.finditer(value):
                self.add(match.group(0))
            if "://" in value:
                self.add_url(value)

    def add_named(self, name: str, value: str) -> None:
        """The value of an env variable, header, option or query parameter called `name`: masked
        always, a credential when its name says so (`looks_secret`) or its shape does."""
        self.add(value, credential=looks_secret(name))

    def update(self, values: Iterable[str]) -> None:
        """Each of `values`, a credential; another `Secrets` keeps its own credentials."""
        if isinstance(values, Secrets):
            for value in values._values:
                self.add(value, credential=value in values._credentials)
            return
        for value in values:
            self.add(value)

    def add_url(self, url: str) -> None:
        """A URL's userinfo, password and fragment (credentials), its whole query, and each query
        value (a credential when its parameter's name says so: `?api_key=…`, not `?format=json`)."""
        try:
            parts = urlsplit(url)
            password = parts.password or ""
        except ValueError:
            return
        self.update((parts.netloc.rpartition("@")[0], password, parts.fragment))
        self.add(parts.query, credential=False)
        for name, value in parse_qsl(parts.query, keep_blank_values=True):
            self.add_named(name, value)

    def add_arguments(self, argv: Sequence[str]) -> None:
        """The literal arguments of a command line that carry credentials: the value of an option
        named for one (`--api-key VALUE`, `--token=VALUE`), a token-shaped argument, a URL's
        credentials and query values. Other arguments (paths, subcommands, package names) are not
        secret: masking `run` or a directory a server names in its descriptions would hide the
        wrong text and refuse harmless definitions."""
        for index, arg in enumerate(argv):
            name, equals, value = arg.partition("=")
            if equals and _secret_option(name):
                self.add(value)
            elif _secret_option(arg) and index + 1 < len(argv):
                self.add(argv[index + 1])
            if "://" in arg:
                self.add_url(value if equals and "://" not in name else arg)
            self.update(match.group(0) for match in TOKEN_SHAPES.finditer(arg))

    @property
    def credentials(self) -> frozenset[str]:
        return frozenset(self._credentials)

    def __contains__(self, value: object) -> bool:
        return value in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(_longest_first(self._values))

    def __len__(self) -> int:
        return len(self._values)

    def _compiled(self) -> re.Pattern[str] | None:
        if self._pattern is None and self._values:
            self._pattern = _alternatives(self._values)
        return self._pattern

    def mask(self, text: str, replacement: str = MASK) -> str:
        """`text` with every secret in it replaced."""
        pattern = self._compiled()
        return text if pattern is None else pattern.sub(lambda _found: replacement, text)

    def mask_bytes(self, data: bytes) -> bytes:
        """`data` (a line a server wrote, say) with every secret in it replaced; bytes that are
        not UTF-8 pass unchanged."""
        if self._compiled() is None:
            return data
        return self.mask(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

    def find(self, text: str) -> str | None:
        """The first credential in `text`, or None."""
        if self._found is None and self._credentials:
            self._found = _alternatives(self._credentials)
        found = None if self._found is None else self._found.search(text)
        return None if found is None else found.group(0)

    def locate(self, value: Any, pointer: str = "") -> str | None:
        """The RFC 6901 pointer of the first string (or member name) in the JSON `value` that
        holds a credential, or None."""
        if not self._credentials:
            return None
        stack: list[tuple[Any, str]] = [(value, pointer)]
        while stack:
            item, where = stack.pop()
            if isinstance(item, str):
                if self.find(item) is not None:
                    return where or "/"
            elif isinstance(item, dict):
                for key in item:
                    if isinstance(key, str) and self.find(key) is not None:
                        return f"{where}/{_token(key)}"
                members = [(member, f"{where}/{_token(str(key))}") for key, member in item.items()]
                stack.extend(reversed(members))
            elif isinstance(item, (list, tuple)):
                stack.extend(reversed([(member, f"{where}/{index}") for index, member in enumerate(item)]))
        return None


def _longest_first(values: Iterable[str]) -> list[str]:
    return sorted(values, key=lambda value: (-len(value), value))


def _alternatives(values: Iterable[str]) -> re.Pattern[str]:
    # Longest first: a value is replaced whole before any shorter value inside it.
    return re.compile("|".join(re.escape(value) for value in _longest_first(values)))


def _token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


#: The secrets this process was given to reach a server (filled by the command lines that take them).
KNOWN: Final = Secrets()
_SCOPED: list[Secrets] = []  # those of work under way in this process (`remembering`)


def remember(values: Iterable[str]) -> None:
    """Add `values` to `KNOWN`: from now on no message or log line of this process shows them."""
    KNOWN.update(values)


@contextlib.contextmanager
def remembering(secrets: Secrets) -> Iterator[None]:
    """`secrets` count as known while the block runs (a listing: what it logs is masked), and no
    longer after it: a library call leaves no values behind to mask in unrelated text."""
    _SCOPED.append(secrets)
    try:
        yield
    finally:
        _SCOPED.remove(secrets)


def masked(text: str) -> str:
    """`text` without any secret known to this process."""
    for secrets in (KNOWN, *_SCOPED):
        text = secrets.mask(text)
    return text


def masked_bytes(data: bytes) -> bytes:
    """`data` (a line a server wrote, say) without any secret known to this process."""
    for secrets in (KNOWN, *_SCOPED):
        data = secrets.mask_bytes(data)
    return data


class MaskingFilter(logging.Filter):
    """A handler filter: each record's message as `masked` makes it (arguments merged first)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if len(KNOWN) or _SCOPED:
            message = record.getMessage()
            hidden = masked(message)
            if hidden != message:
                record.msg, record.args = hidden, None
        return True


def mask_log_handlers() -> None:
    """A `MaskingFilter` on each handler of the root logger (a command line's, after `basicConfig`)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(item, MaskingFilter) for item in handler.filters):
            handler.addFilter(MaskingFilter())
