"""A protected server in this process, its authorization server's key endpoint, and raw HTTP for
the authorization hardening tests (issue 25), all real and on loopback:

- `KeyServer` (the JWKS endpoint) and `IntrospectionServer` (RFC 7662: `answers` by token, any
  other token inactive): `Endpoint`s on raw asyncio sockets in a thread of their own. `mode` says
  how one answers: "keys" / "answer" (its document, on a keep-alive connection, after `delay`
  seconds), "500", "reset" (a TCP reset once the request is read), "silent" (reads the request,
  never answers), "drip" (a 200 head, then one byte a second), "huge" (a 200 with 50 MB of body,
  no Content-Length). `hits` counts the requests it read, `connections` the connections it
  accepted, `peak` the most requests it was answering at once.
- `Signer`: RSA keys and JWT access tokens (`typ: at+jwt`) for `ISSUER`.
- `ScopedServer`: the hand-written dynamic server (`ask`, `whoami`, ...) plus `execute_sql`,
  which counts its runs, and `me`, which answers `str(ctx.principal)`.
- `serving(app)`: uvicorn running `app` in a thread; yields the port.
- `burst`: a call to `me` with each of many tokens at once; status and seconds for each.
- `raw_post`: one POST on a socket of its own (bodies of any size, with Content-Length or
  chunked); the status, or None when the server closed without one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import struct
import threading
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from typing import Any, Self

import httpx
import uvicorn
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from mcpgen_runtime.server import ServerConfig, ToolContext
from tests.runtime.dynamic_server_app import DynamicServer
from tests.runtime.server_helpers import call, mcp_headers
from tests.support import free_port, wait_for_port

ISSUER = "https://as.example"
HUGE = 50 * 1000 * 1000


class Endpoint:
    """An endpoint of the authorization server (module doc); subclasses say what it answers."""

    answering = "answer"  # the mode in which `document` is served

    def __init__(self, path: str) -> None:
        self.mode = self.answering
        self.delay = 0.0  # seconds before each answer
        self.hits = 0  # requests read
        self.connections = 0  # connections accepted
        self.peak = 0  # most requests answered at once
        self._busy = 0
        self._path = path
        self._loop = asyncio.new_event_loop()
        self._stopped = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}{self._path}"

    def document(self, body: bytes) -> bytes:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", 0), self._loop
        )
        self._server = future.result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        async def stop() -> None:
            self._stopped.set()
            assert self._server is not None
            self._server.close()
            tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:  # keep-alive: requests one after another while the mode answers
                head = await reader.readuntil(b"\r\n\r\n")
                length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
                body = await reader.readexactly(int(length[1])) if length else b""
                self.hits += 1
                self._busy += 1
                self.peak = max(self.peak, self._busy)
                try:
                    if not await self._answer(self.mode, body, reader, writer):
                        return
                finally:
                    self._busy -= 1
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:  # stopping: end quietly (3.11's streams log a cancelled handler)
            pass
        finally:
            writer.close()

    async def _answer(
        self, mode: str, body: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request in `mode`; True when the connection may take another. Silent and
        dripping answers last until the client leaves."""
        await asyncio.sleep(self.delay)
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
        if mode == self.answering:
            document = self.document(body)
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(document) + document
            )
            await writer.drain()
            return True
        if mode == "500":
            writer.write(
                b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
        elif mode == "reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        elif mode == "silent":
            await reader.read(1)  # b"" once the client has left
        elif mode == "drip":
            writer.write(head + b"\r\n")
            while not self._stopped.is_set():
                writer.write(b" ")
                await writer.drain()
                with contextlib.suppress(TimeoutError):
                    if not await asyncio.wait_for(reader.read(1), 1.0):
                        break  # the client has left
        elif mode == "huge":
            writer.write(head + b"\r\n")
            chunk = b" " * 65536
            for _ in range(HUGE // len(chunk)):
                writer.write(chunk)
                await writer.drain()
        await writer.drain()
        return False


class KeyServer(Endpoint):
    """The authorization server's JWKS endpoint (module doc)."""

    answering = "keys"

    def __init__(self, keys: KeySet) -> None:
        super().__init__("/jwks")
        self._document = json.dumps(keys.as_dict(private=False)).encode()

    def document(self, body: bytes) -> bytes:
        return self._document


class IntrospectionServer(Endpoint):
    """The authorization server's introspection endpoint (RFC 7662; module doc)."""

    def __init__(self) -> None:
        super().__init__("/introspect")
        self.answers: dict[str, dict[str, Any]] = {}  # by token; any other token is inactive

    def document(self, body: bytes) -> bytes:
        token = urllib.parse.parse_qs(body.decode()).get("token", [""])[0]
        return json.dumps(self.answers.get(token, {"active": False})).encode()


class Signer:
    """RSA signing keys of `ISSUER` and access tokens for `audience`."""

    def __init__(self, audience: str) -> None:
        self.audience = audience
        self.key = RSAKey.generate_key(2048, parameters={"kid": "k1"})
        self.stranger = RSAKey.generate_key(2048, parameters={"kid": "k1"})  # not in the JWKS

    @property
    def keys(self) -> KeySet:
        return KeySet([self.key])

    def token(self, *, kid: str = "k1", key: RSAKey | None = None, **claims: Any) -> str:
        now = int(time.time())
        base = {"iss": ISSUER, "aud": self.audience, "iat": now, "exp": now + 300, "jti": uuid.uuid4().hex}
        header = {"alg": "RS256", "kid": kid, "typ": "at+jwt"}
        return jwt.encode(header, {**base, **claims}, key or self.key)

    def random_kid(self) -> str:
        return self.token(kid=uuid.uuid4().hex, key=self.stranger, sub="mallory", scope="mcp:tools")


class ScopedServer(DynamicServer):
    """DynamicServer plus `execute_sql` (counts its runs) and `me` (`str(ctx.principal)`)."""

    def __init__(self, config: ServerConfig | None = None) -> None:
        super().__init__(config)
        self.sql_runs = 0
        self.add_tool({"name": "execute_sql", "inputSchema": {"type": "object"}}, self._execute_sql)
        self.add_tool({"name": "me", "inputSchema": {"type": "object"}}, self._me)

    async def _execute_sql(self, args: Any, ctx: ToolContext) -> str:
        self.sql_runs += 1
        return "done"

    async def _me(self, args: Any, ctx: ToolContext) -> str:
        return str(ctx.principal)


@contextlib.contextmanager
def serving(app: Any, port: int | None = None) -> Iterator[int]:
    """uvicorn serving `app` on 127.0.0.1 in a thread, as `run_http` would (lifespan on)."""
    port = port or free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", lifespan="on")
    served = uvicorn.Server(config)
    thread = threading.Thread(target=served.run, daemon=True)
    thread.start()
    try:
        wait_for_port(port)
        yield port
    finally:
        served.should_exit = True
        thread.join(10)


def raw_post(
    port: int, body: bytes, headers: dict[str, str], *, chunked: bool = False, timeout: float = 30.0
) -> tuple[int | None, bytes]:
    """POST `body` to /mcp on a socket of its own; (status, rest of the answer), status None when
    the server closed without answering. Blocking sockets: the server may answer and close while
    the body is still going out (413), and its answer is read after the failed write."""
    fields = {**headers, "Host": "127.0.0.1", "Connection": "close"}
    if chunked:
        fields["Transfer-Encoding"] = "chunked"
    else:
        fields["Content-Length"] = str(len(body))
    head = b"POST /mcp HTTP/1.1\r\n" + b"".join(f"{k}: {v}\r\n".encode() for k, v in fields.items()) + b"\r\n"
    step = 256 * 1024
    parts = (body[start : start + step] for start in range(0, len(body), step))
    wire = (b"%x\r\n%s\r\n" % (len(part), part) for part in parts) if chunked else parts
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        with contextlib.suppress(OSError):  # closed by the server before the body was all sent
            sock.sendall(head)
            for piece in wire:
                sock.sendall(piece)
            if chunked:
                sock.sendall(b"0\r\n\r\n")
        with contextlib.suppress(ConnectionError):  # a reset after the answer: keep what came
            while chunk := sock.recv(65536):
                data += chunk
    if not data:
        return None, b""
    status_line, _, rest = data.partition(b"\r\n")
    return int(status_line.split(b" ", 2)[1]), rest.partition(b"\r\n\r\n")[2]


async def burst(url: str, tokens: list[str]) -> list[tuple[int, float]]:
    """POST a call with each token at once; (status, seconds until answered) for each."""
    limits = httpx.Limits(max_connections=len(tokens), max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:

        async def one(token: str) -> tuple[int, float]:
            message = call(1, "me", {})
            started = time.monotonic()
            headers = {**mcp_headers(message), "Authorization": f"Bearer {token}"}
            response = await http.post(url, content=json.dumps(message).encode(), headers=headers)
            return response.status_code, time.monotonic() - started

        return list(await asyncio.gather(*(one(token) for token in tokens)))
