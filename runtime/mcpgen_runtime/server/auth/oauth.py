"""A server as an OAuth 2.1 protected resource (MCP authorization, AUTH-19..23).

    resource = ProtectedResource(
        resource="https://mcp.example.com/mcp",                # this server's canonical URL
        authorization_servers=("https://auth.example.com",),
        verify=JwtVerifier("https://auth.example.com", audience="https://mcp.example.com/mcp"),
        scopes=("mcp:tools",),                                 # needed for every request
        tool_scopes={"delete_file": ("files:write",)},         # needed for some tools on top
    )
    Server(ServerConfig(auth=resource)).run_http()

`ProtectedResource` is a `BearerAuth` (core/bearer_auth.py): the HTTP app verifies the bearer token of every
request and answers a missing or invalid one `401` with `WWW-Authenticate: Bearer
resource_metadata=…, scope=…` (AUTH-20/21). `wrap_app` (applied by `ToolServer.asgi_app` and
`run_http`) adds what the plain app has no place for: the protected resource metadata at
`/.well-known/oauth-protected-resource` and its path-suffixed form (AUTH-19), and `403
insufficient_scope` naming every scope a request needs when the token has too few (AUTH-21).
To find the tool of a call it reads the body within the server's own `max_body_bytes` and
`http_limits`; a body it cannot read whole is answered `413` or `408` and never reaches the app,
so no tool runs before its scopes were checked. Its verification of the token is handed to the
app's authentication in the ASGI scope (auth.py `VERIFIED_TOKEN`): one verification per request.

Verifiers turn a token into a `TokenPrincipal` (subject, scopes, claims), or None: `JwtVerifier`
(jwt.py: signatures against the issuer's JWKS, `typ`, `iss`, `aud` = this resource, `exp`/`nbf`)
and `IntrospectionVerifier` (introspection.py, RFC 7662). `ctx.principal` is the
`TokenPrincipal`; its `str` (`ISSUER#SUB` for a user, `username:ISSUER#NAME` for a user known only
by an introspected `username`, `client:ISSUER#CLIENT_ID` for a client's own token) binds legacy
sessions and requestState, keys rate limits and tells private caches apart. Verified tokens are
remembered (verifier.py `CachedVerifier`: by digest, until they expire, at most `CACHE_SIZE`), so
later requests with the same token cost a dictionary lookup.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ... import _json
from ...protocol.oauth.challenge import bearer_challenge
from ..core.bearer_auth import VERIFIED_TOKEN, BearerAuth
from ..core.limits import HttpLimits
from ..http.asgi_io import ASGIApp, send_error
from ..http.body_reader import BodyTimeout, body_deadline, receive_within
from .introspection import IntrospectionVerifier
from .verifier import CACHE_SIZE, CachedVerifier, TokenPrincipal, scopes_of

if TYPE_CHECKING:
    from ..core.config import ServerConfig

__all__ = [
    "CACHE_SIZE",
    "SCOPES_META",
    "CachedVerifier",
    "IntrospectionVerifier",
    "ProtectedResource",
    "TokenPrincipal",
    "declared_tool_scopes",
    "scopes_of",
]

DEFAULT_MAX_BODY = 4 * 1024 * 1024  # ServerConfig.max_body_bytes's default
PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
# A tool definition declares the scopes its calls need here (the spec file, hence tools.json):
#   {"name": "delete_file", ..., "_meta": {"dev.mcpgen/scopes": ["files:write"]}}
SCOPES_META = "dev.mcpgen/scopes"


def declared_tool_scopes(definitions: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, ...]]:
    """The scopes each tool's definition declares under `_meta["dev.mcpgen/scopes"]`."""
    found: dict[str, tuple[str, ...]] = {}
    for definition in definitions:
        meta = definition.get("_meta")
        scopes = meta.get(SCOPES_META) if isinstance(meta, Mapping) else None
        name = definition.get("name")
        if (
            isinstance(name, str)
            and isinstance(scopes, list)
            and all(isinstance(s, str) for s in scopes)
            and scopes
        ):
            found[name] = tuple(scopes)
    return found


def metadata_url(resource: str) -> str:
    """The path-suffixed well-known URL of `resource`'s metadata (RFC 9728 §3.1)."""
    parts = urlsplit(resource)
    return f"{parts.scheme}://{parts.netloc}{PRM_WELL_KNOWN}{parts.path.rstrip('/')}"


@dataclass(frozen=True)
class ProtectedResource(BearerAuth):
    """This server's identity as a protected resource, and how it checks tokens (module doc)."""

    resource: str = ""
    authorization_servers: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()  # every request needs these
    tool_scopes: Mapping[str, tuple[str, ...]] = field(
        default_factory=dict
    )  # tools/call NAME needs these too
    scopes_supported: tuple[str, ...] | None = None  # default: every scope above
    resource_name: str | None = None

    def __post_init__(self) -> None:
        parts = urlsplit(self.resource)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.fragment:
            raise ValueError("resource must be this server's absolute URL without a fragment")
        if not self.authorization_servers:
            raise ValueError("a protected resource names at least one authorization server (AUTH-19)")
        if self.resource_metadata is None:
            object.__setattr__(self, "resource_metadata", metadata_url(self.resource))

    def challenge(
        self, error: str | None = None, description: str | None = None, scopes: Iterable[str] | None = None
    ) -> str:
        """AUTH-21: the scopes a request needs go with every challenge."""
        return bearer_challenge(
            resource_metadata=self.resource_metadata,
            error=error,
            description=description,
            scopes=self.scopes if scopes is None else scopes,
        )

    def metadata_document(self) -> dict[str, Any]:
        supported = self.scopes_supported
        if supported is None:
            supported = tuple(
                dict.fromkeys([*self.scopes, *(s for group in self.tool_scopes.values() for s in group)])
            )
        document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        supported = tuple(scope for scope in supported if scope != "offline_access")  # AUTH-22
        if supported:
            document["scopes_supported"] = list(supported)
        if self.resource_name is not None:
            document["resource_name"] = self.resource_name
        return document

    def wrap_app(self, app: ASGIApp, config: ServerConfig | None = None) -> ASGIApp:
        """`app` behind the metadata and the scope check, with `config`'s body limit and deadlines
        (default: those of `app`'s server)."""
        return ProtectedResourceApp(app, self, config=config)


class ProtectedResourceApp:
    """Serves the metadata and answers `403 insufficient_scope`; everything else goes to `app`."""

    def __init__(
        self,
        app: ASGIApp,
        resource: ProtectedResource,
        *,
        config: ServerConfig | None = None,
        max_body_bytes: int | None = None,
        limits: HttpLimits | None = None,
    ) -> None:
        if config is None:  # an McpAsgiApp knows its server's config
            config = getattr(getattr(app, "server", None), "config", None)
        self.app = app
        # The app's own body limit and deadlines: a body the app would take is read here whole.
        self._max_body = max_body_bytes or (config.max_body_bytes if config is not None else DEFAULT_MAX_BODY)
        self._limits = limits or (config.http_limits if config is not None else HttpLimits())
        self.resource = resource
        document = _json.dumps(resource.metadata_document())
        self._metadata = document
        suffixed = urlsplit(resource.resource_metadata or "").path
        self._paths = {PRM_WELL_KNOWN, suffixed}
        self._verify = resource.verify

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        if method in ("GET", "HEAD") and scope["path"] in self._paths:
            await _respond(
                send,
                200,
                self._metadata if method == "GET" else b"",
                [
                    (b"content-type", b"application/json"),
                    (b"cache-control", b"max-age=300"),
                    (b"access-control-allow-origin", b"*"),
                ],
            )
            return
        if method == "POST" and (token := _bearer(scope)) is not None:
            principal = self._verify(token)
            if inspect.isawaitable(principal):
                principal = await principal
            # One verification per request: the app's authentication takes this result (auth.py).
            scope = {**scope, VERIFIED_TOKEN: (token, principal)}
            if isinstance(principal, TokenPrincipal):
                try:
                    refusal, receive = await self._scope_check(scope, principal, receive)
                except BodyTimeout as exc:  # the body deadlines, as the app itself applies them
                    await send_error(send, 408, f"{exc}; closing the connection", close=True)
                    return
                except _TooLarge:  # the app's own limit and answer: the body is never parsed here
                    await send_error(send, 413, f"Request body exceeds {self._max_body} bytes", close=True)
                    return
                except _Gone:
                    return
                if refusal is not None:
                    challenge = refusal.encode("latin-1", "replace")
                    await _respond(send, 403, b"", [(b"www-authenticate", challenge)])
                    return
        await self.app(scope, receive, send)

    async def _scope_check(
        self, scope: Any, principal: TokenPrincipal, receive: Any
    ) -> tuple[str | None, Any]:
        """A challenge when the token is valid but lacks scopes (AUTH-21), else None; and the
        `receive` to go on with. A body this check must read and cannot (over the server's body
        limit, `_TooLarge`; not in time, `BodyTimeout`; the client left, `_Gone`) never reaches
        the app: a tool runs only after its scopes were checked (SEC-02)."""
        resource = self.resource
        if principal.missing(resource.scopes):
            return self._refusal(resource.scopes), receive
        if not resource.tool_scopes or not any(
            principal.missing(group) for group in resource.tool_scopes.values()
        ):
            return None, receive
        if _declared_length(scope) > self._max_body:
            raise _TooLarge
        body = await _read_body(receive, self._max_body, self._limits)
        replay = _replaying(body, receive)
        try:
            message = _json.loads(body)
        except _json.JSONDecodeError:
            return None, replay  # the app answers 400
        if isinstance(message, dict) and message.get("method") == "tools/call":
            params = message.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            needed = resource.tool_scopes.get(name) if isinstance(name, str) else None
            if needed and principal.missing(needed):
                return self._refusal((*resource.scopes, *needed)), replay
        return None, replay

    def _refusal(self, needed: Iterable[str]) -> str:
        return self.resource.challenge(
            "insufficient_scope",
            "the access token lacks a scope this request needs",
            scopes=dict.fromkeys(needed),
        )


class _TooLarge(Exception):
    """The body is over the server's body limit."""


class _Gone(Exception):
    """The client went away before its body arrived."""


def _bearer(scope: Any) -> str | None:
    for name, value in scope["headers"]:
        if name.lower() == b"authorization":
            scheme, _, token = value.decode("latin-1").strip().partition(" ")
            token = token.strip()
            return token if scheme.lower() == "bearer" and token and " " not in token else None
    return None


def _declared_length(scope: Any) -> int:
    for name, value in scope["headers"]:
        if name.lower() == b"content-length" and value.isdigit():
            return int(value)
    return 0


async def _read_body(receive: Any, limit: int, limits: HttpLimits) -> bytes:
    """The whole request body, when it fits in `limit` and arrives within `limits`; otherwise
    `_TooLarge`, `BodyTimeout`, or `_Gone` (a disconnect)."""
    chunks: list[bytes] = []
    size = 0
    deadline = body_deadline(limits)
    while True:
        message = await receive_within(receive(), limits, deadline)
        if message["type"] != "http.request":
            raise _Gone
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replaying(body: bytes, receive: Any) -> Any:
    sent = False

    async def replay() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _respond(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
