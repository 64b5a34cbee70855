"""`AsyncOAuthLogin` (and `OAuthLogin`, generated from it): an `OAuth` bound to one MCP
server URL, which the client drivers ask for headers and hand the server's refusals.

    authorize(headers) -> headers   the bearer token when one is held (refreshed when expired)
    recover(error, attempt) -> bool a 401, or a 403 insufficient_scope: log in (again), True to
                                    send the request again; False: not an authorization matter

A login, in the order of the MCP authorization spec: the challenge's `resource_metadata`, else
the well-known URLs (AUTH-01) → the protected resource metadata, whose `resource` must name this
server (AUTH-13) → authorization server metadata with the issuer checked (AUTH-02/03) → the client
identity (AUTH-04/05) → a grant: authorization code with PKCE, `state`, `resource` and the `iss`
check (AUTH-09..11, AUTH-17), client credentials, a workload's JWT-bearer grant (SEP-1933), or the
enterprise identity provider's token exchanged for an ID-JAG and that presented as a JWT-bearer
grant (SEP-990) → tokens, saved in the store. Without any metadata (2025-03-26 servers) the
server's origin is the authorization server.

DPoP (RFC 9449, SEP-1932): when both the server (a `DPoP` challenge, or DPoP in its resource
metadata) and its authorization server (ES256 in `dpop_signing_alg_values_supported`) support it,
or `OAuth(dpop="required")`, each login makes a key, sends a proof with its token requests (a
`use_dpop_nonce` answer is retried once with the server's nonce) and keeps the key with the
tokens; `sign` adds a fresh proof to every request the transport sends with a DPoP-bound token,
and a server's `use_dpop_nonce` challenge is answered by sending the request again with its nonce.

Tokens are only ever sent to the URL this session is bound to, and only when they were issued
for the resource its metadata names (AUTH-13).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from ...._version import __version__
from ....errors import AuthorizationError, HttpStatusError, McpRuntimeError
from ....protocol.oauth.challenge import Challenge, challenge_of
from ....protocol.oauth.discovery import (
    ResourceMetadata,
    ServerMetadata,
    as_metadata_urls,
    fallback_metadata,
    prm_urls,
    resource_url,
    scopes_union,
)
from ....protocol.oauth.dpop import DPoPKey
from ....protocol.oauth.grants import (
    ID_JAG_TYPE,
    ID_TOKEN_TYPE,
    JWT_BEARER,
    TOKEN_EXCHANGE,
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
from ..identity import token_of
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
        self._dpop: DPoPKey | None = None  # the key the held tokens are bound to
        self._as_nonce: str | None = None  # the authorization server's last DPoP-Nonce
        self._rs_nonce: str | None = None  # the MCP server's

    # ---- what the driver calls -------------------------------------------------------------

    async def authorize(self, headers: Mapping[str, str]) -> Mapping[str, str]:
        """`headers` with `Authorization: Bearer …` (or `DPoP …`, for a bound token) when a token is
        held (AUTH-12)."""
        tokens = await self._current()
        if tokens is None:
            return headers  # the server's 401 challenge starts the login
        scheme = "DPoP" if tokens.token_type == "DPoP" and self._dpop is not None else "Bearer"
        return {**headers, "Authorization": f"{scheme} {tokens.access_token}"}

    def sign(self, method: str, url: str, headers: Mapping[str, str]) -> Mapping[str, str]:
        """The transport's `RequestSigner`: a fresh DPoP proof for each request that carries a
        DPoP-bound token (RFC 9449 §7.1); other requests go as they are."""
        key = self._dpop
        authorization = headers.get("Authorization")
        if key is None or authorization is None or not authorization.startswith("DPoP "):
            return headers
        proof = key.proof(method, url, access_token=authorization[5:], nonce=self._rs_nonce)
        return {**headers, "DPoP": proof}

    async def token(self) -> str | None:
        tokens = await self._current()
        return None if tokens is None else tokens.access_token

    async def recover(self, error: McpRuntimeError, attempt: int) -> bool:
        if not isinstance(error, HttpStatusError) or error.status_code not in (401, 403):
            return False
        challenge = challenge_of(error.www_authenticate, prefer_dpop=self._dpop is not None)
        nonce = error.dpop_nonce
        if (
            challenge is not None
            and challenge.error == "use_dpop_nonce"
            and self._dpop is not None
            and nonce is not None
            and nonce != self._rs_nonce
        ):
            self._rs_nonce = nonce  # RFC 9449 §9: the same request again, with the server's nonce
            return True
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
        key = DPoPKey.from_dict(record.get("dpop_key"))
        if tokens.token_type == "DPoP" and key is None:
            return  # a bound token without its key is of no use
        self._tokens, self._client, self._dpop = tokens, client, key
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
                **({"dpop_key": self._dpop.to_dict()} if self._dpop is not None else {}),
            },
        )

    def forget(self) -> None:
        """Drop the tokens of this server (memory and store)."""
        self._tokens = self._dpop = None
        self._store.delete(self._key)

    async def _refresh(self, tokens: TokenSet) -> bool:
        """Exchange the refresh token; False (and the tokens dropped) when the server refuses."""
        metadata, client = self._metadata, self._client
        if metadata is None or client is None or tokens.refresh_token is None:
            return False
        endpoint, headers, body = token_request(
            metadata, client, "refresh_token", refresh_token=tokens.refresh_token, resource=tokens.resource
        )
        key = self._dpop  # a refresh token bound to the key is refreshed with it (RFC 9449 §5)
        status, document = await self._token_exchange(endpoint, headers, body, key)
        if not 200 <= status < 300:
            self.forget()
            return False
        refreshed = TokenSet.from_response(
            document,
            resource=tokens.resource,
            issuer=metadata.issuer,
            client_id=client.client_id,
            requested=tokens.scopes,
            previous=tokens,
            dpop=key is not None,
        )
        self._dpop = key if refreshed.token_type == "DPoP" else None
        self._save(refreshed)
        return True

    async def _token_exchange(
        self, endpoint: str, headers: Mapping[str, str], body: str, key: DPoPKey | None
    ) -> tuple[int, Any]:
        """One token request, with a DPoP proof when `key` is given; a `use_dpop_nonce` answer is
        sent once more with the nonce the server supplied (RFC 9449 §8), never more."""
        for attempt in range(2):
            sent = dict(headers)
            if key is not None:
                sent["DPoP"] = key.proof("POST", endpoint, nonce=self._as_nonce)
            status, document, nonce = await self._fetch().post_token(
                endpoint, sent, body, "the token endpoint"
            )
            if nonce is not None:
                self._as_nonce = nonce
            retry = (
                key is not None
                and attempt == 0
                and status == 400
                and nonce is not None
                and isinstance(document, dict)
                and document.get("error") == "use_dpop_nonce"
            )
            if not retry:
                break
        return status, document

    # ---- the login ---------------------------------------------------------------------------

    async def login(self, challenge: Challenge | None = None) -> TokenSet:
        """Discover, identify, authorize and fetch tokens for this server; saved in the store."""
        resource_metadata = await self._resource_metadata(challenge)
        issuer = self._issuer(resource_metadata)
        metadata = await self._server_metadata(issuer, legacy=resource_metadata is None)
        resource = resource_metadata.resource if resource_metadata is not None else resource_url(self.url)
        scopes = self._scopes(challenge, resource_metadata, metadata)
        scope = " ".join(scopes) or None
        grant = self.config.chosen_grant
        step: str | None = None  # which login failed, when it is not the plain token request
        if grant in ("jwt_bearer", "enterprise"):
            client = self._configured_client(metadata)
            self._metadata, self._client = metadata, client or ClientIdentity("", "pre-registered", issuer)
            if grant == "enterprise":
                assertion = await self._identity_assertion(metadata, resource, scope)
                step = f"enterprise login, step 2 of 2: the JWT-bearer grant at {metadata.issuer}"
            else:
                assert self.config.assertion is not None  # OAuth checks it
                assertion = token_of(self.config.assertion, "the workload token")
                step = f"workload login: the JWT-bearer grant at {metadata.issuer}"
            endpoint, headers, body = token_request(
                metadata, client, JWT_BEARER, assertion=assertion, scope=scope, resource=resource
            )
        elif self._uses_client_credentials(metadata):
            client = self._configured_client(metadata) or await self._register(metadata, None, True)
            self._metadata, self._client = metadata, client
            endpoint, headers, body = token_request(
                metadata, client, "client_credentials", scope=scope, resource=resource
            )
        else:
            client = await self._authorization_client(metadata)
            redirect = self._redirect_handler()
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
        key = DPoPKey.generate() if self._wants_dpop(challenge, resource_metadata, metadata) else None
        status, document = await self._token_exchange(endpoint, headers, body, key)
        if not 200 <= status < 300:
            error = token_error(status, document, metadata.issuer)
            raise error if step is None else AuthorizationError(f"{step} failed: {error}")
        tokens = TokenSet.from_response(
            document,
            resource=resource,
            issuer=metadata.issuer,
            client_id=self._client.client_id,
            requested=scopes,
            dpop=key is not None,
        )
        self._dpop = key if tokens.token_type == "DPoP" else None
        self._requested = scopes
        self._save(tokens)
        return tokens

    async def _authorization_client(self, metadata: ServerMetadata) -> ClientIdentity:
        """Who asks for the authorization code: configured, registered before, a Client ID Metadata
        Document, or registered now (AUTH-05)."""
        redirect = self._redirect_handler()
        known = self._configured_client(metadata) or self._stored_client(metadata, redirect)
        if known is not None:
            return known
        if self.config.client_metadata_url is not None and metadata.cimd_supported:
            return ClientIdentity(self.config.client_metadata_url, "cimd")
        return await self._register(metadata, redirect.redirect_uri, False)

    def _wants_dpop(
        self, challenge: Challenge | None, resource: ResourceMetadata | None, metadata: ServerMetadata
    ) -> bool:
        """DPoP-bound tokens: always with dpop="required"; with "auto", when the server shows it takes
        them (a DPoP challenge; `dpop_bound_access_tokens_required` or DPoP algorithms in its
        resource metadata, RFC 9728 §2) and its authorization server signs ES256 proofs."""
        mode = self.config.dpop
        if mode != "auto":
            return mode == "required"
        server_takes = (challenge is not None and challenge.scheme == "dpop") or (
            resource is not None
            and (
                resource.document.get("dpop_bound_access_tokens_required") is True
                or isinstance(resource.document.get("dpop_signing_alg_values_supported"), list)
            )
        )
        return server_takes and "ES256" in (metadata.listed("dpop_signing_alg_values_supported") or ())

    async def _identity_assertion(self, metadata: ServerMetadata, resource: str, scope: str | None) -> str:
        """SEP-990 step 1: the person's ID token exchanged at the enterprise identity provider
        (RFC 8693) for an identity assertion (ID-JAG) for `metadata`'s issuer and `resource`."""
        idp = self.config.enterprise
        assert idp is not None  # OAuth checks it
        step = f"enterprise login, step 1 of 2: the token exchange at the identity provider {idp.issuer}"
        try:
            idp_metadata = (
                ServerMetadata(idp.issuer, {"token_endpoint": idp.token_endpoint})
                if idp.token_endpoint is not None
                else await self._server_metadata(idp.issuer, legacy=False)
            )
            client = ClientIdentity(idp.client_id, "pre-registered", idp.issuer, idp.client_secret)
            endpoint, headers, body = token_request(
                idp_metadata,
                client,
                TOKEN_EXCHANGE,
                subject_token=token_of(idp.id_token, "the identity provider's ID token"),
                subject_token_type=ID_TOKEN_TYPE,
                requested_token_type=ID_JAG_TYPE,
                audience=metadata.issuer,
                resource=resource,
                scope=scope,
            )
            status, document, _ = await self._fetch().post_token(
                endpoint, headers, body, "the identity provider's token endpoint"
            )
        except AuthorizationError as exc:
            raise AuthorizationError(f"{step} failed: {exc}") from None
        if not 200 <= status < 300:
            raise AuthorizationError(f"{step} failed: {token_error(status, document, idp.issuer)}")
        assertion = document.get("access_token") if isinstance(document, dict) else None
        issued = document.get("issued_token_type") if isinstance(document, dict) else None
        if issued != ID_JAG_TYPE or not isinstance(assertion, str):
            raise AuthorizationError(f"{step} failed: the answer holds no identity assertion (ID-JAG)")
        return token_of(assertion, "the identity assertion")

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
