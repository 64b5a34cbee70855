"""Provider-ready specs (issue 35, item 4): `client.tool_specs(provider)` on a client generated from
the tools below, against a server serving them on loopback (recorded: what reached it). A model's
call goes through the client: names mapped back, each `null` for "not sent" taken out before the
server sees the arguments, a call the model got wrong answered with the reason and never sent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from mcpgen_runtime.errors import ConnectError
from mcpgen_runtime.server import ToolContext, ToolExecutionError, ToolServer
from tests.runtime._client_helpers import LiveServer, generated_client

pytestmark = pytest.mark.timeout(60)

PACKAGE = "tool_specs_probe_client"
TRIP = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "Where to"},
        "days": {"type": "integer", "minimum": 1},
        "options": {"$ref": "#/$defs/Options"},
        "stops": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"place": {"type": "string"}, "note": {"type": "string"}},
                "required": ["place"],
            },
        },
    },
    "required": ["city"],
    "$defs": {
        "Options": {"type": "object", "properties": {"pace": {"type": "string", "enum": ["slow", "fast"]}}}
    },
}
ECHO_OUT = {"type": "object", "properties": {"received": {"type": "object"}}, "required": ["received"]}
TOOLS = [
    {"name": "plan.trip", "description": "Plan a trip", "inputSchema": TRIP, "outputSchema": ECHO_OUT},
    {"name": "plan_trip", "title": "The other planner", "inputSchema": {"type": "object"}},
    {"name": "fail", "description": "Always fails", "inputSchema": {"type": "object", "properties": {}}},
    {
        "name": "maybe",
        "description": "Optional and nullable: no faithful strict lowering",
        "inputSchema": {"type": "object", "properties": {"x": {"type": ["string", "null"]}}},
    },
    {
        "name": "picture",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


class EchoServer(ToolServer):
    def __init__(self) -> None:
        super().__init__()

        async def echo(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
            return {"received": arguments}

        async def other(arguments: dict[str, Any], ctx: ToolContext) -> str:
            return "the other planner"

        async def fail(arguments: dict[str, Any], ctx: ToolContext) -> str:
            raise ToolExecutionError("no such city")

        async def picture(arguments: dict[str, Any], ctx: ToolContext) -> list[dict[str, Any]]:
            return [
                {"type": "text", "text": "here it is"},
                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
            ]

        for definition, handler in zip(TOOLS, (echo, other, fail, other, picture), strict=True):
            self.add_tool(definition, handler, notify=False)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with generated_client(tmp_path_factory.mktemp("specs"), PACKAGE, TOOLS) as package:
        yield package


@pytest.fixture
def live() -> Iterator[LiveServer]:
    with LiveServer(EchoServer()) as server:
        yield server


def calls(live: LiveServer) -> list[dict[str, Any]]:
    """The name and arguments of each tools/call the server received."""
    return [
        {key: r.body["params"][key] for key in ("name", "arguments")}
        for r in live.requests
        if r.method == "tools/call" and isinstance(r.body, dict)
    ]


def test_openai_specs_are_strict_mapped_and_lowered(generated: Any) -> None:
    specs = generated.Client("http://127.0.0.1:9/mcp").tool_specs("openai")
    by_name = {tool["name"]: tool for tool in specs.tools}
    # "plan.trip" is refused by OpenAI: mapped, while "plan_trip" keeps its own name
    mapped = "plan_trip_4211bb81"  # "plan_trip" and the first 8 hex digits of sha256("plan.trip")
    assert specs.names == {
        mapped: "plan.trip",
        "plan_trip": "plan_trip",
        "fail": "fail",
        "picture": "picture",
    }
    trip = by_name[mapped]
    assert trip["type"] == "function" and trip["strict"] is True and trip["description"] == "Plan a trip"
    parameters = trip["parameters"]
    assert parameters["required"] == ["city", "days", "options", "stops"]
    assert parameters["additionalProperties"] is False
    assert parameters["properties"]["days"] == {"type": ["integer", "null"], "minimum": 1}
    assert parameters["$defs"]["Options"]["additionalProperties"] is False
    assert (
        by_name["plan_trip"]["description"] == "The other planner"
    )  # the title when there is no description
    assert [str(u) for u in specs.unsendable] == [
        "maybe: /inputSchema/properties/x: optional and already nullable: a `null` could not say 'not sent'"
    ]


def test_a_models_call_reaches_the_tool_with_its_nulls_taken_out(generated: Any, live: LiveServer) -> None:
    with generated.Client(live.url) as client:
        specs = client.tool_specs("openai")
        mapped = next(name for name, wire in specs.names.items() if wire == "plan.trip")
        model_arguments = {
            "city": "Oslo",
            "days": None,
            "options": {"pace": None},
            "stops": [{"place": "a", "note": None}, {"place": "b", "note": "lunch"}],
        }
        reply = specs.call(mapped, json.dumps(model_arguments), call_id="call_1")
    sent = {"city": "Oslo", "options": {}, "stops": [{"place": "a"}, {"place": "b", "note": "lunch"}]}
    assert calls(live) == [{"name": "plan.trip", "arguments": sent}]
    assert not reply.is_error
    assert json.loads(reply.output) == {"received": sent}
    assert reply.message() == {"type": "function_call_output", "call_id": "call_1", "output": reply.output}
    assert reply.result is not None and reply.result.structured_content == {"received": sent}


@pytest.mark.parametrize(
    ("name", "arguments", "reason"),
    [
        ("plan_trip_x", "{}", "there is no tool named 'plan_trip_x'"),
        ("maybe", "{}", "there is no tool named 'maybe'"),  # left out of the specs: not callable through them
        ("fail", "{nope", "the arguments are not JSON"),
        ("fail", "[]", "the arguments must be a JSON object"),
        (
            "plan.trip",
            '{"city": "Oslo"}',
            "there is no tool named 'plan.trip'",
        ),  # the model knows only the mapped name
    ],
)
def test_a_call_the_model_got_wrong_is_answered_and_never_sent(
    generated: Any, live: LiveServer, name: str, arguments: str, reason: str
) -> None:
    with generated.Client(live.url) as client:
        reply = client.tool_specs("openai").call(name, arguments, call_id="c")
    assert reply.is_error and reply.result is None
    assert reply.output.startswith(reason)
    assert calls(live) == []


def test_arguments_that_break_the_tools_schema_are_answered_with_the_pointer(
    generated: Any, live: LiveServer
) -> None:
    with generated.Client(live.url) as client:
        specs = client.tool_specs("openai")
        mapped = next(name for name, wire in specs.names.items() if wire == "plan.trip")
        arguments = {"city": "Oslo", "days": 0, "options": None, "stops": None}
        reply = specs.call(mapped, json.dumps(arguments), call_id="call_2")
        anthropic = client.tool_specs("anthropic").call("plan_trip_x", {}, call_id="toolu_1")
    assert reply.is_error
    assert reply.output == "tool 'plan.trip': invalid arguments at /days: 0 is less than the minimum of 1"
    assert anthropic.message() == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "there is no tool named 'plan_trip_x'",
        "is_error": True,
    }
    assert calls(live) == []


def test_anthropic_leaves_out_what_its_strict_subset_cannot_say(generated: Any) -> None:
    specs = generated.Client("http://127.0.0.1:9/mcp").tool_specs("anthropic")
    assert [tool["name"] for tool in specs.tools] == ["plan_trip", "fail", "maybe", "picture"]
    assert [tool["strict"] for tool in specs.tools] == [True] * 4
    assert specs.tools[2]["input_schema"] == {
        "type": "object",
        "properties": {"x": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "additionalProperties": False,
    }
    (left_out,) = specs.unsendable
    assert left_out.tool == "plan.trip"
    assert "/inputSchema/properties/days/minimum" in str(left_out)


def test_a_tool_error_and_non_text_content_go_back_as_text(generated: Any, live: LiveServer) -> None:
    with generated.Client(live.url) as client:
        specs = client.tool_specs("gemini")
        failed = specs.call("fail", {})
        picture = specs.call("picture", None, call_id="fc_1")
        trip = specs.call("plan.trip", {"city": "Oslo"})  # Gemini takes the name as it is
    assert failed.is_error and failed.output == "no such city"
    assert failed.message() == {"function_response": {"name": "fail", "response": {"error": "no such city"}}}
    assert not picture.is_error and picture.output == "here it is\n[image image/png, 6 bytes]"
    assert picture.message()["function_response"]["id"] == "fc_1"
    assert trip.message() == {
        "function_response": {"name": "plan.trip", "response": {"output": {"received": {"city": "Oslo"}}}}
    }
    assert [c["name"] for c in calls(live)] == ["fail", "picture", "plan.trip"]


def test_a_connection_failure_is_the_programs_to_handle(generated: Any) -> None:
    with generated.Client("http://127.0.0.1:9/mcp", retries=0) as client, pytest.raises(ConnectError):
        client.tool_specs("openai-chat").call("fail", "{}", call_id="c")


def test_the_async_client_and_a_subset(generated: Any, live: LiveServer) -> None:
    async def run() -> Any:
        async with generated.AsyncClient(live.url) as client:
            specs = client.tool_specs("openai-chat", tools=["fail", "picture"])
            assert [tool["function"]["name"] for tool in specs.tools] == ["fail", "picture"]
            return await specs.call("picture", "{}", call_id="call_9")

    reply = asyncio.run(run())
    assert reply.message() == {
        "role": "tool",
        "tool_call_id": "call_9",
        "content": "here it is\n[image image/png, 6 bytes]",
    }


def test_unknown_providers_and_tools_are_refused_at_once(generated: Any) -> None:
    client = generated.Client("http://127.0.0.1:9/mcp")
    with pytest.raises(ValueError, match="unknown provider 'mistral'"):
        client.tool_specs("mistral")
    with pytest.raises(ValueError, match="no such tool: 'nope'"):
        client.tool_specs("openai", tools=["fail", "nope"])
