"""What a server is told and what passes between its transports and its dispatcher.

- `ServerConfig`: identity and policy (paging, caching hints, HTTP Origin/Host allowlists,
  body limit and read deadlines, auth, rate limits, requestState keys, progress and keep-alive
  pacing, legacy sessions: `modern_only` and `sessions`).
- `LegacySessionOptions` and the `LegacySessionStore` interface of legacy sessions (legacy/sessions.py has
  the sessions themselves: core names them without importing legacy/).
- `ToolBinding`: a listed tool -> the Python method that implements it (generated bases).
- `IncomingRequest`: how one message arrived (transport, headers, principal, stream hooks, and
  in a legacy session the `ClientChannel` back to the client);
  `Outcome`: the answer (HTTP status and JSON-RPC response).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol, TypeVar

from pydantic import BaseModel

from ..store import Store
from .bearer_auth import BearerAuth
from .health import ReadinessCheck
from .limits import MAX_URI_LENGTH, HttpLimits
from .ratelimit import RateLimit
from .request_state import StateCodec

__all__ = [
    "LOCAL_HOSTS",
    "LOCAL_ORIGINS",
    "CacheScope",
    "ClientChannel",
    "IncomingRequest",
    "LegacySessionOptions",
    "LegacySessionStore",
    "Notify",
    "OpenStream",
    "Outcome",
    "ServerConfig",
    "TaskOptions",
    "ToolBinding",
]

LOCAL_HOSTS: tuple[str, ...] = ("localhost", "127.0.0.1", "[::1]")
LOCAL_ORIGINS: tuple[str, ...] = tuple(
    f"{scheme}://{host}" for scheme in ("http", "https") for host in LOCAL_HOSTS
)

CacheScope = Literal["public", "private"]
# Sends one server notification on the stream of the request it belongs to.
Notify = Callable[[dict[str, Any]], Awaitable[None]]
OpenStream = Callable[[], Awaitable[None]]


class ClientChannel(Protocol):
    """How a handler reaches the client of a legacy (initialize-based) session during one request:
    real server-to-client requests, log messages, and (HTTP, 2025-11-25) closing the request's
    SSE response early. `legacy/session_dispatch.py` implements it; the context uses it."""

    protocol_version: str

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send `method` to the client and return its result (`ClientRequestError` otherwise)."""

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        """`notifications/message`, when the session's `logging/setLevel` admits `level`."""

    async def close_stream(self) -> None:
        """End the request's SSE response now; the client resumes it later (polling)."""


S = TypeVar("S")


class LegacySessionStore(Protocol[S]):
    """Where the legacy sessions of HTTP live (`S` is `Session`, legacy/sessions.py, which imports this
    module). Methods are coroutines so a networked store fits; the in-memory default never suspends."""

    async def add(self, session: S) -> bool:
        """Keep a new session; False when it cannot be kept (at capacity)."""

    async def get(self, session_id: str) -> S | None:
        """The live session (its idle timer restarted), or None when unknown or expired."""

    async def remove(self, session_id: str) -> S | None:
        """Forget a session (DELETE); returns it, or None when it was unknown."""

    async def save(self, session: S) -> None:
        """Persist changed record fields (log level, initialized)."""

    def close(self) -> None:
        """Server shutdown: end the sessions this process serves."""


@dataclass(frozen=True)
class LegacySessionOptions:
    """Limits and timings of legacy sessions (`ServerConfig.legacy_sessions`).

    - `store`: where HTTP sessions live (None: in `ServerConfig.store` when that is shared,
      else a `MemorySessionStore` per app, from the limits below).
    - `idle_timeout_s`: a session with no request, no call running and no open stream for this
      long ends (its client gets 404 and initializes again).
    - `max_sessions`: live sessions kept; at the cap the least recently used idle one ends, and
      when every session is busy `initialize` is refused with 503.
    - `client_request_timeout_s`: how long a handler waits for the client's answer to
      `ctx.elicit` / `ctx.sample` / `ctx.list_roots` (people answer elicitations: be generous).
    - `max_pending_client_requests`: server-to-client requests waiting per session.
    - `replay_events`: events kept per SSE stream for `Last-Event-ID` resumption.
    - `max_kept_streams`: finished streams kept per session until the client resumes them.
    - `retry_ms`: the SSE `retry` value sent with the priming event (2025-11-25).
    - `max_resource_subscriptions`: URIs one session may hold `resources/subscribe` on, and URIs one
      `subscriptions/listen` stream may list (those past it are left out of its acknowledgment);
      `max_resource_subscription_bytes`: their UTF-8 bytes together (resource_subscriptions.py).
    """

    store: LegacySessionStore[Any] | None = None
    idle_timeout_s: float = 1800.0
    max_sessions: int = 10_000
    client_request_timeout_s: float = 300.0
    max_pending_client_requests: int = 16
    replay_events: int = 100
    max_kept_streams: int = 16
    retry_ms: int = 1000
    max_resource_subscriptions: int = 1000
    max_resource_subscription_bytes: int = 64 * 1024

    def __post_init__(self) -> None:
        if self.idle_timeout_s <= 0 or self.client_request_timeout_s <= 0:
            raise ValueError("idle_timeout_s and client_request_timeout_s must be positive")
        limits = (
            self.max_sessions,
            self.max_pending_client_requests,
            self.replay_events,
            self.max_kept_streams,
            self.max_resource_subscriptions,
            self.max_resource_subscription_bytes,
        )
        if min(limits) < 1:
            raise ValueError("session limits must be >= 1")
        if self.retry_ms < 0:
            raise ValueError("retry_ms must be >= 0")


@dataclass(frozen=True)
class TaskOptions:
    """How long tasks live and how much a client may put into them.

    - `ttl_ms`: a task's `ttlMs` when its handler does not ask for another (`ctx.run_as_task(ttl_ms=)`,
      capped at `max_ttl_ms`). Its records expire from the store then; a handler still running is
      cancelled.
    - `poll_interval_ms`: the `pollIntervalMs` suggested to clients.
    - `lease_s`: the worker renews its lease every `lease_s / 3`; a task whose lease lapsed (its
      replica died) reads as `failed` from then on. At most 30 s by default.
    - `max_in_flight`: tasks running at once per principal (per connection-less anonymous caller:
      all anonymous callers together) in one process; past it a call runs inline.
    - `max_input_bytes`: the encoded `inputResponses` of one `tasks/update`.
    - `max_listen_tasks`: task ids one `subscriptions/listen` stream may list (`taskIds`); those past
      it are left out of its acknowledgment.
    """

    ttl_ms: int = 3_600_000
    max_ttl_ms: int = 86_400_000
    poll_interval_ms: int = 1000
    lease_s: float = 30.0
    max_in_flight: int = 100
    max_input_bytes: int = 256 * 1024
    max_listen_tasks: int = 100

    def __post_init__(self) -> None:
        if not 1000 <= self.ttl_ms <= self.max_ttl_ms:
            raise ValueError("tasks ttl_ms must be between 1000 and max_ttl_ms")
        if self.poll_interval_ms < 1 or self.lease_s <= 0:
            raise ValueError("tasks poll_interval_ms and lease_s must be positive")
        if self.max_in_flight < 1 or self.max_input_bytes < 1024 or self.max_listen_tasks < 1:
            raise ValueError("tasks max_in_flight and max_listen_tasks must be >= 1, max_input_bytes >= 1024")


@dataclass(frozen=True)
class ToolBinding:
    """Connects a listed tool to the Python method that implements it."""

    name: str  # wire name
    method: str  # Python method on the server object
    # A model class, or its name in the server's `_tool_models_` module (a generated package's
    # models.py: looked up, so imported and built, when the tool is first called).
    input_model: type[BaseModel] | str
    output_model: type[BaseModel] | str | None  # None: the tool has no outputSchema
    output_is_root: bool = False  # output_model is a RootModel; handlers return the root value


@dataclass(frozen=True)
class ServerConfig:
    """Server identity and policy. Defaults suit a server on localhost.

    Caching hints (CACHE-01, CACHE-05): `tools/list` and `server/discover` default to
    60 s and `"public"` because both come from the definitions compiled into the package
    and are the same for every caller. A server that filters tools per principal must
    use `"private"` (CACHE-13, CACHE-19). Methods added with `add_method` that are
    cacheable (prompts/list, resources/*) default to `list_ttl_ms` and `list_cache_scope`,
    and to `"private"` when the request was authenticated.

    Security (see bearer_auth.py, ratelimit.py, request_state.py): `auth` verifies bearer tokens on HTTP
    (HTTP-05); `rate_limit` bounds tool calls per caller (SEC-03); `state_secrets` (else the
    environment variable `MCPGEN_STATE_SECRET`) sign `requestState`, the first one signing
    and any of them verifying (rotation), valid for `state_ttl_s` (MRTR-05..10).

    Deployment (health.py, http/app.py `run_http`): `health_path` (liveness) and `ready_path`
    (readiness: every `readiness_checks` entry, each bounded by `ready_timeout_s`) answer GET
    outside the Host and auth checks; None turns a probe off. On SIGTERM the server stops
    accepting, answers readiness 503, ends listen and legacy streams (their clients reconnect
    elsewhere) and lets in-flight calls finish for up to `shutdown_grace_s` before cancelling them.
    `keep_alive_s` is how long an idle HTTP/1.1 connection stays open; a reverse proxy's upstream
    keep-alive must be shorter, or it may reuse a connection the server is closing.

    Legacy sessions (legacy/session_dispatch.py): by default the server also answers `initialize`,
    opening a session of the 2025-11-25, 2025-06-18 or 2025-03-26 revision, with the limits in `sessions`;
    `modern_only=True` serves 2026-07-28 alone and answers `initialize` with an error naming
    the versions it speaks (VER-08).

    Replicas (store/): `store` holds what several processes of one server share — a `Store`, or
    a URL (`"memory"`, `"redis://host:6379/0"`); None reads the environment variable
    `MCPGEN_STORE`, else keeps everything in this process. A shared store needs shared
    requestState secrets (`state_secrets` or `MCPGEN_STATE_SECRET`): the server refuses to start
    without them.

    Resource subscriptions (resource_subscriptions.py): a URI longer than `max_uri_length` is
    never subscribed to, a client holds at most `max_listen_streams` open `subscriptions/listen`
    streams (per principal; per connection when anonymous) in each process, and
    `sessions.max_resource_subscriptions` / `max_resource_subscription_bytes` bound the URIs of one
    legacy session or one listen stream.

    Tasks (tasks/): `tasks` sets their default TTL, polling interval, the worker's lease (30 s: a
    task whose replica died reads `failed` at most that long after), tasks in flight per principal
    and the size of one `tasks/update`. They live in `store`: with the memory store they end
    with the process; with Redis they outlive any one replica until their TTL.
    """

    name: str = "mcpgen-server"
    version: str = "0.0.0"
    title: str | None = None
    instructions: str | None = None
    page_size: int | None = 100  # tools per tools/list page; None: everything on one page
    list_ttl_ms: int = 60_000
    list_cache_scope: CacheScope = "public"
    discover_ttl_ms: int = 60_000
    discover_cache_scope: CacheScope = "public"
    # subscriptions/listen announces tool-set changes made with add_tool/remove_tool (TOOLS-05).
    list_changed: bool = True
    include_server_info: bool = True  # BASE-37
    # DNS-rebinding guard (HTTP-02/03): exact origins, port-agnostic unless the entry has a port;
    # None accepts any Origin.
    allowed_origins: tuple[str, ...] | None = LOCAL_ORIGINS
    # Host header names (port-agnostic unless given); None accepts any Host. `run_http` on a
    # non-loopback address turns the default off, since remote clients use other names.
    allowed_hosts: tuple[str, ...] | None = LOCAL_HOSTS
    max_body_bytes: int = 4 * 1024 * 1024  # HTTP bodies and stdio lines
    # resources/read, completion/complete and subscribed URIs, refused (-32602) before any template
    # matching (a subscription: left out of a listen acknowledgement).
    max_uri_length: int = MAX_URI_LENGTH
    # How long a request may take to arrive, and how many may be arriving at once (limits.py).
    http_limits: HttpLimits = field(default_factory=HttpLimits)
    auth: BearerAuth | None = None
    rate_limit: RateLimit | None = None
    state_secrets: tuple[str | bytes, ...] | None = None
    state_ttl_s: float = 600.0
    max_state_bytes: int = 64 * 1024
    # PROG-07: progress updates closer together than this are dropped (never the final one).
    progress_interval_ms: int = 10
    # HTTP-19: comment lines on idle subscriptions/listen streams, so intermediaries keep them open.
    keepalive_s: float = 15.0
    max_listen_streams: int = 16
    modern_only: bool = False
    legacy_sessions: LegacySessionOptions = field(default_factory=LegacySessionOptions)
    health_path: str | None = "/healthz"
    ready_path: str | None = "/readyz"
    readiness_checks: tuple[tuple[str, ReadinessCheck], ...] = ()
    ready_timeout_s: float = 2.0
    shutdown_grace_s: float = 10.0
    keep_alive_s: float = 5.0
    store: Store | str | None = None
    tasks: TaskOptions = field(default_factory=TaskOptions)
    # A folder of skills to serve (SEP-2640; `--skills DIR`): overrides the server class's `_skills_`.
    skills: str | os.PathLike[str] | None = None

    def __post_init__(self) -> None:
        if self.page_size is not None and self.page_size < 1:
            raise ValueError("page_size must be >= 1 or None")
        for ttl in (self.list_ttl_ms, self.discover_ttl_ms):
            if not isinstance(ttl, int) or ttl < 0:
                raise ValueError("ttl values must be integers >= 0 (CACHE-05)")
        for scope in (self.list_cache_scope, self.discover_cache_scope):
            if scope not in ("public", "private"):
                raise ValueError(f"cache scope must be 'public' or 'private', not {scope!r}")
        if self.max_body_bytes < 1:
            raise ValueError("max_body_bytes must be positive")
        if not isinstance(self.max_uri_length, int) or self.max_uri_length < 1:
            raise ValueError("max_uri_length must be an integer >= 1")
        if self.state_ttl_s <= 0 or self.max_state_bytes < 256:
            raise ValueError("state_ttl_s must be positive and max_state_bytes at least 256")
        if self.max_listen_streams < 1:
            raise ValueError("max_listen_streams must be >= 1")
        if self.progress_interval_ms < 0 or self.keepalive_s <= 0:
            raise ValueError("progress_interval_ms must be >= 0 and keepalive_s positive")
        for path in (self.health_path, self.ready_path):
            if path is not None and not path.startswith("/"):
                raise ValueError(f"probe paths start with '/', not {path!r}")
        if self.health_path is not None and self.health_path == self.ready_path:
            raise ValueError("health_path and ready_path must differ")
        if self.ready_timeout_s <= 0 or self.shutdown_grace_s < 0 or self.keep_alive_s <= 0:
            raise ValueError("ready_timeout_s and keep_alive_s must be positive and shutdown_grace_s >= 0")
        if self.state_secrets is not None:
            StateCodec(self.state_secrets)  # fails early on short secrets


@dataclass(slots=True)
class IncomingRequest:
    """How a message arrived. `headers` (lower-case names) switch on the HTTP header checks.

    Built once per message by its transport; the dispatcher hands it to the request context."""

    transport: str = "direct"  # "http" | "stdio" | "direct"
    headers: Mapping[str, str] | None = None
    notify: Notify | None = None  # delivers notifications on this request's stream
    principal: Any = None  # whatever an authentication layer established
    open_stream: OpenStream | None = None  # HTTP: commit to an SSE reply now
    keepalive: Callable[[], Awaitable[None]] | None = None  # long-lived streams: a transport-level no-op
    peer: str | None = None  # remote address: the rate-limit key of anonymous callers
    channel: ClientChannel | None = None  # legacy sessions only: the way back to the client


class Outcome(NamedTuple):
    """The answer to one message: HTTP status (also meaningful off HTTP as a hint) and the
    JSON-RPC response, or None for notifications (BASE-16). Treat `response` as read-only:
    it may share precomputed parts."""

    status: int
    response: dict[str, Any] | None
