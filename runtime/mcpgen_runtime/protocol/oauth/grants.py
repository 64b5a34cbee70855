"""The OAuth requests a client sends and the answers it reads, without I/O, on Authlib's
primitives (PKCE, grant URIs, token request bodies, client authentication, JWT assertions).

- `ClientIdentity`: who the client is at one authorization server (AUTH-04/05/18), and the
  dynamic registration request and answer (RFC 7591, AUTH-06, AUTH-14).
- `AuthorizationRequest`: the authorization URL with PKCE S256, `state`, `resource` and scopes
  (AUTH-09/10/17), and `read_callback`, which checks `state` and `iss` (AUTH-11) before it
  hands out the code.
- `token_request`: an authorization-code, refresh or client-credentials request with the
  client's authentication (`client_secret_basic`, `client_secret_post`, `none`,
  `private_key_jwt`); `TokenSet` the answer. A `TokenSet`'s repr never shows a token.

Authlib is the `mcpgen-runtime[auth]` extra: importing this module without it raises an ImportError
that says so.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Literal
from urllib.parse import parse_qs, quote, urlencode, urlsplit

try:
    from authlib.common.security import generate_token
    from authlib.oauth2.auth import ClientAuth
    from authlib.oauth2.rfc6749.parameters import prepare_grant_uri, prepare_token_request
    from authlib.oauth2.rfc7523.assertion import sign_jwt_bearer_assertion
    from authlib.oauth2.rfc7636 import create_s256_code_challenge
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("OAuth login needs the auth extra: pip install 'mcpgen-runtime[auth]'") from exc

from ...errors import AuthorizationError
from .discovery import ServerMetadata, check_url

__all__ = [
    "ASSERTION_TYPE",
    "ID_JAG_TYPE",
    "ID_TOKEN_TYPE",
    "JWT_BEARER",
    "TOKEN_EXCHANGE",
    "AuthorizationRequest",
    "ClientIdentity",
    "TokenSet",
    "read_callback",
    "registration_request",
    "token_request",
]

ASSERTION_TYPE: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
JWT_BEARER: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"  # RFC 7523 §2.1
TOKEN_EXCHANGE: Final = "urn:ietf:params:oauth:grant-type:token-exchange"  # RFC 8693 §2.1
ID_TOKEN_TYPE: Final = "urn:ietf:params:oauth:token-type:id_token"  # RFC 8693 §3
ID_JAG_TYPE: Final = "urn:ietf:params:oauth:token-type:id-jag"  # SEP-990's identity assertion grant
MAX_TOKEN_CHARS: Final = 16 * 1024
MAX_TEXT: Final = 300  # characters of a server's error text repeated in our errors
AuthMethod = Literal["client_secret_basic", "client_secret_post", "none", "private_key_jwt"]
_AUTH_METHODS: Final = ("client_secret_basic", "client_secret_post", "none", "private_key_jwt")


def _text(value: Any) -> str:
    """A server-supplied string, bounded and printable, for an error message."""
    text = value if isinstance(value, str) else repr(value)
    return "".join(ch if ch.isprintable() else "?" for ch in text[:MAX_TEXT])


@dataclass(frozen=True)
class ClientIdentity:
    """The client at one authorization server: how it was obtained and how it authenticates.

    `issuer` binds it to the server that issued it (AUTH-04): it is never presented to another.
    A Client ID Metadata Document URL (`source="cimd"`) is portable and has issuer None."""

    client_id: str
    source: Literal["pre-registered", "cimd", "dynamic"]
    issuer: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    auth_method: AuthMethod | None = None
    redirect_uri: str | None = None
    private_key: str | None = field(default=None, repr=False)  # PEM, for private_key_jwt
    signing_alg: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClientIdentity | None:
        try:
            return cls(**{key: data[key] for key in cls.__dataclass_fields__ if key in data})
        except TypeError:
            return None

    def method_for(self, metadata: ServerMetadata) -> AuthMethod:
        """The token endpoint authentication to use: what registration settled, else the first
        the server supports that this identity can do (secrets: basic, then post; else none)."""
        if self.auth_method is not None:
            return self.auth_method
        supported = metadata.listed("token_endpoint_auth_methods_supported") or ("client_secret_basic",)
        if self.private_key is not None and "private_key_jwt" in supported:
            return "private_key_jwt"
        if self.client_secret is not None:
            for method in ("client_secret_basic", "client_secret_post"):
                if method in supported:
                    return method
        return "none" if "none" in supported or self.client_secret is None else "client_secret_basic"


def registration_request(
    client_name: str, redirect_uri: str | None, *, client_credentials: bool = False, auth_method: str = "none"
) -> dict[str, Any]:
    """The RFC 7591 registration body: a native public client that may refresh (AUTH-06/14).
    No `scope`: servers refuse scopes they do not know there, and resource scopes are asked
    for in the authorization request."""
    body: dict[str, Any] = {
        "client_name": client_name,
        "grant_types": ["client_credentials"]
        if client_credentials
        else ["authorization_code", "refresh_token"],
        "response_types": [] if client_credentials else ["code"],
        "token_endpoint_auth_method": auth_method,
        "application_type": "native",
    }
    if redirect_uri is not None:
        body["redirect_uris"] = [redirect_uri]
    return body


def parse_registration(
    document: Any, issuer: str, redirect_uri: str | None, requested_method: str | None = None
) -> ClientIdentity:
    """The registered client (RFC 7591 §3.2.1); its token endpoint authentication is what the
    server answered, else what was asked for."""
    if (
        not isinstance(document, dict)
        or not isinstance(document.get("client_id"), str)
        or not document["client_id"]
    ):
        raise AuthorizationError(f"the dynamic registration at {issuer} answered without a client_id")
    secret = document.get("client_secret")
    method = document.get("token_endpoint_auth_method", requested_method)
    return ClientIdentity(
        client_id=document["client_id"][:MAX_TEXT],
        source="dynamic",
        issuer=issuer,
        client_secret=secret if isinstance(secret, str) and secret else None,
        auth_method=method if method in _AUTH_METHODS else None,
        redirect_uri=redirect_uri,
    )


@dataclass(frozen=True)
class AuthorizationRequest:
    """One authorization request and what its response is checked against: the PKCE verifier,
    `state` and the issuer recorded before the user agent leaves (AUTH-11)."""

    url: str
    state: str
    code_verifier: str = field(repr=False)
    issuer: str
    iss_required: bool
    redirect_uri: str

    @classmethod
    def create(
        cls,
        metadata: ServerMetadata,
        client: ClientIdentity,
        *,
        redirect_uri: str,
        resource: str,
        scopes: Sequence[str],
    ) -> AuthorizationRequest:
        metadata.require_pkce()  # AUTH-09
        endpoint = metadata.endpoint("authorization_endpoint")
        if endpoint is None:
            raise AuthorizationError(f"authorization server {metadata.issuer} has no authorization_endpoint")
        verifier = generate_token(64)
        state = generate_token(32)
        url = prepare_grant_uri(
            endpoint,
            client.client_id,
            "code",
            redirect_uri=redirect_uri,
            scope=" ".join(scopes) or None,
            state=state,
            code_challenge=create_s256_code_challenge(verifier),
            code_challenge_method="S256",
            resource=resource,
        )  # AUTH-10
        return cls(str(url), state, verifier, metadata.issuer, metadata.iss_supported, redirect_uri)


def read_callback(request: AuthorizationRequest, callback_url: str) -> str:
    """The authorization code of the response at `callback_url`, once its `state` (AUTH-17) and
    `iss` (AUTH-11, RFC 9207 §2.4) check out; AuthorizationError otherwise."""
    parts = urlsplit(callback_url)
    query = parse_qs(parts.query, keep_blank_values=True)
    if not query and parts.fragment:
        query = parse_qs(parts.fragment, keep_blank_values=True)

    def one(name: str) -> str | None:
        values = query.get(name)
        return values[0] if values else None

    if one("state") != request.state:
        raise AuthorizationError("the authorization response's state does not match the request; discarded")
    iss = one("iss")
    if iss is not None and iss != request.issuer:  # simple string comparison: no normalisation
        raise AuthorizationError(
            f"the authorization response came from issuer {_text(iss)!r}, not {request.issuer!r}; "
            "discarded (possible mix-up attack)"
        )
    if iss is None and request.iss_required:
        raise AuthorizationError(
            f"authorization server {request.issuer} advertises the iss response parameter but sent none; "
            "discarded (RFC 9207)"
        )
    error = one("error")
    if error is not None:
        description = one("error_description")
        raise AuthorizationError(
            f"the authorization server refused: {_text(error)}"
            + (f" ({_text(description)})" if description else "")
        )
    code = one("code")
    if not code:
        raise AuthorizationError("the authorization response has no code")
    return code


def _basic(client_id: str, secret: str) -> str:
    # RFC 6749 §2.3.1: both parts form-urlencoded before base64
    raw = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
    return "Basic " + base64.b64encode(raw).decode()


def token_request(
    metadata: ServerMetadata, client: ClientIdentity | None, grant_type: str, **params: Any
) -> tuple[str, dict[str, str], str]:
    """(token endpoint, headers, form body) for one token request, the client authenticated
    the way `client.method_for(metadata)` says (`client` None: a JWT-bearer grant whose
    assertion alone says who asks, RFC 7523 §3.1)."""
    endpoint = metadata.endpoint("token_endpoint")
    if endpoint is None:
        raise AuthorizationError(f"authorization server {metadata.issuer} has no token_endpoint")
    check_url(endpoint, f"token_endpoint of {metadata.issuer}")
    body = str(prepare_token_request(grant_type, **{k: v for k, v in params.items() if v}))
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    if client is None:
        return endpoint, headers, body
    method = client.method_for(metadata)
    if method == "private_key_jwt":
        if client.private_key is None:
            raise AuthorizationError("private_key_jwt needs the client's private key")
        # RFC 7523 §3 as MCP's client-credentials extension uses it: aud is the issuer
        assertion = sign_jwt_bearer_assertion(
            client.private_key,
            issuer=client.client_id,
            audience=metadata.issuer,
            subject=client.client_id,
            alg=client.signing_alg or "ES256",
            expires_in=300,
        )
        assertion = assertion.decode() if isinstance(assertion, bytes) else str(assertion)
        body = _add(
            body, client_id=client.client_id, client_assertion_type=ASSERTION_TYPE, client_assertion=assertion
        )
    elif method == "client_secret_basic" and client.client_secret is not None:
        headers["Authorization"] = _basic(client.client_id, client.client_secret)
    else:
        auth = ClientAuth(
            client.client_id,
            client.client_secret,
            "client_secret_post" if method == "client_secret_post" else "none",
        )
        _, _, body = auth.prepare("POST", endpoint, {}, body)
    return endpoint, headers, body


def _add(body: str, **params: str) -> str:
    return body + ("&" if body else "") + urlencode(params)


@dataclass(frozen=True)
class TokenSet:
    """Tokens for one resource from one authorization server (AUTH-04/13)."""

    access_token: str = field(repr=False)
    resource: str
    issuer: str
    client_id: str
    scopes: tuple[str, ...] = ()
    expires_at: float | None = None
    refresh_token: str | None = field(default=None, repr=False)
    token_type: str = "Bearer"  # "DPoP": bound to the login's DPoP key (RFC 9449 §5)

    def expired(self, now: float | None = None) -> bool:
        return self.expires_at is not None and (now if now is not None else time.time()) >= self.expires_at

    @classmethod
    def from_response(
        cls,
        document: Any,
        *,
        resource: str,
        issuer: str,
        client_id: str,
        requested: Sequence[str],
        previous: TokenSet | None = None,
        dpop: bool = False,
    ) -> TokenSet:
        """The token endpoint's answer; `dpop`: the request carried a DPoP proof, so a `DPoP`
        token type is taken too (a `Bearer` answer means the server did not bind it)."""
        if not isinstance(document, dict):
            raise AuthorizationError(
                f"the token endpoint of {issuer} answered with something other than a JSON object"
            )
        token = document.get("access_token")
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_CHARS or not token.isascii():
            raise AuthorizationError(f"the token endpoint of {issuer} answered without a usable access_token")
        token_type = document.get("token_type")
        accepted = ("bearer", "dpop") if dpop else ("bearer",)
        if not isinstance(token_type, str) or token_type.lower() not in accepted:
            raise AuthorizationError(
                f"the token endpoint of {issuer} issued a {_text(token_type)} token, not "
                + " or ".join(kind.capitalize() if kind == "bearer" else "DPoP" for kind in accepted)
            )
        expires_in = document.get("expires_in")
        expires_at = None
        if isinstance(expires_in, int | float) and expires_in > 0:
            # renewed a little early (a tenth of its life, at most 30 s): in flight it must still be valid
            expires_at = time.time() + expires_in - min(30.0, expires_in / 10)
        scope = document.get("scope")
        refresh = document.get("refresh_token")
        if not isinstance(refresh, str) or not refresh or len(refresh) > MAX_TOKEN_CHARS:
            refresh = (
                previous.refresh_token if previous is not None else None
            )  # RFC 6749 §6: kept unless rotated
        return cls(
            token,
            resource,
            issuer,
            client_id,
            tuple(scope.split()) if isinstance(scope, str) else tuple(requested),
            expires_at,
            refresh,
            "DPoP" if token_type.lower() == "dpop" else "Bearer",
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["scopes"] = list(self.scopes)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TokenSet | None:
        try:
            values = {key: data[key] for key in cls.__dataclass_fields__ if key in data}
            values["scopes"] = tuple(values.get("scopes", ()))
            token = cls(**values)
        except (TypeError, KeyError):
            return None
        return token if isinstance(token.access_token, str) and token.access_token else None


def token_error(status: int, document: Any, issuer: str) -> AuthorizationError:
    """What a failed token request says, without repeating anything secret."""
    if isinstance(document, dict) and isinstance(document.get("error"), str):
        description = document.get("error_description")
        return AuthorizationError(
            f"the token endpoint of {issuer} refused (HTTP {status}): {_text(document['error'])}"
            + (f" ({_text(description)})" if isinstance(description, str) else "")
        )
    return AuthorizationError(f"the token endpoint of {issuer} answered HTTP {status}")
