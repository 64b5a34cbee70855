"""The multi-round glue: a retry's inputResponses and requestState checked before the handler
runs, and the InputRequiredResult that ends a round (MRTR-*; the rules live in
input_requests.py and request_state.py, single-use claims in the store).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from ....protocol import jsonrpc
from ..bearer_auth import principal_id
from ..config import IncomingRequest
from ..context import RequestContext, RpcError
from ..input_requests import InputRequired, input_required_result, resume_round
from ..request_state import StateCodec
from .served import ServedSet

__all__ = ["end_round", "redeem_round"]

_LOG = logging.getLogger("mcpgen.server")


def _codec(server: ServedSet) -> StateCodec:
    codec = server._state_codec
    if codec is None:
        cfg = server.config
        codec = server._state_codec = StateCodec.from_config(
            cfg.state_secrets, ttl_s=cfg.state_ttl_s, max_bytes=cfg.max_state_bytes
        )
    return codec


async def redeem_round(
    server: ServedSet, ctx: RequestContext, method: str, params: Mapping[str, Any], request: IncomingRequest
) -> None:
    single_use = resume_round(
        ctx,
        method,
        params,
        codec=lambda: _codec(server),
        principal_id=principal_id(server.config.auth, request.principal),
    )
    if single_use is not None:  # MRTR-11: the first redemption anywhere wins
        nonce, expires_ms = single_use
        ttl_s = max(1.0, expires_ms / 1000 - time.time() + 60.0)  # outlives the state (clock skew)
        if not await server._store.claim("used:" + nonce, ttl_s):
            _LOG.info("rejected requestState for %s: already redeemed", method)
            raise RpcError(
                jsonrpc.INVALID_PARAMS,
                "Invalid requestState: it was already used and is accepted only once; "
                "retry the request without it",
            )


def end_round(
    server: ServedSet,
    ask: InputRequired,
    method: str,
    params: Mapping[str, Any],
    request: IncomingRequest,
    what: str,
    *,
    single_use: bool = False,
) -> dict[str, Any] | None:
    """The InputRequiredResult ending this round; None (logged) when the handler's state
    cannot be sealed (not JSON, or too large: a handler bug)."""
    try:
        return input_required_result(
            ask,
            method,
            params,
            codec=_codec(server),
            principal_id=principal_id(server.config.auth, request.principal),
            meta=server._result_meta,
            single_use=single_use,
        )
    except (TypeError, ValueError):
        _LOG.exception("%s: cannot build its requestState", what)
        return None
