"""Which failed requests the client sends again by itself (`Client(retries=N)`), and when.

A retryable error (errors.py) either says the server did nothing with the request (`unprocessed`:
it never reached the server, or the answer says so) or leaves that open (the request was sent,
then the exchange was cut or a gateway answered 502/504). The first kind is sent again for any
request; the second only for a request that is safe to repeat:

| failure (with `retries` > 0)                                  | tools/call       | other methods |
|----------------------------------------------------------------|------------------|---------------|
| connect refused, DNS, TLS, a stdio server that did not start   | retried          | retried       |
| HTTP 429 / 503, `ServiceUnavailableError` (`data.retryable`)   | retried          | retried       |
| cut after sending (`ResponseLostError`, a reset), HTTP 502/504 | if repeatable    | retried       |
| timeout, a stdio server that exited, any other error           | never            | never         |

A tool call is repeatable when its definition (the generated package's tools.json, or the
table `list_all_tools` filled) says `readOnlyHint: true` or `idempotentHint: true`, or when the
caller allows it for its calls (`client.with_options(retry_unsafe=True)`). The other methods the
client sends are reads or idempotent (`SAFE_TO_REPEAT` names them), so their rules did not change;
any method outside that set (a legacy `initialize`: it may open a session) counts as a tool call
no annotation allows.
Each attempt is a new request (a new id) after a wait: the server's `Retry-After` /
`retryAfterMs` when it gave one, else a bounded exponential backoff; a wait longer than
`MAX_RETRY_WAIT_S`, or past a call's `max_time`, ends the retries with the error.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from typing import Final

from ..errors import McpRuntimeError
from ..tools import ToolSpec
from ..transport.limits import Deadline, Timeout

__all__ = [
    "BACKOFF_FIRST_S",
    "BACKOFF_MAX_S",
    "MAX_RETRY_WAIT_S",
    "SAFE_TO_REPEAT",
    "repeatable_tool",
    "retry_wait",
]

# The methods the client sends besides tools/call: reads, or idempotent by their definition
# (tasks/update answers each input key once; cancelling or subscribing twice changes nothing).
SAFE_TO_REPEAT: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "tasks/get",
        "tasks/list",
        "tasks/result",
        "tasks/update",
        "tasks/cancel",
        "ping",
    }
)
MAX_RETRY_WAIT_S: Final = 30.0  # a server asking for a longer wait gets its error raised instead
BACKOFF_FIRST_S: Final = 0.05  # without Retry-After: 50 ms, doubled per attempt, jittered
BACKOFF_MAX_S: Final = 2.0


def repeatable_tool(spec: ToolSpec | None) -> bool:
    """Whether the tool's annotations say calling it twice does no harm."""
    if spec is None:
        return False
    annotations = spec.definition.get("annotations")
    return isinstance(annotations, Mapping) and (
        annotations.get("readOnlyHint") is True or annotations.get("idempotentHint") is True
    )


def retry_wait(exc: McpRuntimeError, attempt: int, *, repeatable: bool, timeout: Timeout) -> float | None:
    """Seconds to wait before sending the request again after `exc` (its `attempt`-th failure,
    from 0), or None: raise it. `repeatable`: the request may have run and may run again."""
    if not exc.retryable or not (exc.unprocessed or repeatable):
        return None
    asked = exc.retry_after_s
    if asked is None:
        wait = min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2.0**attempt) * random.uniform(0.5, 1.0)
    else:
        wait = asked
    if wait > MAX_RETRY_WAIT_S:
        return None
    if isinstance(timeout, Deadline) and time.monotonic() + wait >= timeout.end:
        return None  # the call's max_time would pass while waiting
    return wait
