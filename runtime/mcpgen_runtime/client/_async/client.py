"""The client drivers generated clients inherit: `AsyncClient`, and `Client` generated from it.

A driver pumps `ClientCore` flows over a transport: it sends each `Outgoing` request and
sends the reply back into the flow (or throws the transport's error in, so the flow can
recover: a stale cache entry, a re-issued read, HTTP-26), and answers each `InputNeeded`
step with the user's callbacks. Everything else is in `ClientCore` (core.py); what the
blocking and asyncio drivers do differently is in `SyncClientBase` / `AsyncClientBase` (common.py);
the methods for resources, prompts and completions are its base `AsyncSurfaceMethods`
(surface_methods.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Collection, Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from pydantic import BaseModel

from ... import telemetry
from ...cache import CacheStore, auth_partition
from ...content import ToolResult
from ...errors import McpRuntimeError, RemoteError
from ...protocol.input_messages import (
    ELICIT,
    ROOTS,
    SAMPLE,
    AsyncElicitCallback,
    AsyncRootsCallback,
    AsyncSampleCallback,
    InputResult,
    ProgressCallback,
)
from ...protocol.jsonrpc import Message
from ...protocol.legacy.detect import EraChoice
from ...protocol.legacy.handshake import INITIALIZED
from ...protocol.subscriptions import ListenState, SubscriptionFilter
from ...protocol.tasks import TaskState
from ...transport import AsyncHttpTransport
from ...transport.base import AsyncTransport
from ...transport.limits import DEFAULT_MAX_RESPONSE_BYTES
from ..common import FORM_ONLY, AsyncAuth, AsyncTokenProvider, bearer, core_for
from ..core import (
    DEFAULT_TIMEOUT,
    Flow,
    Notify,
    OnNotification,
    Outgoing,
    Step,
    ToolsPage,
)
from ..drift import DriftMode
from ..input_responses import DEFAULT_MAX_INPUT_ROUNDS, InputNeeded
from ..legacy_flows import LEGACY
from ..legacy_listen import LegacyListenState
from ..legacy_peer_requests import peer_response
from ..options import ElicitationMode
from .listen import AsyncSubscription
from .surface_methods import AsyncSurfaceMethods
from .tasks import AsyncTaskHandle, AsyncTasks
from .tool_specs import AsyncToolSpecs

if TYPE_CHECKING:
    from ...pins import DriftReport
    from ..oauth import OAuth
    from ..oauth._async.login import AsyncOAuthLogin

__all__ = ["AsyncClient"]

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class AsyncClient(AsyncSurfaceMethods):
    """MCP tool client over Streamable HTTP (`url`) or stdio (`.stdio(command)`).

    Callbacks answer what a server asks for in the middle of a call (MRTR): `on_elicit`,
    `on_sample`, `on_roots` (each also declares its capability); `on_progress(progress, total,
    message)` hears every call's progress. `token_provider()` returns a bearer token for each
    request; `auth=OAuth(...)` logs in where the server asks for it (MCP authorization, needs
    `mcpgen-runtime[auth]`). `cache` holds `server/discover` and `tools/list` results for their `ttlMs`
    (True: in memory; False: off; or a `CacheStore`). `retries`: how many more times a request
    is sent after a retryable error (`McpRuntimeError.retryable`: a connection refused or cut, HTTP
    429/502/503/504), each time as a new request after a bounded wait (`Retry-After` honoured);
    behind a load balancer it reaches another replica. A tool call cut off after it was sent
    (or answered 502/504) may have run: it is sent again only when the tool's annotations say
    `readOnlyHint` or `idempotentHint`, or the caller allows it (`with_options(retry_unsafe=True)`);
    client/retry_policy.py has the table.

    `Client` blocks; `AsyncClient` is its asyncio twin: there the callbacks and
    `token_provider` may also be coroutine functions, and cancelling the task running a call
    cancels the request (HTTP: the reply stream is closed, HTTP-21; stdio:
    `notifications/cancelled`, CANCEL-03).

    `era`: "auto" finds out whether the server is modern (2026-07-28) or speaks an
    initialize-based revision (2025-11-25, 2025-06-18, 2025-03-26) and talks to it in kind;
    "modern" or "legacy" skips the detection. `legacy_version` is the revision offered in
    `initialize` (default: the newest). In the legacy era the server's own requests are
    answered by the same `on_elicit` / `on_sample` / `on_roots` callbacks (Client: on the
    thread that reads them).

    What a server may send is bounded (docs/explanation/trust-model.md): `timeout` is one
    deadline over a whole request (connect, head, every body byte); `max_response_bytes` (default
    64 MiB) caps a response body, an SSE event and a stdio line (`.stdio(..., max_response_bytes=...)`);
    past it the call raises `ResponseTooLargeError`.

    `max_time` (seconds, default None) makes a tool call's deadline one that progress keeps
    alive (CANCEL-06): `timeout` then bounds the silence, restarted by each progress
    notification of the call, and `max_time` the whole call, its input rounds included; such a
    call asks for progress (a progressToken) even without `on_progress`. Without `max_time`,
    `timeout` stays one deadline per request. `call_tool(..., max_time=...)` and
    `with_options(max_time=...)` set it per call.

    Tasks (the tasks extension): every tool call declares the extension; a call the server answers
    with a task is polled to the end (task_flows.py: pollIntervalMs within bounds, input through the
    callbacks, statusMessage to `on_progress`, `tasks/cancel` when the caller gives up). Generated
    clients' `start.<tool>` / `resume.<tool>` return typed handles (`_start_task`, `_resume_task`;
    _async/tasks.py); `tasks` reaches any task by id.

    Pinned definitions: a generated client carries a pin of each tool it was generated for; unless
    `on_drift="ignore"`, its first tool call (and the first after `notifications/tools/list_changed`)
    lists the server's tools (cached per `ttlMs`) and compares them (client/drift.py): "warn" (the
    default) warns `ToolDriftWarning` once per drift, "error" raises `ToolDriftError`.
    `check_drift()` compares on demand."""

    def __init__(
        self,
        url: str | None = None,
        *,
        transport: AsyncTransport | None = None,
        headers: Mapping[str, str] | None = None,
        token_provider: AsyncTokenProvider | None = None,
        client_info: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        tools: Iterable[Mapping[str, Any]] | None = None,
        on_notification: OnNotification | None = None,
        on_progress: ProgressCallback | None = None,
        on_elicit: AsyncElicitCallback | None = None,
        on_sample: AsyncSampleCallback | None = None,
        on_roots: AsyncRootsCallback | None = None,
        elicitation_modes: Collection[ElicitationMode] = FORM_ONLY,
        sampling_tools: bool = False,
        capabilities: Mapping[str, Any] | None = None,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        cache: bool | CacheStore = True,
        era: EraChoice = "auto",
        legacy_version: str | None = None,
        auth: OAuth | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        retries: int = 0,
        max_time: float | None = None,
        on_drift: DriftMode = "warn",
    ) -> None:
        if (url is None) == (transport is None):
            raise ValueError("pass exactly one of `url` or `transport`")
        self._oauth: AsyncOAuthLogin | None = None
        if auth is not None:
            if url is None or token_provider is not None:
                raise ValueError(
                    "auth= needs a url (stdio servers take credentials from the environment: BASE-25) "
                    "and replaces token_provider"
                )
            from ..oauth._async.login import AsyncOAuthLogin  # the auth extra: only when asked for

            self._oauth = AsyncOAuthLogin(auth, url)
            # only for the cache partition (None before the login); requests use authorize()
            token_provider = cast(AsyncTokenProvider, self._oauth.token)
        self._check_callbacks(
            {
                "on_elicit": on_elicit,
                "on_sample": on_sample,
                "on_roots": on_roots,
                "token_provider": token_provider,
            }
        )
        if tools is None:
            tools = self._tool_definitions_  # generated clients embed the definitions they were built from
        self._transport: AsyncTransport = (
            transport
            if transport is not None
            else AsyncHttpTransport(cast(str, url), timeout=timeout, max_response_bytes=max_response_bytes)
        )
        self._core = core_for(
            url,
            self._transport,
            headers=headers,
            token_provider=token_provider,
            client_info=client_info,
            timeout=timeout,
            max_time=max_time,
            tools=tools,
            on_notification=on_notification,
            on_progress=on_progress,
            callbacks={ELICIT: on_elicit, SAMPLE: on_sample, ROOTS: on_roots},
            elicitation_modes=elicitation_modes,
            sampling_tools=sampling_tools,
            capabilities=capabilities,
            max_input_rounds=max_input_rounds,
            cache=cache,
            era=era,
            legacy_version=legacy_version,
            retries=retries,
        )
        self._core.drift.set_mode(on_drift)
        self._static_headers = dict(headers or {})
        self._token_provider = token_provider
        self._auth: AsyncAuth | None = (
            self._with_token if token_provider is not None and self._core.send_headers else None
        )
        if self._oauth is not None:
            self._auth = self._oauth.authorize  # no token yet: no header, and the 401 starts the login
            cast(AsyncHttpTransport, self._transport).sign = self._oauth.sign  # DPoP proofs, when bound

    async def _with_token(self, headers: Mapping[str, str]) -> Mapping[str, str]:
        return bearer(headers, await self._token())

    async def _partition(self) -> str | None:
        if self._token_provider is None:
            return self._core.default_partition
        return auth_partition(self._static_headers, await self._token())

    async def _run(self, flow: Flow[T]) -> T:
        transport = self._transport
        notify = self._core.notify
        auth = self._auth
        oauth = self._oauth
        authorizations = 0
        step: Step | None = None
        otel = telemetry.active()
        spans = None if otel is None else self._spans(otel)  # telemetry/: None when off
        try:
            step = next(flow)
            while True:
                if type(step) is Outgoing:
                    token = None
                    if spans is not None:
                        spans.request(step.message)
                        token = spans.enter()  # HTTP instrumentation and peer requests: its children
                    try:
                        if step.also is None:
                            reply = await transport.request(
                                step.message,
                                step.headers if auth is None else await auth(step.headers),
                                timeout=step.timeout,
                                on_notification=notify,
                            )
                        else:  # stdio only (`LegacyFlows.handshake_flow`): no auth
                            reply = await transport.request(  # type: ignore[call-arg]
                                step.message,
                                step.headers,
                                timeout=step.timeout,
                                on_notification=notify,
                                also=step.also,
                            )
                    except McpRuntimeError as exc:
                        if spans is not None:
                            spans.leave(token)
                        if oauth is not None and await oauth.recover(exc, authorizations):
                            authorizations += 1  # logged in (again, AUTH-08): the same request once more
                            continue
                        if spans is not None:
                            spans.failed(exc)
                        step = flow.throw(exc)  # the flow may recover (stale cache, HTTP-26)
                    except BaseException:
                        if spans is not None:
                            spans.leave(token)
                        raise
                    else:
                        authorizations = 0
                        if spans is not None:
                            spans.leave(token)
                            spans.reply(reply[0])
                        step = flow.send(reply)
                elif type(step) is Notify:
                    try:
                        await self._notify(step, spans)
                    except McpRuntimeError as exc:
                        step = flow.throw(exc)
                    else:
                        step = flow.send(None)
                elif spans is None:
                    step = flow.send(await self._answer(cast(InputNeeded, step)))
                else:
                    token = spans.enter()
                    try:
                        answers = await self._answer(cast(InputNeeded, step))
                    finally:
                        spans.leave(token)
                    step = flow.send(answers)
        except StopIteration as done:
            if spans is not None:
                spans.end()
            return cast(T, done.value)
        except BaseException as exc:
            if spans is not None:
                spans.failed(exc)
                spans.end()
            flow.close()
            if not isinstance(exc, McpRuntimeError) and step is not None:
                if not isinstance(step, Notify) and step.abort is not None:
                    await self._abort(
                        step.abort
                    )  # the caller gave up on a task: cancel it (never notifications/cancelled)
                elif type(step) is Outgoing:
                    notice = self._core.legacy.cancel_notice(
                        step.message
                    )  # legacy HTTP: say it (a dropped stream is not)
                    if notice is not None:
                        await self._notify(notice, spans)
            raise

    async def _abort(self, request: Outgoing) -> None:
        """Send `request` (a `tasks/cancel`) once, best effort: the call is already over."""
        try:
            headers = request.headers if self._auth is None else await self._auth(request.headers)
            await self._transport.request(
                request.message, headers, timeout=request.timeout, on_notification=self._core.notify
            )
        except Exception:  # whatever stops it, the caller's own exception is what they see
            return

    async def _notify(self, notice: Notify, spans: telemetry.ClientSpans | None = None) -> None:
        headers = notice.headers if self._auth is None else await self._auth(notice.headers)
        if spans is None:
            otel = telemetry.active()
            if otel is not None:
                spans = self._spans(otel)
        if spans is not None:
            spans.notification(notice.message)  # a child of the operation that sends it
        try:
            await self._transport.notify(notice.message, headers)
        except McpRuntimeError:
            if not notice.best_effort:
                raise
            return
        if notice.message.get("method") == INITIALIZED:
            self._note_session(opened=True)
            await self._session_opened(headers)

    async def _session_opened(self, headers: Mapping[str, str]) -> None:
        """A legacy session began: the server's requests are answered by the callbacks from
        now on, and over HTTP the session's GET stream is read, as the official SDK clients do
        (servers send requests that belong to no call there, and some even those that do)."""
        transport = self._transport
        if getattr(transport, "on_request", None) is None:
            transport.on_request = self._on_peer_request  # before: requests dropped (modern: HTTP-15)
        open_events = getattr(transport, "open_events", None)
        if open_events is not None:
            await open_events(headers, self._core.notify)

    async def _on_peer_request(self, message: Message) -> Message:
        """The transport's `on_request` hook in the legacy era (client/legacy_peer_requests.py)."""
        otel = telemetry.active()
        if otel is None:
            planned = self._core.legacy.peer_request(message)
            if not isinstance(planned, InputNeeded):
                return planned
            return peer_response(message, planned, await self._answer(planned))
        span = self._peer_span(otel, message)  # the user's callback runs inside it
        try:
            planned = self._core.legacy.peer_request(message)
            response = (
                planned
                if not isinstance(planned, InputNeeded)
                else peer_response(message, planned, await self._answer(planned))
            )
        except BaseException as exc:
            span.end(exc=exc)
            raise
        span.end(response)
        return response

    @property
    def transport(self) -> AsyncTransport:
        return self._transport

    async def discover(self, *, refresh: bool = False) -> dict[str, Any]:
        """`server/discover` (cached for its `ttlMs`; `refresh=True` fetches anyway)."""
        return await self._run(self._core.discover_flow(partition=await self._partition(), refresh=refresh))

    async def list_tools(self, cursor: str | None = None, *, refresh: bool = False) -> ToolsPage:
        """One page (invalid tools already dropped; cached per page); the tool table is left as is."""
        page, _ = await self._run(
            self._core.list_page_flow(cursor, partition=await self._partition(), refresh=refresh)
        )
        return page

    async def list_all_tools(self, *, max_pages: int = 1000, refresh: bool = False) -> list[dict[str, Any]]:
        """Every page, from the cache while fresh; `refresh=True` re-fetches all of them from the
        first page (a consistent snapshot: CACHE-16)."""
        return await self._run(
            self._core.list_all_flow(max_pages, partition=await self._partition(), refresh=refresh)
        )

    async def check_drift(self, *, refresh: bool = False) -> DriftReport:
        """List the server's tools (from the cache while fresh; `refresh=True` fetches anyway) and
        compare them with the tools this client was generated for: the report names each changed
        tool with the JSON pointers of its changes, and each one the server no longer lists. With
        `on_drift="error"` a drift raises `ToolDriftError`, with "warn" it is also warned."""
        report = await self._run(self._core.drift.report_flow(refresh=refresh))
        self._core.drift.act(report)
        return report

    def tool_specs(self, provider: str, *, tools: Iterable[str] | None = None) -> AsyncToolSpecs:
        """This client's tools (`tools`: only these wire names) as a model provider takes them:
        "openai" (the Responses API), "openai-chat" (Chat Completions), "anthropic" or "gemini".
        `.tools` is the request's `tools` value (strict, lowered faithfully: for OpenAI an optional
        property becomes required and nullable, and its `null` is "not sent" again on the way
        back; a name the provider refuses is mapped, and mapped back); `.unsendable` lists the
        tools left out and why; `await .call(name, arguments, call_id=...)` runs a model's tool
        call and returns the `ToolReply` whose `message()` goes back to the model. Nothing is sent
        to the server until a call."""
        return AsyncToolSpecs(provider, self.tools, tools, checks=self._core.checks, client=self)

    # ClientCore.call_flow repeats these keywords on purpose: this public signature stays typed
    # keyword for keyword (no `**options` pass-through); here the client's defaults are filled in.
    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        input_responses: Mapping[str, InputResult | Mapping[str, Any]] | None = None,
        request_state: str | None = None,
        max_time: float | None = None,
    ) -> ToolResult:
        """Raw call: returns the result even when `isError` is true. `input_responses` and
        `request_state` resume a call that raised `InputRequiredError`. With `max_time`, `timeout`
        is the silence allowed (progress restarts it) and `max_time` bounds the whole call."""
        return await self._run(
            self._core.call_flow(
                name,
                arguments,
                meta=meta,
                timeout=self._call_timeout if timeout is None else timeout,
                on_progress=self._call_progress if on_progress is None else on_progress,
                input_responses=input_responses,
                request_state=request_state,
                max_time=self._call_max_time if max_time is None else max_time,
                retry_unsafe=self._call_retry_unsafe,
            )
        )

    async def _call(
        self, name: str, arguments: Mapping[str, Any] | BaseModel, input_model: type[BaseModel]
    ) -> ToolResult:
        return await self._run(
            self._core.typed_call_flow(
                name,
                arguments,
                input_model,
                self._call_timeout,
                self._call_progress,
                self._call_max_time,
                retry_unsafe=self._call_retry_unsafe,
            )
        )

    async def _call_structured(
        self,
        name: str,
        arguments: Mapping[str, Any] | BaseModel,
        input_model: type[BaseModel],
        output_model: type[M],
    ) -> M:
        result = await self._call(name, arguments, input_model)
        return self._core.checks.structured(name, result, output_model)

    # -- tasks (the tasks extension): handles and any task by id (_async/tasks.py) --------------

    @property
    def tasks(self) -> AsyncTasks:
        """Any task by id: `get`, `cancel`, `respond`, `listen`."""
        return AsyncTasks(self)

    async def _start_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | BaseModel,
        input_model: type[BaseModel],
        output_model: type[BaseModel] | None = None,
        finish: Callable[[Any], Any] | None = None,
    ) -> AsyncTaskHandle[Any]:
        """Send the call and return its handle: on the task the server made of it, or on the
        result it answered at once (`task_id` None). Input asked before the task exists is
        answered here by the callbacks."""
        core = self._core
        payload = core.checks.prepare_arguments(name, arguments, input_model)
        started = await self._run(
            core.start_flow(
                name,
                payload,
                timeout=core._call_wait(self._call_timeout, self._call_max_time),
                on_progress=self._call_progress or core.on_progress,
                start=True,
                retry_unsafe=self._call_retry_unsafe,
            )
        )
        if isinstance(started, TaskState):
            return AsyncTaskHandle(
                self, name, started.task_id, state=started, output_model=output_model, finish=finish
            )
        return AsyncTaskHandle(self, name, None, immediate=started, output_model=output_model, finish=finish)

    def _resume_task(
        self,
        name: str,
        task_id: str,
        output_model: type[BaseModel] | None = None,
        finish: Callable[[Any], Any] | None = None,
    ) -> AsyncTaskHandle[Any]:
        """The handle of a task started elsewhere (another process, say); no I/O until used."""
        return AsyncTaskHandle(self, name, task_id, output_model=output_model, finish=finish)

    def _listen_tasks(self, task_ids: tuple[str, ...]) -> AsyncSubscription:
        return AsyncSubscription(self._open_listen, SubscriptionFilter(task_ids=task_ids))

    def listen(
        self,
        *,
        tools_list_changed: bool = True,
        prompts_list_changed: bool = False,
        resources_list_changed: bool = False,
        resource_subscriptions: Sequence[str] = (),
    ) -> AsyncSubscription:
        """A `subscriptions/listen` stream; it opens on `with`, `open()` or the first item."""
        return AsyncSubscription(
            self._open_listen,
            SubscriptionFilter(
                tools_list_changed,
                prompts_list_changed,
                resources_list_changed,
                tuple(resource_subscriptions),
            ),
        )

    async def _open_listen(self, requested: SubscriptionFilter) -> tuple[ListenState, AsyncIterator[Message]]:
        stream = getattr(
            self._transport, "stream", None
        )  # transports written before stream() joined the contract
        if stream is None:
            raise TypeError(
                f"{type(self._transport).__name__} cannot stream; listen() needs a transport with stream()"
            )
        await self._start()
        if self._core.era is None and not self._core.send_headers:
            await self._run(self._core.legacy.era_flow())  # stdio: the probe (HTTP: the listen request tells)
        elif self._core.era == LEGACY and self._core.handshake is None:
            await self._run(self._core.legacy.era_flow())  # the session to listen in
        if self._core.era == LEGACY:
            return await self._open_legacy_listen(requested)
        outgoing = self._core.listen_request(requested)
        headers = outgoing.headers if self._auth is None else await self._auth(outgoing.headers)
        return ListenState(outgoing.message["id"], requested, self._core.observe), stream(
            outgoing.message, headers
        )

    async def _open_legacy_listen(
        self,
        requested: SubscriptionFilter,
    ) -> tuple[LegacyListenState, AsyncIterator[Message]]:
        """A legacy server's notifications come unasked: on HTTP the session's GET stream, on
        stdio the lines that answer no request."""
        core = self._core
        transport = self._transport
        headers: Mapping[str, str] = core.legacy.session_headers()
        if self._auth is not None:
            headers = await self._auth(headers)
        open_events = getattr(transport, "open_events", None)
        stream: AsyncIterator[Message]
        if open_events is not None:
            events = cast(Any, transport).events() if await open_events(headers, core.notify) else None
            if events is None:
                raise McpRuntimeError(
                    "the server offers no event stream for this session (GET answered 405); "
                    "it cannot send notifications"
                )
            stream = events.messages()
        else:
            unsolicited = getattr(transport, "unsolicited", None)
            if unsolicited is None:
                raise McpRuntimeError(
                    f"{type(transport).__name__} cannot deliver a legacy server's notifications"
                )
            stream = unsolicited()
        subscribed: list[str] = []
        for uri in requested.resource_subscriptions:  # RES-08: resources/subscribe, once the stream is open
            try:
                await self._run(core.request_flow("resources/subscribe", {"uri": uri}, name=uri))
            except RemoteError:
                continue  # reported unsupported (SUB-04)
            subscribed.append(uri)
        return LegacyListenState(requested, core.observe, tuple(subscribed)), stream

    async def aclose(self) -> None:
        if not self._is_view:
            if self._session_opened_at is not None:
                self._note_session(opened=False)
            if self._oauth is not None:
                await self._oauth.aclose()
            await self._transport.aclose()

    async def __aenter__(self) -> Self:
        await self._start()  # a stdio server's bad command surfaces here, not at the first call
        return self

    async def _start(self) -> None:
        start = getattr(
            self._transport, "start", None
        )  # transports written before start() joined the contract
        if start is not None:
            await start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
