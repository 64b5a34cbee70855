"""The sans-I/O pieces of authorization on their own: challenges, discovery order, the `iss` and
`state` checks, client authentication, token records, the token stores, the server's challenge
and metadata, and JWT verification with keys made here (the end-to-end tests use real ones)."""

from __future__ import annotations

import asyncio
import base64
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from mcpgen_runtime.client.oauth import FileTokenStore, OAuth
from mcpgen_runtime.errors import AuthorizationError
from mcpgen_runtime.protocol.oauth.challenge import bearer_challenge, bearer_of, parse_challenges
from mcpgen_runtime.protocol.oauth.discovery import ServerMetadata, as_metadata_urls, prm_urls
from mcpgen_runtime.protocol.oauth.grants import (
    AuthorizationRequest,
    ClientIdentity,
    TokenSet,
    read_callback,
    token_request,
)
from mcpgen_runtime.server.auth.jwt import JwtVerifier
from mcpgen_runtime.server.auth.oauth import ProtectedResource, TokenPrincipal


def test_challenges_are_read_with_quoted_strings_several_schemes_and_junk() -> None:
    value = 'Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="https://m/x"'
    challenges = parse_challenges(value)
    assert [c.scheme for c in challenges] == ["basic", "bearer"]
    bearer = bearer_of(value)
    assert bearer is not None and bearer.scopes == ("a", "b") and bearer.error == "insufficient_scope"
    assert bearer.resource_metadata == "https://m/x"
    assert bearer_of('Bearer realm="a\\"b"') == parse_challenges('Bearer realm="a\\"b"')[0]
    assert bearer_of("Negotiate abc==") is None and bearer_of("") is None
    assert parse_challenges('Bearer scope="unterminated') == [parse_challenges("Bearer")[0]]
    written = bearer_challenge(
        resource_metadata="https://m/.well-known/x", scopes=["a", "b"], error="invalid_token"
    )
    again = bearer_of(written)
    assert (
        again is not None
        and again.scopes == ("a", "b")
        and again.resource_metadata == "https://m/.well-known/x"
    )


def test_discovery_urls_come_in_the_spec_order() -> None:  # AUTH-01, AUTH-02
    assert prm_urls("https://h/public/mcp", None) == [
        "https://h/.well-known/oauth-protected-resource/public/mcp",
        "https://h/.well-known/oauth-protected-resource",
    ]
    assert prm_urls("https://h/mcp", "https://h/meta")[0] == "https://h/meta"
    assert prm_urls("https://h", None) == ["https://h/.well-known/oauth-protected-resource"]
    assert as_metadata_urls("https://a/t1") == [
        "https://a/.well-known/oauth-authorization-server/t1",
        "https://a/.well-known/openid-configuration/t1",
        "https://a/t1/.well-known/openid-configuration",
    ]
    assert as_metadata_urls("https://a") == [
        "https://a/.well-known/oauth-authorization-server",
        "https://a/.well-known/openid-configuration",
    ]
    with pytest.raises(AuthorizationError, match="https"):
        prm_urls("https://h/mcp", "http://evil.example/meta")


def _request(iss_supported: bool) -> AuthorizationRequest:
    metadata = ServerMetadata.parse(
        {
            "issuer": "https://as",
            "authorization_endpoint": "https://as/authorize",
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": iss_supported,
        },
        "https://as",
    )
    return AuthorizationRequest.create(
        metadata,
        ClientIdentity("c", "pre-registered"),
        redirect_uri="http://127.0.0.1:1/cb",
        resource="https://mcp/x",
        scopes=["a"],
    )


@pytest.mark.parametrize(
    ("supported", "iss", "accepted"),
    [
        (True, "https://as", True),
        (True, None, False),
        (True, "https://as/", False),
        (False, "https://as", True),
        (False, None, True),
        (False, "https://evil", False),
    ],
)
def test_the_iss_table(supported: bool, iss: str | None, accepted: bool) -> None:  # AUTH-11
    request = _request(supported)
    callback = f"http://127.0.0.1:1/cb?code=K&state={request.state}" + (f"&iss={iss}" if iss else "")
    if accepted:
        assert read_callback(request, callback) == "K"
    else:
        with pytest.raises(AuthorizationError):
            read_callback(request, callback)


def test_a_mismatched_iss_hides_the_error_fields_and_a_bad_state_is_refused() -> None:
    request = _request(True)
    with pytest.raises(AuthorizationError) as mismatch:
        read_callback(
            request,
            f"http://x/cb?error=access_denied&error_description=PHISH&state={request.state}&iss=https://evil",
        )
    assert "PHISH" not in str(mismatch.value)
    with pytest.raises(AuthorizationError, match="state"):
        read_callback(request, "http://x/cb?code=K&state=other&iss=https://as")
    assert "code_challenge_method=S256" in request.url and "resource=https%3A%2F%2Fmcp%2Fx" in request.url


def test_client_secret_basic_form_encodes_the_credentials() -> None:
    metadata = ServerMetadata.parse(
        {
            "issuer": "https://as",
            "token_endpoint": "https://as/token",
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        },
        "https://as",
    )
    client = ClientIdentity("id:with colon", "pre-registered", "https://as", "s/e:c")
    _, headers, body = token_request(metadata, client, "client_credentials", resource="https://mcp")
    decoded = base64.b64decode(headers["Authorization"].split()[1]).decode()
    assert decoded == "id%3Awith%20colon:s%2Fe%3Ac" and "client_secret" not in body
    post = ServerMetadata.parse(
        {**metadata.document, "token_endpoint_auth_methods_supported": ["client_secret_post"]}, "https://as"
    )
    _, headers, body = token_request(post, client, "client_credentials")
    assert "Authorization" not in headers and "client_secret=s%2Fe%3Ac" in body


def test_nothing_secret_is_in_a_repr() -> None:
    tokens = TokenSet(
        "ACCESS-SECRET", "https://mcp", "https://as", "c", (), time.time() + 60, "REFRESH-SECRET"
    )
    client = ClientIdentity("c", "dynamic", "https://as", "CLIENT-SECRET", private_key="KEY-SECRET")
    text = repr(tokens) + repr(client) + repr(OAuth(client_id="c", client_secret="CLIENT-SECRET"))
    assert not any(
        secret in text for secret in ("ACCESS-SECRET", "REFRESH-SECRET", "CLIENT-SECRET", "KEY-SECRET")
    )
    assert TokenSet.from_dict(tokens.to_dict()) == tokens


def test_the_token_file_is_private(tmp_path: Path) -> None:  # AUTH-16
    store = FileTokenStore(tmp_path / "dir" / "tokens.json")
    store.save("tokens x -", {"tokens": {"access_token": "a"}})
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(store.path.parent).st_mode) == 0o700
    assert store.load("tokens x -") == {"tokens": {"access_token": "a"}} and store.names() == ["tokens x -"]
    store.delete("tokens x -")
    assert store.names() == []


def _resource(**kwargs: object) -> ProtectedResource:
    return ProtectedResource(
        verify=lambda token: None,
        resource="https://mcp.example/mcp",
        authorization_servers=("https://as.example",),
        **kwargs,
    )  # type: ignore[arg-type]


def test_the_server_challenge_and_metadata() -> None:  # AUTH-19, AUTH-21, AUTH-22
    resource = _resource(scopes=("mcp:tools",), tool_scopes={"rm": ("files:write",)})
    challenge = bearer_of(resource.challenge("invalid_token"))
    assert challenge is not None and challenge.scopes == ("mcp:tools",)
    assert challenge.resource_metadata == "https://mcp.example/.well-known/oauth-protected-resource/mcp"
    document = _resource(scopes=("mcp:tools", "offline_access")).metadata_document()
    assert document["scopes_supported"] == ["mcp:tools"] and document["authorization_servers"] == [
        "https://as.example"
    ]
    assert resource.metadata_document()["scopes_supported"] == ["mcp:tools", "files:write"]
    with pytest.raises(ValueError, match="authorization server"):
        ProtectedResource(verify=lambda token: None, resource="https://mcp.example/mcp")


def test_jwt_verification_checks_issuer_audience_expiry_and_algorithms() -> None:
    key = RSAKey.generate_key(2048, parameters={"kid": "k1"})
    now = int(time.time())

    def token(typ: str | None = "at+jwt", **claims: object) -> str:
        base = {"iss": "https://as", "aud": "https://mcp", "sub": "alice", "exp": now + 60, "scope": "a b"}
        header = {"alg": "RS256", "kid": "k1"} | ({"typ": typ} if typ is not None else {})
        return jwt.encode(header, {**base, **claims}, key)

    verifier = JwtVerifier("https://as", audience="https://mcp", jwks_uri="unused", leeway=0)
    verifier._keys, verifier._fetched_at = KeySet([key]), time.monotonic()  # as if fetched from jwks_uri

    def check(value: str) -> TokenPrincipal | None:
        return asyncio.run(verifier.verify(value))

    principal = check(token())
    assert principal is not None and principal.subject == "alice" and principal.scopes == {"a", "b"}
    assert check(token(aud="https://other")) is None
    assert check(token(iss="https://evil")) is None
    assert check(token(exp=now - 5)) is None
    assert check(token(nbf=now + 60)) is None
    unsigned = token().rsplit(".", 1)[0] + "."
    assert check(unsigned) is None
    with pytest.raises(ValueError, match="not allowed"):
        JwtVerifier("https://as", audience="https://mcp", algorithms=("HS256",))

    # RFC 9068 §2.1: only access tokens (typ at+jwt, any case, with or without "application/");
    # an ID token ("JWT") or an untyped token only from an issuer configured to send them.
    assert check(token(typ="application/AT+JWT")) is not None
    assert check(token(typ="JWT")) is None and check(token(typ=None)) is None
    lenient = JwtVerifier(
        "https://as", audience="https://mcp", jwks_uri="unused", token_types=("at+jwt", "JWT", None)
    )
    lenient._keys, lenient._fetched_at = verifier._keys, verifier._fetched_at
    assert asyncio.run(lenient.verify(token(typ="jwt"))) is not None
    assert asyncio.run(lenient.verify(token(typ=None))) is not None
    assert asyncio.run(lenient.verify(token(typ="dpop+jwt"))) is None


def test_the_server_command_widens_the_token_types_it_is_told_to() -> None:
    from mcpgen_runtime.server.cli import _protected_resource, build_command, parse_command_line

    def parsed(argv: list[str]) -> dict[str, Any]:
        return parse_command_line(build_command(), argv, "python -m test_server")

    from tests.runtime.dynamic_server_app import DynamicServer

    base = ["--oauth-issuer", "https://as", "--resource", "https://mcp/mcp"]
    strict = _protected_resource(parsed(base), DynamicServer).verify
    assert strict.token_types == {"at+jwt"}
    flags = [*base, "--token-type", "JWT", "--token-type", "none"]
    lenient = _protected_resource(parsed(flags), DynamicServer).verify
    assert lenient.token_types == {"at+jwt", "jwt", None}


def test_client_and_user_principals_never_share_a_name() -> None:
    """A token without `sub`, or whose `sub` is its `client_id` (client credentials, RFC 9068
    §2.2), is the client's own: its principal is `client:ISSUER#ID`, never a user's `ISSUER#SUB`."""
    key = RSAKey.generate_key(2048, parameters={"kid": "k1"})
    verifier = JwtVerifier("https://as", audience="https://mcp", jwks_uri="unused")
    verifier._keys, verifier._fetched_at = KeySet([key]), time.monotonic()

    def principal(**claims: object) -> TokenPrincipal:
        base = {"iss": "https://as", "aud": "https://mcp", "exp": int(time.time()) + 60}
        found = asyncio.run(
            verifier.verify(
                jwt.encode({"alg": "RS256", "kid": "k1", "typ": "at+jwt"}, {**base, **claims}, key)
            )
        )
        assert found is not None
        return found

    user = principal(sub="alice", client_id="some-app")
    assert (user.kind, str(user)) == ("user", "https://as#alice")
    for claims in ({"client_id": "alice"}, {"sub": "alice", "client_id": "alice"}, {"azp": "alice"}):
        client = principal(**claims)
        assert (client.kind, client.subject, str(client)) == ("client", "alice", "client:https://as#alice")
    assert str(principal(sub="client:https://as#alice")) == "https://as#client:https://as#alice"
    with pytest.raises(ValueError, match="issuer"):
        JwtVerifier("client:https://as", audience="https://mcp")


def test_tools_declare_their_scopes_in_the_spec_file() -> None:
    from codegen.spec import LoadedSpec
    from codegen.validate.checks import validate
    from mcpgen_runtime.server.auth.oauth import declared_tool_scopes

    tools = [
        {"name": "rm", "inputSchema": {"type": "object"}, "_meta": {"dev.mcpgen/scopes": ["files:write"]}},
        {"name": "ls", "inputSchema": {"type": "object"}},
    ]
    assert declared_tool_scopes(tools) == {"rm": ("files:write",)}
    checked = validate(LoadedSpec("inline", tools, pointer_prefix="/tools"), strict=True)
    assert [tool["name"] for tool in checked.tools] == ["rm", "ls"]
