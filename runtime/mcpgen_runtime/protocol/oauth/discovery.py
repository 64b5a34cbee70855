"""Where authorization metadata lives and what a document must say before it is used.

- Protected resource metadata (RFC 9728): `prm_urls` (AUTH-01), `ResourceMetadata.parse`
  (the `resource` must name the server the client talks to; `authorization_servers` listed).
- Authorization server metadata (RFC 8414 / OpenID Connect Discovery): `as_metadata_urls`
  (AUTH-02), `ServerMetadata.parse` (the `issuer` must be the one asked for: AUTH-03; PKCE
  S256: AUTH-09; HTTPS endpoints: AUTH-15), and the 2025-03-26 fallbacks (`fallback_metadata`).

Every URL and string stays exactly as the document wrote it: the `resource` and `issuer`
values are compared and sent byte for byte (no trailing-slash or case normalisation, AUTH-11).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ...errors import AuthorizationError

__all__ = [
    "ResourceMetadata",
    "ServerMetadata",
    "as_metadata_urls",
    "check_url",
    "fallback_metadata",
    "is_loopback",
    "origin_of",
    "prm_urls",
    "resource_url",
    "same_origin",
]

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"
MAX_LIST = 100  # entries read from a metadata list (authorization servers, scopes, methods)


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_url(url: Any, what: str) -> str:
    """`url` if it is an absolute https URL (http only on loopback: AUTH-15) without userinfo or
    fragment; AuthorizationError otherwise."""
    if not isinstance(url, str) or not url or len(url) > 2048:
        raise AuthorizationError(f"{what} is missing or not a URL")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError as exc:
        raise AuthorizationError(f"{what} is not a valid URL: {url[:200]!r}") from exc
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise AuthorizationError(f"{what} must be an absolute https URL, not {url[:200]!r}")
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise AuthorizationError(f"{what} must use https (http only on loopback): {url[:200]!r}")
    if parts.username is not None or parts.password is not None or parts.fragment:
        raise AuthorizationError(f"{what} must not carry credentials or a fragment: {url[:200]!r}")
    return url


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _origin_key(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    default = {"https": 443, "http": 80}.get(parts.scheme.lower())
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port or default


def same_origin(a: str, b: str) -> bool:
    return _origin_key(a) == _origin_key(b)


def resource_url(url: str) -> str:
    """The canonical URI of an MCP server from its endpoint URL when no metadata names one:
    the URL without query or fragment (RFC 8707 §2)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def prm_urls(server_url: str, from_header: str | None) -> list[str]:
    """Where to look for the protected resource metadata, in order (AUTH-01): the challenge's
    `resource_metadata`, then the well-known URL suffixed with the endpoint's path, then the
    root one."""
    parts = urlsplit(server_url)
    base = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    urls = [check_url(from_header, "resource_metadata in WWW-Authenticate")] if from_header else []
    if path:
        urls.append(base + PRM_WELL_KNOWN + path)
    urls.append(base + PRM_WELL_KNOWN)
    return list(dict.fromkeys(urls))


def as_metadata_urls(issuer: str) -> list[str]:
    """Where to look for authorization server metadata, in order (AUTH-02)."""
    parts = urlsplit(issuer)
    base = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [base + OAUTH_WELL_KNOWN, base + OIDC_WELL_KNOWN]
    return [base + OAUTH_WELL_KNOWN + path, base + OIDC_WELL_KNOWN + path, base + path + OIDC_WELL_KNOWN]


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise AuthorizationError(f"{what} must be a list of strings")
    return tuple(value[:MAX_LIST])


def _covers(resource: str, server_url: str) -> bool:
    """Whether `resource` names the server at `server_url`: same origin, and its path is the
    endpoint's path or a parent of it on a segment boundary."""
    if not same_origin(resource, server_url):
        return False
    mine = urlsplit(resource).path.rstrip("/")
    theirs = urlsplit(server_url).path.rstrip("/")
    return mine == "" or theirs == mine or theirs.startswith(mine + "/")


@dataclass(frozen=True)
class ResourceMetadata:
    """A protected resource metadata document that names the server the client uses."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None
    document: Mapping[str, Any]

    @classmethod
    def parse(cls, document: Any, server_url: str) -> ResourceMetadata:
        if not isinstance(document, dict):
            raise AuthorizationError("the protected resource metadata is not a JSON object")
        resource = document.get("resource")
        if not isinstance(resource, str) or not resource:
            raise AuthorizationError("the protected resource metadata has no `resource`")
        check_url(resource, "the protected resource metadata's `resource`")
        if not _covers(resource, server_url):
            # RFC 9728 §3.3 / AUTH-13: a token for that resource must never be used here, nor this one there
            raise AuthorizationError(
                f"the protected resource metadata names resource {resource[:200]!r}, which is not the "
                f"server at {server_url}; refusing to log in (a misconfigured or impersonating server)"
            )
        servers = _strings(document.get("authorization_servers"), "authorization_servers")
        if not servers:
            raise AuthorizationError("the protected resource metadata lists no authorization_servers")
        for server in servers:
            check_url(server, "an authorization server in the protected resource metadata")
        scopes = document.get("scopes_supported")
        return cls(
            resource, servers, None if scopes is None else _strings(scopes, "scopes_supported"), document
        )


_ENDPOINTS = ("authorization_endpoint", "token_endpoint", "registration_endpoint")


@dataclass(frozen=True)
class ServerMetadata:
    """Authorization server metadata whose issuer is the one asked for (AUTH-03)."""

    issuer: str
    document: Mapping[str, Any]
    fallback: bool = False  # made up from the 2025-03-26 default paths, not fetched

    @classmethod
    def parse(cls, document: Any, issuer: str) -> ServerMetadata:
        if not isinstance(document, dict):
            raise AuthorizationError(f"the metadata of authorization server {issuer} is not a JSON object")
        if document.get("issuer") != issuer:
            raise AuthorizationError(
                f"the metadata fetched for authorization server {issuer} names issuer "
                f"{str(document.get('issuer'))[:200]!r}; refusing to use it (RFC 8414 §3.3)"
            )
        for name in _ENDPOINTS:
            if name in document:
                check_url(document[name], f"{name} of {issuer}")
        for name in (
            "scopes_supported",
            "code_challenge_methods_supported",
            "grant_types_supported",
            "token_endpoint_auth_methods_supported",
        ):
            _strings(document.get(name), f"{name} of {issuer}")
        return cls(issuer, document)

    def endpoint(self, name: str) -> str | None:
        value = self.document.get(name)
        return value if isinstance(value, str) else None

    def listed(self, name: str) -> tuple[str, ...] | None:
        value = self.document.get(name)
        return tuple(value[:MAX_LIST]) if isinstance(value, list) else None

    @property
    def iss_supported(self) -> bool:
        return self.document.get("authorization_response_iss_parameter_supported") is True

    @property
    def cimd_supported(self) -> bool:
        return self.document.get("client_id_metadata_document_supported") is True

    def require_pkce(self) -> None:
        """AUTH-09: without S256 in `code_challenge_methods_supported` there is no login."""
        methods = self.listed("code_challenge_methods_supported")
        if methods is None or "S256" not in methods:
            raise AuthorizationError(
                f"authorization server {self.issuer} does not advertise PKCE with S256 "
                "(code_challenge_methods_supported); refusing to log in"
            )


def fallback_metadata(server_url: str) -> ServerMetadata:
    """2025-03-26 servers without any metadata: the MCP server's origin is the authorization
    server, at its default paths (2025-03-26 basic/authorization § Fallbacks)."""
    base = origin_of(server_url)
    return ServerMetadata(
        base,
        {
            "issuer": base,
            "authorization_endpoint": base + "/authorize",
            "token_endpoint": base + "/token",
            "registration_endpoint": base + "/register",
            "code_challenge_methods_supported": ["S256"],
        },
        fallback=True,
    )


def scopes_union(*groups: Sequence[str] | None) -> tuple[str, ...]:
    """Scopes of every group, each once, in first-seen order (AUTH-08)."""
    seen: dict[str, None] = {}
    for group in groups:
        for scope in group or ():
            seen.setdefault(scope, None)
    return tuple(seen)
