"""Logins without a person (issue 36): workload tokens read from a file, the environment or the GitHub
Actions OIDC endpoint (a loopback server playing the runner's), bounded and masked; the settings that
make no sense together refused at once; DPoP proofs as RFC 9449 §4 describes them."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from mcpgen_runtime.client.oauth import EnterpriseIdP, OAuth, github_actions_token, workload_token
from mcpgen_runtime.client.oauth.identity import MAX_ASSERTION_CHARS
from mcpgen_runtime.errors import AuthorizationError
from mcpgen_runtime.masking import masked
from mcpgen_runtime.protocol.oauth.challenge import challenge_of
from mcpgen_runtime.protocol.oauth.dpop import DPoPKey, DPoPProofError, access_token_hash, check_proof

JWT = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZC0xIn0.c2lnbmF0dXJlLW9mLXRoZS13b3JrbG9hZA"


def test_a_workload_token_file_is_read_at_each_login_and_masked(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text(JWT + "\n")
    read = workload_token(file=path)
    assert read() == JWT
    path.write_text(JWT + "X")  # the platform rotated it
    assert read() == JWT + "X"
    assert masked(f"the server said {JWT}X") == "the server said ***"


def test_a_workload_token_is_bounded_and_errors_name_where_it_was_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(AuthorizationError, match=r"cannot read the workload token file .*missing"):
        workload_token(file=tmp_path / "missing")()
    big = tmp_path / "big"
    big.write_text("e" * (MAX_ASSERTION_CHARS + 10))
    with pytest.raises(AuthorizationError, match=f"longer than {MAX_ASSERTION_CHARS}"):
        workload_token(file=big)()
    monkeypatch.delenv("WIF_TOKEN", raising=False)
    with pytest.raises(AuthorizationError, match=r"WIF_TOKEN .* is not set"):
        workload_token(env="WIF_TOKEN")()
    monkeypatch.setenv("WIF_TOKEN", "two words")
    with pytest.raises(AuthorizationError, match="not a JWT"):
        workload_token(env="WIF_TOKEN")()
    monkeypatch.setenv("WIF_TOKEN", JWT)
    assert workload_token(env="WIF_TOKEN")() == JWT
    with pytest.raises(ValueError, match="exactly one"):
        workload_token()


class _Runner(BaseHTTPRequestHandler):
    """The GitHub Actions runner's OIDC endpoint: GET ?audience=… with the request token as bearer."""

    seen: list[dict[str, Any]] = []  # noqa: RUF012 - one test at a time uses it

    def do_GET(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        _Runner.seen.append({"audience": query.get("audience"), "auth": self.headers.get("Authorization")})
        if self.headers.get("Authorization") != "Bearer runner-request-token":
            self.send_error(401)
            return
        body = json.dumps({"value": JWT}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def runner() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Runner)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Runner.seen.clear()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/token?api-version=2.0"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.peer
def test_a_github_actions_token_is_asked_for_with_the_audience(
    runner: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = github_actions_token("https://auth.example.com")
    monkeypatch.delenv("ACTIONS_ID_TOKEN_REQUEST_URL", raising=False)
    with pytest.raises(AuthorizationError, match="id-token: write"):
        read()
    monkeypatch.setenv("ACTIONS_ID_TOKEN_REQUEST_URL", runner)
    monkeypatch.setenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "runner-request-token")
    assert read() == JWT
    assert _Runner.seen == [{"audience": ["https://auth.example.com"], "auth": "Bearer runner-request-token"}]
    monkeypatch.setenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "wrong")
    with pytest.raises(AuthorizationError, match="HTTP 401"):
        read()


def test_settings_that_do_not_go_together_are_refused_at_once() -> None:
    idp = EnterpriseIdP(issuer="https://idp.example.com", client_id="at-idp", id_token=JWT)
    with pytest.raises(ValueError, match="pass one"):
        OAuth(client_id="c", assertion=JWT, enterprise=idp)
    with pytest.raises(ValueError, match="needs client_id"):
        OAuth(enterprise=idp)
    with pytest.raises(ValueError, match="needs assertion"):
        OAuth(grant="jwt_bearer")
    with pytest.raises(ValueError, match="dpop must be"):
        OAuth(dpop="sometimes")  # type: ignore[arg-type]
    assert OAuth(assertion=JWT).chosen_grant == "jwt_bearer"
    assert OAuth(client_id="c", enterprise=idp).chosen_grant == "enterprise"
    assert JWT not in repr(OAuth(assertion=JWT)) and JWT not in repr(idp)
    with pytest.raises(ValueError, match="http"):
        EnterpriseIdP(issuer="idp.example.com", client_id="x", id_token=JWT)


def test_a_dpop_proof_is_fresh_bound_to_the_request_and_checked() -> None:
    key = DPoPKey.generate()
    first = key.proof("POST", "https://mcp.example.com/mcp?session=1", access_token="at-1", nonce="n-1")
    second = key.proof("POST", "https://mcp.example.com/mcp", access_token="at-1")
    checked = check_proof(first, method="POST", url="https://MCP.example.com:443/mcp", access_token="at-1")
    assert checked.jkt == key.thumbprint and checked.nonce == "n-1"
    assert checked.jti != check_proof(second, method="POST", url="https://mcp.example.com/mcp").jti
    for wrong, message in [
        ({"method": "GET", "url": "https://mcp.example.com/mcp"}, "htm"),
        ({"method": "POST", "url": "https://mcp.example.com/other"}, "htu"),
        ({"method": "POST", "url": "https://mcp.example.com/mcp", "access_token": "at-2"}, "ath"),
        ({"method": "POST", "url": "https://mcp.example.com/mcp", "now": 10**10}, "iat"),
    ]:
        with pytest.raises(DPoPProofError, match=message):
            check_proof(first, **wrong)
    with pytest.raises(DPoPProofError, match="more than one"):
        check_proof(f"{first},{second}", method="POST", url="https://mcp.example.com/mcp")
    assert access_token_hash("at-1") != access_token_hash("at-2")
    assert "d" not in json.loads(json.dumps(key.public_jwk)) and repr(key) == "DPoPKey()"
    assert DPoPKey.from_dict({"kty": "EC"}) is None


def test_a_client_reads_bearer_and_dpop_challenges() -> None:
    both = 'Bearer resource_metadata="https://a/prm", DPoP error="use_dpop_nonce", algs="ES256"'
    bearer = challenge_of(both)
    dpop = challenge_of(both, prefer_dpop=True)
    assert bearer is not None and bearer.scheme == "bearer"
    assert dpop is not None and dpop.scheme == "dpop" and dpop.error == "use_dpop_nonce"
    only = challenge_of('DPoP resource_metadata="https://a/prm"')
    assert only is not None and only.resource_metadata == "https://a/prm"
    assert challenge_of('Basic realm="x"') is None
