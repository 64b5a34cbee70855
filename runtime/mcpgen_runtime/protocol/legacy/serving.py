"""What a dual-era server does differently for a client of the initialize-based revisions
(2025-11-25, 2025-06-18, 2025-03-26), without I/O.

- Era selection: an `initialize` without modern `_meta` opens a legacy session; anything carrying
  modern per-request `_meta` is served statelessly (VER-07..10).
- The handshake seen from the server: `parse_initialize` (the client's params) and
  `initialize_result` (negotiated version, capabilities, `serverInfo` shaped for that revision).
- Result shapes: legacy results have no `resultType`, `ttlMs` or `cacheScope`, and the server
  introduced itself at `initialize`, so `legacy_result` drops those and the `serverInfo` `_meta`.
  Their tool `outputSchema` and `structuredContent` are objects only (2026-07-28 allows any JSON):
  a tool whose output is not an object is listed without `outputSchema`, and its results carry
  the JSON as text only (`legacy_tools_page`, `legacy_call_result`).
- Server-to-client requests: which revision has which method, and their params per revision.
- Logging levels for `logging/setLevel` and `notifications/message` (RFC 5424 severities).

Both sides' handshake is `protocol/legacy/handshake.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._version import LEGACY_PROTOCOL_VERSIONS
from ..input_messages import ELICIT
from ..meta import PROTOCOL_VERSION_KEY, SERVER_INFO_KEY
from .handshake import Handshake, negotiate_version

__all__ = [
    "CANCELLED",
    "LOG_LEVELS",
    "MODERN_ONLY_METHODS",
    "POLLING_SINCE",
    "PROGRESS",
    "TOOLS_LIST_CHANGED",
    "carries_modern_meta",
    "initialize_result",
    "legacy_call_result",
    "legacy_result",
    "legacy_tools_page",
    "log_level_allows",
    "parse_initialize",
    "server_request_params",
    "unavailable_in",
]

CANCELLED = "notifications/cancelled"
PROGRESS = "notifications/progress"
TOOLS_LIST_CHANGED = "notifications/tools/list_changed"

# 2026-07-28 methods a legacy session does not have; with them the skills extension's (SEP-2640), which
# is negotiated through `capabilities.extensions`, a field these revisions lack.
MODERN_ONLY_METHODS = frozenset(
    {"server/discover", "subscriptions/listen", "skills/list", "skills/get", "resources/directory/read"}
)

# Most verbose first: a minimum level admits itself and everything after it.
LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
_LOG_RANK = {level: rank for rank, level in enumerate(LOG_LEVELS)}

_ABSENT: Any = object()
# Result members of 2026-07-28 that no earlier revision has (BASE-08, CACHE-01).
_MODERN_RESULT_FIELDS = frozenset({"resultType", "ttlMs", "cacheScope", "_meta"})

# 2025-11-25 streams start with a priming event and may be closed by the server for the client to
# resume later (SSE polling); earlier revisions keep a POST stream open until its response.
POLLING_SINCE = "2025-11-25"

# Server-to-client request methods and the first revision that has them (older: not available).
_REQUEST_SINCE = {ELICIT: "2025-06-18"}
# Elicitation `mode` ("form" | "url") arrived in 2025-11-25; earlier requests are form requests without it.
_ELICIT_MODE_SINCE = "2025-11-25"
# `Implementation.title` arrived in 2025-06-18.
_TITLE_SINCE = "2025-06-18"


def carries_modern_meta(params: Any) -> bool:
    """Whether request params carry 2026-07-28 per-request `_meta` (a protocol version in it)."""
    if type(params) is not dict:
        return False
    meta = params.get("_meta")
    return type(meta) is dict and PROTOCOL_VERSION_KEY in meta


def parse_initialize(params: Any) -> tuple[str, Handshake]:
    """(requested version, the settled Handshake) for `initialize` params; ValueError says what is wrong.

    The server answers with the requested revision when it speaks it, else its newest
    (`basic-lifecycle.mdx § Version Negotiation` of every legacy revision); `capabilities` and
    `clientInfo` are kept for the life of the session."""
    if type(params) is not dict:
        raise ValueError("initialize params must be an object")
    requested = params.get("protocolVersion")
    if type(requested) is not str or not requested:
        raise ValueError("initialize params.protocolVersion must be a string")
    capabilities = params.get("capabilities", {})
    if type(capabilities) is not dict:
        raise ValueError("initialize params.capabilities must be an object")
    info = params.get("clientInfo", {})
    if type(info) is not dict:
        raise ValueError("initialize params.clientInfo must be an object")
    return requested, Handshake(negotiate_version(requested, LEGACY_PROTOCOL_VERSIONS), capabilities, info)


def initialize_result(
    version: str, capabilities: Mapping[str, Any], server_info: Mapping[str, Any], instructions: str | None
) -> dict[str, Any]:
    """An `InitializeResult` for the negotiated `version`."""
    info = dict(server_info)
    if version < _TITLE_SINCE:
        info.pop("title", None)
    result: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": dict(capabilities),
        "serverInfo": info,
    }
    if instructions is not None:
        result["instructions"] = instructions
    return result


def legacy_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 result without the members earlier revisions lack (BASE-11, CACHE-08): no
    `resultType`, `ttlMs`, `cacheScope`, and no `serverInfo` in `_meta` (given at `initialize`).
    Other `_meta` entries (a handler's own) stay. `result` is not changed."""
    out = {key: value for key, value in result.items() if key not in _MODERN_RESULT_FIELDS}
    meta = result.get("_meta")
    if type(meta) is dict and len(meta) > (SERVER_INFO_KEY in meta):
        out["_meta"] = {key: value for key, value in meta.items() if key != SERVER_INFO_KEY}
    return out


def legacy_call_result(result: dict[str, Any]) -> dict[str, Any]:
    """Make a fresh `CallToolResult` (the caller's own: it is changed in place and returned) one for
    a legacy client: what `legacy_result` removes, and `structuredContent` unless it is an object
    (the text content already carries the same JSON, TOOLS-18)."""
    result.pop("resultType", None)
    meta = result.get("_meta")
    if meta is not None and SERVER_INFO_KEY in meta:
        if len(meta) == 1:
            del result["_meta"]
        else:
            result["_meta"] = {key: value for key, value in meta.items() if key != SERVER_INFO_KEY}
    structured = result.get("structuredContent", _ABSENT)
    if structured is not _ABSENT and type(structured) is not dict:
        del result["structuredContent"]
    return result


def legacy_tools_page(page: Mapping[str, Any]) -> dict[str, Any]:
    """A `tools/list` page for a legacy client: `legacy_result`, and no `outputSchema` that is not
    an object schema (those revisions type it `{type: "object", ...}`; clients reject others)."""
    out = legacy_result(page)
    out["tools"] = [_legacy_tool(tool) for tool in page.get("tools", ())]
    return out


def _legacy_tool(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    schema = tool.get("outputSchema")
    if schema is None or (type(schema) is dict and schema.get("type") == "object"):
        return tool
    return {key: value for key, value in tool.items() if key != "outputSchema"}


def log_level_allows(minimum: str | None, level: str) -> bool:
    """Whether a message at `level` passes a client's `logging/setLevel` minimum (None: all pass)."""
    return minimum is None or _LOG_RANK.get(level, -1) >= _LOG_RANK.get(minimum, 0)


def unavailable_in(method: str, version: str) -> bool:
    """Whether the revision `version` has no server-to-client request `method` (elicitation before
    2025-06-18)."""
    since = _REQUEST_SINCE.get(method)
    return since is not None and version < since


def server_request_params(method: str, params: dict[str, Any], version: str) -> dict[str, Any]:
    """Params of a server-to-client request as the revision `version` spells them."""
    if method == ELICIT and version < _ELICIT_MODE_SINCE and params.get("mode") == "form":
        return {key: value for key, value in params.items() if key != "mode"}
    return params
