"""The mock server end to end: the runtime's client against `running_mock` on loopback HTTP (in
this process and as a subprocess) and stdio; generated answers, responses files, recording.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpgen_runtime.client import Client
from mcpgen_runtime.errors import InvalidParamsError, MissingClientCapabilityError, RemoteError
from mcpgen_runtime.mock import MockServer, ResponsesError, running_mock
from mcpgen_runtime.protocol.input_messages import ElicitRequest, ElicitResult
from mcpgen_runtime.schema import compile_schema
from tests.runtime.server_helpers import call, mcp_headers
from tests.support import ROOT, subprocess_env

pytestmark = pytest.mark.timeout(90)

WEATHER_SPEC = ROOT / "specs" / "weather.json"
WEATHER: list[dict[str, Any]] = json.loads(WEATHER_SPEC.read_text())["tools"]
OUTPUTS = {tool["name"]: compile_schema(tool["outputSchema"]) for tool in WEATHER if "outputSchema" in tool}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_weather", {"location": "Berlin"}),
    ("get_weather_data", {"location": "Berlin"}),
    ("get_weather_data", {"location": "Lagos"}),
    ("list_users", {}),
    ("execute_sql", {"region": "eu-west1", "query": "SELECT 1"}),
    ("calculate_sum", {"a": 1, "b": 2.5}),
    ("get_current_time", {}),
]


def answers(url: str | None = None, command: list[str] | None = None) -> list[dict[str, Any]]:
    """Every call of CALLS, as the result objects the server sent."""
    client = (
        Client(url, tools=WEATHER)
        if url
        else Client.stdio(command or [], tools=WEATHER, env=subprocess_env())
    )
    with client:
        return [
            client.call_tool(name, arguments).model_dump(mode="json", by_alias=True, exclude={"meta"})
            for name, arguments in CALLS
        ]


def test_answers_are_valid_structured_content_plus_its_text() -> None:
    with running_mock(spec=WEATHER_SPEC, seed=3) as mock:
        results = answers(mock.url)
    for (name, _), result in zip(CALLS, results, strict=True):
        assert result["isError"] is False, result
        if name in OUTPUTS:
            assert OUTPUTS[name](result["structuredContent"]) is None
            # TOOLS-18: the same JSON as text, for clients that read only content
            assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
        else:
            assert result["structuredContent"] is None
            assert result["content"][0]["text"].startswith(f"mcpgen mock: {name} called with")


def test_the_same_seed_gives_the_same_answers_in_every_process_and_transport() -> None:
    with running_mock(spec=WEATHER_SPEC, seed=11) as mock:
        here = answers(mock.url)
    with running_mock(spec=WEATHER_SPEC, seed=11, in_process=False, env=subprocess_env()) as mock:
        subprocess_answers = answers(mock.url)
    with running_mock(spec=WEATHER_SPEC, seed=11, transport="stdio") as mock:
        assert mock.command is not None
        stdio_answers = answers(command=mock.command)
    assert here == subprocess_answers == stdio_answers
    with running_mock(spec=WEATHER_SPEC, seed=12) as mock:
        other_seed = answers(mock.url)
    assert [r["structuredContent"] for r in other_seed] != [r["structuredContent"] for r in here]
    berlin, lagos = here[1]["structuredContent"], here[2]["structuredContent"]
    assert berlin != lagos  # the arguments matter too


def test_calls_are_recorded_in_order_in_and_out_of_process() -> None:
    for options in ({}, {"in_process": False, "env": subprocess_env()}, {"transport": "stdio"}):
        with running_mock(spec=WEATHER_SPEC, **options) as mock:  # type: ignore[arg-type]
            if mock.url:
                answers(mock.url)
            else:
                answers(command=mock.command)
            mock.assert_calls(CALLS)
            mock.assert_called("get_weather_data", location="Lagos")
            assert mock.calls_to("get_weather_data") == [{"location": "Berlin"}, {"location": "Lagos"}]
            mock.reset()
            mock.assert_calls([])
            mock.assert_not_called("get_weather")


def test_assertion_messages_list_the_calls() -> None:
    with running_mock(spec=WEATHER_SPEC) as mock, Client(mock.url, tools=WEATHER) as client:
        client.call_tool("get_weather", {"location": "Oslo"})
        with pytest.raises(
            AssertionError, match=r'(?s)no call of .get_weather. with.*get_weather \{"location":"Oslo"\}'
        ):
            mock.assert_called("get_weather", location="Bergen")
        with pytest.raises(AssertionError, match="expected calls"):
            mock.assert_calls(["list_users"])


def test_arguments_and_headers_are_checked_as_a_generated_server_checks_them() -> None:
    with running_mock(spec=WEATHER_SPEC) as mock:
        assert mock.url is not None
        with Client(mock.url, tools=WEATHER) as client:
            bad = client.call_tool("calculate_sum", {"a": "two", "b": 1})
            assert bad.is_error and "Invalid arguments for tool 'calculate_sum'" in bad.text
            with pytest.raises(InvalidParamsError, match="Unknown tool"):
                client.call_tool("no_such_tool", {})
        # XHDR-22..25: the Mcp-Param-Region header must mirror the argument
        message = call(1, "execute_sql", {"region": "us-west1", "query": "SELECT 1"})
        headers = {**mcp_headers(message), "Mcp-Param-Region": "eu-west1"}
        reply = httpx.post(mock.url, json=message, headers=headers)
        assert reply.status_code == 400
        assert reply.json()["error"]["code"] == -32020
        assert mock.calls == []  # refused before the handler


RESPONSES: dict[str, Any] = {
    "tools": {
        "get_weather_data": [
            {
                "match": {"location": "Berlin"},
                "structured": {"temperature": 21.5, "conditions": "sunny", "humidity": 40},
            },
            {"match": {"location": "Atlantis"}, "error": "No weather for Atlantis"},
            {
                "match": {"location": "Mordor"},
                "rpc_error": {"code": -32603, "message": "Upstream down", "data": {"retry": False}},
            },
            {
                "match": {"location": "ask"},
                "elicit": {
                    "message": "Celsius or Fahrenheit?",
                    "schema": {
                        "type": "object",
                        "properties": {"unit": {"type": "string", "enum": ["C", "F"]}},
                        "required": ["unit"],
                    },
                },
                "structured": {"temperature": 70, "conditions": "asked", "humidity": 1},
            },
        ],
        "get_weather": [
            {"match": {"location": "Paris"}, "text": ["Rain", "then sun"]},
            {
                "match": {"location": "img"},
                "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
            },
        ],
    },
}


def test_canned_answers_errors_and_json_rpc_errors() -> None:
    with (
        running_mock(spec=WEATHER_SPEC, responses=RESPONSES) as mock,
        Client(mock.url, tools=WEATHER) as client,
    ):
        berlin = client.call_tool("get_weather_data", {"location": "Berlin"})
        assert berlin.structured_content == {"temperature": 21.5, "conditions": "sunny", "humidity": 40}
        atlantis = client.call_tool("get_weather_data", {"location": "Atlantis"})
        assert atlantis.is_error and atlantis.text == "No weather for Atlantis"
        with pytest.raises(RemoteError) as info:
            client.call_tool("get_weather_data", {"location": "Mordor"})
        assert (info.value.code, info.value.message, info.value.data) == (
            -32603,
            "Upstream down",
            {"retry": False},
        )
        assert client.call_tool("get_weather", {"location": "Paris"}).text == "Rain\nthen sun"
        image = client.call_tool("get_weather", {"location": "img"})
        assert image.content[0].type == "image"
        other = client.call_tool("get_weather_data", {"location": "Lisbon"})  # no rule: generated
        assert OUTPUTS["get_weather_data"](other.structured_content) is None
        mock.assert_calls(
            [("get_weather_data", {"location": loc}) for loc in ("Berlin", "Atlantis", "Mordor")]
            + [
                ("get_weather", {"location": "Paris"}),
                ("get_weather", {"location": "img"}),
                ("get_weather_data", {"location": "Lisbon"}),
            ]
        )


def test_an_input_required_round_then_the_answer() -> None:
    asked: list[ElicitRequest] = []

    def on_elicit(request: ElicitRequest) -> ElicitResult:
        asked.append(request)
        return ElicitResult.accept({"unit": "F"})

    with running_mock(spec=WEATHER_SPEC, responses=RESPONSES) as mock:
        with Client(mock.url, tools=WEATHER, on_elicit=on_elicit) as client:
            result = client.call_tool("get_weather_data", {"location": "ask"})
        assert result.structured_content == {"temperature": 70, "conditions": "asked", "humidity": 1}
        assert [r.message for r in asked] == ["Celsius or Fahrenheit?"]
        assert len(mock.calls) == 1  # two requests, one call
        assert mock.calls[0].elicited == {"action": "accept", "content": {"unit": "F"}}

        with Client(mock.url, tools=WEATHER, on_elicit=lambda r: ElicitResult.decline()) as client:
            declined = client.call_tool("get_weather_data", {"location": "ask"})
        assert declined.is_error and "did not accept (decline)" in declined.text

        with Client(mock.url, tools=WEATHER) as client, pytest.raises(MissingClientCapabilityError):
            client.call_tool("get_weather_data", {"location": "ask"})  # BASE-35: no elicitation capability


def test_injected_failures_follow_the_seed_and_latency_is_added() -> None:
    responses = {
        "tools": {"get_weather": [{"failure_rate": 0.5}], "list_users": [{"latency_ms": [120, 160]}]}
    }

    def outcomes(seed: int) -> list[bool]:
        with (
            running_mock(spec=WEATHER_SPEC, responses=responses, seed=seed) as mock,
            Client(mock.url, tools=WEATHER) as client,
        ):
            return [client.call_tool("get_weather", {"location": "X"}).is_error for _ in range(12)]

    first = outcomes(1)
    assert first == outcomes(1)
    assert True in first and False in first
    assert first != outcomes(2)
    failing = {"tools": {"get_weather": [{"failure_rate": 1}]}}
    with (
        running_mock(spec=WEATHER_SPEC, responses=failing) as mock,
        Client(mock.url, tools=WEATHER) as client,
    ):
        result = client.call_tool("get_weather", {"location": "X"})
        assert result.is_error and "Injected failure (failure_rate 1)" in result.text
    with (
        running_mock(spec=WEATHER_SPEC, responses=responses) as mock,
        Client(mock.url, tools=WEATHER) as client,
    ):
        started = time.monotonic()
        client.call_tool("list_users", {})
        assert time.monotonic() - started >= 0.12


def test_a_schema_no_value_can_satisfy_is_a_clear_error_result() -> None:
    impossible = [
        {
            "name": "never",
            "inputSchema": {"type": "object"},
            "outputSchema": {
                "type": "object",
                "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 1}},
                "required": ["n"],
            },
        }
    ]
    with running_mock(tools=impossible) as mock, Client(mock.url, tools=impossible) as client:
        result = client.call_tool("never", {})
    assert result.is_error
    assert "cannot generate a value valid against the outputSchema of 'never'" in result.text
    assert result.structured_content is None


def test_bad_configuration_stops_the_mock_before_it_serves(tmp_path: Path) -> None:
    path = tmp_path / "responses.json"
    path.write_text(json.dumps({"tools": {"get_wether": []}}))
    with pytest.raises(ResponsesError, match=r"responses\.json: tools\.get_wether: the spec has no tool"):
        MockServer(WEATHER, responses=path)
    with pytest.raises(ValueError, match="give exactly one of"), running_mock():
        pass
