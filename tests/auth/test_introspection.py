"""`IntrospectionVerifier` (RFC 7662) against a real introspection endpoint on loopback
(tests/auth/_protected.py `IntrospectionServer`): whom an answer names, what is remembered, and
what stops it at start. Its bounds under hostile tokens: tests/hostile/test_hostile_introspection.py.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpgen_runtime.server import IntrospectionVerifier, RateLimit, ServerConfig, TokenPrincipal
from mcpgen_runtime.server.auth.oauth import ProtectedResource
from tests.auth._protected import ISSUER, IntrospectionServer, ScopedServer, serving
from tests.runtime import legacy_helpers as legacy
from tests.runtime.server_helpers import call, mcp_headers
from tests.support import free_port

pytestmark = pytest.mark.timeout(60)

AUDIENCE = "http://127.0.0.1:9/mcp"


@pytest.fixture
def endpoint() -> Iterator[IntrospectionServer]:
    with IntrospectionServer() as server:
        yield server


def verifier_of(endpoint: IntrospectionServer, **options: Any) -> IntrospectionVerifier:
    options = {"issuer": ISSUER, "audience": AUDIENCE, **options}
    return IntrospectionVerifier(endpoint.url, client_id="rs", client_secret="rs-secret", **options)


def introspect(
    endpoint: IntrospectionServer, answer: dict[str, Any], **options: Any
) -> TokenPrincipal | None:
    token = secrets.token_urlsafe(16)
    endpoint.answers[token] = {"active": True, **answer}
    return asyncio.run(verifier_of(endpoint, **options)(token))


def test_subjects_usernames_and_client_ids_are_separate_namespaces(endpoint: IntrospectionServer) -> None:
    """`sub` names a user, else `username` a user by name, else `client_id` the client itself (as
    does a `sub` equal to the `client_id`): three kinds, three prefixes, never one string."""
    cases = [
        ({"sub": "alice"}, "user", f"{ISSUER}#alice"),
        ({"sub": "alice", "username": "bob", "client_id": "app"}, "user", f"{ISSUER}#alice"),
        ({"username": "alice"}, "username", f"username:{ISSUER}#alice"),
        ({"username": "alice", "client_id": "app"}, "username", f"username:{ISSUER}#alice"),
        ({"client_id": "alice"}, "client", f"client:{ISSUER}#alice"),
        ({"sub": "alice", "client_id": "alice"}, "client", f"client:{ISSUER}#alice"),
    ]
    for answer, kind, name in cases:
        principal = introspect(endpoint, answer)
        assert principal is not None and (principal.kind, str(principal)) == (kind, name), answer
    assert str(introspect(endpoint, {"sub": f"client:{ISSUER}#alice"})) == f"{ISSUER}#client:{ISSUER}#alice"


@pytest.mark.parametrize(
    "answer",
    [
        {},
        {"scope": "mcp:tools", "aud": AUDIENCE},
        {"sub": ""},
        {"sub": 7},
        {"username": ["alice"]},
        {"sub": "alice", "client_id": 3},
    ],
    ids=["nothing", "scopes only", "empty sub", "numeric sub", "list username", "numeric client_id"],
)
def test_an_active_token_naming_no_one_is_refused(
    endpoint: IntrospectionServer, answer: dict[str, Any]
) -> None:
    """Before, every such token was `ISSUER#unknown`: one principal for all of them."""
    assert introspect(endpoint, answer) is None


def test_the_issuer_of_a_principal(endpoint: IntrospectionServer) -> None:
    """The configured issuer; without one, the answer's `iss` when it is an issuer URL, else the
    endpoint's URL. An answer from another issuer than the configured one is refused."""
    assert introspect(endpoint, {"sub": "a", "iss": "https://elsewhere.example"}) is None
    other = introspect(endpoint, {"sub": "a", "iss": "https://elsewhere.example"}, issuer=None)
    assert str(other) == "https://elsewhere.example#a"
    for iss in ("client:https://as.example", "https://as.example#x", None):
        answer = {"sub": "a"} if iss is None else {"sub": "a", "iss": iss}
        assert str(introspect(endpoint, answer, issuer=None)) == f"{endpoint.url}#a"


def test_audience_and_expiry_are_checked(endpoint: IntrospectionServer) -> None:  # AUTH-23
    assert introspect(endpoint, {"sub": "a", "aud": "https://other.example/mcp"}) is None
    assert introspect(endpoint, {"sub": "a", "aud": ["https://other.example/mcp", AUDIENCE]}) is not None
    assert introspect(endpoint, {"sub": "a", "exp": int(time.time()) - 5}) is None


def test_a_refusal_is_remembered_briefly_and_a_failure_not_at_all(endpoint: IntrospectionServer) -> None:
    """An inactive token is refused again without asking for `refused_cache_s`; when the endpoint
    failed (500) the next request asks again, and a token active by then is accepted."""
    verifier = verifier_of(endpoint, refused_cache_s=0.5)
    token = secrets.token_urlsafe(16)

    async def scenario() -> None:
        assert await verifier(token) is None and await verifier(token) is None
        assert endpoint.hits == 1
        await asyncio.sleep(0.6)
        endpoint.answers[token] = {"active": True, "sub": "alice"}
        assert str(await verifier(token)) == f"{ISSUER}#alice"
        assert endpoint.hits == 2

        failing = secrets.token_urlsafe(16)
        endpoint.mode = "500"
        assert await verifier(failing) is None and await verifier(failing) is None
        assert endpoint.hits == 4
        endpoint.mode = "answer"
        endpoint.answers[failing] = {"active": True, "sub": "bob"}
        assert str(await verifier(failing)) == f"{ISSUER}#bob"
        await verifier.aclose()

    asyncio.run(scenario())


def test_a_caller_that_leaves_does_not_cancel_the_check(endpoint: IntrospectionServer) -> None:
    """Two requests with one token share one check; the first leaving does not end it for the
    second, and its answer is remembered."""
    endpoint.delay = 0.3
    token = secrets.token_urlsafe(16)
    endpoint.answers[token] = {"active": True, "sub": "alice"}
    verifier = verifier_of(endpoint)

    async def scenario() -> None:
        leaving = asyncio.ensure_future(verifier(token))
        staying = asyncio.ensure_future(verifier(token))
        for _ in range(500):  # until the check is at the endpoint
            if endpoint.hits:
                break
            await asyncio.sleep(0.01)
        leaving.cancel()
        assert str(await staying) == f"{ISSUER}#alice"
        assert str(await verifier(token)) == f"{ISSUER}#alice"

    asyncio.run(scenario())
    assert endpoint.hits == 1


@pytest.mark.parametrize(
    "options",
    [
        {"endpoint": "ftp://as.example/introspect"},
        {"endpoint": "https://as.example/introspect#x"},
        {"endpoint": "/introspect"},
        {"issuer": "as.example"},
        {"issuer": "client:https://as.example"},
        {"max_concurrent": 0},
        {"timeout": 0},
        {"refused_cache_s": -1},
    ],
)
def test_bad_configuration_stops_at_construction(options: dict[str, Any]) -> None:
    endpoint = options.pop("endpoint", "https://as.example/introspect")
    with pytest.raises(ValueError):
        IntrospectionVerifier(endpoint, audience=AUDIENCE, client_id="rs", client_secret="s", **options)


def test_a_username_is_not_the_user_with_that_sub(endpoint: IntrospectionServer) -> None:
    """Through a protected server: `username` alice and `sub` alice are different principals, so
    neither can use the other's legacy session or spend the other's rate limit (a bucket of 2)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    verifier = IntrospectionVerifier(
        endpoint.url, audience=url, issuer=ISSUER, client_id="rs", client_secret="s"
    )
    resource = ProtectedResource(
        verify=verifier, resource=url, authorization_servers=(ISSUER,), scopes=("mcp:tools",)
    )
    config = ServerConfig(
        auth=resource,
        rate_limit=RateLimit(rate=0.01, burst=2),
        state_secrets=("introspection-test-secret-0123456789",),
    )
    by_name, by_sub = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    endpoint.answers[by_name] = {"active": True, "username": "alice", "scope": "mcp:tools"}
    endpoint.answers[by_sub] = {"active": True, "sub": "alice", "scope": "mcp:tools"}
    with serving(ScopedServer(config).asgi_app(), port), httpx.Client(base_url=url, timeout=10) as http:
        session = legacy.LegacySession(http, token=by_name)
        session.initialize()
        mine = session.exchange(legacy.call(1, "me")).result  # username alice: 1
        assert mine["content"][0]["text"] == f"username:{ISSUER}#alice"
        assert session.post(legacy.call(2, "me"), Authorization=f"Bearer {by_sub}").status_code == 404

        def me(token: str) -> dict[str, Any]:
            message = call(3, "me", {})
            headers = {**mcp_headers(message), "Authorization": f"Bearer {token}"}
            return dict(http.post("", content=json.dumps(message).encode(), headers=headers).json()["result"])

        assert me(by_name)["isError"] is False  # username alice: 2
        assert me(by_name)["isError"] is True  # over her budget
        theirs = me(by_sub)  # sub alice: a bucket of its own
        assert theirs["isError"] is False and theirs["content"][0]["text"] == f"{ISSUER}#alice"
