"""The official SDK client (mcp==2.3.0, tests/peers/sdk_client.py) drives `mcpgen mock` over
Streamable HTTP and stdio: every answer validates against its tool's outputSchema (checked here
with our validator; the SDK checks structured output itself too), the same seed gives the same
answers in separate processes, and responses files work — canned answers, isError, JSON-RPC
errors and an elicitation round the SDK answers.

Also every tool of the real GitHub list (117, via ../shared) and of specs/shapes.json.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpgen_runtime.mock.canonical import derive_seed
from mcpgen_runtime.mock.values import ValueMaker
from mcpgen_runtime.schema import compile_schema
from tests.support import ROOT, free_port, needs_shared, running_server, subprocess_env

pytestmark = pytest.mark.timeout(240)

SDK_CLIENT = str(ROOT / "tests" / "peers" / "sdk_client.py")
MCPGEN = str(Path(sys.executable).parent / "mcpgen")
WEATHER_SPEC = ROOT / "specs" / "weather.json"
SHAPES_SPEC = ROOT / "specs" / "shapes.json"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_weather", {"location": "Berlin"}),
    ("get_weather_data", {"location": "Berlin"}),
    ("list_users", {}),
    ("execute_sql", {"region": "Zürich", "query": "SELECT 1"}),  # the SDK mirrors Region as Base64
    ("calculate_sum", {"a": 2, "b": 40.5}),
    ("get_current_time", {}),
]


def sdk(target: list[str], calls: list[tuple[str, dict[str, Any]]], *extra: str) -> dict[str, Any]:
    args = [sys.executable, SDK_CLIENT, "--timeout", "60", *extra]
    for name, arguments in calls:
        args += ["--call", name, json.dumps(arguments)]
    done = subprocess.run(
        [*args, *target], cwd=ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=200
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report: dict[str, Any] = json.loads(done.stdout)
    assert [c["name"] for c in report["calls"]] == [name for name, _ in calls]
    return report


@pytest.fixture
def mock_http() -> Iterator[Any]:
    """`mcpgen mock SPEC --http --port N ...` as a real process; call it with the spec and options."""
    with contextlib.ExitStack() as stack:

        def start(spec: Path, *options: str) -> list[str]:
            port = free_port()
            stack.enter_context(
                # subprocess_env: this checkout's runtime, not one an installed `mcpgen` script would find
                running_server(
                    [MCPGEN, "mock", str(spec), "--port", str(port), *options], port, env=subprocess_env()
                )
            )
            return [f"http://127.0.0.1:{port}/mcp"]

        yield start


def stdio(spec: Path, *options: str) -> list[str]:
    return ["--", MCPGEN, "mock", str(spec), "--stdio", *options]


def assert_valid_against_output_schemas(tools: list[dict[str, Any]], report: dict[str, Any]) -> None:
    by_name = {tool["name"]: tool for tool in tools}
    for call in report["calls"]:
        assert "error" not in call, call
        assert call["isError"] is False, call
        schema = by_name[call["name"]].get("outputSchema")
        if schema is None:
            assert call["structuredContent"] is None
            assert call["content"][0]["type"] == "text"
            continue
        issue = compile_schema(schema)(call["structuredContent"])
        assert issue is None, (call["name"], issue)
        assert json.loads(call["content"][0]["text"]) == call["structuredContent"]  # TOOLS-18


def test_the_sdk_gets_valid_answers_and_the_same_ones_for_the_same_seed(mock_http: Any) -> None:
    tools = json.loads(WEATHER_SPEC.read_text())["tools"]
    over_http = sdk(mock_http(WEATHER_SPEC, "--seed", "5"), CALLS)
    assert over_http["serverInfo"]["name"] == "mcpgen-mock"
    assert over_http["tools"] == [tool["name"] for tool in tools]
    assert_valid_against_output_schemas(tools, over_http)
    over_stdio = sdk(stdio(WEATHER_SPEC, "--seed", "5"), CALLS)
    again = sdk(mock_http(WEATHER_SPEC, "--seed", "5"), CALLS)
    assert over_http["calls"] == over_stdio["calls"] == again["calls"]  # other seeds: tests/runtime/mock/


RESPONSES = """\
tools:
  get_weather_data:
    - match: {location: Berlin}
      structured: {temperature: 21.5, conditions: sunny, humidity: 40}
    - match: {location: Atlantis}
      error: No weather for Atlantis
    - match: {location: Mordor}
      rpc_error: {code: -32603, message: Upstream down}
    - match: {location: ask}
      elicit:
        message: Celsius or Fahrenheit?
        schema: {type: object, properties: {unit: {type: string, enum: [C, F]}}, required: [unit]}
      structured: {temperature: 70, conditions: asked, humidity: 1}
"""


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_responses_file_over_the_sdk(transport: str, tmp_path: Path, mock_http: Any) -> None:
    responses = tmp_path / "responses.yaml"
    responses.write_text(RESPONSES)
    options = ("--responses", str(responses))
    target = mock_http(WEATHER_SPEC, *options) if transport == "http" else stdio(WEATHER_SPEC, *options)
    calls = [("get_weather_data", {"location": loc}) for loc in ("Berlin", "Atlantis", "Mordor", "ask")]
    report = sdk(target, calls, "--elicit-accept", '{"unit": "C"}')
    berlin, atlantis, mordor, asked = report["calls"]
    assert berlin["structuredContent"] == {"temperature": 21.5, "conditions": "sunny", "humidity": 40}
    assert atlantis["isError"] is True and atlantis["content"] == [
        {"type": "text", "text": "No weather for Atlantis"}
    ]
    assert mordor["error"] == {"code": -32603, "message": "Upstream down"}
    assert asked["structuredContent"] == {"temperature": 70, "conditions": "asked", "humidity": 1}
    assert report["elicitations"] == [
        {
            "message": "Celsius or Fahrenheit?",
            "requestedSchema": {
                "type": "object",
                "properties": {"unit": {"type": "string", "enum": ["C", "F"]}},
                "required": ["unit"],
            },
        }
    ]


def test_every_shapes_tool_answers_validly(mock_http: Any) -> None:
    tools = json.loads(SHAPES_SPEC.read_text())["tools"]
    calls = [
        (tool["name"], ValueMaker(tool["inputSchema"]).make(derive_seed("args", tool["name"])))
        for tool in tools
    ]
    report = sdk(mock_http(SHAPES_SPEC, "--seed", "1"), calls)
    assert_valid_against_output_schemas(tools, report)


def test_all_github_tools_with_their_input_schemas_as_output_schemas(tmp_path: Path, mock_http: Any) -> None:
    """The 117 real GitHub tools have no outputSchema; each gets its (real, $ref- and enum-heavy)
    inputSchema as one, and is called with arguments generated from that same schema."""
    github = json.loads(needs_shared("realworld", "github-tools.json").read_text())["tools"]
    tools = [{**tool, "outputSchema": tool["inputSchema"]} for tool in github]
    spec = tmp_path / "github-with-outputs.json"
    spec.write_text(json.dumps({"tools": tools}))
    calls = [
        (tool["name"], ValueMaker(tool["inputSchema"]).make(derive_seed("args", tool["name"])))
        for tool in tools
    ]
    report = sdk(mock_http(spec, "--seed", "2"), calls)
    assert len(report["calls"]) == len(github) == 117
    assert_valid_against_output_schemas(tools, report)
    plain = sdk(mock_http(needs_shared("realworld", "github-tools.json")), calls[:5])
    assert_valid_against_output_schemas(github, plain)  # without outputSchema: text answers


def test_a_live_servers_tools_mocked_over_stdio(our_http_url: str) -> None:
    """SPEC may be a URL: the mock serves what the running generated weather server lists."""
    tools = json.loads(WEATHER_SPEC.read_text())["tools"]
    report = sdk(["--", MCPGEN, "mock", our_http_url, "--stdio", "--seed", "5"], CALLS)
    assert report["tools"] == [tool["name"] for tool in tools]
    assert report["serverInfo"]["name"] == "mcpgen-mock"
    assert_valid_against_output_schemas(tools, report)
