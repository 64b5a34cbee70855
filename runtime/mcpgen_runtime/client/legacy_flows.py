"""The legacy half of the client's protocol logic (`LegacyFlows`, a member of `ClientCore`):
deciding whether the server is modern or legacy, and the legacy lifecycle as flows — the
`initialize` handshake, requests inside a session, cancellation, and the server's own requests.

`ClientCore.request_flow` hands a request here only while the era is open or legacy, so
modern requests pay a single attribute check (protocol/legacy/detect.py says how the era is decided;
VER-07..10, STDIO-13..15, BASE-11 in docs/RULES.md).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol, TypeVar

from .._version import PROTOCOL_VERSION
from ..errors import (
    HttpStatusError,
    McpRuntimeError,
    ProtocolError,
    RemoteError,
    RequestTimeoutError,
    ResponseLostError,
    UnsupportedProtocolVersionError,
)
from ..protocol import jsonrpc
from ..protocol.jsonrpc import Message
from ..protocol.legacy.detect import (
    DISCOVER,
    MODERN_ERROR_CODES,
    PROBE_TIMEOUT,
    Era,
    http_says_legacy,
    probe_says_legacy,
)
from ..protocol.legacy.handshake import (
    INITIALIZE,
    Handshake,
    cancelled_notification,
    counter_offer,
    discover_view,
    initialize_params,
    initialize_request,
    initialized_notification,
    parse_initialize_result,
)
from ..transport.limits import Deadline, Timeout
from .input_responses import InputNeeded
from .legacy_peer_requests import plan_peer_request
from .retry_policy import SAFE_TO_REPEAT
from .steps import Flow, Notify, Outgoing

__all__ = ["LEGACY", "MODERN", "REISSUED_METHODS", "FlowOwner", "LegacyFlows"]

T = TypeVar("T")

MODERN: Final = "modern"
LEGACY: Final = "legacy"
# reads: safe to send again (HTTP-26)
REISSUED_METHODS: Final = frozenset(
    {DISCOVER, "tools/list", "resources/list", "resources/templates/list", "prompts/list", "resources/read"}
)


class FlowOwner(Protocol):
    """What `LegacyFlows` needs of the `ClientCore` that owns it: the era state it settles, the
    client's identity and options, and the modern request path (task_flows.py's owner extends it)."""

    era: Era | None  # None: not known yet (era="auto" before the first exchange)
    legacy_version: str
    handshake: Handshake | None
    send_headers: bool  # False on stdio, which decides the era by probing
    timeout: float | None
    capabilities: dict[str, Any]
    client_info: dict[str, str]
    input_callbacks: dict[str, Callable[[Any], Any]]
    _probed: dict[str, Any] | None
    _ids: itertools.count[int]
    _extra_headers: dict[str, str]
    _base_headers: dict[str, str]

    # ClientCore.request_flow's signature, repeated on purpose: a Protocol states it so that this
    # module needs no import of core.py (which imports this one).
    def request_flow(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        name: str | None = None,
        param_headers: Mapping[str, str] | None = None,
        meta: Mapping[str, Any] | None = None,
        timeout: Timeout = None,
        repeatable: bool | None = None,
    ) -> Flow[dict[str, Any]]: ...

    def retry_pause(
        self, exc: McpRuntimeError, retried: int, repeatable: bool, timeout: Timeout
    ) -> Flow[None]: ...

    def use_protocol_version(self, version: str) -> None: ...

    def _renegotiate(self, exc: UnsupportedProtocolVersionError) -> bool: ...


class LegacyFlows:
    """The era decision and the legacy-era flows of one `ClientCore` (its member `legacy`)."""

    def __init__(self, core: FlowOwner) -> None:
        self.core = core
        # stdio: the transport can hand `initialize` a timed-out probe's late answer (`Outgoing.also`)
        self.hears_late_replies = False
        self._late_probe: tuple[Any, ...] = ()  # ids of a probe that timed out, until the era is settled
        self._silent_probe = False  # the probe timed out and no handshake has been tried since

    def era_flow(self) -> Flow[None]:
        """Settle the era before a request that needs it: on stdio, the `server/discover`
        probe (STDIO-13/14); in the legacy era, the handshake if there is no session yet."""
        if self.core.era is None and not self.core.send_headers:
            yield from self._probe_flow()
        if self.core.era == LEGACY and self.core.handshake is None:
            silent, self._silent_probe = self._silent_probe, False
            try:
                yield from self.handshake_flow()
            except (RemoteError, ProtocolError) as exc:
                if not silent:
                    raise
                # The probe went unanswered, and the server that now answers refuses `initialize`:
                # it may be a modern server that was slow to start (or dropped the cancelled
                # probe). Ask it once more (VER-07); only a modern answer changes the outcome.
                era = yield from self._probe_flow()
                self._silent_probe = False
                if era != MODERN:
                    raise exc

    def _probe_flow(self) -> Flow[Era]:
        """`server/discover` with a short wait (STDIO-13/14); returns the era it says."""
        wait = PROBE_TIMEOUT if self.core.timeout is None else min(self.core.timeout, PROBE_TIMEOUT)
        self.core.era = MODERN  # the probe is a modern request (and -32022 renegotiates: VER-02)
        sent: list[Any] = []
        try:
            self.core._probed = yield from _noting_ids(
                self.core.request_flow(DISCOVER, {}, timeout=wait), sent
            )
        except McpRuntimeError as exc:
            if not probe_says_legacy(exc):
                if not isinstance(exc, RemoteError):
                    self.core.era = (
                        None  # no verdict (the process died, garbage on stdout): ask again next time
                    )
                raise
            self.core.era = LEGACY
            if isinstance(exc, RequestTimeoutError):
                self._silent_probe = True
                if self.hears_late_replies:  # a slow starter may answer yet: `initialize` listens for it
                    self._late_probe = tuple(sent)
            return LEGACY
        return MODERN

    def _is_late_probe(self, reply_id: Any) -> bool:
        return any(reply_id == sent and type(reply_id) is type(sent) for sent in self._late_probe)

    def _late_probe_says_modern(self, message: dict[str, Any]) -> bool:
        """Whether `message` is the timed-out probe's answer and a modern one (STDIO-13): a
        result, or a recognised modern error. Any other late error is dropped (legacy stays)."""
        if not self._is_late_probe(message.get("id")):
            return False
        error = message.get("error")
        return "result" in message or (isinstance(error, dict) and error.get("code") in MODERN_ERROR_CODES)

    def _settle_late_probe(self, reply: dict[str, Any]) -> None:
        """The probe's answer came after its wait, while `initialize` was pending: the server
        is modern after all (the `initialize` is abandoned, never cancelled; its reply is dropped)."""
        self._late_probe = ()
        self.core.era = MODERN
        self.core.handshake = None
        self.core.use_protocol_version(PROTOCOL_VERSION)
        try:
            self.core._probed = jsonrpc.unwrap(reply, expected_id=reply["id"])
        except UnsupportedProtocolVersionError as exc:
            self.core._renegotiate(exc)  # VER-02: one of the versions it lists (or the next request says)
        except RemoteError:
            pass  # another modern error: modern, and the next request meets it again
        except ProtocolError:
            self.core.era = None  # not a result after all: no verdict
            raise

    def request_flow(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        name: str | None,
        param_headers: Mapping[str, str] | None,
        meta: Mapping[str, Any] | None,
        timeout: Timeout,
        repeatable: bool | None = None,
    ) -> Flow[dict[str, Any]]:
        def modern() -> Flow[dict[str, Any]]:
            return self.core.request_flow(
                method,
                params,
                name=name,
                param_headers=param_headers,
                meta=meta,
                timeout=timeout,
                repeatable=repeatable,
            )

        if self.core.era is None and self.core.send_headers:
            # HTTP: the modern request goes out as it is; its failure may say "legacy" (VER-10).
            self.core.era = MODERN
            try:
                return (yield from modern())
            except McpRuntimeError as exc:
                if not http_says_legacy(exc, method):
                    if not isinstance(exc, RemoteError):
                        self.core.era = None  # no verdict (could not connect, timed out)
                    raise
                yield from self._fall_back_flow(exc)
        yield from self.era_retried_flow()
        if self.core.era == MODERN:
            return (yield from modern())
        if method == DISCOVER and self.core.handshake is not None:  # no such method before 2026-07-28
            return discover_view(self.core.handshake)
        safe = method in SAFE_TO_REPEAT if repeatable is None else repeatable
        return (yield from self._legacy_request_flow(method, params, meta=meta, timeout=timeout, safe=safe))

    def era_retried_flow(self) -> Flow[None]:
        """`era_flow`, sent again within `retries` when it failed without reaching the server
        (a refused connection, a 503): an `initialize` that may have opened a session is not."""
        retried = 0
        while True:
            try:
                return (yield from self.era_flow())
            except McpRuntimeError as exc:
                yield from self.core.retry_pause(exc, retried, False, self.core.timeout)
                retried += 1

    def _fall_back_flow(self, modern_failure: McpRuntimeError) -> Flow[None]:
        """The server looked legacy: `initialize`. If that fails too, the server is no legacy
        server after all: the era is open again (VER-07) and the more telling error is raised."""
        self.core.era = LEGACY
        try:
            yield from self.handshake_flow()
        except McpRuntimeError as exc:
            self.core.era = None
            self.core.handshake = None
            self.core.use_protocol_version(PROTOCOL_VERSION)
            if isinstance(exc, ProtocolError):
                raise exc from modern_failure  # e.g. no revision in common: the handshake says it best
            raise modern_failure from exc

    def handshake_flow(self) -> Flow[Handshake | None]:
        """`initialize` offering `legacy_version` (the newest by default), then
        `notifications/initialized`. A server that answers with another revision this client
        speaks is followed; a server whose error lists supported revisions gets one more
        `initialize` with one of them; no revision in common is a `ProtocolError` naming both
        sides' versions. The transport keeps the session the reply opens (`Mcp-Session-Id`).
        None: a timed-out probe's modern answer arrived instead, and the era is modern."""
        offered = self.core.legacy_version
        tried: set[str] = set()
        while True:
            tried.add(offered)
            request_id = next(self.core._ids)
            params = initialize_params(
                capabilities=self.core.capabilities,
                client_info=self.core.client_info,
                protocol_version=offered,
            )
            also = self._late_probe_says_modern if self._late_probe else None
            try:
                reply, status = yield Outgoing(
                    initialize_request(request_id, params), self.core._extra_headers, self.core.timeout, also
                )
            except McpRuntimeError:
                self._late_probe = ()
                raise
            if also is not None and reply.get("id") != request_id and self._is_late_probe(reply.get("id")):
                self._settle_late_probe(reply)
                return None
            try:
                result = jsonrpc.unwrap(reply, expected_id=request_id, http_status=status)
            except RemoteError as exc:
                other = counter_offer(exc.data, offered)
                if other is None or other in tried:  # each revision is offered once
                    self._late_probe = ()
                    raise
                offered = other
                continue
            handshake = parse_initialize_result(result)
            break
        self._late_probe = ()
        self.core.era = LEGACY
        self.core.handshake = handshake
        self.core.use_protocol_version(handshake.protocol_version)
        yield Notify(initialized_notification(), self.core._base_headers)
        return handshake

    def _legacy_request_flow(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        meta: Mapping[str, Any] | None,
        timeout: Timeout,
        safe: bool,
    ) -> Flow[dict[str, Any]]:
        """One request in the legacy era: no protocol `_meta`, the session's headers; a read
        re-issued once after a lost stream; one new session after a 404 (the session expired);
        retried as a modern request is (`retries`, retry_policy.py; `safe`: it may run twice)."""
        wait = self.core.timeout if timeout is None else timeout
        reissued = reinitialized = False
        retried = 0
        while True:
            if self.core.handshake is None:
                yield from self.handshake_flow()
            request_id = next(self.core._ids)
            message = jsonrpc.request(
                request_id, method, {**params, "_meta": dict(meta)} if meta else dict(params)
            )
            headers = self.core._base_headers
            if isinstance(wait, Deadline):
                wait.extend()  # each request of a call starts its silence afresh (CANCEL-06)
            try:
                reply, status = yield Outgoing(message, headers, wait)
            except ResponseLostError as exc:
                if reissued or method not in REISSUED_METHODS:
                    yield from self.core.retry_pause(exc, retried, safe, wait)
                    retried += 1
                reissued = True
                continue
            except RequestTimeoutError:
                cancel = self.cancel_notice(message)
                if cancel is not None:
                    yield cancel
                raise
            except McpRuntimeError as exc:
                if (
                    not isinstance(exc, HttpStatusError)
                    or exc.status_code != 404
                    or reinitialized
                    or not self.core.send_headers
                ):
                    yield from self.core.retry_pause(exc, retried, safe, wait)
                    retried += 1
                    continue
                reinitialized = True
                self.core.handshake = None
                continue
            try:
                return jsonrpc.unwrap(reply, expected_id=request_id, http_status=status)
            except RemoteError as exc:
                if status != 404 or reinitialized or not self.core.send_headers:
                    yield from self.core.retry_pause(exc, retried, safe, wait)
                    retried += 1
                    continue
                reinitialized = True
                self.core.handshake = None

    def cancel_notice(self, message: Mapping[str, Any]) -> Notify | None:
        """`notifications/cancelled` for a legacy request given up on over HTTP, where closing
        the stream is no cancellation (stdio transports send their own)."""
        if self.core.era != LEGACY or not self.core.send_headers or message.get("method") == INITIALIZE:
            return None
        return Notify(
            cancelled_notification(message["id"], "cancelled by the client"),
            self.core._base_headers,
            best_effort=True,
        )

    def session_headers(self) -> dict[str, str]:
        """The headers every request of the legacy session carries (the transport adds its id)."""
        return dict(self.core._base_headers)

    def peer_request(self, message: Message) -> InputNeeded | Message:
        """A legacy server's request: its response now, or the callback to run first."""
        return plan_peer_request(message, self.core.input_callbacks, self.core.capabilities)


def _noting_ids(flow: Flow[T], sent: list[Any]) -> Flow[T]:
    """`flow` as it is, noting in `sent` the id of each request it sends."""
    step = next(flow)
    while True:
        if type(step) is Outgoing:
            sent.append(step.message.get("id"))
        try:
            value = yield step
        except GeneratorExit:
            flow.close()
            raise
        except BaseException as exc:
            try:
                step = flow.throw(exc)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            continue
        try:
            step = flow.send(value)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
