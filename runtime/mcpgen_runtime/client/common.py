"""What `Client` and `AsyncClient` share besides `ClientCore`, and the little that differs.

`AsyncClient` (`_async/client.py`) is written once; `Client` is generated from it
(`scripts/sync_twins.py`). What genuinely differs between a blocking and an asyncio client
lives here, hand-written, behind the same names: `SyncClientBase` / `AsyncClientBase` (running the
user's callbacks, the token provider, sleeping between input rounds, opening a stdio server) and
the callback and opener type aliases.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from os import PathLike
from typing import Any, ClassVar, Self

from .. import _json, telemetry
from ..cache import CacheStore, MemoryCacheStore, ResponseCache, auth_partition
from ..protocol.input_messages import ELICIT, ROOTS, SAMPLE, ProgressCallback
from ..protocol.jsonrpc import Message
from ..protocol.legacy.detect import EraChoice
from ..protocol.subscriptions import ListenState, SubscriptionFilter
from ..tools import ToolSpec
from ..transport.asyncio_stdio import AsyncStdioTransport
from ..transport.base import AsyncTransport, SyncTransport, sends_headers
from ..transport.limits import DEFAULT_MAX_RESPONSE_BYTES
from ..transport.stdio import StdioTransport
from .core import ClientCore, OnNotification
from .input_responses import InputNeeded
from .options import ElicitationMode, check_max_time, declared_capabilities

__all__ = ["AsyncClientBase", "ClientCommon", "SyncClientBase", "bearer", "core_for"]

FORM_ONLY: tuple[ElicitationMode, ...] = ("form",)

TokenProvider = Callable[[], str]
AsyncTokenProvider = Callable[[], str | Awaitable[str]]
Auth = Callable[[Mapping[str, str]], Mapping[str, str]]
AsyncAuth = Callable[[Mapping[str, str]], Awaitable[Mapping[str, str]]]
"""Adds the bearer token to a request's headers."""
ListenOpener = Callable[[SubscriptionFilter], tuple[ListenState, Iterator[Message]]]
AsyncListenOpener = Callable[[SubscriptionFilter], Awaitable[tuple[ListenState, AsyncIterator[Message]]]]
"""Sends the listen request: the stream's state and the transport's stream of its messages."""


def _server_id(url: str | None, transport: object) -> str:
    """Which server cache keys belong to: the URL, the stdio command, or the transport object."""
    if url is not None:
        return url
    for attr in ("url", "command"):
        value = getattr(transport, attr, None)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(part, str) for part in value):
            return _json.dumps(value).decode()
    return f"{type(transport).__qualname__}@{id(transport):x}"


def _response_cache(cache: bool | CacheStore, server: str) -> ResponseCache | None:
    if cache is False:
        return None
    if cache is True:
        return ResponseCache(MemoryCacheStore(), server=server)
    if not isinstance(cache, CacheStore):
        raise TypeError(f"cache must be True, False or a CacheStore, not {type(cache).__name__}")
    return ResponseCache(cache, server=server)


def core_for(
    url: str | None,
    transport: object,
    *,
    headers: Mapping[str, str] | None,
    token_provider: object,
    client_info: Mapping[str, str] | None,
    timeout: float | None,
    tools: Iterable[Mapping[str, Any]] | None,
    max_time: float | None = None,
    on_notification: OnNotification | None,
    on_progress: ProgressCallback | None,
    callbacks: dict[str, Callable[[Any], Any] | None],
    elicitation_modes: Collection[ElicitationMode],
    sampling_tools: bool,
    capabilities: Mapping[str, Any] | None,
    max_input_rounds: int,
    cache: bool | CacheStore,
    retries: int = 0,
    era: EraChoice = "auto",
    legacy_version: str | None = None,
) -> ClientCore:
    if on_progress is not None and inspect.iscoroutinefunction(on_progress):
        raise TypeError("on_progress runs as each notification arrives and must be a plain function")
    present = {method: callback for method, callback in callbacks.items() if callback is not None}
    core = ClientCore(
        client_info=client_info,
        tools=tools,
        headers=headers,
        timeout=timeout,
        max_time=max_time,
        send_headers=True if url is not None else sends_headers(transport),
        capabilities=declared_capabilities(
            capabilities,
            elicit=ELICIT in present,
            sample=SAMPLE in present,
            roots=ROOTS in present,
            elicitation_modes=elicitation_modes,
            sampling_tools=sampling_tools,
        ),
        input_callbacks=present,
        max_input_rounds=max_input_rounds,
        retries=retries,
        on_progress=on_progress,
        on_notification=on_notification,
        cache=_response_cache(cache, _server_id(url, transport)),
        partition=auth_partition(headers or {}) if token_provider is None else None,
        era=era,
        legacy_version=legacy_version,
    )
    core.legacy.hears_late_replies = url is None and bool(getattr(transport, "hears_late_replies", False))
    return core


def bearer(headers: Mapping[str, str], token: object) -> dict[str, str]:
    if not isinstance(token, str) or not token:
        raise TypeError(f"token_provider must return a non-empty str, not {type(token).__name__}")
    return {**headers, "Authorization": "Bearer " + token}


class ClientCommon:
    """What `Client` and `AsyncClient` share besides the core: options views and read-only state."""

    # Tool definitions used when `tools` is not passed; generated subclasses set their tools.json here.
    _tool_definitions_: ClassVar[Sequence[Mapping[str, Any]] | None] = None
    _core: ClientCore
    _transport: SyncTransport | AsyncTransport
    _call_timeout: float | None = None
    _call_progress: ProgressCallback | None = None
    _call_max_time: float | None = None
    _call_retry_unsafe = False
    _is_view = False

    def with_options(
        self,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        max_time: float | None = None,
        retry_unsafe: bool | None = None,
    ) -> Self:
        """A view of this client whose calls (generated methods included) use `timeout`,
        `on_progress` and `max_time` (the whole call's bound; `timeout` then counts silence,
        restarted by each progress notification); it shares the connection, tool table and cache,
        and closing it is a no-op. `retry_unsafe=True`: with `retries`, its tool calls are sent
        again also after a failure that leaves open whether the tool ran (a cut connection, HTTP
        502/504), as if every tool said `idempotentHint` (client/retry_policy.py)."""
        view = copy.copy(self)
        view._is_view = True
        if timeout is not None:
            view._call_timeout = timeout
        if on_progress is not None:
            view._call_progress = on_progress
        if max_time is not None:
            view._call_max_time = check_max_time(max_time)
        if retry_unsafe is not None:
            view._call_retry_unsafe = retry_unsafe
        return view

    @classmethod
    def stdio(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | PathLike[str] | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        **kwargs: Any,
    ) -> Self:
        """A client of `command` run as a stdio server (`Client` starts it at once, `AsyncClient` on
        `async with` or the first request); `env` adds to the current environment;
        `max_response_bytes` bounds one line of its stdout."""
        transport = cls._stdio_transport(command, env=env, cwd=cwd, max_response_bytes=max_response_bytes)
        make: Callable[..., Self] = cls  # the driver subclass takes `transport`
        try:
            return make(transport=transport, **kwargs)
        except BaseException:
            if isinstance(transport, StdioTransport):  # running already (an asyncio one has not started)
                transport.close()
            raise

    @staticmethod
    def _stdio_transport(command: Sequence[str], **options: Any) -> StdioTransport | AsyncStdioTransport:
        """`stdio()`'s transport: each side's own (SyncClientBase, AsyncClientBase)."""
        raise NotImplementedError

    # ---- telemetry (telemetry/; only reached when a provider is configured) ----

    _otel_peer: dict[str, Any] | None = None
    _session_opened_at: float | None = None

    def _peer_attributes(self) -> dict[str, Any]:
        peer = self._otel_peer
        if peer is None:
            url = getattr(self._transport, "url", None)
            peer = self._otel_peer = telemetry.client_peer(
                url if isinstance(url, str) else None, stdio=not self._core.send_headers
            )
        return peer

    def _session_id(self) -> str | None:
        session = getattr(self._transport, "session_id", None)
        return session if isinstance(session, str) else None

    def _header_paths(self, tool: str) -> tuple[tuple[str, ...], ...]:
        spec = self._core.tools.get(tool)
        return tuple(param.path for param in spec.header_params) if spec is not None else ()

    def _spans(self, otel: telemetry.Otel) -> telemetry.ClientSpans:
        """The CLIENT spans of one driver run."""
        core = self._core
        return telemetry.ClientSpans(
            otel, self._peer_attributes(), lambda: core.protocol_version, self._session_id, self._header_paths
        )

    def _peer_span(self, otel: telemetry.Otel, message: Message) -> telemetry.ServerSpan:
        """The SERVER span of a legacy server's own request (elicitation, sampling, roots)."""
        params = message.get("params")
        return telemetry.ServerSpan(
            otel,
            str(message.get("method")),
            message.get("id"),
            params if type(params) is dict else {},
            transport="stdio" if not self._core.send_headers else "http",
            protocol_version=self._core.protocol_version,
            session_id=self._session_id(),
        )

    def _note_session(self, opened: bool) -> None:
        """A legacy session opened or ended: `mcp.client.session.duration`."""
        if opened:
            self._session_opened_at = time.monotonic()
            return
        started, self._session_opened_at = self._session_opened_at, None
        otel = telemetry.active()
        if started is not None and otel is not None and otel.client_session is not None:
            attributes = {
                key: value
                for key, value in self._peer_attributes().items()
                if key
                in (
                    telemetry.TRANSPORT,
                    telemetry.PROTOCOL_NAME,
                    telemetry.SERVER_ADDRESS,
                    telemetry.SERVER_PORT,
                )
            }
            attributes[telemetry.PROTOCOL_VERSION] = self._core.protocol_version
            otel.client_session.record(time.monotonic() - started, attributes)

    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        return self._core.tools

    @property
    def protocol_version(self) -> str:
        return self._core.protocol_version

    @property
    def era(self) -> str | None:
        """ "modern" or "legacy" once known (None until the first exchange with era="auto")."""
        return self._core.era

    @property
    def capabilities(self) -> Mapping[str, Any]:
        """The `clientCapabilities` sent with every request."""
        return self._core.capabilities

    @property
    def cache(self) -> ResponseCache | None:
        return self._core.cache

    @property
    def on_notification(self) -> OnNotification | None:
        """Called with every notification that arrives with a reply (progress, log, …)."""
        return self._core.on_notification

    @on_notification.setter
    def on_notification(self, callback: OnNotification | None) -> None:
        self._core.on_notification = callback


class SyncClientBase(ClientCommon):
    """The blocking side of what differs: plain callbacks only, a stdio server started at once."""

    _transport: SyncTransport
    _token_provider: TokenProvider | None

    @staticmethod
    def _check_callbacks(callbacks: Mapping[str, object]) -> None:
        for kind, callback in callbacks.items():
            if callback is not None and inspect.iscoroutinefunction(callback):
                raise TypeError(
                    f"{kind} is a coroutine function; Client needs a plain one (AsyncClient takes either)"
                )

    @staticmethod
    def _stdio_transport(command: Sequence[str], **options: Any) -> StdioTransport:
        return StdioTransport(command, **options)  # the server starts at once

    def _token(self) -> str:
        assert self._token_provider is not None
        token: str = self._token_provider()
        return token

    @staticmethod
    def _answer(step: InputNeeded) -> dict[str, Any]:
        if step.delay:
            time.sleep(step.delay)
        answers: dict[str, Any] = {}
        for key, callback, request in step.calls:
            answer = callback(request)
            if inspect.isawaitable(answer):
                if inspect.iscoroutine(answer):
                    answer.close()
                raise TypeError(
                    f"the callback for {request.method} returned an awaitable; Client needs plain "
                    "callbacks (use AsyncClient for coroutine callbacks)"
                )
            answers[key] = answer
        return answers


class AsyncClientBase(ClientCommon):
    """The asyncio side of what differs: callbacks and `token_provider` may be coroutine
    functions; a stdio server starts on `async with` or at the first request."""

    _transport: AsyncTransport
    _token_provider: AsyncTokenProvider | None

    @staticmethod
    def _check_callbacks(callbacks: Mapping[str, object]) -> None:
        """Plain functions and coroutine functions are both fine here."""

    @staticmethod
    def _stdio_transport(command: Sequence[str], **options: Any) -> AsyncStdioTransport:
        # the server starts on `async with` or the first request
        return AsyncStdioTransport(command, **options)

    async def _token(self) -> str:
        assert self._token_provider is not None
        token = self._token_provider()
        if inspect.isawaitable(token):
            token = await token
        return token

    @staticmethod
    async def _answer(step: InputNeeded) -> dict[str, Any]:
        if step.delay:
            await asyncio.sleep(step.delay)
        answers: dict[str, Any] = {}
        for key, callback, request in step.calls:  # one at a time: a person may be answering
            answer = callback(request)
            if inspect.isawaitable(answer):
                answer = await answer
            answers[key] = answer
        return answers
