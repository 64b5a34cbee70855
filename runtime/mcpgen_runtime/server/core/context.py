"""What a handler sees of its request (`RequestContext`, `ToolContext`) and the exceptions it may raise.

Each request is self-contained (BASE-19): everything here comes from that request's
`_meta`, its transport and its verified `requestState`, never from earlier requests on the
same connection.

Input-required results (multi round-trip requests, MRTR; see `input_requests.py`): a handler
asks the client for input with

    answer = await ctx.elicit("What is your name?", schema, key="user_name")   # ElicitResult
    sampled = await ctx.sample("What is the capital of France?", max_tokens=100)
    roots = await ctx.list_roots()

or collects several requests for one round:

    name = ctx.need(Elicit("What is your name?", schema, key="user_name"))
    greeting = ctx.need(Sample("Generate a greeting", max_tokens=50, key="greeting"))
    await ctx.ask()                  # ends the round unless every answer is already here
    name.value, greeting.value

Each ask either returns at once (the answer arrived in `inputResponses` or was carried in the
`requestState` of an earlier round) or ends the round with an `input_required` result; the
handler then runs again from the top on the client's retry.

The same handler serves clients of the initialize-based revisions unchanged: in a legacy
session the facts above come from the session instead of `_meta`, and each ask is a real
server-to-client request (on the request's SSE stream, or stdout) whose answer the handler
awaits, bounded in time (`ClientRequestError` when the client does not answer usefully).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, Self, TypeVar

from ...content import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent, ToolResult
from ...protocol import jsonrpc
from ...protocol.input_messages import CreateMessageResult, ElicitResult, Root
from ...protocol.legacy.serving import LOG_LEVELS, unavailable_in
from ...protocol.meta import CLIENT_INFO_KEY, PROGRESS_TOKEN_KEY
from .config import ClientChannel, IncomingRequest, Notify, OpenStream
from .handler_errors import (
    ClientCapabilityRequired,
    ClientRequestError,
    RpcError,
    ToolExecutionError,
    status_for_code,
)
from .input_requests import (
    MRTR_METHODS,
    Elicit,
    ElicitUrl,
    InputRequest,
    InputRequired,
    ListRoots,
    Pending,
    Sample,
)

__all__ = [
    "ClientCapabilityRequired",
    "ClientRequestError",
    "Notify",
    "RequestContext",
    "RpcError",
    "TaskHooks",
    "ToolContext",
    "ToolExecutionError",
    "ToolReturn",
    "status_for_code",
]

_LOG = logging.getLogger("mcpgen.server")
# Where `ctx.log` writes when the client did not ask for log messages (LOG-01: stderr / the server's log).
_TOOL_LOG = logging.getLogger("mcpgen.tools")
_PY_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}

T = TypeVar("T")

# What a handler of a tool without an outputSchema may return: text, content blocks, or a whole result.
ContentValue = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
ToolReturn = str | ContentValue | list[ContentValue] | ToolResult

_MISSING: Any = object()
_NOTHING_CARRIED: dict[str, Any] = {}  # shared and never mutated: `_resume` replaces it
_FORM_PROBE = Elicit("", {"type": "object", "properties": {}})


def _merge_required(into: dict[str, Any], fragment: Mapping[str, Any]) -> None:
    for name, settings in fragment.items():
        into.setdefault(name, {}).update(settings)


class RequestContext:
    """Per-request facts and services for one request a handler answers.

    `report_progress` streams `notifications/progress` when the request carried a progress
    token; the MRTR methods (`need`/`ask`, `elicit`, `elicit_url`, `sample`, `list_roots`)
    read the client's answers or end the round (only on tools/call, prompts/get and
    resources/read: MRTR-02); `state` is kept across rounds in the signed `requestState`.
    """

    __slots__ = (
        "_answers",
        "_asked",
        "_auto_keys",
        "_carried",
        "_channel",
        "_closed",
        "_last_progress",
        "_last_progress_at",
        "_notify",
        "_open_stream",
        "_pending",
        "_progress_interval",
        "_state",
        "client_capabilities",
        "client_info",
        "headers",
        "input_responses",
        "meta",
        "method",
        "principal",
        "progress_token",
        "protocol_version",
        "request_id",
        "request_state",
        "transport",
    )

    def __init__(
        self,
        request_id: jsonrpc.RequestId,
        method: str,
        meta: Mapping[str, Any],
        protocol_version: str,
        client_capabilities: Mapping[str, Any],
        transport: str = "direct",
        headers: Mapping[str, str] | None = None,
        principal: Any = None,
        notify: Notify | None = None,
        input_responses: Mapping[str, Any] | None = None,
        request_state: str | None = None,
        open_stream: OpenStream | None = None,
        progress_interval: float = 0.0,
        channel: ClientChannel | None = None,
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.meta = meta  # the request's whole `_meta`, as sent
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        info = meta.get(CLIENT_INFO_KEY)
        # Self-reported and unverified: for logs only, never for decisions (BASE-38).
        self.client_info: Mapping[str, Any] | None = info if type(info) is dict else None
        self.transport = transport  # "http" | "stdio" | "direct"
        self.headers = headers  # lower-case names; None off HTTP
        self.principal = principal  # set by an authentication layer, if any
        token = meta.get(PROGRESS_TOKEN_KEY)
        # PROG-01: tokens are strings or integers; anything else means "no progress wanted".
        self.progress_token: str | int | None = (
            token if token is None or type(token) is str or type(token) is int else None
        )
        self.input_responses = input_responses  # as received (already checked to be an object of objects)
        self.request_state = request_state  # as received (already verified by the server)
        self._notify = notify
        self._open_stream = open_stream
        self._channel = channel  # legacy sessions: asks become real requests to the client
        self._progress_interval = progress_interval
        self._last_progress: float | None = None
        self._last_progress_at = 0.0
        self._closed = False
        # MRTR bookkeeping, filled lazily: most requests never ask for input.
        self._carried: dict[str, Any] = _NOTHING_CARRIED
        self._asked: frozenset[str] | None = None
        self._state: dict[str, Any] | None = None
        self._answers: dict[str, Any] | None = None
        self._pending: list[Pending[Any]] | None = None
        self._auto_keys: itertools.count[int] | None = None

    @classmethod
    def _for_request(
        cls,
        request: IncomingRequest,
        *,
        request_id: jsonrpc.RequestId,
        method: str,
        meta: Mapping[str, Any],
        protocol_version: str,
        client_capabilities: Mapping[str, Any],
        progress_interval: float,
    ) -> Self:
        """The dispatcher's constructor, for any subclass (subclasses set their own fields
        afterwards): what the transport knows comes from `request`, the rest from the checked
        message. One positional call of `RequestContext.__init__`, no keyword packing per call."""
        ctx = cls.__new__(cls)
        RequestContext.__init__(
            ctx,
            request_id,
            method,
            meta,
            protocol_version,
            client_capabilities,
            request.transport,
            request.headers,
            request.principal,
            request.notify,
            None,
            None,
            request.open_stream,
            progress_interval,
            request.channel,
        )
        return ctx

    # ---- capabilities ----------------------------------------------------------------------

    def has_capability(self, name: str) -> bool:
        """Whether this request declared the client capability `name` (BASE-34)."""
        return isinstance(self.client_capabilities.get(name), dict)

    def require_capability(self, name: str, settings: Mapping[str, Any] | None = None) -> None:
        """Fail the request with `-32021` unless the client declared `name` (BASE-35)."""
        if not self.has_capability(name):
            raise ClientCapabilityRequired({name: dict(settings or {})})

    def can_elicit(self, mode: str = "form") -> bool:
        """Whether an elicitation in `mode` ("form" or "url") may be sent (IN-02)."""
        probe: InputRequest[Any] = _FORM_PROBE if mode == "form" else ElicitUrl("", "")
        return probe.missing_capability(self.client_capabilities) is None

    def can_sample(self, *, tools: bool = False) -> bool:
        """Whether a sampling request (with tools: IN-17) may be sent."""
        probe = Sample("", 1, options={"tools": []} if tools else None)
        return probe.missing_capability(self.client_capabilities) is None

    def can_list_roots(self) -> bool:
        return self.has_capability("roots")

    # ---- progress ----------------------------------------------------------------------------

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send `notifications/progress` for this request.

        A no-op without a progress token (PROG-05), after the handler returned (PROG-08), or
        when `progress` does not increase (PROG-03) or is not finite. Updates closer together
        than the server's progress interval are dropped, except the final one (PROG-07).
        """
        if self._closed or self.progress_token is None or self._notify is None:
            return
        if not math.isfinite(progress) or (
            self._last_progress is not None and progress <= self._last_progress
        ):
            _LOG.debug("dropping non-increasing progress %r for request %r", progress, self.request_id)
            return
        if self._progress_interval:
            now = time.monotonic()
            final = total is not None and progress >= total
            if not final and now - self._last_progress_at < self._progress_interval:
                return
            self._last_progress_at = now
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None and math.isfinite(total):
            params["total"] = total
        if message is not None:
            params["message"] = message
        try:
            await self._notify(jsonrpc.notification("notifications/progress", params))
        except (OSError, RuntimeError) as exc:  # the peer went away; the caller's cancellation follows
            _LOG.debug("progress for request %r not delivered: %s", self.request_id, exc)
            self._closed = True

    async def open_stream(self) -> None:
        """Commit to a streamed (SSE) reply now, when the transport and client allow it.

        Useful before long work: the response headers go out at once. A no-op on stdio,
        when the client does not accept `text/event-stream`, or when already streaming.
        Once streaming, a later JSON-RPC error travels as an event of a `200` response, so
        check capabilities (`require_capability`, `can_elicit`, …) first (BASE-36).
        """
        if self._open_stream is not None and not self._closed:
            await self._open_stream()

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """A log message for the client (`notifications/message`; `data` is any JSON value).

        In a legacy session it goes to the client on this request's stream when the session's
        `logging/setLevel` minimum admits `level` (every level before the client sets one). A
        2026-07-28 request gets none (protocol logging is deprecated, LOG-01/03): the message goes
        to the server's own log (`mcpgen.tools`) instead. Keep secrets out of it (LOG-07).
        """
        if level not in LOG_LEVELS:
            raise ValueError(f"log level must be one of {', '.join(LOG_LEVELS)}, not {level!r}")
        if self._closed:
            return
        if self._channel is None:
            _TOOL_LOG.log(_PY_LEVELS[level], "%s%s", f"{logger}: " if logger else "", data)
            return
        try:
            await self._channel.log(level, data, logger)
        except (OSError, RuntimeError) as exc:  # the peer went away; the caller's cancellation follows
            _LOG.debug("log message for request %r not delivered: %s", self.request_id, exc)

    async def close_sse_stream(self) -> None:
        """End this request's SSE response now while the handler goes on (the 2025-11-25 polling
        pattern): the client reconnects after the announced `retry` delay and resumes with
        `Last-Event-ID`, receiving what was sent meanwhile and the result. Only in 2025-11-25
        sessions over HTTP; a no-op everywhere else (in 2026-07-28 closing a stream cancels it)."""
        if self._channel is not None and not self._closed:
            await self._channel.close_stream()

    def close(self) -> None:
        """Called by the server when the handler is done: no more notifications (PROG-08)."""
        self._closed = True

    # ---- multi round-trip requests -----------------------------------------------------------

    @property
    def state(self) -> dict[str, Any]:
        """JSON data kept across rounds in the signed (not encrypted) `requestState`."""
        if self._state is None:
            self._state = {}
        return self._state

    def _resume(self, carried: dict[str, Any], asked: Sequence[str], state: dict[str, Any]) -> None:
        """Called by the server with the contents of a verified requestState."""
        self._carried = carried
        self._asked = frozenset(asked)
        self._state = state

    def _lookup(self, key: str) -> Any:
        if key in self._carried:
            return self._carried[key]
        responses = self.input_responses
        # With a state, only keys asked in the last round are read from inputResponses;
        # without one, any key the handler asks for. Everything else is ignored (MRTR-23).
        if responses is not None and key in responses and (self._asked is None or key in self._asked):
            return responses[key]
        return _MISSING

    def need(self, request: InputRequest[T]) -> Pending[T]:
        """Register an input request for this round and return its handle.

        When the answer is already available (in `inputResponses` or carried state) the
        handle is answered at once; otherwise `ask()` will send the request. A malformed
        answer fails the request with `-32602` (MRTR-21). Keys must be unique within the
        request (MRTR-03); without `key` one is derived from the call order.
        """
        if self._answers is None:
            self._answers = {}
            self._pending = []
        assert self._pending is not None
        key = request.key
        if key is None:
            if self._auto_keys is None:
                self._auto_keys = itertools.count(1)
            key = f"input_{next(self._auto_keys)}"
        if key in self._answers or any(p.key == key for p in self._pending):
            raise ValueError(f"input request key {key!r} is used twice in one request (MRTR-03)")
        pending = Pending(key, request)
        raw = self._lookup(key)
        if raw is _MISSING:
            self._pending.append(pending)
        else:
            pending._set(request.parse(key, raw))
            self._answers[key] = raw
        return pending

    async def ask(self, *, single_use: bool = False) -> None:
        """Return when every `need`ed request has its answer; otherwise end this round with an
        `input_required` result asking for the missing ones (MRTR-24 when asked again).

        `single_use=True`: the `requestState` of this round is accepted once, by every replica
        that shares the server's store (MRTR-11); a second retry with it is refused.

        A request for a capability the client did not declare fails with `-32021` naming it
        (MRTR-13, BASE-35): check `can_elicit()`/`can_sample()`/`can_list_roots()` first to
        fall back instead.
        """
        pending = self._pending
        if not pending:
            return
        if self._channel is not None:
            await self._ask_client(self._channel, pending)
            return
        if self.method not in MRTR_METHODS:
            raise RuntimeError(f"{self.method} cannot ask for client input (MRTR-02)")
        required: dict[str, Any] = {}
        for item in pending:
            missing = item.request.missing_capability(self.client_capabilities)
            if missing is not None:
                _merge_required(required, missing)
        if required:
            raise ClientCapabilityRequired(required)
        self._pending = []
        assert self._answers is not None
        carried = dict(self._carried)
        responses = self.input_responses
        if responses is not None and self._asked:
            # Answers to last round's questions stay valid even if this run did not get to them.
            carried.update((key, responses[key]) for key in self._asked if key in responses)
        carried.update(self._answers)
        raise InputRequired(
            {item.key: item.request.wire() for item in pending},
            carried,
            dict(self._state or {}),
            single_use,
        )

    async def _ask_client(self, channel: ClientChannel, pending: list[Pending[Any]]) -> None:
        """A legacy session: send every pending request to the client and await the answers.

        Only what the client declared at `initialize` (and its revision has) is sent; otherwise
        `ClientCapabilityRequired` names what is missing, before anything is sent."""
        self._pending = []
        version = channel.protocol_version
        required: dict[str, Any] = {}
        for item in pending:
            missing = item.request.missing_capability(self.client_capabilities)
            if missing is None and unavailable_in(item.request.method, version):
                missing = {item.request.method.partition("/")[0]: {}}
            if missing is not None:
                _merge_required(required, missing)
        if required:
            raise ClientCapabilityRequired(required)
        if len(pending) == 1:
            answers = [await channel.request(pending[0].request.method, pending[0].request.params())]
        else:
            try:
                async with asyncio.TaskGroup() as group:  # one failure cancels the others
                    asked = [
                        group.create_task(channel.request(item.request.method, item.request.params()))
                        for item in pending
                    ]
            except BaseExceptionGroup as failed:
                raise failed.exceptions[0] from None
            answers = [task.result() for task in asked]
        for item, raw in zip(pending, answers, strict=True):
            try:
                item._set(item.request.parse(item.key, raw))
            except RpcError as exc:
                raise ClientRequestError(
                    f"The client's answer to {item.request.method} is not valid: "
                    f"{exc.message.partition(': ')[2] or exc.message}"
                ) from None

    async def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any],
        *,
        key: str | None = None,
        single_use: bool = False,
    ) -> ElicitResult:
        """Ask the user for form data (IN-03); never for secrets (IN-05: use `elicit_url`).
        `single_use`: see `ask`."""
        pending = self.need(Elicit(message, requested_schema, key))
        await self.ask(single_use=single_use)
        return pending.value

    async def elicit_url(
        self, message: str, url: str, *, key: str | None = None, single_use: bool = False
    ) -> ElicitResult:
        """Send the user to `url` for an out-of-band interaction (URL mode, IN-11)."""
        pending = self.need(ElicitUrl(message, url, key))
        await self.ask(single_use=single_use)
        return pending.value

    async def sample(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        key: str | None = None,
        options: Mapping[str, Any] | None = None,
        single_use: bool = False,
    ) -> CreateMessageResult:
        """Ask the client's model for a completion (`sampling/createMessage`)."""
        pending = self.need(Sample(messages, max_tokens, system_prompt, key, options))
        await self.ask(single_use=single_use)
        return pending.value

    async def list_roots(self, *, key: str | None = None, single_use: bool = False) -> tuple[Root, ...]:
        """Ask the client for its roots (`roots/list`)."""
        pending = self.need(ListRoots(key))
        await self.ask(single_use=single_use)
        return tuple(pending.value.roots)  # already a tuple when read from the wire


class TaskHooks(Protocol):
    """What a tools/call context needs of the tasks engine (tasks/worker.py implements it)."""

    @property
    def detached(self) -> bool:
        """Whether the call is a task now (its handler runs detached from the request)."""

    async def promote(
        self, ttl_ms: int | None, poll_interval_ms: int | None, status_message: str | None
    ) -> bool: ...

    async def set_status(self, message: str) -> None: ...


class ToolContext(RequestContext):
    """`RequestContext` of one `tools/call`, with the tool's wire name.

    Tasks (the `io.modelcontextprotocol/tasks` extension): `await ctx.run_as_task()` turns the call
    into a task when the client declared the extension — the client gets a `CreateTaskResult` and
    the handler goes on in the background. In a task, `report_progress` and `set_status` update the
    task's `statusMessage`, asks (`elicit`, `sample`, `list_roots`, `need` + `ask`) park it
    `input_required` until `tasks/update` answers, and `tasks/cancel` cancels the handler (it sees
    `asyncio.CancelledError`).
    """

    __slots__ = ("_task", "tool_name")

    def __init__(self, *, tool_name: str, **kwargs: Any) -> None:
        kwargs.setdefault("method", "tools/call")
        super().__init__(**kwargs)
        self.tool_name = tool_name
        self._task: TaskHooks | None = None

    @property
    def in_task(self) -> bool:
        """Whether this call runs as a task (its client polls `tasks/get` for the outcome)."""
        return self._task is not None and self._task.detached

    async def run_as_task(
        self,
        *,
        ttl_ms: int | None = None,
        poll_interval_ms: int | None = None,
        status_message: str | None = None,
    ) -> bool:
        """Make this call a task from here on: the client gets a `CreateTaskResult` now and the rest
        of the handler runs in the background (True, also when it is a task already). False when
        it cannot be one — the client did not declare the extension, a legacy session, or too
        many of the caller's tasks are running — and the handler goes on inline.

        `ttl_ms`: how long the task and its result are kept (`ServerConfig.tasks.ttl_ms` by
        default, at most `max_ttl_ms`); `poll_interval_ms`: the polling interval suggested to the
        client; `status_message`: the task's first `statusMessage`. Ask for input the task cannot
        go without before calling this: it is then an ordinary input-required round."""
        hooks = self._task
        if hooks is None:
            return False
        return await hooks.promote(ttl_ms, poll_interval_ms, status_message)

    async def set_status(self, message: str) -> None:
        """The task's `statusMessage` (cut to 4096 characters). Before the call is a task it
        becomes the task's first one if it becomes one; a no-op for clients without tasks."""
        hooks = self._task
        if hooks is not None:
            await hooks.set_status(message)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """`notifications/progress` (see `RequestContext.report_progress`); in a task, the
        task's `statusMessage` (`message`, else "progress/total")."""
        hooks = self._task
        if hooks is None or not hooks.detached:
            await super().report_progress(progress, total, message)
        elif math.isfinite(progress):
            if message is None:
                finite = total is not None and math.isfinite(total) and total > 0
                message = f"{progress:g}/{total:g}" if finite else f"{progress:g}"
            await hooks.set_status(message)

    def _detach(self, channel: ClientChannel) -> None:
        """The call became a task: no more notifications on the request's stream; asks go to
        `channel` (tasks/channel.py)."""
        self._notify = None
        self._open_stream = None
        self._channel = channel
