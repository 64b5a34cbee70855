"""The `auth/*` client scenarios of the conformance harness (docs/RULES.md AUTH-01..18): mcpgen's
client logs in through `auth=OAuth(...)`, then lists the tools and calls `test-tool`.

conformance/client.py hands every `auth/` scenario to `run`. The harness's authorization server
answers the authorization request with an immediate 302 (no user), so the redirect step here
reads the `Location` of that answer instead of opening a browser; tokens live in memory (the
harness runs scenarios in parallel processes). Scenarios that expect the client to refuse
(resource mismatch, bad `iss`, poisoned metadata, the step-up retry limit) end with an
AuthorizationError, which exits 1: the harness allows client errors there.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx

from mcpgen_runtime.client import Client
from mcpgen_runtime.client.oauth import EnterpriseIdP, MemoryTokenStore, OAuth
from mcpgen_runtime.errors import AuthorizationError

# The Client ID Metadata Document URL the harness expects (auth/basic-cimd); nothing fetches it.
CIMD_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://localhost:3000/callback"


class HeadlessRedirect:
    """Follows the authorization URL once, without a browser, and returns where it redirects."""

    redirect_uri = REDIRECT_URI

    def authorize(self, url: str) -> str:
        response = httpx.get(url, follow_redirects=False, timeout=10)
        location = response.headers.get("location")
        if not response.is_redirect or not location:
            raise AuthorizationError(
                f"the authorization endpoint answered HTTP {response.status_code}, not a redirect"
            )
        return location


def context(scenario: str) -> dict[str, Any]:
    """MCP_CONFORMANCE_CONTEXT when it belongs to this scenario (it may be inherited otherwise)."""
    try:
        data = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) and data.get("name") == scenario else {}


def oauth_for(scenario: str) -> OAuth:
    data = context(scenario)
    enterprise = None
    if data.get("idp_id_token"):  # auth/enterprise-managed-authorization (SEP-990)
        enterprise = EnterpriseIdP(
            issuer=data["idp_issuer"],
            client_id=data["idp_client_id"],
            # the tests' refused login: an ID token the identity provider did not sign
            id_token=os.environ.get("MCPGEN_CONFORMANCE_IDP_TOKEN") or data["idp_id_token"],
            token_endpoint=data.get("idp_token_endpoint"),
        )
    # auth/wif-jwt-bearer (SEP-1933): the workload's token; the tests' refused logins pick
    # `expired_jwt` or `wrong_audience_jwt` from the context instead
    workload = data.get(os.environ.get("MCPGEN_CONFORMANCE_WIF_TOKEN") or "valid_jwt")
    return OAuth(
        assertion=workload,
        enterprise=enterprise,
        client_id=data.get("client_id"),
        client_secret=data.get("client_secret"),
        private_key=data.get("private_key_pem"),
        signing_alg=data.get("signing_algorithm") or "ES256",
        issuer=data.get("issuer"),
        client_metadata_url=CIMD_URL,
        client_name="mcpgen-conformance-client",
        grant="client_credentials" if scenario.startswith("auth/client-credentials") else "auto",
        redirect=HeadlessRedirect(),
        store=MemoryTokenStore(),
        timeout=10,
    )


def run(scenario: str, url: str, client_info: dict[str, str]) -> None:
    with Client(url, client_info=client_info, auth=oauth_for(scenario)) as client:
        client.list_tools()
        client.call_tool("test-tool", {})
