"""Which reply answers a request (`protocol.jsonrpc.unwrap`): a response with another id never does."""

from __future__ import annotations

from typing import Any

import pytest

from mcpgen_runtime.errors import MethodNotFoundError, ProtocolError, RemoteError
from mcpgen_runtime.protocol.jsonrpc import unwrap

ERROR = {"code": -32601, "message": "no such method"}


def reply(id_: Any, **body: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, **body}


def test_a_result_for_the_request_is_its_answer() -> None:
    assert unwrap(reply(7, result={"x": 1}), expected_id=7) == {"x": 1}


@pytest.mark.parametrize("other", [8, "7", 7.0, True, None])
def test_a_result_with_another_id_is_a_protocol_error(other: Any) -> None:
    with pytest.raises(ProtocolError, match="does not match"):
        unwrap(reply(other, result={"x": 1}), expected_id=7 if other is not True else 1)


@pytest.mark.parametrize("other", [8, "7", 7.0, "server-error"])
def test_an_error_with_another_id_is_a_protocol_error_not_the_answer(other: Any) -> None:
    with pytest.raises(ProtocolError, match="does not match"):
        unwrap(reply(other, error=ERROR), expected_id=7, http_status=200)


def test_an_error_for_the_request_or_with_id_null_is_raised_typed() -> None:
    with pytest.raises(MethodNotFoundError):
        unwrap(reply(7, error=ERROR), expected_id=7)
    with pytest.raises(MethodNotFoundError):
        unwrap(reply(None, error=ERROR), expected_id=7)  # the server could not read the request


def test_a_non_2xx_http_reply_answers_its_post_whatever_its_id() -> None:
    with pytest.raises(RemoteError) as caught:
        unwrap(
            reply("server-error", error={"code": -32600, "message": "Bad Request"}),
            expected_id=7,
            http_status=400,
        )
    assert caught.value.http_status == 400
