"""Requests a legacy-era server sends the client (`elicitation/create`, `sampling/createMessage`,
`roots/list`, `ping`), answered without I/O through the callbacks of the modern multi-round-trip
flow (input_required.py), so user code is the same in both eras.

`plan_peer_request` turns the request into either its response at once (`ping`, or an error)
or an `InputNeeded` step with one call for the driver to run; `peer_response` turns the
callback's answer into the response message. What the client did not declare is refused as
the legacy revisions say: a method with no callback (no capability) is `-32601`; a URL-mode
elicitation or tool-enabled sampling the client did not declare is `-32602`
(2025-11-25/client-elicitation.mdx § Error Handling; client-sampling.mdx § Tools in Sampling).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ..errors import ProtocolError
from ..protocol import jsonrpc
from ..protocol.jsonrpc import Message
from ..protocol.legacy.handshake import PING
from .input_responses import InputNeeded, answer_wire, check_declared, parse_request

__all__ = ["PEER_KEY", "peer_response", "plan_peer_request"]

PEER_KEY: Final = "legacy"  # the single key of the InputNeeded step a peer request becomes


def plan_peer_request(
    message: Message,
    callbacks: Mapping[str, Callable[[Any], Any]],
    capabilities: Mapping[str, Any],
    *,
    origin_method: str = "",
    origin_name: str | None = None,
) -> InputNeeded | Message:
    """The response to send at once, or the callback to run first."""
    request_id = message.get("id")
    method = message.get("method")
    if method == PING:
        return jsonrpc.result(request_id, {})
    callback = callbacks.get(method) if isinstance(method, str) else None
    if callback is None:
        return jsonrpc.error(
            request_id,
            jsonrpc.METHOD_NOT_FOUND,
            f"this client does not handle {method!r:.100} (it declared no such capability)",
        )
    try:
        request = parse_request(
            PEER_KEY,
            {"method": method, "params": message.get("params")},
            method=origin_method,
            name=origin_name,
        )
        check_declared(request, capabilities)
    except ProtocolError as exc:
        return jsonrpc.error(request_id, jsonrpc.INVALID_PARAMS, str(exc))
    return InputNeeded([(PEER_KEY, callback, request)])


def peer_response(message: Message, step: InputNeeded, answers: Mapping[str, Any]) -> Message:
    """The callback's answer as the response to the peer's request (a wrong answer raises, and
    the transport answers the peer with an internal error instead)."""
    _, _, request = step.calls[0]
    return jsonrpc.result(message.get("id"), answer_wire(request, answers[PEER_KEY]))
