"""JSON-RPC 2.0 envelope: codes, message builders and response classification."""

from __future__ import annotations

from typing import Any

from .. import _json
from ..errors import ProtocolError, RemoteError

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

RESULT_COMPLETE = "complete"
RESULT_INPUT_REQUIRED = "input_required"
RESULT_TASK = "task"  # a CreateTaskResult (the tasks extension; only tools/call may get one)
KNOWN_RESULT_TYPES = frozenset({RESULT_COMPLETE, RESULT_INPUT_REQUIRED, RESULT_TASK})

RequestId = int | str
Message = dict[str, Any]
"""One JSON-RPC message as decoded JSON: a request, notification or response."""


def request(id: RequestId, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def result(id: RequestId | None, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": value}


def error(id: RequestId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": err}


def is_response(message: Any) -> bool:
    return isinstance(message, dict) and "id" in message and ("result" in message or "error" in message)


def is_request(message: Message) -> bool:
    """A request (it wants a response), as opposed to a notification or a response."""
    return "method" in message and "id" in message


def decode(data: bytes, not_json: str, not_object: str, *about: object) -> Message:
    """The message `data` holds, or `ProtocolError` with `not_json` / `not_object` (formatted
    with `about`) and the start of `data`."""
    try:
        message = _json.loads(data)
    except _json.JSONDecodeError as exc:
        raise ProtocolError(f"{not_json % about}: {data[:200]!r}") from exc
    if not isinstance(message, dict):
        raise ProtocolError(f"{not_object % about}: {data[:200]!r}")
    return message


def unwrap(message: Any, *, expected_id: RequestId, http_status: int | None = None) -> dict[str, Any]:
    """Return the `result` of a response to `expected_id`, or raise its error.

    A result without `resultType` is a complete one (BASE-11); an unknown `resultType`
    is invalid (BASE-10). An error answers the request when it carries its id, or id null
    (the server could not read the request), or arrives as a non-2xx HTTP reply (which
    answers that POST whatever id the server put in it); any other id is a protocol error,
    never the answer.
    """
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise ProtocolError(f"not a JSON-RPC 2.0 message: {message!r:.200}")
    reply_id = message.get("id")
    ours = reply_id == expected_id and type(reply_id) is type(expected_id)  # 1 is neither 1.0 nor True
    if "error" in message:
        if ours or reply_id is None or (http_status is not None and http_status >= 300):
            error = RemoteError.from_error(message["error"], http_status=http_status)
            error.in_band = ours
            raise error
    elif ours:
        value = message.get("result")
        if not isinstance(value, dict):
            raise ProtocolError(f"JSON-RPC result is not an object: {value!r:.200}")
        result_type = value.get("resultType", RESULT_COMPLETE)
        if result_type not in KNOWN_RESULT_TYPES:
            raise ProtocolError(f"unknown resultType {result_type!r}")
        return value
    raise ProtocolError(f"response id {reply_id!r:.60} does not match request id {expected_id!r}")
