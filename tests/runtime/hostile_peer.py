"""A hostile MCP server for the client's limits (issue 11): a raw `asyncio.start_server` on
loopback, on a thread of its own, that reads each HTTP/1.1 request and then writes whatever
bytes the test's behaviour says — a Content-Length of 1 GiB, a chunk size of
0xffffffffffffffff, an SSE event that never ends, a body that trickles, a gzip bomb.

A behaviour is `async def behave(request, writer)`; `request` is the JSON-RPC message of a POST
(None for a GET). Endless behaviours write until the client goes away (or `MAX_SECONDS`), so a
client without limits grows, which is what the tests measure it does not.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Final

Behaviour = Callable[[dict[str, Any] | None, asyncio.StreamWriter], Awaitable[None]]

MAX_SECONDS: Final = 20.0  # an endless behaviour stops by itself after this
BLOCK: Final = b"x" * 65536


def head(status: str = "200 OK", **fields: str) -> bytes:
    lines = "".join(f"{name.replace('_', '-')}: {value}\r\n" for name, value in fields.items())
    return f"HTTP/1.1 {status}\r\n{lines}\r\n".encode("latin-1")


def json_reply(message: dict[str, Any], **fields: str) -> bytes:
    body = json.dumps(message).encode()
    return head(Content_Type="application/json", Content_Length=str(len(body)), **fields) + body


async def endless(writer: asyncio.StreamWriter, block: bytes = BLOCK) -> None:
    """Write `block` until the client closes the connection (or MAX_SECONDS pass)."""
    stop = time.monotonic() + MAX_SECONDS
    with contextlib.suppress(OSError):
        while time.monotonic() < stop and not writer.is_closing():
            writer.write(block)
            await writer.drain()


async def trickle(writer: asyncio.StreamWriter, data: bytes, every: float) -> None:
    """One byte of `data` every `every` seconds."""
    with contextlib.suppress(OSError):
        for index in range(len(data)):
            writer.write(data[index : index + 1])
            await writer.drain()
            await asyncio.sleep(every)


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, Any] | None] | None:
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
        return None
    lines = raw.decode("latin-1").split("\r\n")
    method = lines[0].split(" ", 1)[0]
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    body = await reader.readexactly(length) if length else b""
    return method, (json.loads(body) if body else None)


class HostileServer:
    """`with HostileServer(behave) as server:` serves on `server.url` until the block ends."""

    def __init__(self, behave: Behaviour) -> None:
        self.behave = behave
        self.url = ""
        self.methods: list[str] = []  # the JSON-RPC methods (or HTTP GET) received, in order
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="hostile-server", daemon=True)
        self._server: asyncio.Server | None = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (received := await _read_request(reader)) is not None:
                method, message = received
                self.methods.append(str(message.get("method")) if message else method)
                await self.behave(message, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # cancelled: the server is stopping
        finally:
            writer.close()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/mcp"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(5)
        return self

    def __exit__(self, *exc: object) -> None:
        async def stop() -> None:
            assert self._server is not None
            self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()


@contextlib.contextmanager
def serving(behave: Behaviour) -> Iterator[HostileServer]:
    with HostileServer(behave) as server:
        yield server
