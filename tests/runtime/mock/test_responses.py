"""The `--responses` file (mock/responses.py): what is accepted, and errors that name the entry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpgen_runtime.mock.responses import ResponsesError, load_responses, parse_responses
from mcpgen_runtime.tools import ToolSpec, tool_table
from tests.support import ROOT

WEATHER: dict[str, ToolSpec] = tool_table(json.loads((ROOT / "specs" / "weather.json").read_text())["tools"])

GOOD_YAML = """\
defaults:
  latency_ms: [1, 5]
  failure_rate: 0.1
tools:
  get_weather_data:
    - match: {location: Berlin}
      structured: {temperature: 21.5, conditions: sunny, humidity: 40}
    - match: {location: Atlantis}
      error: No weather for Atlantis
    - match: {location: Mordor}
      rpc_error: {code: -32603, message: Upstream down, data: {retry: false}}
    - match: {location: ask}
      elicit:
        message: Celsius or Fahrenheit?
        schema: {type: object, properties: {unit: {type: string, enum: [C, F]}}, required: [unit]}
    - latency_ms: 0
      failure_rate: 1
  get_weather:
    text: Sunny
"""


def test_a_full_yaml_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "responses.yaml"
    path.write_text(GOOD_YAML)
    responses = load_responses(path, WEATHER)
    assert responses.defaults.latency_ms == (1.0, 5.0)
    rules = responses.rules["get_weather_data"]
    assert [r.where for r in rules] == [f"tools.get_weather_data[{i}]" for i in range(5)]
    assert responses.rule_for("get_weather_data", {"location": "Berlin"}) is rules[0]
    assert responses.rule_for("get_weather_data", {"location": "Paris"}) is rules[4]
    assert responses.faults_for(rules[4]).failure_rate == 1.0
    assert responses.faults_for(rules[0]).failure_rate == 0.1  # the defaults fill what a rule leaves out
    assert responses.rule_for("get_weather", {"location": "x"}) is not None
    assert rules[2].answer.rpc_error == (-32603, "Upstream down", {"retry": False})


def test_json_files_load_too(tmp_path: Path) -> None:
    path = tmp_path / "responses.json"
    path.write_text(json.dumps({"tools": {"get_weather": [{"text": ["a", "b"]}]}}))
    assert load_responses(path, WEATHER).rules["get_weather"][0].answer.text == ("a", "b")


def test_match_is_a_subset_of_the_arguments_with_json_equality() -> None:
    tools = tool_table([{"name": "t", "inputSchema": {"type": "object"}}])
    responses = parse_responses(
        {
            "tools": {
                "t": [
                    {"match": {"filter": {"kind": "open"}, "limit": 1}, "text": "nested"},
                    {"match": {"flag": True}, "text": "bool"},
                ]
            }
        },
        tools,
    )
    assert responses.rule_for("t", {"filter": {"kind": "open", "page": 2}, "limit": 1.0, "x": 0}) is not None
    assert responses.rule_for("t", {"filter": {"kind": "closed"}, "limit": 1}) is None
    assert responses.rule_for("t", {"flag": 1}) is None  # 1 is not true in JSON
    assert responses.rule_for("t", {"flag": True}) is not None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"tool": {}}, r"top level: unknown key\(s\) 'tool'"),
        ({"tools": {"get_wether": []}}, r"tools\.get_wether: the spec has no tool 'get_wether'"),
        ({"tools": {"get_weather": [{"txt": "x"}]}}, r"tools\.get_weather\[0\]: unknown key\(s\) 'txt'"),
        (
            {"tools": {"get_weather_data": [{"structured": {"temperature": "warm"}}]}},
            r"tools\.get_weather_data\[0\]\.structured: "
            r"does not match the outputSchema of 'get_weather_data'",
        ),
        (
            {"tools": {"get_weather_data": [{"text": "sunny"}]}},
            r"tools\.get_weather_data\[0\]\.text: tool 'get_weather_data' has an outputSchema",
        ),
        (
            {"tools": {"get_weather": [{"text": "a", "error": "b"}]}},
            r"tools\.get_weather\[0\]: give at most one of",
        ),
        ({"tools": {"get_weather": [{"latency_ms": -1}]}}, r"tools\.get_weather\[0\]\.latency_ms"),
        ({"tools": {"get_weather": [{"latency_ms": [5, 1]}]}}, r"tools\.get_weather\[0\]\.latency_ms"),
        ({"defaults": {"failure_rate": 2}}, r"defaults\.failure_rate: expected a number from 0 to 1"),
        (
            {"tools": {"get_weather": [{"rpc_error": {"code": "x", "message": "m"}}]}},
            r"rpc_error: code must be an integer",
        ),
        ({"tools": {"get_weather": [{"error": ""}]}}, r"tools\.get_weather\[0\]\.error"),
        (
            {
                "tools": {
                    "get_weather": [
                        {
                            "elicit": {
                                "message": "m",
                                "schema": {
                                    "type": "object",
                                    "properties": {"nested": {"type": "object", "properties": {}}},
                                },
                            }
                        }
                    ]
                }
            },
            r"tools\.get_weather\[0\]\.elicit\.schema: .*primitive",
        ),
        (
            {"tools": {"get_current_time": [{"match": {"zone": "UTC"}, "text": "now"}]}},
            r"tools\.get_current_time\[0\]\.match: tool 'get_current_time' has no argument\(s\) zone",
        ),
        (
            {"tools": {"get_weather": [{"content": [{"type": "text"}]}]}},
            r"tools\.get_weather\[0\]\.content: not valid",
        ),
    ],
)
def test_bad_entries_are_named(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ResponsesError, match=message):
        parse_responses(data, WEATHER, source="r.yaml")


def test_yaml_dates_and_broken_files_are_refused(tmp_path: Path) -> None:
    dated = tmp_path / "dated.yaml"
    dated.write_text("tools:\n  get_weather:\n    - match: {location: 2024-01-01}\n      text: x\n")
    # A YAML date would never equal a JSON string argument; the file says so instead of never matching.
    with pytest.raises(ResponsesError, match=r"dated\.yaml: tools\.get_weather\[0\]\.match.*date"):
        load_responses(dated, WEATHER)
    broken = tmp_path / "broken.yaml"
    broken.write_text("tools: [unclosed\n")
    with pytest.raises(ResponsesError, match=r"broken\.yaml: not valid YAML"):
        load_responses(broken, WEATHER)
    with pytest.raises(ResponsesError, match="cannot read"):
        load_responses(tmp_path / "missing.json", WEATHER)


def test_the_documented_example_loads() -> None:
    page = (ROOT / "docs" / "how-to" / "mock.md").read_text()
    start = page.index("```yaml\ndefaults:") + len("```yaml\n")
    example = page[start : page.index("\n```", start)]
    import yaml

    responses = parse_responses(yaml.safe_load(example), WEATHER, source="docs/how-to/mock.md")
    assert [r.where for r in responses.rules["get_weather_data"]] == [
        f"tools.get_weather_data[{i}]" for i in range(5)
    ]
    task = responses.rules["get_weather_data"][4].task
    assert task is not None and (task.after_ms, task.poll_interval_ms) == ((2000.0, 2000.0), 250)
    assert responses.defaults.failure_rate == 0.05
