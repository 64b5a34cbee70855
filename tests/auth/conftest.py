"""The real authorization server and a server it protects, started once per session for the
authorization tests (tests/auth/_oidc.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.auth._oidc import oidc_provider, protected_server


@pytest.fixture(scope="session")
def issuer() -> Iterator[str]:
    """oidc-provider with 5-minute access tokens; resource servers may be granted mcp:tools."""
    with oidc_provider(ttl=300, scopes="mcp:tools") as url:
        yield url


@pytest.fixture(scope="session")
def server(issuer: str) -> Iterator[str]:
    """The generated weather server (+ whoami) protected by `issuer`: mcp:tools for everything,
    mcp:admin for execute_sql."""
    with protected_server(issuer) as url:
        yield url
