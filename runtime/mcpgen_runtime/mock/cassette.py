"""Cassettes: the YAML file `mcpgen mock --record` writes and `--replay` serves, and its scrubbing.

A cassette is a list of interactions in the order the client sent them, each a JSON-RPC object
as it crossed the wire (secrets scrubbed):

    cassette: 1
    upstream: http://127.0.0.1:8765/mcp          # no userinfo, no query
    interactions:
    - request: {jsonrpc: '2.0', id: 1, method: initialize, params: {...}}
      headers: {mcp-protocol-version: '2025-11-25', authorization: '[scrubbed]'}   # HTTP only
      status: 200                                # HTTP only
      session: true                              # the answer carried a legacy session id
      stream: true                               # the answer was an SSE stream
      messages: [...]                            # what the server sent before the response, in order
      response: {jsonrpc: '2.0', id: 1, result: {...}}
    - notification: {jsonrpc: '2.0', method: notifications/initialized}
    - client_response: {...}                     # the client's answer to a server request
    - server_message: {...}                      # a server message outside any request

`Scrubber` removes secrets before anything is written: the values of `Authorization`,
`Proxy-Authorization`, `Cookie`, `Set-Cookie`, every header whose name says auth, token, secret,
key, password, cookie or credential, and the headers named with `--scrub-header`; those values
again wherever they appear in a body; members of `_meta` whose names say so (`progressToken`
excepted); members named `password`, `token`, `api_key`, `client_secret`... anywhere; and
token-looking strings (`Bearer …`, JWTs, `sk-…`, `ghp_…`, `xox?-…`, `AKIA…`, `AIza…`).
Legacy session ids become `[session]`; task ids (bearer secrets of the recorded principal) become
`task-1`, `task-2`, … (task_ids.py, applied by the recorder), which replay serves as they are.

`request_key` is what replay matches on: the era (modern `_meta` or not), the method and the
params without `_meta` (for `tools/call`: the tool name and its arguments); `initialize` by its
protocol version only, since clients differ in what else they send.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from .._version import __version__
from ..masking import TOKEN_SHAPES, Secrets
from ..protocol.meta import PROTOCOL_VERSION_KEY
from .canonical import canonical_json
from .files import read_bounded

__all__ = [
    "CASSETTE_VERSION",
    "SCRUBBED",
    "SESSION",
    "Cassette",
    "CassetteError",
    "Scrubber",
    "describe_request",
    "display_upstream",
    "dump_cassette",
    "is_request",
    "is_response",
    "load_cassette",
    "request_key",
    "write_cassette",
]

CASSETTE_VERSION: Final = 1
SCRUBBED: Final = "[scrubbed]"
SESSION: Final = "[session]"
MAX_CASSETTE_BYTES: Final = 256 * 1024 * 1024
KINDS: Final = ("request", "notification", "client_response", "server_message")

_SECRET_HEADERS: Final = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "x-auth-token"}
)
_SECRET_WORDS: Final = re.compile(r"auth|token|secret|passw|api[-_]?key|cookie|credential", re.IGNORECASE)
# Body members scrubbed wherever they are (their whole value).
_SECRET_MEMBERS: Final = re.compile(
    r"(?:access_?|refresh_?|id_?|api_?|auth_?|bearer_?|session_?)?(?:token|key|secret|password|passwd)"
    r"|authorization|client_?secret|cookie|credentials?",
    re.IGNORECASE,
)
_KEEP_MEMBERS: Final = frozenset({"progressToken", "progresstoken", "cursor", "nextCursor"})
_SESSION_HEADER: Final = "mcp-session-id"


class CassetteError(ValueError):
    """A cassette that cannot be read: the file and what is wrong."""


class Scrubber:
    """Replaces secrets with `[scrubbed]` in headers and bodies (see the module docstring).

    `secrets` grows with every secret header value seen, so a token the server echoes back in a
    body is scrubbed too; which values count, from how many characters, is `mcpgen_runtime.masking`'s
    policy, the one every message follows."""

    def __init__(self, headers: Iterable[str] = (), values: Iterable[str] = ()) -> None:
        self.headers = frozenset(name.lower() for name in headers)
        self.secrets = Secrets(values)

    def remember(self, value: str) -> None:
        self.secrets.add(value)  # and the credentials of `Bearer TOKEN`

    def is_secret_header(self, name: str) -> bool:
        name = name.lower()
        return name in _SECRET_HEADERS or name in self.headers or bool(_SECRET_WORDS.search(name))

    def header_map(self, headers: Iterable[tuple[str, str]]) -> dict[str, str]:
        """Headers as recorded: lower-case names, secrets scrubbed, the session id a placeholder."""
        out: dict[str, str] = {}
        for name, value in headers:
            name = name.lower()
            if name == _SESSION_HEADER:
                out[name] = SESSION
            elif self.is_secret_header(name):
                self.remember(value)
                out[name] = SCRUBBED
            else:
                out[name] = self.text(value)
        return out

    def text(self, value: str) -> str:
        return TOKEN_SHAPES.sub(SCRUBBED, self.secrets.mask(value, SCRUBBED))

    def value(self, value: Any, *, in_meta: bool = False) -> Any:
        """A JSON value with its secrets scrubbed (a new value; the input is not changed)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item, in_meta=in_meta) for item in value]
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                if key in _KEEP_MEMBERS:
                    out[key] = item
                elif _SECRET_MEMBERS.fullmatch(key) or (in_meta and _SECRET_WORDS.search(key)):
                    out[key] = SCRUBBED
                else:
                    out[key] = self.value(item, in_meta=in_meta or key == "_meta")
            return out
        return value


def display_upstream(target: str) -> str:
    """An upstream as a cassette names it: a URL without userinfo, query or fragment; a command's
    program name only (its arguments may hold secrets)."""
    if "://" in target:
        parts = urlsplit(target)
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))
    program = target.split()[0] if target.split() else ""
    return f"stdio: {os.path.basename(program)}"


def is_request(message: Any) -> bool:
    """A JSON-RPC request: a method and an id."""
    return isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message


def is_response(message: Any) -> bool:
    """A JSON-RPC response: no method, a result or an error."""
    return (
        isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message)
    )


def _params(message: Mapping[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    return dict(params) if isinstance(params, Mapping) else {}


def request_key(message: Mapping[str, Any]) -> tuple[str, str, bytes]:
    """What replay matches a request on: (era, method, canonical params without `_meta`)."""
    params = _params(message)
    meta = params.pop("_meta", None)
    era = "modern" if isinstance(meta, Mapping) and PROTOCOL_VERSION_KEY in meta else "legacy"
    method = message.get("method")
    method = method if isinstance(method, str) else ""
    if method == "initialize":
        params = {"protocolVersion": params.get("protocolVersion")}
    params = {key: value for key, value in params.items() if value is not None}
    return era, method, canonical_json(params)


def describe_request(message: Mapping[str, Any]) -> str:
    """`tools/call 'echo' with arguments {"message":"hi"}`, as a miss is reported."""
    params = _params(message)
    params.pop("_meta", None)
    method = message.get("method")
    if method == "tools/call":
        args = canonical_json(params.get("arguments") or {}).decode()
        return f"tools/call {params.get('name')!r} with arguments {args[:500]}"
    body = canonical_json(params).decode()
    return f"{method} with params {body[:500]}"


class Cassette:
    """A loaded cassette: its interactions and where it came from."""

    def __init__(self, interactions: list[dict[str, Any]], *, path: str = "", upstream: str = "") -> None:
        self.interactions = interactions
        self.path = path
        self.upstream = upstream

    @property
    def exchanges(self) -> list[dict[str, Any]]:
        return [entry for entry in self.interactions if "request" in entry and "response" in entry]


def _check(path: str, data: Any) -> list[dict[str, Any]]:
    if not isinstance(data, Mapping) or data.get("cassette") != CASSETTE_VERSION:
        raise CassetteError(f"{path}: not an mcpgen cassette (expected 'cassette: {CASSETTE_VERSION}')")
    entries = data.get("interactions")
    if not isinstance(entries, list):
        raise CassetteError(f"{path}: 'interactions' must be a list")
    for index, entry in enumerate(entries):
        where = f"{path}: /interactions/{index}"
        if not isinstance(entry, Mapping) or not any(kind in entry for kind in KINDS):
            raise CassetteError(f"{where}: expected one of {', '.join(KINDS)}")
        request = entry.get("request")
        if request is not None:
            if not isinstance(request, Mapping) or not isinstance(request.get("method"), str):
                raise CassetteError(f"{where}/request: a JSON-RPC request with a method")
            response = entry.get("response")
            if response is not None and (
                not isinstance(response, Mapping) or ("result" not in response and "error" not in response)
            ):
                raise CassetteError(f"{where}/response: a JSON-RPC response (result or error)")
            if not isinstance(entry.get("messages", []), list):
                raise CassetteError(f"{where}/messages: a list of JSON-RPC messages")
    return [dict(entry) for entry in entries]


def load_cassette(path: str | Path) -> Cassette:
    """Read and check a cassette (YAML; JSON is YAML too)."""
    import yaml

    path = Path(path)
    raw = read_bounded(path, MAX_CASSETTE_BYTES, CassetteError)
    from ..yaml_data import JsonLoader, load_data

    try:
        data = load_data(raw, JsonLoader, str(path))
    except yaml.YAMLError as exc:
        raise CassetteError(f"{path}: not valid YAML: {exc}") from None
    upstream = data.get("upstream") if isinstance(data, Mapping) else None
    return Cassette(_check(str(path), data), path=str(path), upstream=str(upstream or ""))


def dump_cassette(interactions: list[dict[str, Any]], upstream: str) -> bytes:
    import yaml

    header = (
        f"# Recorded by mcpgen mock --record (mcpgen-runtime {__version__}); secrets are [scrubbed],\n"
        "# task ids are task-1, task-2, ...\n"
        "# Serve it with: mcpgen mock --replay THIS_FILE --http (or --stdio)\n"
    )
    document = {"cassette": CASSETTE_VERSION, "upstream": upstream, "interactions": interactions}
    body = yaml.dump(
        document,
        Dumper=_yaml_dumper(),
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )
    return header.encode() + body.encode()


def write_cassette(path: str | Path, interactions: list[dict[str, Any]], upstream: str) -> None:
    """Write atomically: a reader (or a proxy stopped mid-write) never sees half a file."""
    path = Path(path)
    data = dump_cassette(interactions, upstream)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_bytes(data)
    os.replace(temp, path)


@functools.cache
def _yaml_dumper() -> type[Any]:
    """PyYAML is imported only when a cassette is read or written."""
    import yaml

    class JsonDumper(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True  # no &anchors: every object written out where it is

    def text(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
        style = "|" if "\n" in data else None  # long instructions and descriptions stay readable
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)

    JsonDumper.add_representer(str, text)

    return JsonDumper
