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

DPoP (RFC 9449, SEP-1932; `dpop`): "off" (the default) takes bearer tokens only; "allowed" takes
bearer tokens and DPoP-bound tokens presented as `Authorization: DPoP <token>` with a proof;
"required" takes DPoP-bound tokens only. The proof is checked by dpop.py (method, public URL, the
token's `cnf.jkt`, freshness within `dpop_max_age`, `jti` replay in the server's store, and with
`dpop_nonce` a nonce this server signed, handed out in `DPoP-Nonce` on every DPoP answer). Whatever
the setting, a DPoP-bound token presented as a bearer token is refused (RFC 9449 §7.2): a stolen
bound token is worth nothing without its key. 401s carry a `DPoP` challenge (with `algs`) when DPoP
is on, next to the `Bearer` one unless DPoP is required; the metadata document advertises
`dpop_signing_alg_values_supported` and, when required, `dpop_bound_access_tokens_required`.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args
from urllib.parse import urlsplit

from ... import _json
from ...protocol.oauth.challenge import bearer_challenge
from ..core.bearer_auth import VERIFIED_TOKEN, BearerAuth, Unauthorized
from ..core.limits import HttpLimits
from ..core.request_state import configured_keys
from ..http.asgi_io import JSON_HEADERS, RETRY_AFTER, ASGIApp, send_body, send_error
from ..http.body_reader import BodyTimeout, body_deadline, receive_within
from ..store import MemoryStore, Store, StoreUnavailable
from .introspection import IntrospectionVerifier
from .verifier import CACHE_SIZE, CachedVerifier, TokenPrincipal, scopes_of

if TYPE_CHECKING:
    from ..core.config import ServerConfig

__all__ = [
    "CACHE_SIZE",
    "SCOPES_META",
    "CachedVerifier",
    "DPoPMode",
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
# Which tokens the resource takes: bearer only, bearer or DPoP-bound, DPoP-bound only (module doc).
DPoPMode = Literal["off", "allowed", "required"]


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
    dpop: DPoPMode = "off"  # module doc
    dpop_max_age: float = 300.0  # seconds either side of a proof's iat; its jti is remembered as long
    dpop_nonce: bool = False  # proofs carry a nonce this server issued within dpop_max_age (RFC 9449 §9)

    def __post_init__(self) -> None:
        parts = urlsplit(self.resource)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.fragment:
            raise ValueError("resource must be this server's absolute URL without a fragment")
        if not self.authorization_servers:
            raise ValueError("a protected resource names at least one authorization server (AUTH-19)")
        if self.dpop not in get_args(DPoPMode):
            raise ValueError(f"dpop is one of {', '.join(get_args(DPoPMode))}, not {self.dpop!r}")
        if self.dpop_nonce and self.dpop == "off":
            raise ValueError("dpop_nonce asks DPoP proofs for a nonce: it needs dpop allowed or required")
        if self.dpop != "off":
            from .dpop import MAX_PROOF_AGE  # the auth extra (joserfc): missing, the server does not start

            if not 0 < self.dpop_max_age <= MAX_PROOF_AGE:
                raise ValueError(f"dpop_max_age is more than 0 and at most {MAX_PROOF_AGE:g} seconds")
        if self.resource_metadata is None:
            object.__setattr__(self, "resource_metadata", metadata_url(self.resource))

    def challenge(
        self, error: str | None = None, description: str | None = None, scopes: Iterable[str] | None = None
    ) -> str:
        """The challenge of a request without credentials or with a bearer token (`error` on its
        Bearer challenge, or on the DPoP one when only DPoP is taken). AUTH-21: the scopes a
        request needs go with every challenge."""
        needed = tuple(self.scopes if scopes is None else scopes)
        if self.dpop == "required":
            return self._dpop_alone(error, description, needed)
        bearer = bearer_challenge(
            resource_metadata=self.resource_metadata, error=error, description=description, scopes=needed
        )
        return bearer if self.dpop == "off" else f"{bearer}, {self._dpop_alone(None, None, needed)}"

    def dpop_challenge(
        self, error: str | None = None, description: str | None = None, scopes: Iterable[str] | None = None
    ) -> str:
        """The challenge of a request made with the DPoP scheme (RFC 9449 §7.1): `error` on the
        DPoP challenge, after a plain Bearer challenge when bearer tokens are taken too."""
        needed = tuple(self.scopes if scopes is None else scopes)
        challenge = self._dpop_alone(error, description, needed)
        if self.dpop == "required":
            return challenge
        return f"{bearer_challenge(resource_metadata=self.resource_metadata, scopes=needed)}, {challenge}"

    def _dpop_alone(self, error: str | None, description: str | None, scopes: tuple[str, ...]) -> str:
        from .dpop import dpop_challenge  # the auth extra: present whenever DPoP is on

        return dpop_challenge(
            resource_metadata=self.resource_metadata, scopes=scopes, error=error, description=description
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
        if self.dpop != "off":  # RFC 9449 §5.1
            from .dpop import SIGNING_ALGORITHMS

            document["dpop_signing_alg_values_supported"] = list(SIGNING_ALGORITHMS)
            if self.dpop == "required":
                document["dpop_bound_access_tokens_required"] = True
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
        store: Store | None = None,
    ) -> None:
        server = getattr(app, "server", None)
        if config is None:  # an McpAsgiApp knows its server's config
            config = getattr(server, "config", None)
        # DPoP proofs used are remembered where the server keeps its shared state: replicas agree.
        self._store = store or getattr(server, "shared_store", None) or MemoryStore()
        self._nonces = None
        if resource.dpop_nonce:  # under the replicas' shared state secret, so any replica takes any's nonce
            from .dpop import NonceIssuer

            secrets = configured_keys(config.state_secrets if config is not None else None)
            self._nonces = NonceIssuer(secrets, resource.dpop_max_age)
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
        if (credentials := _credentials(scope)) is not None:
            scheme, token = credentials
            if scheme == "dpop" and self._nonces is not None:
                send = _with_nonce(send, self._nonces.issue())
            try:
                principal = await self._verdict(scope, scheme, token)
            except StoreUnavailable as exc:  # the replay check could not be made: retry later
                body = _json.dumps({"error": "temporarily_unavailable", "error_description": str(exc)})
                await send_body(send, 503, body, [*JSON_HEADERS, RETRY_AFTER])
                return
            # One verification per request: the app's authentication takes this verdict (auth.py),
            # and answers a refusal 401 where it answers any other (after the path and body checks).
            if principal is not _NOT_MINE:
                scope = {**scope, VERIFIED_TOKEN: (token, principal)}
            if method == "POST" and isinstance(principal, TokenPrincipal):
                try:
                    refusal, receive = await self._scope_check(scope, principal, receive, scheme)
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

    async def _verdict(self, scope: Any, scheme: str, token: str) -> Any:
        """What the request's credentials are worth: the principal, None (an invalid token), an
        `Unauthorized` (a refusal with its challenge), or `_NOT_MINE` (a scheme this resource does
        not take: the app refuses it)."""
        resource = self.resource
        if scheme == "bearer":
            if resource.dpop == "required":
                return Unauthorized(
                    resource.challenge("invalid_token", "this server takes DPoP-bound tokens only")
                )
            principal = await self._principal(token)
            if isinstance(principal, TokenPrincipal) and principal.dpop_jkt is not None:  # RFC 9449 §7.2
                return Unauthorized(
                    resource.challenge(
                        "invalid_token", "a DPoP-bound token goes with the DPoP scheme and a proof"
                    )
                )
            return principal
        if scheme != "dpop" or resource.dpop == "off":
            return _NOT_MINE
        from .dpop import DPoPRefusal, check_bound_request  # the auth extra: present whenever DPoP is on

        principal = await self._principal(token)
        if principal is None:
            return Unauthorized(
                resource.dpop_challenge("invalid_token", "the access token is invalid or expired")
            )
        jkt = principal.dpop_jkt if isinstance(principal, TokenPrincipal) else None
        try:
            await check_bound_request(
                scope,
                token,
                jkt,
                resource=resource.resource,
                store=self._store,
                max_age=resource.dpop_max_age,
                nonces=self._nonces,
            )
        except DPoPRefusal as exc:
            return Unauthorized(resource.dpop_challenge(exc.error, exc.description))
        return principal

    async def _principal(self, token: str) -> Any:
        principal = self._verify(token)
        if inspect.isawaitable(principal):
            principal = await principal
        return principal

    async def _scope_check(
        self, scope: Any, principal: TokenPrincipal, receive: Any, scheme: str
    ) -> tuple[str | None, Any]:
        """A challenge when the token is valid but lacks scopes (AUTH-21), else None; and the
        `receive` to go on with. A body this check must read and cannot (over the server's body
        limit, `_TooLarge`; not in time, `BodyTimeout`; the client left, `_Gone`) never reaches
        the app: a tool runs only after its scopes were checked (SEC-02)."""
        resource = self.resource
        if principal.missing(resource.scopes):
            return self._refusal(resource.scopes, scheme), receive
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
                return self._refusal((*resource.scopes, *needed), scheme), replay
        return None, replay

    def _refusal(self, needed: Iterable[str], scheme: str) -> str:
        """403's challenge, its error on the scheme the request used."""
        challenge = self.resource.dpop_challenge if scheme == "dpop" else self.resource.challenge
        return challenge(
            "insufficient_scope",
            "the access token lacks a scope this request needs",
            scopes=dict.fromkeys(needed),
        )


class _TooLarge(Exception):
    """The body is over the server's body limit."""


class _Gone(Exception):
    """The client went away before its body arrived."""


# A verdict on credentials of a scheme the resource does not take: the app's authentication refuses them.
_NOT_MINE: Any = object()


def _credentials(scope: Any) -> tuple[str, str] | None:
    """(scheme in lower case, token) of the request's Authorization header, when it reads as one."""
    for name, value in scope["headers"]:
        if name.lower() == b"authorization":
            scheme, _, token = value.decode("latin-1").strip().partition(" ")
            token = token.strip()
            return (scheme.lower(), token) if token and " " not in token else None
    return None


def _with_nonce(send: Any, nonce: str) -> Any:
    """`send`, with a fresh `DPoP-Nonce` on the answer (RFC 9449 §9)."""

    async def sending(message: Any) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), (b"dpop-nonce", nonce.encode())]}
        await send(message)

    return sending


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
