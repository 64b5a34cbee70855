"""A JSON document from the authorization server, read within a size bound: what the verifiers
fetch (jwt.py: metadata and JWKS; introspection.py: introspection answers). Their callers put one
deadline around all of it; httpx's own timeout restarts with every byte, so it bounds no trickle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import _json

if TYPE_CHECKING:
    import httpx

__all__ = ["fetch_json"]


async def fetch_json(
    client: httpx.AsyncClient, method: str, url: str, *, max_bytes: int, **request: Any
) -> Any:
    """The JSON of a `200` answer to `method url` (`request`: httpx's keyword arguments). Any other
    status, a body over `max_bytes` (declared or as it arrives, decoded) or not JSON: ValueError;
    a transport failure: httpx.HTTPError."""
    headers = {"Accept": "application/json", **request.pop("headers", {})}
    async with client.stream(method, url, headers=headers, **request) as response:
        if response.status_code != 200:
            raise ValueError(f"{url} answered HTTP {response.status_code}")
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise ValueError(f"{url} is larger than {max_bytes} bytes")
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > max_bytes:
                raise ValueError(f"{url} is larger than {max_bytes} bytes")
    return _json.loads(bytes(body))
