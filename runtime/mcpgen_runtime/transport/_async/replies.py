"""Reading a reply and answering the peer's requests it carries, shared by the Streamable HTTP
transport and its legacy session: a POST that gets no JSON-RPC reply (`post_only`), the
`on_request` answers (`answer_all`, hooks.py), and an SSE reply read up to its response
(`read_until_response`; decoding without I/O is in `sse_reader.py`)."""

from __future__ import annotations

from collections.abc import Mapping

from ... import _json
from ..failures import rejected
from ..hooks import AsyncOnRequest, Message, hook_failed
from ..sse_reader import ResponseStream
from .interfaces import AsyncEngine, AsyncEngineResponse


async def post_only(engine: AsyncEngine, message: Message, headers: Mapping[str, str], what: str) -> None:
    """POST a message that gets no JSON-RPC reply (a notification, or an answer)."""
    response = await engine.post(_json.dumps(message), headers, engine.timeout)
    try:
        content = await response.aread()
    finally:
        await response.aclose()
    if not 200 <= response.status < 300:
        raise rejected(what, response.status, content)


async def answer_all(
    engine: AsyncEngine,
    on_request: AsyncOnRequest | None,
    requests: list[Message],
    headers: Mapping[str, str],
) -> None:
    """Answer the peer's `requests` through the `on_request` hook, each with its own POST."""
    assert on_request is not None
    while requests:
        request = requests.pop(0)
        try:
            answer = await on_request(request)
        except Exception as exc:
            answer = hook_failed(request, exc)
        await post_only(engine, answer, headers, "answer to a server request")


async def read_until_response(
    engine: AsyncEngine,
    on_request: AsyncOnRequest | None,
    response: AsyncEngineResponse,
    stream: ResponseStream,
    requests: list[Message] | None,
    headers: Mapping[str, str],
) -> Message | None:
    """Read `response` until the response message (None: the body ended without it),
    answering the peer's requests as they come."""
    async for chunk in response.aiter_body():
        message = stream.feed(chunk)
        if requests:
            await answer_all(engine, on_request, requests, headers)
        if message is not None:
            return message
    message = stream.finish()
    if requests:
        await answer_all(engine, on_request, requests, headers)
    return message
