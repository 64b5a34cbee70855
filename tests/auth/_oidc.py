"""The real authorization server of the OAuth tests (oidc-provider on Node 22, tests/peers/oidc)
and the person at its login page, played without a browser."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from urllib.parse import urljoin

import httpx

from tests.support import NODE, OIDC_PROVIDER, PYTHON, free_port, needs_peer, running_server

__all__ = ["BrowserlessLogin", "follow_login", "machine_token", "oidc_provider", "protected_server"]


@contextlib.contextmanager
def oidc_provider(*, ttl: int = 300, scopes: str = "mcp:tools", dpop_nonce: bool = False) -> Iterator[str]:
    """Start oidc-provider on loopback; yields its issuer URL. `dpop_nonce`: its token endpoint asks
    DPoP clients for a nonce it supplies (RFC 9449 §8)."""
    needs_peer(OIDC_PROVIDER.parent / "node_modules" / "oidc-provider", "the oidc-provider npm package")
    needs_peer(NODE, "Node 22 (conformance/node_modules)")
    port = free_port()
    env = {"ACCESS_TOKEN_TTL": str(ttl), "RESOURCE_SCOPES": scopes, "DPOP_NONCE": "1" if dpop_nonce else "0"}
    with running_server([str(NODE), str(OIDC_PROVIDER), str(port)], port, env=env):
        yield f"http://127.0.0.1:{port}"


@contextlib.contextmanager
def protected_server(
    issuer: str,
    *extra: str,
    jwks_uri: str | None = None,
    resource: str | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[str]:
    """The generated weather server (+ whoami) protected by `issuer`; yields its MCP URL.
    `resource`: its public URL (default: that URL), one that replicas behind one address share."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    args = [
        PYTHON,
        "-m",
        "tests.auth.oauth_server_app",
        "--http",
        "--port",
        str(port),
        "--oauth-issuer",
        issuer,
        "--resource",
        resource or url,
        "--scope",
        "mcp:tools",
        *extra,
    ]
    if jwks_uri is not None:
        args += ["--jwks-uri", jwks_uri]
    with running_server(args, port, env=env):
        yield url


def follow_login(url: str, redirect_prefix: str, user: str = "alice") -> str:
    """Play the person at oidc-provider's development login and consent pages (any user name and
    password) from the authorization URL on; returns the redirect to `redirect_prefix`."""
    with httpx.Client(follow_redirects=False, timeout=10) as http:
        response = http.get(url)
        for _ in range(12):
            if response.is_redirect:
                location = urljoin(str(response.url), response.headers["location"])
                if location.startswith(redirect_prefix):
                    return location
                response = http.get(location)
                continue
            prompt = re.search(r'name="prompt" value="(\w+)"', response.text)
            action = re.search(r'action="([^"]+)"', response.text)
            if response.status_code != 200 or prompt is None or action is None:
                raise AssertionError(f"unexpected page: HTTP {response.status_code} {response.text[:300]}")
            form = {"prompt": prompt[1]}
            if prompt[1] == "login":
                form |= {"login": user, "password": "any"}
            response = http.post(urljoin(str(response.url), action[1]), data=form)
    raise AssertionError("the login did not come back to the redirect URI")


class BrowserlessLogin:
    """A `RedirectHandler` that logs in with `follow_login` and returns the redirect to
    `redirect_uri`, which nothing has to listen on."""

    def __init__(self, user: str = "alice") -> None:
        self.user = user
        self.redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
        self.logins = 0

    def authorize(self, url: str) -> str:
        self.logins += 1
        return follow_login(url, self.redirect_uri, self.user)


def machine_token(issuer: str, resource: str, scope: str = "mcp:tools", client: str = "machine") -> str:
    """An access token for `resource` from one of the provider's client-credentials clients
    ("machine", or "alice", named like a user)."""
    response = httpx.post(
        f"{issuer}/token",
        auth=(client, f"{client}-secret-0123456789"),
        data={"grant_type": "client_credentials", "resource": resource, "scope": scope},
        timeout=10,
    )
    response.raise_for_status()
    token: str = response.json()["access_token"]
    return token
