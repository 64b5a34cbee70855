"""Per-request `_meta` keys and the envelope every request carries (BASE-30, BASE-33)."""

from __future__ import annotations

from typing import Any

from .._version import PROTOCOL_VERSION

PREFIX = "io.modelcontextprotocol/"
PROTOCOL_VERSION_KEY = PREFIX + "protocolVersion"
CLIENT_CAPABILITIES_KEY = PREFIX + "clientCapabilities"
CLIENT_INFO_KEY = PREFIX + "clientInfo"
SERVER_INFO_KEY = PREFIX + "serverInfo"
SUBSCRIPTION_ID_KEY = PREFIX + "subscriptionId"
PROGRESS_TOKEN_KEY = "progressToken"


def request_meta(
    *,
    capabilities: dict[str, Any],
    client_info: dict[str, str] | None,
    protocol_version: str = PROTOCOL_VERSION,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        PROTOCOL_VERSION_KEY: protocol_version,
        CLIENT_CAPABILITIES_KEY: capabilities,
    }
    if client_info is not None:
        meta[CLIENT_INFO_KEY] = client_info
    return meta
