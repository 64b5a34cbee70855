"""A login against hostile or broken servers: malformed or oversized metadata, answers that are
not JSON, redirects to another origin, endpoints over plain http, and a token endpoint that
never answers. Each ends in an AuthorizationError that says what was wrong, within the login's
timeout, and no secret of the client (secret, code, verifier, tokens) appears in it.

One real HTTP server on 127.0.0.1 plays the MCP server and its authorization server; each test
sets what its paths answer.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from mcpgen_runtime.client import Client
from mcpgen_runtime.client.oauth import MemoryTokenStore, OAuth
from mcpgen_runtime.errors import AuthorizationError

pytestmark = pytest.mark.timeout(60)

SECRET = "client-secret-never-shown-0123456789"
Answer = tuple[int, dict[str, str], bytes]
Route = Callable[[str, str], Answer]  # (method, path with query) -> answer


class Hostile(http.server.ThreadingHTTPServer):
    daemon_threads = True
    routes: dict[str, Route | Answer]
    seen: list[str]


class _Handler(http.server.BaseHTTPRequestHandler):
    server: Hostile

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        self.server.seen.append(f"{self.command} {self.path}")
        route = self.server.routes.get(urlsplit(self.path).path)
        status, headers, body = (
            (404, {}, b"")
            if route is None
            else (route(self.command, self.path) if callable(route) else route)
        )
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(OSError):  # the client gave up (the hanging endpoint)
            self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    server = Hostile(("127.0.0.1", 0), _Handler)
    server.routes, server.seen = {}, []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def base(server: Hostile) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def as_json(document: Any, status: int = 200) -> Answer:
    return status, {"Content-Type": "application/json"}, json.dumps(document).encode()


def protected(
    server: Hostile, *, prm: Route | Answer | None = None, metadata: Route | Answer | None = None
) -> str:
    """An MCP endpoint that answers 401, its resource metadata and an authorization server."""
    root = base(server)
    server.routes["/mcp"] = (401, {"WWW-Authenticate": f'Bearer resource_metadata="{root}/prm"'}, b"")
    server.routes["/prm"] = prm or as_json({"resource": f"{root}/mcp", "authorization_servers": [root]})
    server.routes["/.well-known/oauth-authorization-server"] = metadata or as_json(
        {
            "issuer": root,
            "authorization_endpoint": f"{root}/authorize",
            "token_endpoint": f"{root}/token",
            "code_challenge_methods_supported": ["S256"],
        }
    )

    def authorize(method: str, path: str) -> Answer:
        query = parse_qs(urlsplit(path).query)
        target = f"{query['redirect_uri'][0]}?code=the-code-xyz&state={query['state'][0]}"
        return 302, {"Location": target}, b""

    server.routes["/authorize"] = authorize
    return f"{root}/mcp"


class Follow:
    redirect_uri = "http://127.0.0.1:9/callback"

    def authorize(self, url: str) -> str:
        return httpx.get(url, follow_redirects=False).headers["location"]


def login_error(url: str, *, timeout: float = 5.0) -> AuthorizationError:
    auth = OAuth(
        client_id="cid",
        client_secret=SECRET,
        grant="authorization_code",
        redirect=Follow(),
        store=MemoryTokenStore(),
        timeout=timeout,
        max_response_bytes=64 * 1024,
    )
    with Client(url, auth=auth) as client, pytest.raises(AuthorizationError) as failed:
        client.list_tools()
    message = str(failed.value)
    for secret in (SECRET, "the-code-xyz"):
        assert secret not in message and secret not in repr(failed.value.__cause__ or "")
    return failed.value


def test_resource_metadata_that_is_not_json(hostile: Hostile) -> None:
    url = protected(hostile, prm=(200, {"Content-Type": "application/json"}, b"<html>oops</html>"))
    assert "is not JSON" in str(login_error(url))


def test_resource_metadata_that_is_too_large(hostile: Hostile) -> None:
    url = protected(hostile, prm=(200, {"Content-Type": "application/json"}, b" " * (200 * 1024) + b"{}"))
    assert "larger than" in str(login_error(url))


@pytest.mark.parametrize(
    ("document", "says"),
    [
        ({"authorization_servers": ["http://127.0.0.1:1"]}, "has no `resource`"),
        ({"resource": "RESOURCE"}, "lists no authorization_servers"),
        (
            {"resource": "RESOURCE", "authorization_servers": "http://127.0.0.1:1"},
            "must be a list of strings",
        ),
        ({"resource": "RESOURCE", "authorization_servers": ["http://auth.example.com"]}, "must use https"),
        (
            {"resource": "http://127.0.0.1:1/mcp", "authorization_servers": ["https://a.example"]},
            "not the server at",
        ),
        ([1, 2, 3], "not a JSON object"),
    ],
)
def test_malformed_resource_metadata(hostile: Hostile, document: Any, says: str) -> None:
    root = base(hostile)
    text = json.dumps(document).replace("RESOURCE", f"{root}/mcp")
    url = protected(hostile, prm=(200, {"Content-Type": "application/json"}, text.encode()))
    assert says in str(login_error(url))


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"issuer": "https://elsewhere.example"}, "refusing to use it"),
        ({"token_endpoint": "http://tokens.example.com/token"}, "must use https"),
        ({"code_challenge_methods_supported": ["plain"]}, "PKCE"),
        ({"authorization_endpoint": "javascript:alert(1)"}, "absolute https URL"),
    ],
)
def test_malformed_server_metadata(hostile: Hostile, change: dict[str, Any], says: str) -> None:
    root = base(hostile)
    document = {
        "issuer": root,
        "authorization_endpoint": f"{root}/authorize",
        "token_endpoint": f"{root}/token",
        "code_challenge_methods_supported": ["S256"],
        **change,
    }
    url = protected(hostile, metadata=as_json(document))
    assert says in str(login_error(url))


def test_a_redirect_to_another_origin_is_not_followed(hostile: Hostile) -> None:
    url = protected(hostile, prm=(302, {"Location": "http://127.0.0.2:1/prm"}, b""))
    assert "redirects to another origin" in str(login_error(url))
    assert not any("127.0.0.2" in line for line in hostile.seen)


def test_a_token_endpoint_that_hangs_fails_within_the_timeout(hostile: Hostile) -> None:
    url = protected(hostile)

    def hang(method: str, path: str) -> Answer:
        time.sleep(6)
        return as_json({"access_token": "late", "token_type": "Bearer"})

    hostile.routes["/token"] = hang
    started = time.monotonic()
    error = login_error(url, timeout=1.0)
    assert "no answer within 1.0s" in str(error) and time.monotonic() - started < 4


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ((200, {"Content-Type": "text/html"}, b"<html>"), "is not JSON"),
        (as_json({"token_type": "Bearer"}), "without a usable access_token"),
        (as_json({"access_token": "abc", "token_type": "mac"}), "not Bearer"),
        (
            as_json({"error": "invalid_grant", "error_description": "code expired"}, 400),
            "invalid_grant (code expired)",
        ),
        (
            (200, {"Content-Type": "application/json"}, b'{"access_token": "' + b"a" * 70000 + b'"}'),
            "larger than",
        ),
    ],
)
def test_bad_token_answers(hostile: Hostile, answer: Answer, says: str) -> None:
    url = protected(hostile)
    hostile.routes["/token"] = answer
    assert says in str(login_error(url))


def test_a_wrong_state_is_discarded_before_the_code_is_used(hostile: Hostile) -> None:
    url = protected(hostile)
    hostile.routes["/authorize"] = (
        302,
        {"Location": "http://127.0.0.1:9/callback?code=the-code-xyz&state=forged"},
        b"",
    )
    assert "state does not match" in str(login_error(url))
    assert not any(line.startswith("POST /token") for line in hostile.seen)
