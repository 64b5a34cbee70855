"""Test peer: a server that asks the client something in the middle of every reply, the way a
legacy-era server sends `elicitation/create` or `ping` before answering (the transports'
`on_request` hook).

    python tests/peers/asking_peer.py --stdio
    python tests/peers/asking_peer.py --http --port 8765    # raw ASGI under uvicorn, any path

For every request (any method) it first sends a request of its own, id `ask-<request id>`,
method `elicitation/create`; it waits up to WAIT seconds for the answer (stdio: the next line;
HTTP: a POST carrying a JSON-RPC response with that id), then answers the original request
with `{"answer": <the answer message or null>, "answerHeaders": {...}}` (HTTP: the headers the
answer was POSTed with). HTTP replies are SSE streams; notifications get 202.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import select
import sys
from typing import Any

WAIT = 0.5


def ask(request_id: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": f"ask-{request_id}",
        "method": "elicitation/create",
        "params": {"message": "your name?", "requestedSchema": {"type": "object"}},
    }


def answered(request_id: Any, answer: Any, headers: dict[str, str] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": {"answer": answer, "answerHeaders": headers or {}}}


# -- stdio ----------------------------------------------------------------------------------------


def _line(stdin: Any) -> bytes:
    """One line from an unbuffered stdin (so `select` sees exactly what is unread)."""
    data = b""
    while not data.endswith(b"\n"):
        byte = stdin.read(1)
        if not byte:
            break
        data += byte
    return data


def serve_stdio() -> None:
    stdin = open(0, "rb", buffering=0)  # noqa: SIM115 - for the whole process
    out = sys.stdout.buffer

    def write(message: dict[str, Any]) -> None:
        out.write(json.dumps(message).encode() + b"\n")
        out.flush()

    while line := _line(stdin):
        message = json.loads(line)
        if "method" not in message or "id" not in message:
            continue  # notifications, stray answers
        write(ask(message["id"]))
        answer = json.loads(_line(stdin)) if select.select([stdin], [], [], WAIT)[0] else None
        write(answered(message["id"], answer))


# -- HTTP (raw ASGI) ------------------------------------------------------------------------------

_answers: dict[str, tuple[dict[str, Any], dict[str, str]]] = {}
_arrived: dict[str, asyncio.Event] = {}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            break
    headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
    message = json.loads(body)
    if "method" not in message or "id" not in message:
        if "method" not in message:  # an answer to one of our requests
            _answers[message["id"]] = (message, headers)
            _arrived.setdefault(message["id"], asyncio.Event()).set()
        await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
        return
    question = ask(message["id"])
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")],
        }
    )
    await send({"type": "http.response.body", "body": _event(question), "more_body": True})
    arrived = _arrived.setdefault(question["id"], asyncio.Event())
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(arrived.wait(), WAIT)
    answer, answer_headers = _answers.pop(question["id"], (None, None))
    _arrived.pop(question["id"], None)
    await send(
        {"type": "http.response.body", "body": _event(answered(message["id"], answer, answer_headers))}
    )


def _event(message: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--stdio", action="store_true")
    mode.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    if args.stdio:
        serve_stdio()
        return
    import uvicorn

    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", lifespan="off")


if __name__ == "__main__":
    main()
