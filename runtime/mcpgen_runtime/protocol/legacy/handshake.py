"""The initialize-based revisions (2025-11-25, 2025-06-18, 2025-03-26) without I/O: the handshake
both sides speak, version negotiation, and the era rules a dual-era peer follows.

In those revisions a connection (stdio) or session (HTTP, `Mcp-Session-Id`) starts with
`initialize`; capabilities and the protocol version are agreed once for its lifetime instead of
travelling in every request's `_meta` (2026-07-28). Rules: VER-07..10 (era detection and the
dual-era server), STDIO-12..15, BASE-11 (a missing `resultType` is `complete`), in docs/RULES.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..._version import LEGACY_PROTOCOL_VERSIONS, PROTOCOL_VERSION
from ...errors import ProtocolError
from .. import jsonrpc

__all__ = [
    "INITIALIZE",
    "INITIALIZED",
    "LOG_MESSAGE",
    "PING",
    "SET_LEVEL",
    "VERSION_HEADER_SINCE",
    "Handshake",
    "cancelled_notification",
    "counter_offer",
    "discover_view",
    "initialize_params",
    "initialize_request",
    "initialized_notification",
    "negotiate_version",
    "parse_initialize_result",
]

INITIALIZE = "initialize"
INITIALIZED = "notifications/initialized"
PING = "ping"
SET_LEVEL = "logging/setLevel"
LOG_MESSAGE = "notifications/message"
# Revisions from which the client sends `MCP-Protocol-Version` on every HTTP request after
# `initialize`; a server that gets none assumes 2025-03-26.
VERSION_HEADER_SINCE = "2025-06-18"


def initialize_params(
    *,
    capabilities: Mapping[str, Any],
    client_info: Mapping[str, str],
    protocol_version: str = LEGACY_PROTOCOL_VERSIONS[0],
) -> dict[str, Any]:
    """`initialize` params: the client's newest legacy revision, its capabilities and identity."""
    return {
        "protocolVersion": protocol_version,
        "capabilities": dict(capabilities),
        "clientInfo": dict(client_info),
    }


def negotiate_version(requested: object, supported: Sequence[str] = LEGACY_PROTOCOL_VERSIONS) -> str:
    """The server's answer to a requested revision: the same one when supported, else its newest."""
    return requested if isinstance(requested, str) and requested in supported else supported[0]


@dataclass(frozen=True, slots=True)
class Handshake:
    """What an `initialize` exchange settled, for the lifetime of the connection or session."""

    protocol_version: str
    capabilities: Mapping[str, Any] = field(default_factory=dict)
    peer_info: Mapping[str, Any] = field(default_factory=dict)
    instructions: str | None = None


def parse_initialize_result(
    result: Mapping[str, Any], supported: Sequence[str] = LEGACY_PROTOCOL_VERSIONS
) -> Handshake:
    """Read a server's `InitializeResult`; a revision this client does not speak is a clear error
    naming both sides' versions (the client then disconnects)."""
    version = result.get("protocolVersion")
    if not isinstance(version, str) or version not in supported:
        raise ProtocolError(
            f"the server answered initialize with protocol version {version!r:.60}; this client speaks "
            f"{', '.join((PROTOCOL_VERSION, *supported))}"
        )
    capabilities = result.get("capabilities")
    info = result.get("serverInfo")
    instructions = result.get("instructions")
    return Handshake(
        protocol_version=version,
        capabilities=capabilities if isinstance(capabilities, dict) else {},
        peer_info=info if isinstance(info, dict) else {},
        instructions=instructions if isinstance(instructions, str) else None,
    )


def initialize_request(request_id: jsonrpc.RequestId, params: dict[str, Any]) -> jsonrpc.Message:
    return jsonrpc.request(request_id, INITIALIZE, params)


def initialized_notification() -> jsonrpc.Message:
    return jsonrpc.notification(INITIALIZED, {})


def cancelled_notification(request_id: jsonrpc.RequestId, reason: str) -> jsonrpc.Message:
    """Cancels a request in the legacy era, where a dropped stream is not a cancellation
    (2025-11-25/basic-transports.mdx § Sending Messages to the Server)."""
    return jsonrpc.notification("notifications/cancelled", {"requestId": request_id, "reason": reason})


def discover_view(handshake: Handshake) -> dict[str, Any]:
    """What `initialize` settled, shaped like a `DiscoverResult`, so `discover()` answers alike
    in both eras (the legacy server's revision is its only supported version here)."""
    view: dict[str, Any] = {
        "supportedVersions": [handshake.protocol_version],
        "capabilities": dict(handshake.capabilities),
        "serverInfo": dict(handshake.peer_info),
    }
    if handshake.instructions is not None:
        view["instructions"] = handshake.instructions
    return view


def counter_offer(
    data: object, offered: str, supported: Sequence[str] = LEGACY_PROTOCOL_VERSIONS
) -> str | None:
    """After `initialize` was refused: the revision to offer next, from the `supported` list an
    unsupported-version error carries (`-32602`, data `{supported, requested}`); None when the
    error lists none. A list without any revision this client speaks is a `ProtocolError`
    naming both sides' versions."""
    listed = data.get("supported") if isinstance(data, Mapping) else None
    if not isinstance(listed, list):
        return None
    theirs = [version for version in listed if isinstance(version, str)]
    for version in supported:
        if version in theirs and version != offered:
            return version
    if offered in theirs:
        return None  # refused for another reason: raise the server's error as it is
    raise ProtocolError(
        f"no protocol version in common: the server supports {', '.join(theirs)[:300] or 'none'}; "
        f"this client speaks {', '.join((PROTOCOL_VERSION, *supported))}"
    )
