"""DPoP on the server (RFC 9449 §7), end to end: the real oidc-provider issues DPoP-bound tokens
(`cnf.jkt`) to a client-credentials request carrying a proof, and the generated weather server,
started with `--dpop allowed|required`, serves a request only with a fresh proof of the bound
key for its method, URL and token; a proof is used once, also across two replicas sharing one
Redis. A DPoP-bound token presented as a bearer token is refused whatever the setting.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey
from starlette.applications import Starlette
from starlette.routing import Mount

from mcpgen_runtime.protocol.oauth.challenge import Challenge, parse_challenges
from mcpgen_runtime.protocol.oauth.dpop import DPoPKey
from mcpgen_runtime.server import ServerConfig
from mcpgen_runtime.server.auth.dpop import NonceIssuer
from mcpgen_runtime.server.auth.oauth import ProtectedResource, TokenPrincipal
from mcpgen_runtime.server.store import MemoryStore
from tests.auth._oidc import machine_token, protected_server
from tests.auth._protected import ScopedServer, serving
from tests.redis_server import running_redis
from tests.runtime.server_helpers import call, mcp_headers
from tests.support import PYTHON, ROOT, free_port

pytestmark = pytest.mark.timeout(120)

STATE_SECRET = "dpop-tests-shared-state-secret-0123456789"


@pytest.fixture(scope="module")
def allowing(issuer: str) -> Iterator[str]:
    with protected_server(issuer, "--dpop", "allowed") as url:
        yield url


@pytest.fixture(scope="module")
def requiring(issuer: str) -> Iterator[str]:
    with protected_server(issuer, "--dpop", "required") as url:
        yield url


def dpop_token(issuer: str, resource: str, key: DPoPKey, scope: str = "mcp:tools") -> str:
    """A client-credentials token for `resource` bound to `key` (the token request carries a proof)."""
    response = httpx.post(
        f"{issuer}/token",
        auth=("machine", "machine-secret-0123456789"),
        data={"grant_type": "client_credentials", "resource": resource, "scope": scope},
        headers={"DPoP": key.proof("POST", f"{issuer}/token")},
        timeout=10,
    )
    response.raise_for_status()
    assert response.json()["token_type"] == "DPoP"
    token: str = response.json()["access_token"]
    return token


def whoami(
    url: str, token: str | None, *proofs: str, scheme: str = "DPoP", tool: str = "whoami"
) -> httpx.Response:
    message = call(1, tool, {})
    headers: list[tuple[str, str]] = list(mcp_headers(message).items())
    if token is not None:
        headers.append(("Authorization", f"{scheme} {token}"))
    headers += [("DPoP", proof) for proof in proofs]
    return httpx.post(url, json=message, headers=headers, timeout=10)


def challenges(response: httpx.Response) -> dict[str, Challenge]:
    """The response's challenges by scheme (several WWW-Authenticate fields are one list)."""
    value = ", ".join(response.headers.get_list("www-authenticate"))
    return {challenge.scheme: challenge for challenge in parse_challenges(value)}


def served(response: httpx.Response) -> str:
    text: str = served_response(response).json()["result"]["content"][0]["text"]
    return text


def served_response(response: httpx.Response) -> httpx.Response:
    assert response.status_code == 200, (response.status_code, response.headers.get("www-authenticate"))
    return response


def refused(response: httpx.Response, error: str, *, bearer: bool) -> Challenge:
    """The DPoP challenge of a 401 whose error is `error`; a plain Bearer challenge with it when
    bearer tokens are taken too."""
    assert response.status_code == 401, response.text
    found = challenges(response)
    dpop = found["dpop"]
    assert dpop.error == error and "ES256" in dpop.params["algs"].split()
    assert dpop.resource_metadata and dpop.scopes == ("mcp:tools",)
    if bearer:
        assert found["bearer"].error is None and found["bearer"].resource_metadata == dpop.resource_metadata
    else:
        assert "bearer" not in found
    return dpop


def test_a_bound_token_with_a_fresh_proof_of_its_key_is_served(issuer: str, requiring: str) -> None:
    key = DPoPKey.generate()
    token = dpop_token(issuer, requiring, key)
    assert served(whoami(requiring, token, key.proof("POST", requiring, access_token=token))).endswith(
        f"client:{issuer}#machine"
    )
    # every request carries a new proof
    served(whoami(requiring, token, key.proof("POST", requiring, access_token=token)))


def replayed(issuer: str, first: str, then: str, *, bearer: bool) -> None:
    """A proof for `first` (the public URL) served there is refused at `then`, where a new one is served."""
    key = DPoPKey.generate()
    token = dpop_token(issuer, first, key)
    proof = key.proof("POST", first, access_token=token)
    served(whoami(first, token, proof))
    dpop = refused(whoami(then, token, proof), "invalid_dpop_proof", bearer=bearer)
    assert "used before" in dpop.params["error_description"]
    served(whoami(then, token, key.proof("POST", first, access_token=token)))


def test_a_replayed_proof_is_refused(issuer: str, requiring: str, allowing: str) -> None:
    replayed(issuer, requiring, requiring, bearer=False)
    replayed(issuer, allowing, allowing, bearer=True)


def test_a_stolen_bound_token_is_refused_without_its_key(issuer: str, allowing: str) -> None:
    token = dpop_token(issuer, allowing, DPoPKey.generate())
    thief = DPoPKey.generate()
    dpop = refused(
        whoami(allowing, token, thief.proof("POST", allowing, access_token=token)),
        "invalid_dpop_proof",
        bearer=True,
    )
    assert "bound to" in dpop.params["error_description"]


def test_a_bound_token_presented_as_a_bearer_token_is_refused_whatever_the_setting(
    issuer: str, server: str, allowing: str, requiring: str
) -> None:
    for url in (server, allowing):  # dpop off (the session's server), allowed
        key = DPoPKey.generate()
        token = dpop_token(issuer, url, key)
        response = whoami(url, token, key.proof("POST", url, access_token=token), scheme="Bearer")
        assert response.status_code == 401
        bearer = challenges(response)["bearer"]
        assert bearer.error == "invalid_token" and "DPoP-bound" in bearer.params["error_description"]
    key = DPoPKey.generate()
    token = dpop_token(issuer, requiring, key)
    refused(whoami(requiring, token, scheme="Bearer"), "invalid_token", bearer=False)


def test_a_proof_for_another_request_or_time_is_refused(issuer: str, allowing: str) -> None:
    key = DPoPKey.generate()
    token = dpop_token(issuer, allowing, key)
    other = dpop_token(issuer, allowing, key)
    now = time.time()
    wrong = {
        "method": key.proof("GET", allowing, access_token=token),
        "path": key.proof("POST", allowing.replace("/mcp", "/other"), access_token=token),
        "host": key.proof("POST", allowing.replace("127.0.0.1", "localhost"), access_token=token),
        "token": key.proof("POST", allowing, access_token=other),
        "no token": key.proof("POST", allowing),
        "stale": key.proof("POST", allowing, access_token=token, now=now - 330),
        "future": key.proof("POST", allowing, access_token=token, now=now + 330),
        "not a jwt": "not-a-proof",
    }
    expected = {
        "method": "htm",
        "path": "htu",
        "host": "htu",
        "token": "ath",
        "no token": "ath",
        "stale": "iat",
        "future": "iat",
        "not a jwt": "well-formed",
    }
    for name, proof in wrong.items():
        dpop = refused(whoami(allowing, token, proof), "invalid_dpop_proof", bearer=True)
        assert expected[name] in dpop.params["error_description"], name
    refused(whoami(allowing, token), "invalid_dpop_proof", bearer=True)  # no proof at all
    two = [key.proof("POST", allowing, access_token=token) for _ in range(2)]
    refused(whoami(allowing, token, *two), "invalid_dpop_proof", bearer=True)
    # none of the refused proofs was spent: the request with a good one is served
    served(whoami(allowing, token, key.proof("POST", allowing, access_token=token)))


def test_bearer_tokens_are_taken_when_allowed_and_refused_when_dpop_is_required(
    issuer: str, allowing: str, requiring: str
) -> None:
    served(whoami(allowing, machine_token(issuer, allowing), scheme="Bearer"))
    dpop = refused(
        whoami(requiring, machine_token(issuer, requiring), scheme="Bearer"), "invalid_token", bearer=False
    )
    assert "DPoP-bound tokens only" in dpop.params["error_description"]
    # an unbound token is no DPoP token, even with a proof
    key = DPoPKey.generate()
    token = machine_token(issuer, allowing)
    dpop = refused(
        whoami(allowing, token, key.proof("POST", allowing, access_token=token)), "invalid_token", bearer=True
    )
    assert "not DPoP-bound" in dpop.params["error_description"]
    # and an invalid token with a good proof is refused as a token
    refused(
        whoami(allowing, "x" + token, key.proof("POST", allowing, access_token="x" + token)),
        "invalid_token",
        bearer=True,
    )


def test_challenges_and_metadata_advertise_dpop(
    issuer: str, server: str, allowing: str, requiring: str
) -> None:
    # no credentials: Bearer and DPoP when both are taken, DPoP alone when required, Bearer alone when off
    assert set(challenges(whoami(allowing, None))) == {"bearer", "dpop"}
    alone = challenges(whoami(requiring, None))
    assert set(alone) == {"dpop"} and alone["dpop"].error is None and "ES256" in alone["dpop"].params["algs"]
    assert set(challenges(whoami(server, None))) == {"bearer"}
    documents: dict[str, Any] = {}
    for url in (server, allowing, requiring):
        metadata = challenges(whoami(url, None)).popitem()[1].resource_metadata
        assert metadata is not None
        documents[url] = httpx.get(metadata, timeout=10).json()
    assert "dpop_signing_alg_values_supported" not in documents[server]
    assert "ES256" in documents[allowing]["dpop_signing_alg_values_supported"]
    assert "dpop_bound_access_tokens_required" not in documents[allowing]
    assert documents[requiring]["dpop_bound_access_tokens_required"] is True
    # too few scopes: 403 with the error on the scheme the request used
    key = DPoPKey.generate()
    token = dpop_token(issuer, requiring, key)
    response = whoami(requiring, token, key.proof("POST", requiring, access_token=token), tool="execute_sql")
    assert response.status_code == 403
    dpop = challenges(response)["dpop"]
    assert dpop.error == "insufficient_scope" and dpop.scopes == ("mcp:tools", "mcp:admin")


def test_a_proof_served_by_one_replica_is_refused_by_another_on_the_same_redis(issuer: str) -> None:
    """Two server processes behind one public URL (the first one's) share a real Redis: the proof
    one of them served is a replay at the other."""
    with running_redis() as redis:
        env = {"MCPGEN_STATE_SECRET": STATE_SECRET}
        with protected_server(issuer, "--dpop", "required", "--store", redis.url, env=env) as first:
            extra = ("--dpop", "required", "--store", redis.url)
            with protected_server(issuer, *extra, resource=first, env=env) as second:
                replayed(issuer, first, second, bearer=False)


def test_a_server_that_asks_for_nonces_takes_those_any_replica_issued(issuer: str) -> None:
    """`--dpop-nonce`: a proof without a current nonce gets 401 use_dpop_nonce and one in
    DPoP-Nonce; every answer carries a fresh one; replicas with one state secret take each other's."""
    env = {"MCPGEN_STATE_SECRET": STATE_SECRET}
    asking = ("--dpop", "allowed", "--dpop-nonce")
    with (
        protected_server(issuer, *asking, env=env) as first,
        protected_server(issuer, *asking, resource=first, env=env) as second,
    ):
        key = DPoPKey.generate()
        token = dpop_token(issuer, first, key)
        asked = whoami(first, token, key.proof("POST", first, access_token=token))
        dpop = refused(asked, "use_dpop_nonce", bearer=True)
        assert "DPoP-Nonce" in dpop.params["error_description"]
        nonce = asked.headers["dpop-nonce"]
        answer = served_response(
            whoami(first, token, key.proof("POST", first, access_token=token, nonce=nonce))
        )
        assert answer.headers["dpop-nonce"]
        served(whoami(second, token, key.proof("POST", first, access_token=token, nonce=nonce)))
        ours = NonceIssuer([STATE_SECRET.encode()], 300)
        stale = (
            "1.abc",
            "\u00b2." + nonce,
            ours.issue(now=time.time() - 301),
            NonceIssuer(None, 300).issue(),
            "n" * 65,
        )
        for wrong in stale:
            proof = key.proof("POST", first, access_token=token, nonce=wrong)
            refused(whoami(second, token, proof), "use_dpop_nonce", bearer=True)
        served(whoami(second, token, key.proof("POST", first, access_token=token, nonce=ours.issue())))
        # bearer requests are not asked for nonces
        bearer = served_response(whoami(first, machine_token(issuer, first), scheme="Bearer"))
        assert "dpop-nonce" not in bearer.headers


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--dpop", "required"], "--dpop protects the server with --oauth-issuer and --resource"),
        (
            ["--oauth-issuer", "http://127.0.0.1:1", "--resource", "http://127.0.0.1:1/mcp", "--dpop-nonce"],
            "dpop_nonce asks DPoP proofs for a nonce: it needs dpop allowed or required",
        ),
        (["--dpop", "sometimes"], "'sometimes' is not one of 'off', 'allowed', 'required'"),
    ],
)
def test_a_bad_dpop_setting_stops_the_server_at_start(argv: list[str], message: str) -> None:
    paths = [str(ROOT / "runtime"), str(ROOT), str(ROOT / "generated")]
    stopped = subprocess.run(
        [PYTHON, "-m", "tests.auth.oauth_server_app", "--http", "--port", "1", *argv],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert stopped.returncode == 2 and message in stopped.stderr, stopped.stderr


def test_a_protected_resource_checks_its_dpop_settings() -> None:
    base: dict[str, Any] = {
        "verify": lambda token: None,
        "resource": "https://mcp.example.com/mcp",
        "authorization_servers": ("https://as.example",),
    }
    with pytest.raises(ValueError, match="dpop is one of off, allowed, required"):
        ProtectedResource(**base, dpop="sometimes")  # type: ignore[arg-type]
    for age in (0, -1, 3601):
        with pytest.raises(ValueError, match="dpop_max_age"):
            ProtectedResource(**base, dpop="required", dpop_max_age=age)
    assert ProtectedResource(**base, dpop="off", dpop_max_age=0).dpop == "off"  # unused without DPoP


class CountedStore(MemoryStore):
    """The in-memory store, noting each single-use claim's key and lifetime."""

    def __init__(self, max_keys: int) -> None:
        super().__init__(max_keys=max_keys)
        self.claimed: list[tuple[str, float]] = []

    async def claim(self, key: str, ttl_s: float) -> bool:
        self.claimed.append((key, ttl_s))
        return await super().claim(key, ttl_s)


def signed(key: DPoPKey, url: str, token: str, **claims: Any) -> str:
    """A proof of `key` for POST `url` with `claims` replacing its own."""
    mine = jwt.decode(key.proof("POST", url, access_token=token), ECKey.import_key(key.public_jwk)).claims
    header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.public_jwk}
    return jwt.encode(header, {**mine, **claims}, ECKey.import_key(key.to_dict()))


def bound_resource(key: DPoPKey, url: str, **settings: Any) -> ProtectedResource:
    """`url` taking only DPoP, where the token "bound-token" is the client's, bound to `key`."""
    bound = TokenPrincipal(
        "machine", "https://as.example", frozenset({"mcp:tools"}), claims={"cnf": {"jkt": key.thumbprint}}
    )
    return ProtectedResource(
        verify=lambda token: bound if token == "bound-token" else None,
        resource=url,
        authorization_servers=("https://as.example",),
        scopes=("mcp:tools",),
        dpop="required",
        **settings,
    )


def test_what_a_peer_makes_the_server_keep_for_dpop_is_bounded() -> None:
    """Proof size and jti length are capped; a claim's store key has a fixed size and lives at most
    2 x dpop_max_age + 1 s; a full in-memory store answers 503 with Retry-After."""
    key = DPoPKey.generate()
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    resource = bound_resource(key, url, dpop_max_age=60)
    store = CountedStore(max_keys=4)
    server = ScopedServer(ServerConfig(auth=resource, store=store))
    with serving(server.asgi_app(), port):
        now = time.time()
        served(whoami(url, "bound-token", key.proof("POST", url, access_token="bound-token"), tool="me"))
        served(
            whoami(
                url,
                "bound-token",
                signed(key, url, "bound-token", iat=int(now) + 59, jti="j" * 256),
                tool="me",
            )
        )
        for proof in (
            signed(key, url, "bound-token", jti="j" * 257),
            signed(key, url, "bound-token", pad="p" * 8192),
        ):
            dpop = refused(whoami(url, "bound-token", proof, tool="me"), "invalid_dpop_proof", bearer=False)
            assert "jti" in dpop.params["error_description"] or "too long" in dpop.params["error_description"]
        assert len({len(name) for name, _ in store.claimed}) == 1  # whatever the jti's length
        (_, now_ttl), (_, ahead_ttl) = store.claimed  # until the proof's iat + 60 s, + 1 s
        assert 50 <= now_ttl <= 61 and 110 <= ahead_ttl <= 2 * 60 + 1
        served(whoami(url, "bound-token", key.proof("POST", url, access_token="bound-token"), tool="me"))
        served(whoami(url, "bound-token", key.proof("POST", url, access_token="bound-token"), tool="me"))
        full = whoami(url, "bound-token", key.proof("POST", url, access_token="bound-token"), tool="me")
        assert full.status_code == 503 and full.headers["retry-after"] == "1"


def test_the_proofs_url_is_the_resources_origin_with_the_path_a_mount_point_included() -> None:
    """Behind a proxy the server sees another host and scheme: the proof is for `resource`'s origin
    and the path the client used, the mount point (root_path) included; other verbs are checked too."""
    key = DPoPKey.generate()
    public = "https://mcp.example.com/tools/mcp"
    resource = bound_resource(key, public)
    host = Starlette(routes=[Mount("/tools", app=ScopedServer(ServerConfig(auth=resource)).asgi_app())])
    with serving(host) as port:
        seen = f"http://127.0.0.1:{port}/tools/mcp"
        served(whoami(seen, "bound-token", key.proof("POST", public, access_token="bound-token"), tool="me"))
        for wrong in (seen, "https://mcp.example.com/mcp", "http://mcp.example.com/tools/mcp"):
            proof = key.proof("POST", wrong, access_token="bound-token")
            dpop = refused(whoami(seen, "bound-token", proof, tool="me"), "invalid_dpop_proof", bearer=False)
            assert "htu" in dpop.params["error_description"]
        headers = {
            "Authorization": "DPoP bound-token",
            "Accept": "text/event-stream",
            "Mcp-Session-Id": "none",
        }
        for verb, proved in (("GET", "GET"), ("DELETE", "DELETE"), ("GET", "POST")):
            proof = key.proof(proved, public, access_token="bound-token")
            answer = httpx.request(verb, seen, headers={**headers, "DPoP": proof}, timeout=10)
            assert (answer.status_code == 401) == (verb != proved), (verb, proved, answer.status_code)
