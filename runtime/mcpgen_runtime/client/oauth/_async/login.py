"""`AsyncOAuthLogin` (and `OAuthLogin`, generated from it): an `OAuth` bound to one MCP
server URL, which the client drivers ask for headers and hand the server's refusals.

    authorize(headers) -> headers   the bearer token when one is held (refreshed when expired)
    recover(error, attempt) -> bool a 401, or a 403 insufficient_scope: log in (again), True to
                                    send the request again; False: not an authorization matter

A login, in the order of the MCP authorization spec: the challenge's `resource_metadata`, else
the well-known URLs (AUTH-01) → the protected resource metadata, whose `resource` must name this
server (AUTH-13) → authorization server metadata with the issuer checked (AUTH-02/03) → the client
identity (AUTH-04/05) → authorization code with PKCE, `state`, `resource` and the `iss` check
(AUTH-09..11, AUTH-17), or client credentials → tokens, saved in the store. Without any
metadata (2025-03-26 servers) the server's origin is the authorization server.

Tokens are only ever sent to the URL this session is bound to, and only when they were issued
for the resource its metadata names (AUTH-13).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from ...._version import __version__
from ....errors import AuthorizationError, HttpStatusError, McpRuntimeError
from ....protocol.oauth.challenge import Challenge, bearer_of
from ....protocol.oauth.discovery import (
    ResourceMetadata,
    ServerMetadata,
    as_metadata_urls,
    fallback_metadata,
    prm_urls,
    resource_url,
    scopes_union,
)
from ....protocol.oauth.grants import (
    AuthorizationRequest,
    ClientIdentity,
    TokenSet,
    parse_registration,
    read_callback,
    registration_request,
    token_error,
    token_request,
)
from ..config import OAuth
from ..redirect import RedirectHandler
from .fetch import AsyncFetcher

__all__ = ["AsyncOAuthLogin"]


class AsyncOAuthLogin:
    def __init__(self, config: OAuth, url: str) -> None:
        self.config = config
        self.url = url
        self._store = config.token_store()
        self._key = config.store_key(resource_url(url))
        self._tokens: TokenSet | None = None
        self._loaded = False
        self._metadata: ServerMetadata | None = None
        self._client: ClientIdentity | None = None
        self._requested: tuple[str, ...] = ()
        self._redirect: RedirectHandler | None = None
        self._fetcher: AsyncFetcher | None = None

    # ---- what the driver calls -------------------------------------------------------------

    async def authorize(self, headers: Mapping[str, str]) -> Mapping[str, str]:
        """`headers` with `Authorization: Bearer …` when a token is held (AUTH-12)."""
        tokens = await self._current()
        if tokens is None:
            return headers  # the server's 401 challenge starts the login
        return {**headers, "Authorization": "Bearer " + tokens.access_token}

    async def token(self) -> str | None:
        tokens = await self._current()
        return None if tokens is None else tokens.access_token

    async def recover(self, error: McpRuntimeError, attempt: int) -> bool:
        if not isinstance(error, HttpStatusError) or error.status_code not in (401, 403):
            return False
        challenge = bearer_of(error.www_authenticate)
        if error.status_code == 403 and (challenge is None or challenge.error != "insufficient_scope"):
            return False  # forbidden for another reason: more scopes would not help
        if attempt >= self.config.max_authorizations:
            raise AuthorizationError(self._refused(error, challenge), status_code=error.status_code)
        tokens = self._tokens
        if (
            error.status_code == 401
            and attempt == 0
            and tokens is not None
            and tokens.refresh_token
            and await self._refresh(tokens)
        ):
            return True
        await self.login(challenge)
        return True

    async def aclose(self) -> None:
        if self._fetcher is not None:
            await self._fetcher.aclose()
            self._fetcher = None

    # ---- tokens ------------------------------------------------------------------------------

    async def _current(self) -> TokenSet | None:
        if not self._loaded:
            self._loaded = True
            record = self._store.load(self._key)
            if record is not None:
                self._restore(record)
        tokens = self._tokens
        if tokens is not None and tokens.expired():
            if tokens.refresh_token and await self._refresh(tokens):
                return self._tokens
            self._tokens = None
            return None
        return tokens

    def _restore(self, record: Mapping[str, Any]) -> None:
        tokens = TokenSet.from_dict(record.get("tokens") or {})
        client = ClientIdentity.from_dict(record.get("client") or {})
        metadata = record.get("metadata")
        if tokens is None or client is None or not isinstance(metadata, dict):
            return
        if metadata.get("issuer") != tokens.issuer:
            return
        self._tokens, self._client = tokens, client
        self._metadata = ServerMetadata(tokens.issuer, metadata)
        self._requested = tokens.scopes

    def _save(self, tokens: TokenSet) -> None:
        assert self._metadata is not None and self._client is not None
        self._tokens = tokens
        self._store.save(
            self._key,
            {
                "tokens": tokens.to_dict(),
                "client": self._client.to_dict(),
                "metadata": dict(self._metadata.document),
            },
        )

    def forget(self) -> None:
        """Drop the tokens of this server (memory and store)."""
        self._tokens = None
        self._store.delete(self._key)

    async def _refresh(self, tokens: TokenSet) -> bool:
        """Exchange the refresh token; False (and the tokens dropped) when the server refuses."""
        metadata, client = self._metadata, self._client
        if metadata is None or client is None or tokens.refresh_token is None:
            return False
        endpoint, headers, body = token_request(
            metadata, client, "refresh_token", refresh_token=tokens.refresh_token, resource=tokens.resource
        )
        status, document = await self._fetch().post_form(endpoint, headers, body, "the token endpoint")
        if not 200 <= status < 300:
            self.forget()
            return False
        self._save(
            TokenSet.from_response(
                document,
                resource=tokens.resource,
                issuer=metadata.issuer,
                client_id=client.client_id,
                requested=tokens.scopes,
                previous=tokens,
            )
        )
        return True

    # ---- the login ---------------------------------------------------------------------------

    async def login(self, challenge: Challenge | None = None) -> TokenSet:
        """Discover, identify, authorize and fetch tokens for this server; saved in the store."""
        resource_metadata = await self._resource_metadata(challenge)
        issuer = self._issuer(resource_metadata)
        metadata = await self._server_metadata(issuer, legacy=resource_metadata is None)
        resource = resource_metadata.resource if resource_metadata is not None else resource_url(self.url)
        scopes = self._scopes(challenge, resource_metadata, metadata)
        if self._uses_client_credentials(metadata):
            client = self._configured_client(metadata) or await self._register(metadata, None, True)
            self._metadata, self._client = metadata, client
            endpoint, headers, body = token_request(
                metadata, client, "client_credentials", scope=" ".join(scopes) or None, resource=resource
            )
        else:
            redirect = self._redirect_handler()
            known = self._configured_client(metadata) or self._stored_client(metadata, redirect)
            if known is not None:
                client = known
            elif self.config.client_metadata_url is not None and metadata.cimd_supported:
                client = ClientIdentity(self.config.client_metadata_url, "cimd")
            else:
                client = await self._register(metadata, redirect.redirect_uri, False)
            self._metadata, self._client = metadata, client
            request = AuthorizationRequest.create(
                metadata, client, redirect_uri=redirect.redirect_uri, resource=resource, scopes=scopes
            )
            callback = redirect.authorize(request.url)
            if inspect.isawaitable(callback):
                callback = await callback
            if not isinstance(callback, str):
                raise TypeError("a redirect handler's authorize() must return the callback URL (a str)")
            code = read_callback(request, callback)  # state and iss checked first (AUTH-11/17)
            endpoint, headers, body = token_request(
                metadata,
                client,
                "authorization_code",
                code=code,
                redirect_uri=request.redirect_uri,
                code_verifier=request.code_verifier,
                resource=resource,
            )
        status, document = await self._fetch().post_form(endpoint, headers, body, "the token endpoint")
        if not 200 <= status < 300:
            raise token_error(status, document, metadata.issuer)
        tokens = TokenSet.from_response(
            document, resource=resource, issuer=metadata.issuer, client_id=client.client_id, requested=scopes
        )
        self._requested = scopes
        self._save(tokens)
        return tokens

    async def _resource_metadata(self, challenge: Challenge | None) -> ResourceMetadata | None:
        """The protected resource metadata (AUTH-01), or None when the server publishes none."""
        for url in prm_urls(self.url, challenge.resource_metadata if challenge else None):
            try:
                status, document = await self._fetch().get_json(url, "the protected resource metadata")
            except AuthorizationError:
                if challenge is not None and url == challenge.resource_metadata:
                    raise
                continue
            if status == 200:
                return ResourceMetadata.parse(document, self.url)  # a mismatch stops here (AUTH-13)
        return None

    def _issuer(self, resource_metadata: ResourceMetadata | None) -> str:
        servers = resource_metadata.authorization_servers if resource_metadata is not None else ()
        wanted = self.config.issuer
        if wanted is not None:
            if servers and wanted not in servers:
                # AUTH-04: credentials registered with one server are never shown to another
                raise AuthorizationError(
                    f"{self.url} is protected by {', '.join(servers)}, not by {wanted}, which the configured "
                    "client credentials belong to; register the client there"
                )
            return wanted
        if servers:
            return servers[0]
        return fallback_metadata(self.url).issuer

    async def _server_metadata(self, issuer: str, *, legacy: bool) -> ServerMetadata:
        for url in as_metadata_urls(issuer):
            status, document = await self._fetch().get_json(url, "the authorization server metadata")
            if status == 200:
                return ServerMetadata.parse(document, issuer)  # issuer mismatch stops here (AUTH-03)
        if legacy:
            return fallback_metadata(self.url)
        raise AuthorizationError(f"authorization server {issuer} publishes no metadata (RFC 8414 or OpenID)")

    def _scopes(
        self,
        challenge: Challenge | None,
        resource_metadata: ResourceMetadata | None,
        metadata: ServerMetadata,
    ) -> tuple[str, ...]:
        """AUTH-07/08: the configured scopes; else the challenge's united with those asked for
        before; else the resource's `scopes_supported`; plus `offline_access` (AUTH-14)."""
        if self.config.scopes is not None:
            scopes = tuple(self.config.scopes)
        elif challenge is not None and challenge.scopes:
            scopes = scopes_union(self._requested, challenge.scopes)
        elif self._requested:
            scopes = self._requested
        elif resource_metadata is not None and resource_metadata.scopes_supported:
            scopes = resource_metadata.scopes_supported
        else:
            scopes = ()
        offered = metadata.listed("scopes_supported") or ()
        if (
            self.config.offline_access
            and "offline_access" in offered
            and "offline_access" not in scopes
            and not self._uses_client_credentials(metadata)
        ):
            scopes = (*scopes, "offline_access")
        return scopes

    def _uses_client_credentials(self, metadata: ServerMetadata) -> bool:
        grant = self.config.grant
        if grant != "auto":
            return grant == "client_credentials"
        grants = metadata.listed("grant_types_supported") or ()
        has_secret = self.config.client_secret is not None or self.config.private_key is not None
        return has_secret and "client_credentials" in grants and "authorization_code" not in grants

    def _configured_client(self, metadata: ServerMetadata) -> ClientIdentity | None:
        cfg = self.config
        if cfg.client_id is None:
            return None
        return ClientIdentity(
            cfg.client_id,
            "pre-registered",
            metadata.issuer,
            cfg.client_secret,
            "private_key_jwt" if cfg.private_key is not None else None,
            private_key=cfg.private_key,
            signing_alg=cfg.signing_alg,
        )

    def _client_key(self, issuer: str) -> str:
        return f"client {issuer}"  # AUTH-04: registrations are per authorization server

    def _stored_client(self, metadata: ServerMetadata, redirect: RedirectHandler) -> ClientIdentity | None:
        if (
            self._client is not None
            and self._client.issuer == metadata.issuer
            and self._client.source == "dynamic"
        ):
            client: ClientIdentity | None = self._client
        else:
            client = ClientIdentity.from_dict(self._store.load(self._client_key(metadata.issuer)) or {})
        if client is None or client.issuer != metadata.issuer or client.source != "dynamic":
            return None
        reuse = getattr(redirect, "reuse", None)
        if reuse is not None:
            reuse(client.redirect_uri)
        return client if client.redirect_uri == redirect.redirect_uri else None

    async def _register(
        self, metadata: ServerMetadata, redirect_uri: str | None, client_credentials: bool
    ) -> ClientIdentity:
        endpoint = metadata.endpoint("registration_endpoint")
        if endpoint is None:
            raise AuthorizationError(
                f"authorization server {metadata.issuer} has no registration endpoint and this client has no "
                "client id for it: register a client there and pass client_id (mcpgen: --client-id)"
            )
        supported = metadata.listed("token_endpoint_auth_methods_supported") or ("client_secret_basic",)
        method = "none" if "none" in supported and not client_credentials else supported[0]
        body = registration_request(
            self.config.client_name, redirect_uri, client_credentials=client_credentials, auth_method=method
        )
        status, document = await self._fetch().post_json(endpoint, body, "the client registration endpoint")
        if not 200 <= status < 300:
            detail = (
                document.get("error_description") or document.get("error")
                if isinstance(document, dict)
                else None
            )
            raise AuthorizationError(
                f"client registration at {metadata.issuer} failed (HTTP {status})"
                + (f": {str(detail)[:300]}" if detail else "")
            )
        client = parse_registration(document, metadata.issuer, redirect_uri, method)
        self._store.save(self._client_key(metadata.issuer), client.to_dict())
        return client

    def _redirect_handler(self) -> RedirectHandler:
        if self._redirect is None:
            self._redirect = self.config.redirect_handler()
        return self._redirect

    def _fetch(self) -> AsyncFetcher:
        if self._fetcher is None:
            self._fetcher = AsyncFetcher(
                timeout=self.config.timeout,
                max_bytes=self.config.max_response_bytes,
                user_agent=f"mcpgen/{__version__}",
            )
        return self._fetcher

    def _refused(self, error: HttpStatusError, challenge: Challenge | None) -> str:
        what = f"HTTP {error.status_code}"
        if challenge is not None and challenge.error:
            what += f" {challenge.error[:80]}"
        if challenge is not None and challenge.scopes:
            what += f" (needs scope {' '.join(challenge.scopes)[:200]})"
        return (
            f"{self.url} still refuses access after {self.config.max_authorizations} authorizations: {what}; "
            "the account may lack the permission, or the server's scopes are misconfigured"
        )
