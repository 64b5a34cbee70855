"""protocol/input_messages.py: one set of input-required answer types for both sides — what a client
callback builds (`wire()`) is what a server handler reads back (`from_wire()`)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpgen_runtime.content import ImageContent, TextContent
from mcpgen_runtime.protocol.input_messages import CreateMessageResult, ElicitResult, ListRootsResult, Root


@pytest.mark.parametrize(
    "answer",
    [
        ElicitResult.accept({"name": "Ada", "n": 3, "ok": True, "tags": ["a"]}),
        ElicitResult.decline(),
        ElicitResult.cancel(),
        CreateMessageResult(
            [TextContent(text="a"), ImageContent(data="AAAA", mimeType="image/png")],
            model="m",
            role="user",
            stop_reason="maxTokens",
        ),
        ListRootsResult([Root("file:///a", "A"), Root("file:///b", meta={"k": 1})]),
    ],
)
def test_what_a_client_sends_a_server_reads_back(answer: Any) -> None:
    assert type(answer).from_wire(answer.wire()).wire() == answer.wire()


def test_elicit_result_reads_like_a_handler_expects() -> None:
    accepted = ElicitResult.from_wire({"action": "accept", "content": {"name": "Ada"}})
    assert accepted.accepted and accepted.get("name") == "Ada" and accepted.get("age", 7) == 7
    declined = ElicitResult.from_wire({"action": "decline"})
    assert (
        not declined.accepted and declined.content is None and declined.get("name") is None
    )  # schema.ts: absent


def test_create_message_text_builds_on_the_class_and_reads_on_an_instance() -> None:
    built = CreateMessageResult.text("Paris", model="m")
    assert built.wire() == {
        "role": "assistant",
        "content": {"type": "text", "text": "Paris"},
        "model": "m",
        "stopReason": "endTurn",
    }
    assert built.text == "Paris"
    read = CreateMessageResult.from_wire(built.wire())  # a server keeps the blocks as sent, as a tuple
    assert read.text == "Paris" and read.content == ({"type": "text", "text": "Paris"},) and read.model == "m"
    received = CreateMessageResult.from_wire(
        {
            "role": "assistant",
            "model": "m",
            "content": [
                {"type": "text", "text": "one"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "text", "text": "two"},
            ],
        }
    )
    assert received.text == "one\ntwo" and len(received.blocks) == 3 and received.stop_reason is None
    assert CreateMessageResult({"type": "text", "text": "x"}, model="m").wire() == {
        "role": "assistant",
        "content": {"type": "text", "text": "x"},
        "model": "m",
    }  # stopReason: absent


@pytest.mark.parametrize(
    ("kind", "value", "why"),
    [
        (ElicitResult, {"action": "maybe"}, '"action"'),
        (ElicitResult, {"action": "accept", "content": []}, "must be an object"),
        (ElicitResult, {"action": "accept", "content": {"x": {"y": 1}}}, "content.x"),
        (CreateMessageResult, {"role": "system", "model": "m", "content": {"type": "text"}}, '"role"'),
        (CreateMessageResult, {"role": "user", "content": {"type": "text"}}, '"model"'),
        (CreateMessageResult, {"role": "user", "model": "m", "content": []}, "content block"),
        (ListRootsResult, {}, '"roots"'),
        (ListRootsResult, {"roots": [{"name": "x"}]}, '"uri"'),
    ],
)
def test_from_wire_says_what_is_malformed(kind: Any, value: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        kind.from_wire(value)


def test_roots_in23_binds_the_client_not_what_a_server_receives() -> None:
    with pytest.raises(ValueError, match="IN-23"):
        Root("https://example.com/repo")
    [received] = ListRootsResult.from_wire(
        {"roots": [{"uri": "https://example.com/repo", "_meta": {"k": 1}}]}
    ).roots
    assert received.uri == "https://example.com/repo" and received.name is None and received.meta == {"k": 1}
