"""stdio without I/O: one JSON-RPC message per line, what each line read means and where it
goes, and what a transport is given (`StdioTransportBase`); shared by both stdio transports
(`stdio.py`).

Rules: STDIO-01 (newline-delimited, no embedded newlines — orjson never emits raw newlines),
STDIO-02 (stderr is a log, not an error signal: a bounded tail only `ServerExitedError`
reports), STDIO-03 (stdout carries messages only: a line that is not JSON, such as a banner, is
skipped with a warning, up to `STRAY_LINE_LIMIT` lines, then it is a protocol error),
STDIO-08 / CANCEL-03 (an abandoned request is cancelled with
`notifications/cancelled`), SUB-06 (listen streams are demultiplexed by the subscription id
in `_meta`; no request's `on_notification` sees their messages).
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Generic, TypeVar

from .. import _json
from ..errors import ProtocolError, ResponseTooLargeError, ServerExitedError
from ..masking import masked, masked_bytes
from ..protocol.jsonrpc import decode, is_response
from ..protocol.meta import SUBSCRIPTION_ID_KEY
from .hooks import AsyncOnRequest, Message, OnRequest
from .limits import DEFAULT_MAX_RESPONSE_BYTES, check_limit, too_large

SHUTDOWN_GRACE: Final = 2.0  # seconds to wait at each shutdown step (stdin EOF, SIGTERM)
STDERR_TAIL_LINES: Final = 200
STDERR_LINE_LIMIT: Final = 8192  # bytes kept per stderr line: the tail stays bounded
STRAY_LINE_LIMIT: Final = 100  # stdout lines that are not JSON skipped before stdout counts as broken
EXCERPT_BYTES: Final = 80  # of a skipped line, in its warning

_LOG = logging.getLogger("mcpgen.client")


def child_env(env: Mapping[str, str] | None) -> dict[str, str] | None:
    # Extra variables on top of ours: a server without PATH or HOME is rarely what anyone wants.
    return None if env is None else {**os.environ, **env}


def encode(message: Message) -> bytes:
    return _json.dumps(message) + b"\n"


def cancel_line(request_id: Any, reason: str) -> bytes:
    return encode(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": reason},
        }
    )


def parse_line(line: bytes) -> Message:
    return decode(
        line, "server wrote a non-JSON line to stdout", "server wrote a non-object JSON line to stdout"
    )


class StrayLines:
    """Lines a server writes to stdout that are not JSON messages (a banner, a stray print):
    each is skipped with one warning naming the server and an inert excerpt (escaped, at most
    `EXCERPT_BYTES`), and the connection goes on; past `limit` such lines stdout is not a
    protocol stream and each further one is a `ProtocolError` for whoever waits (STDIO-03)."""

    __slots__ = ("count", "limit", "source")

    def __init__(self, source: str, limit: int = STRAY_LINE_LIMIT) -> None:
        self.source = source
        self.limit = limit
        self.count = 0

    def parse(self, line: bytes) -> Message | None:
        """The message on `line`, or None for a line skipped."""
        try:
            return parse_line(line)
        except ProtocolError as exc:
            self.count += 1
            if self.count > self.limit:
                raise ProtocolError(
                    f"server {self.source} wrote more than {self.limit} lines that are not JSON-RPC "
                    f"to stdout; the last: {exc}"
                ) from None
            _LOG.warning(
                "server %s wrote a line that is not JSON-RPC to stdout (skipped, %d of at most %d): %s",
                self.source,
                self.count,
                self.limit,
                excerpt(line),
            )
            return None


def excerpt(line: bytes) -> str:
    """The start of `line` as escaped ASCII (`repr` of bytes: no control character survives),
    without the secrets this process knows."""
    # Masked before the cut: a secret across the cut shows none of its start.
    shown = repr(masked_bytes(line[: EXCERPT_BYTES + 4096])[:EXCERPT_BYTES])
    return shown if len(line) <= EXCERPT_BYTES else f"{shown}... ({len(line)} bytes)"


def program(command: Sequence[str]) -> list[str]:
    """The command line of a server process (a program and its arguments)."""
    if not command:
        raise ValueError("command must name a program")
    return list(command)


class LineSplitter:
    """Cuts what the server writes into lines, however the reads split it; blank lines are skipped.

    A line over `limit` bytes (`limits.py`) is never buffered: it comes out as a
    `ResponseTooLargeError` in its place, and its rest is skipped up to its newline.
    """

    __slots__ = ("_held", "_partial", "_skipping", "limit", "source")

    def __init__(self, limit: int = DEFAULT_MAX_RESPONSE_BYTES, source: str = "the server") -> None:
        self._partial: list[bytes] = []  # an unfinished line, in the pieces it came in (joined once)
        self._held = 0  # bytes in `_partial`
        self._skipping = False
        self.limit = limit
        self.source = source

    def feed(self, chunk: bytes) -> list[bytes | ResponseTooLargeError]:
        if self._skipping:
            end = chunk.find(b"\n")
            if end < 0:
                return []
            chunk = chunk[end + 1 :]
            self._skipping = False
        if self._partial:
            if chunk.find(b"\n") < 0:
                return self._hold(chunk, [])
            self._partial.append(chunk)
            data = b"".join(self._partial)
            self._partial, self._held = [], 0
        else:
            data = chunk
        *complete, rest = data.split(b"\n")
        limit = self.limit
        out: list[bytes | ResponseTooLargeError] = [
            line if len(line) <= limit else too_large(self.source, limit, "stdout line")
            for line in complete
            if line.strip()
        ]
        return self._hold(rest, out) if rest else out

    def _hold(
        self, piece: bytes, out: list[bytes | ResponseTooLargeError]
    ) -> list[bytes | ResponseTooLargeError]:
        held = self._held + len(piece)
        if held > self.limit:
            self._partial, self._held, self._skipping = [], 0, True
            out.append(too_large(self.source, self.limit, "stdout line"))
        else:
            self._partial.append(piece)
            self._held = held
        return out


def answers(message: Message, request_id: Any) -> bool:
    """Whether `message` is the response to `request_id`; an error with id null answers the
    request the server could not read."""
    if not is_response(message):
        return False
    reply_id = message["id"]
    return bool(reply_id == request_id or (reply_id is None and "error" in message))


def stream_key(message: Message) -> Any:
    """The request id a notification belongs to as part of a stream: the subscription id in
    `_meta` (SUB-05), or the `requestId` of a server's `notifications/cancelled` (SUB-08)."""
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    if isinstance(meta, dict) and SUBSCRIPTION_ID_KEY in meta:
        return meta[SUBSCRIPTION_ID_KEY]
    if message.get("method") == "notifications/cancelled":
        return params.get("requestId")
    return None


def ends_stream(message: Message) -> bool:
    return is_response(message) or message.get("method") == "notifications/cancelled"


Deliver = Callable[[Any], None]  # puts a message (or an error) in a stream's queue


class StreamRoutes:
    """The open `stream()` requests and where their messages go (SUB-06)."""

    __slots__ = ("_routes",)

    def __init__(self) -> None:
        self._routes: dict[Any, Deliver] = {}

    def open(self, request_id: Any, deliver: Deliver) -> None:
        self._routes[request_id] = deliver

    def close(self, request_id: Any) -> None:
        self._routes.pop(request_id, None)

    def queues(self) -> Iterable[Deliver]:
        return list(self._routes.values())

    def route(self, message: Message) -> bool:
        """Deliver a stream's message (its response, or a notification tagged with its id).
        True when `message` belongs to a stream; a notification tagged for a stream that is
        closed by now is dropped."""
        if is_response(message):
            deliver = self._routes.get(message["id"])
            if deliver is None:
                return False
        else:
            key = stream_key(message)
            if key is None:
                return False
            deliver = self._routes.get(key)
            if deliver is None:
                return True
        deliver(message)
        return True


def exited(command: list[str], returncode: int | None, stderr_tail: str) -> ServerExitedError:
    stderr_tail = masked(stderr_tail)  # what the server logs may repeat what it was given
    status = f"exited with code {returncode}" if returncode is not None else "closed its stdout"
    last = next((line.strip() for line in reversed(stderr_tail.splitlines()) if line.strip()), "")
    return ServerExitedError(
        f"server process {command[0]!r} {status}" + (f"; stderr: {last[:300]}" if last else ""),
        returncode=returncode,
        stderr_tail=stderr_tail,
    )


def copy_exit(exited: ServerExitedError) -> ServerExitedError:
    """A fresh exception for each waiter (one raised object carries one traceback)."""
    return ServerExitedError(str(exited), returncode=exited.returncode, stderr_tail=exited.stderr_tail)


def tail_text(lines: Iterable[bytes]) -> str:
    return b"".join(lines).decode("utf-8", "replace")


OnRequestT = TypeVar("OnRequestT", OnRequest, AsyncOnRequest)


class StdioTransportBase(Generic[OnRequestT]):
    """What both stdio transports are given and hold alike: the server's command line, its
    environment and directory, the `on_request` hook (blocking or a coroutine function), the
    line limit (`max_response_bytes`), and the routing state. Each transport's `_set_up` does
    the rest in its own I/O model (the blocking one starts the process there)."""

    sends_headers = False
    hears_late_replies = True  # `request(..., also=)`

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        on_request: OnRequestT | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.command = program(command)
        self.on_request: OnRequestT | None = on_request
        self._max_line = check_limit(max_response_bytes)
        # How either transport starts the server: three pipes, the environment, the directory.
        self._spawn: dict[str, Any] = {
            "stdin": subprocess.PIPE,
            "stdout": subprocess.PIPE,
            "stderr": subprocess.PIPE,
            "env": child_env(env),
            "cwd": cwd,
        }
        self._stray = StrayLines(repr(self.command[0]))
        self._streams = StreamRoutes()
        self._exited: ServerExitedError | None = None
        self._set_up()

    def _set_up(self) -> None:
        """The transport's own state, once the common part is set."""
        raise NotImplementedError
