"""The ceiling: a bare ASGI app that reads the body, parses it as JSON (orjson, the codec the
runtime uses) and returns a fixed JSON-RPC `tools/call` result with the request's id.

No validation, no MCP headers, no handler: whatever costs more than this is framework work.
"""

from __future__ import annotations

from typing import Any

import orjson

_RESULT = {
    "content": [{"type": "text", "text": '{"sum":3.0}'}],
    "structuredContent": {"sum": 3.0},
    "isError": False,
    "resultType": "complete",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "bench-bare", "version": "0.0.0"}},
}
_HEADERS = [(b"content-type", b"application/json")]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    body = b""
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        body += message.get("body", b"")
        more = message.get("more_body", False)
    request = orjson.loads(body)
    payload = orjson.dumps({"jsonrpc": "2.0", "id": request.get("id"), "result": _RESULT})
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [*_HEADERS, (b"content-length", str(len(payload)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": payload})


def build_app() -> Any:
    return app
