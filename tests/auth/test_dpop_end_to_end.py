"""DPoP end to end with mcpgen on both sides (issue 36): our client logs in to the real oidc-provider
(which, here, asks for a DPoP nonce at its token endpoint) as the `machine` client, gets a DPoP-bound
token, and calls the generated weather server started with `--dpop required --dpop-nonce` (a nonce
of its own): both nonces are answered once, every request carries a fresh proof, the key is kept
with the token in the store and a second client reuses both. The token alone, without its key, is
refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mcpgen_runtime.client import Client
from mcpgen_runtime.client.oauth import FileTokenStore, OAuth
from mcpgen_runtime.protocol.oauth.dpop import DPoPKey
from tests.auth._oidc import oidc_provider, protected_server
from tests.runtime.server_helpers import call, mcp_headers

pytestmark = pytest.mark.timeout(120)
STATE_SECRET = "dpop-end-to-end-state-secret-0123456789"


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    with oidc_provider(dpop_nonce=True) as url:
        yield url


@pytest.fixture(scope="module")
def server(issuer: str) -> Iterator[str]:
    env = {"MCPGEN_STATE_SECRET": STATE_SECRET}
    with protected_server(issuer, "--dpop", "required", "--dpop-nonce", env=env) as url:
        yield url


def login(store: FileTokenStore, dpop: str = "auto") -> OAuth:
    return OAuth(
        client_id="machine",
        client_secret="machine-secret-0123456789",
        grant="client_credentials",
        store=store,
        dpop=dpop,  # type: ignore[arg-type]
        timeout=10,
    )


def test_a_dpop_login_and_calls_through_both_nonces(server: str, tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "tokens.json")
    with Client(server, auth=login(store), tools=()) as client:
        first = client.call_tool("whoami", {})
        second = client.call_tool("whoami", {})  # a fresh proof: the server refuses a replayed one
    assert not first.is_error and first.text == second.text and "machine" in first.text
    (record,) = [
        value for key, value in json.loads((tmp_path / "tokens.json").read_text()).items() if "tokens" in key
    ]
    assert record["tokens"]["token_type"] == "DPoP" and "d" in record["dpop_key"]  # the key, kept (0600 file)
    # a second client (another process, say) reuses the stored token and key: no new login
    with Client(server, auth=login(store), tools=()) as again:
        assert again.call_tool("whoami", {}).text == first.text
    # the token without its key: refused, with a proof of another key or as a bearer token
    token = record["tokens"]["access_token"]
    message = call(1, "whoami", {})
    for headers in (
        {
            "Authorization": f"DPoP {token}",
            "DPoP": DPoPKey.generate().proof("POST", server, access_token=token),
        },
        {"Authorization": f"Bearer {token}"},
    ):
        refused = httpx.post(server, json=message, headers={**mcp_headers(message), **headers}, timeout=10)
        assert refused.status_code == 401


def test_dpop_auto_is_used_because_the_server_and_its_authorization_server_say_so(
    server: str, tmp_path: Path
) -> None:
    """`dpop="off"` gets a bearer token, which this server refuses: DPoP is what made the login work."""
    store = FileTokenStore(tmp_path / "tokens.json")
    from mcpgen_runtime.errors import AuthorizationError

    with Client(server, auth=login(store, dpop="off"), tools=()) as client, pytest.raises(AuthorizationError):
        client.call_tool("whoami", {})
