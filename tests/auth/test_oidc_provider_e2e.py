"""End to end against a real authorization server: the certified oidc-provider (npm) on loopback.

The generated weather client registers itself (RFC 7591), logs in through the authorization-code
flow with PKCE and `resource` (the login page filled in without a browser), and calls the generated
weather server, which verifies the JWT against the provider's JWKS (AUTH-20) and hands the
principal to the handler. Expired tokens are refreshed; a token for another audience, an expired
token, a token from another issuer and a token with too few scopes are refused with 401/403 and an
error that says why (AUTH-21/23). No token ever appears in an error.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from mcpgen_runtime.client.oauth import MemoryTokenStore, OAuth
from mcpgen_runtime.errors import AuthorizationError, HttpStatusError
from tests.auth._oidc import BrowserlessLogin, machine_token, oidc_provider, protected_server
from tests.interop._support import AsyncClient, Client

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def short_issuer() -> Iterator[str]:
    """Access tokens that live 2 seconds."""
    with oidc_provider(ttl=2, scopes="mcp:tools") as url:
        yield url


@pytest.fixture(scope="module")
def short_server(short_issuer: str) -> Iterator[str]:
    with protected_server(short_issuer, "--token-leeway", "0") as url:
        yield url


def login(store: MemoryTokenStore | None = None) -> tuple[OAuth, BrowserlessLogin, MemoryTokenStore]:
    handler = BrowserlessLogin()
    store = store or MemoryTokenStore()
    return OAuth(redirect=handler, store=store, client_name="mcpgen-e2e"), handler, store


def test_registers_logs_in_and_calls_a_server_that_verifies_the_jwt(server: str, issuer: str) -> None:
    auth, handler, store = login()
    with Client(server, auth=auth) as client:
        assert client.calculate_sum(a=2, b=3).text == "5"
        whoami = client.call_tool("whoami").text
    subject, scopes, principal = whoami.split(" | ")
    assert subject == "alice" and "mcp:tools" in scopes.split() and principal == f"{issuer}#alice"
    assert handler.logins == 1
    record = store.load(f"tokens {server} -")
    assert (
        record is not None and record["tokens"]["issuer"] == issuer and record["tokens"]["resource"] == server
    )
    assert record["tokens"]["refresh_token"]  # offline_access offered by the provider (AUTH-14)
    assert record["client"]["source"] == "dynamic" and store.load(f"client {issuer}") is not None

    # A second client with the same store needs no login: the token is reused.
    again = BrowserlessLogin()
    with Client(server, auth=OAuth(redirect=again, store=store)) as client:
        assert client.calculate_sum(a=1, b=1).text == "2"
    assert again.logins == 0


def test_async_client_logs_in_too(server: str) -> None:
    auth, handler, _ = login()

    async def run() -> str:
        async with AsyncClient(server, auth=auth) as client:
            return (await client.calculate_sum(a=4, b=5)).text

    assert asyncio.run(run()) == "9"
    assert handler.logins == 1


def test_an_expired_access_token_is_refreshed(short_server: str) -> None:
    auth, handler, store = login()
    with Client(short_server, auth=auth) as client:
        assert client.calculate_sum(a=1, b=2).text == "3"
        first = store.load(f"tokens {short_server} -")
        time.sleep(2.5)  # the access token has expired; the refresh token has not
        assert client.calculate_sum(a=2, b=2).text == "4"
        second = store.load(f"tokens {short_server} -")
    assert first is not None and second is not None
    assert second["tokens"]["access_token"] != first["tokens"]["access_token"]
    assert handler.logins == 1  # refreshed, not logged in again


def test_a_token_for_another_audience_is_refused(server: str, issuer: str) -> None:
    token = machine_token(issuer, "http://127.0.0.1:9/another-server")
    with Client(server, token_provider=lambda: token) as client, pytest.raises(HttpStatusError) as refused:
        client.calculate_sum(a=1, b=2)
    assert refused.value.status_code == 401 and "invalid_token" in str(refused.value)
    assert token not in str(refused.value) and token not in repr(refused.value.body)


def test_a_token_for_this_server_works_and_an_expired_one_is_refused(
    short_server: str, short_issuer: str
) -> None:
    token = machine_token(short_issuer, short_server)
    with Client(short_server, token_provider=lambda: token) as client:
        assert client.calculate_sum(a=1, b=2).text == "3"
        time.sleep(3)
        with pytest.raises(HttpStatusError) as refused:
            client.calculate_sum(a=1, b=2)
    assert refused.value.status_code == 401 and "invalid_token" in str(refused.value)


def test_a_token_from_another_issuer_is_refused(issuer: str) -> None:
    # The server trusts the provider's keys but expects another issuer name: the `iss` check fails.
    with protected_server(f"{issuer}/elsewhere", jwks_uri=f"{issuer}/jwks") as url:
        token = machine_token(issuer, url)
        with Client(url, token_provider=lambda: token) as client, pytest.raises(HttpStatusError) as refused:
            client.calculate_sum(a=1, b=2)
    assert refused.value.status_code == 401 and token not in str(refused.value)


def test_too_few_scopes_is_refused_with_403_and_the_scope_needed(server: str, issuer: str) -> None:
    # execute_sql needs mcp:admin (the server's _tool_scopes_), which the provider never grants.
    token = machine_token(issuer, server)
    with Client(server, token_provider=lambda: token) as client:
        assert client.calculate_sum(a=1, b=2).text == "3"
        with pytest.raises(HttpStatusError) as refused:
            client.execute_sql(query="select 1", region="us")
    assert refused.value.status_code == 403
    assert "insufficient_scope" in str(refused.value) and "mcp:admin" in str(refused.value)

    # Logged in through OAuth, the client steps up (AUTH-08), the provider still declines the
    # scope, and the client gives up with an AuthorizationError that names it.
    # (on_drift="ignore": the drift check's tools/list would log in first, and this counts the call's logins)
    auth, handler, _ = login()
    with (
        Client(server, auth=auth, on_drift="ignore") as client,
        pytest.raises(AuthorizationError) as gave_up,
    ):
        client.execute_sql(query="select 1", region="us")
    assert "mcp:admin" in str(gave_up.value)
    assert handler.logins <= 3


def test_a_client_named_alice_is_not_user_alice(server: str, issuer: str) -> None:
    """The provider's client-credentials token for client "alice" carries sub = client_id = "alice";
    user alice's token carries sub "alice" and the id of the app she logged in with. They are two
    principals: the client cannot use the legacy session alice opened."""
    import httpx

    from tests.runtime.legacy_helpers import LegacySession
    from tests.runtime.legacy_helpers import call as legacy_call

    auth, _, store = login()
    with Client(server, auth=auth) as client:
        assert client.call_tool("whoami").text.endswith(f" | {issuer}#alice")
    record = store.load(f"tokens {server} -")
    assert record is not None
    client_token = machine_token(issuer, server, client="alice")
    with Client(server, token_provider=lambda: client_token) as client:
        assert client.call_tool("whoami").text == f"alice | mcp:tools | client:{issuer}#alice"
    with httpx.Client(base_url=server, timeout=10) as http:
        session = LegacySession(http, token=record["tokens"]["access_token"])
        session.initialize()
        whoami = session.exchange(legacy_call(1, "whoami")).result["content"][0]["text"]
        assert whoami.endswith(f" | {issuer}#alice")
        stolen = session.post(legacy_call(2, "whoami"), Authorization=f"Bearer {client_token}")
        assert stolen.status_code == 404


def test_the_protected_resource_metadata_names_the_provider(server: str, issuer: str) -> None:
    import httpx

    document = httpx.get(server.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")).json()
    assert document["resource"] == server and document["authorization_servers"] == [issuer]
    assert set(document["scopes_supported"]) == {"mcp:tools", "mcp:admin"}
    challenge = httpx.post(server, json={}).headers["www-authenticate"]
    assert "resource_metadata=" in challenge and 'scope="mcp:tools"' in challenge


def test_opaque_tokens_are_checked_by_introspection(issuer: str) -> None:
    from mcpgen_runtime.server import IntrospectionVerifier

    resource = "http://127.0.0.1:9/opaque"
    token = machine_token(issuer, resource)
    assert token.count(".") != 2  # not a JWT

    def verifier(audience: str) -> IntrospectionVerifier:
        return IntrospectionVerifier(
            f"{issuer}/token/introspection",
            audience=audience,
            issuer=issuer,
            client_id="machine",
            client_secret="machine-secret-0123456789",
        )

    principal = asyncio.run(verifier(resource)(token))
    assert principal is not None and "mcp:tools" in principal.scopes and principal.client_id == "machine"
    assert asyncio.run(verifier("http://127.0.0.1:9/other")(token)) is None  # another audience (AUTH-23)
    assert asyncio.run(verifier(resource)("not-a-token")) is None
