"""Client flows beyond tools (client/surface_flows.py) without I/O: resources/list and friends paged
and cached, resources/read (Mcp-Name = URI, text vs binary, cached per URI, stale after an update),
prompts/get (MRTR answered by callbacks, nothing of a retry cached), completion/complete."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from mcpgen_runtime.cache import MemoryCacheStore, ResponseCache
from mcpgen_runtime.client import ClientCore, ElicitResult
from mcpgen_runtime.client.surface_flows import (
    InvalidEntryWarning,
    complete_flow,
    get_prompt_flow,
    list_all_flow,
    list_page_flow,
    read_resource_flow,
)
from mcpgen_runtime.errors import InputRequiredError, ProtocolError
from mcpgen_runtime.surfaces import (
    BlobResourceContents,
    PromptRef,
    ResourceTemplateRef,
    TextResourceContents,
)
from tests.runtime._client_helpers import drive, elicit_request, irr


def core(**kwargs: Any) -> ClientCore:
    return ClientCore(cache=ResponseCache(MemoryCacheStore(), server="http://s/mcp"), **kwargs)


def ok(result: dict[str, Any]) -> dict[str, Any]:
    return {"result": {"resultType": "complete", **result}}


def test_list_pages_follow_cursors_and_keep_every_entry_as_listed() -> None:
    client = core()
    pages = (
        ok({"resources": [{"uri": "x:a", "name": "a"}], "nextCursor": ""}),  # "" is a cursor (PAGE-07)
        ok({"resources": [{"uri": "x:b", "name": "b"}, {"name": "no uri"}]}),
    )
    with pytest.warns(InvalidEntryWarning):
        items, sent = drive(list_all_flow(client, "resources/list", partition=None), *pages)
    assert [r.uri for r in items] == ["x:a", "x:b"]
    assert [m.message["params"].get("cursor") for m in sent] == [None, ""]
    with pytest.warns(InvalidEntryWarning):
        page, _ = drive(list_page_flow(client, "resources/list", "", partition=None, refresh=True), pages[1])
    assert page.listed == ({"uri": "x:b", "name": "b"}, {"name": "no uri"})


def test_templates_and_prompts_lists() -> None:
    client = core()
    templates, _ = drive(
        list_all_flow(client, "resources/templates/list", partition=None),
        ok({"resourceTemplates": [{"uriTemplate": "file:///{path}", "name": "files"}], "ttlMs": 1000}),
    )
    assert templates[0].uri_template == "file:///{path}"
    prompts, _ = drive(
        list_all_flow(client, "prompts/list", partition=None),
        ok({"prompts": [{"name": "p", "arguments": [{"name": "a", "required": True}]}]}),
    )
    assert prompts[0].arguments[0].required is True


def test_read_resource_text_and_binary_with_mcp_name_header_and_cache() -> None:
    client = core()
    blob = bytes(range(256))
    reply = ok(
        {
            "contents": [
                {"uri": "x:a", "mimeType": "text/plain", "text": "hello"},
                {"uri": "x:a#2", "mimeType": "image/png", "blob": base64.b64encode(blob).decode()},
            ],
            "ttlMs": 60_000,
            "cacheScope": "public",
        }
    )
    result, sent = drive(read_resource_flow(client, "x:a b", partition=None), reply)
    text, binary = result.contents
    assert isinstance(text, TextResourceContents) and text.text == "hello"
    assert isinstance(binary, BlobResourceContents) and binary.blob == blob
    assert result.text == "hello" and result.blob == blob
    assert sent[0].headers["Mcp-Name"] == "x:a b"
    assert sent[0].headers["Mcp-Method"] == "resources/read"
    again, sent = drive(read_resource_flow(client, "x:a b", partition=None))
    assert sent == [] and again.text == "hello"  # fresh in the cache (CACHE-07)
    client.observe(
        {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "x:a b"}}
    )
    _, sent = drive(read_resource_flow(client, "x:a b", partition=None), reply)
    assert len(sent) == 1  # stale after the update (CACHE-14)


def test_a_blob_that_is_not_base64_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError):
        drive(
            read_resource_flow(core(), "x:a", partition=None),
            ok({"contents": [{"uri": "x:a", "blob": "not base64!"}]}),
        )


def test_get_prompt_answers_input_required_and_retries() -> None:
    answered: list[Any] = []

    def answer(step: Any) -> dict[str, Any]:
        answered.append(step)
        return {key: ElicitResult.accept({"name": "Ada"}) for key, _, _ in step.calls}

    client = core(capabilities={"elicitation": {}}, input_callbacks={"elicitation/create": lambda r: None})
    final = ok({"messages": [{"role": "user", "content": {"type": "text", "text": "Hi Ada"}}]})
    result, sent = drive(
        get_prompt_flow(client, "greet", {"lang": "en"}),
        irr({"who": elicit_request()}, state="s1"),
        final,
        answer=answer,
    )
    assert result.text == "Hi Ada" and result.messages[0].role == "user"
    first, retry = (m.message for m in sent)
    assert first["params"]["name"] == "greet" and first["params"]["arguments"] == {"lang": "en"}
    assert retry["id"] != first["id"]  # MRTR-19
    assert retry["params"]["requestState"] == "s1" and "who" in retry["params"]["inputResponses"]
    assert sent[0].headers["Mcp-Name"] == "greet"


def test_prompt_input_without_a_callback_raises_input_required() -> None:
    with pytest.raises(InputRequiredError):
        drive(
            get_prompt_flow(core(capabilities={"elicitation": {}}), "greet", None),
            irr({"k": elicit_request()}),
        )


def test_prompt_arguments_must_be_strings() -> None:
    with pytest.raises(TypeError):
        drive(get_prompt_flow(core(), "p", {"n": 1}))  # type: ignore[dict-item]


def test_complete_for_prompts_and_templates() -> None:
    client = core()
    completion, sent = drive(
        complete_flow(client, PromptRef("p"), "lang", "py", context={"framework": "x"}),
        ok({"completion": {"values": ["python"], "total": 1, "hasMore": False}}),
    )
    assert completion.values == ["python"] and completion.has_more is False
    params = sent[0].message["params"]
    assert params["ref"] == {"type": "ref/prompt", "name": "p"}
    assert params["argument"] == {"name": "lang", "value": "py"}
    assert params["context"] == {"arguments": {"framework": "x"}}
    _, sent = drive(
        complete_flow(client, ResourceTemplateRef("file:///{path}"), "path", ""),
        ok({"completion": {"values": []}}),
    )
    assert sent[0].message["params"]["ref"] == {"type": "ref/resource", "uri": "file:///{path}"}


def test_list_changed_makes_cached_pages_stale() -> None:
    client = core()
    page = ok({"prompts": [{"name": "p"}], "ttlMs": 60_000, "cacheScope": "public"})
    drive(list_all_flow(client, "prompts/list", partition=None), page)
    _, sent = drive(list_all_flow(client, "prompts/list", partition=None))
    assert sent == []
    client.observe({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"})
    _, sent = drive(list_all_flow(client, "prompts/list", partition=None), page)
    assert len(sent) == 1


def test_a_modern_listen_stream_delivers_resource_updates_and_stales_the_read() -> None:
    """2026-07-28: `notifications/resources/updated` on the listen stream (RES-08) is delivered, and
    the cached read is refetched next time (CACHE-14)."""
    from mcpgen_runtime.protocol.subscriptions import ListenState, SubscriptionFilter

    client = core()
    reply = ok({"contents": [{"uri": "x:a", "text": "v1"}], "ttlMs": 60_000, "cacheScope": "public"})
    drive(read_resource_flow(client, "x:a", partition=None), reply)
    state = ListenState(7, SubscriptionFilter(resource_subscriptions=("x:a",)), client.observe)
    meta = {"io.modelcontextprotocol/subscriptionId": 7}
    ack = {"notifications": {"resourceSubscriptions": ["x:a"]}, "_meta": meta}
    assert (
        state.accept({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": ack})
        is None
    )
    assert state.unsupported == []
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "x:a", "_meta": meta},
    }
    assert state.accept(note) == note
    _, sent = drive(read_resource_flow(client, "x:a", partition=None), reply)
    assert len(sent) == 1
