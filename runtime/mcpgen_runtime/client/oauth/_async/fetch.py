"""Every HTTP exchange of a login (metadata, registration, token requests), bounded.

Each request has one deadline for the whole exchange (`timeout`), a body cap
(`max_bytes`), HTTPS unless the host is loopback (AUTH-15), no cookies, and redirects are
followed only for metadata GETs and only within the same origin (at most three): a
redirect elsewhere is refused, so nothing a login sends can be steered to another host.
Answers are JSON objects or `None` (404 and friends); errors name the URL and what
failed, never a token or secret (AUTH-16).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

import httpx

from .... import _json
from ....errors import AuthorizationError
from ....protocol.oauth.discovery import check_url, same_origin

__all__ = ["Answer", "AsyncFetcher"]

MAX_REDIRECTS = 3
MAX_NONCE = 256  # characters of a `DPoP-Nonce` taken (the transport's bound, failures.MAX_NONCE)
Answer = tuple[int, Any]
"""(HTTP status, the JSON body: an object, or None when the body was empty or not JSON)"""


class AsyncFetcher:
    def __init__(self, *, timeout: float, max_bytes: int, user_agent: str) -> None:
        self.timeout = timeout
        self.max_bytes = max_bytes
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout),
            follow_redirects=False,
            headers={"User-Agent": user_agent, "Accept": "application/json"},
        )

    async def get_json(self, url: str, what: str) -> Answer:
        """GET a metadata document: same-origin redirects followed."""
        current = check_url(url, what)
        deadline = time.monotonic() + self.timeout
        for _ in range(MAX_REDIRECTS + 1):
            status, headers, body = await self._exchange("GET", current, what, deadline)
            if status not in (301, 302, 303, 307, 308):
                return status, self._json(body, status, what, current)
            location = headers.get("location")
            target = urljoin(current, location) if location else ""
            if not target or not same_origin(target, current):
                raise AuthorizationError(f"{what} at {current} redirects to another origin; not followed")
            current = check_url(target, what)
        raise AuthorizationError(f"{what} at {url} redirects more than {MAX_REDIRECTS} times")

    async def post_form(self, url: str, headers: Mapping[str, str], body: str, what: str) -> Answer:
        status, document, _ = await self.post_token(url, headers, body, what)
        return status, document

    async def post_token(
        self, url: str, headers: Mapping[str, str], body: str, what: str
    ) -> tuple[int, Any, str | None]:
        """POST a form (a token request): the answer, and its `DPoP-Nonce` (RFC 9449 §8; None when
        absent or longer than MAX_NONCE)."""
        check_url(url, what)
        status, answered, content = await self._exchange(
            "POST", url, what, time.monotonic() + self.timeout, headers=headers, content=body.encode()
        )
        nonce = answered.get("dpop-nonce")
        nonce = nonce if nonce is not None and 0 < len(nonce) <= MAX_NONCE else None
        return status, self._json(content, status, what, url), nonce

    async def post_json(self, url: str, document: Mapping[str, Any], what: str) -> Answer:
        check_url(url, what)
        status, _, content = await self._exchange(
            "POST",
            url,
            what,
            time.monotonic() + self.timeout,
            headers={"Content-Type": "application/json"},
            content=_json.dumps(document),
        )
        return status, self._json(content, status, what, url)

    async def _exchange(
        self,
        method: str,
        url: str,
        what: str,
        deadline: float,
        *,
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
    ) -> tuple[int, httpx.Headers, bytes]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AuthorizationError(f"{what} at {url}: no answer within {self.timeout}s")
        request = self._client.build_request(
            method, url, headers=headers, content=content, timeout=httpx.Timeout(remaining)
        )
        try:
            response = await self._client.send(request, stream=True)
            try:
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > self.max_bytes:
                        raise AuthorizationError(
                            f"{what} at {url} is larger than {self.max_bytes} bytes; refused"
                        )
                    if time.monotonic() > deadline:
                        raise AuthorizationError(
                            f"{what} at {url}: no complete answer within {self.timeout}s"
                        )
                    chunks.append(chunk)
            finally:
                await response.aclose()
        except httpx.TimeoutException as exc:
            raise AuthorizationError(f"{what} at {url}: no answer within {self.timeout}s") from exc
        except httpx.HTTPError as exc:
            raise AuthorizationError(f"{what} at {url} failed: {type(exc).__name__}") from exc
        return response.status_code, response.headers, b"".join(chunks)

    @staticmethod
    def _json(body: bytes, status: int, what: str, url: str) -> Any:
        if not body:
            return None
        try:
            document = _json.loads(body)
        except _json.JSONDecodeError:
            if 200 <= status < 300:
                raise AuthorizationError(f"{what} at {url} is not JSON (HTTP {status})") from None
            return None
        return document

    async def aclose(self) -> None:
        await self._client.aclose()
