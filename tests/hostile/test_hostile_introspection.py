"""Token introspection under hostile tokens and a failing endpoint (issue 31, item 3).

A protected server on loopback (uvicorn in this process) checks its tokens with
`IntrospectionVerifier` at a real introspection endpoint on loopback (tests/auth/_protected.py
`IntrospectionServer`), which counts the requests it read, the connections they came on, and the
most it was answering at once. The verifier's defaults: at most 8 checks in flight, refusals
remembered for 10 s; the deadline is 1 s here.

- 80 different bogus tokens at once: each checked once, never more than 8 at a time; the same 80
  again: not one check. (Before: 80 checks, up to 79 at a time, and 80 more.)
- One bogus token 40 times at once, then 40 times one after another: one check. (Before: 79.)
- The endpoint fails (500, a reset, no answer, a byte a second, 50 MB): 80 tokens at once are all
  answered 401 within the deadline plus a margin, never more than 8 checks at a time (at most 16
  in all when none ends before its deadline), under 16 MB traced meanwhile. (Before: up to 24 s
  with a dripping endpoint; 50 MB answers read whole, 432 MB traced for 8 tokens.)
- One pooled client: 50 tokens checked one after another use one connection and little CPU each
  (before: 50 connections and 30 ms of CPU per check, a new client each time).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
import tracemalloc
from collections.abc import Iterator
from typing import NamedTuple

import pytest

from mcpgen_runtime.server import IntrospectionVerifier, ServerConfig
from mcpgen_runtime.server.auth.oauth import ProtectedResource
from tests.auth._protected import ISSUER, IntrospectionServer, ScopedServer, burst, serving
from tests.support import free_port

pytestmark = pytest.mark.timeout(60)

DEADLINE_S = 1.0
MARGIN_S = 4.0  # a busy 2-core machine, on top of a deadline
IN_FLIGHT = 8  # IntrospectionVerifier's default max_concurrent
MIB = 1024 * 1024


class Protected(NamedTuple):
    url: str
    verifier: IntrospectionVerifier


@contextlib.contextmanager
def protected(endpoint: IntrospectionServer, *, timeout: float = DEADLINE_S) -> Iterator[Protected]:
    """A ScopedServer whose tokens `endpoint` introspects; every request needs mcp:tools."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    verifier = IntrospectionVerifier(
        endpoint.url,
        audience=url,
        issuer=ISSUER,
        client_id="resource-server",
        client_secret="resource-server-secret",
        timeout=timeout,
    )
    resource = ProtectedResource(
        verify=verifier, resource=url, authorization_servers=(ISSUER,), scopes=("mcp:tools",)
    )
    server = ScopedServer(
        ServerConfig(auth=resource, state_secrets=("introspection-test-secret-0123456789",))
    )
    with serving(server.asgi_app(), port):
        yield Protected(url, verifier)


@pytest.fixture
def endpoint() -> Iterator[IntrospectionServer]:
    with IntrospectionServer() as server:
        yield server


def bogus(count: int) -> list[str]:
    return [secrets.token_urlsafe(24) for _ in range(count)]


def test_concurrent_bogus_tokens_are_each_checked_once_a_few_at_a_time(endpoint: IntrospectionServer) -> None:
    """80 different bogus tokens at once, the endpoint taking 0.1 s per answer: 80 checks, at most 8
    at a time, every request 401; the same 80 again: no check, answered at once."""
    endpoint.delay = 0.1
    tokens = bogus(80)
    with protected(endpoint, timeout=5.0) as p:
        first = asyncio.run(burst(p.url, tokens))
        assert {status for status, _ in first} == {401}
        assert endpoint.hits == 80
        assert endpoint.peak <= IN_FLIGHT
        assert max(seconds for _, seconds in first) < 80 / IN_FLIGHT * endpoint.delay + MARGIN_S

        again = asyncio.run(burst(p.url, tokens))
        assert {status for status, _ in again} == {401}
        assert endpoint.hits == 80  # remembered refusals
        assert max(seconds for _, seconds in again) < MARGIN_S

        good = secrets.token_urlsafe(24)
        endpoint.answers[good] = {"active": True, "sub": "alice", "scope": "mcp:tools", "aud": p.url}
        assert asyncio.run(burst(p.url, [good]))[0][0] == 200


def test_one_bogus_token_repeated_is_checked_once(endpoint: IntrospectionServer) -> None:
    """One bogus token in 40 requests at once (the endpoint taking 0.3 s), then in 40 requests one
    after another: one check."""
    endpoint.delay = 0.3
    token = bogus(1)[0]
    with protected(endpoint) as p:
        at_once = asyncio.run(burst(p.url, [token] * 40))
        assert {status for status, _ in at_once} == {401}
        assert endpoint.hits == 1
        for _ in range(40):
            assert asyncio.run(burst(p.url, [token]))[0][0] == 401
        assert endpoint.hits == 1


@pytest.mark.parametrize("mode", ["500", "reset", "silent", "drip", "huge"])
def test_a_failing_endpoint_is_answered_401_within_the_deadline(
    endpoint: IntrospectionServer, mode: str
) -> None:
    """80 bogus tokens at once, the endpoint failing: every request 401 within the 1 s deadline
    (waiting for a slot included), at most 8 checks at a time, under 16 MB traced meanwhile."""
    endpoint.mode = mode
    with protected(endpoint) as p:
        tracemalloc.start()
        try:
            before, _ = tracemalloc.get_traced_memory()
            answers = asyncio.run(burst(p.url, bogus(80)))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert {status for status, _ in answers} == {401}
        assert max(seconds for _, seconds in answers) < DEADLINE_S + MARGIN_S
        assert endpoint.peak <= IN_FLIGHT
        if mode in ("silent", "drip"):  # a check ends by the deadline only: each slot serves one or two
            assert endpoint.hits <= 2 * IN_FLIGHT
        assert peak - before < 16 * MIB


def test_checks_share_one_pooled_client(endpoint: IntrospectionServer) -> None:
    """50 active tokens checked one after another: one connection to the endpoint, and little
    CPU per check (the process's, endpoint included; before, each check built a client)."""
    tokens = bogus(50)
    for token in tokens:
        endpoint.answers[token] = {"active": True, "sub": token[:8], "scope": "mcp:tools"}
    verifier = IntrospectionVerifier(
        endpoint.url, audience="http://127.0.0.1/mcp", issuer=ISSUER, client_id="rs", client_secret="s"
    )

    async def check_all() -> list[object]:
        return [await verifier(token) for token in tokens]

    started = time.process_time()
    principals = asyncio.run(check_all())
    cpu_per_check = (time.process_time() - started) / len(tokens)
    assert all(principal is not None for principal in principals)
    assert endpoint.hits == 50 and endpoint.connections == 1
    assert cpu_per_check < 0.010
