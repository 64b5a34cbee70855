"""Code that uses the generated `weather_client` tested against the `mcp_mock` fixture (the pytest
plugin mcpgen ships, entry point `pytest11`), the way a user's test suite would use it.

Every call crosses a real loopback socket (or a stdio pipe) into the runtime's `ToolServer`;
the generated client checks each structured answer against its outputSchema and parses it
into its models (TOOLS-20), so a wrong answer fails here. Also the generated conformance
client, whose tools mirror arguments into `Mcp-Param-*` headers the mock checks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from mcpgen_runtime.errors import RemoteError, ToolError
from mcpgen_runtime.testing import McpMock
from tests.interop._support import AsyncClient, Client, models

pytestmark = pytest.mark.timeout(90)

RESPONSES: dict[str, Any] = {
    "tools": {
        "get_weather_data": [
            {
                "match": {"location": "Berlin"},
                "structured": {"temperature": 21.5, "conditions": "sunny", "humidity": 40},
            },
            {"match": {"location": "Atlantis"}, "error": "No weather for Atlantis"},
            {"match": {"location": "Mordor"}, "rpc_error": {"code": -32603, "message": "Upstream down"}},
        ],
        "get_weather": [{"text": "Sunny all day"}],
    }
}


def forecast_line(client: Client, city: str) -> str:
    """The code under test: what a user of the generated client might write."""
    data = client.get_weather_data(location=city)
    return f"{city}: {data.temperature:.1f} °C, {data.conditions}, humidity {data.humidity:.0f} %"


@pytest.mark.mcp_mock(package="weather_client", seed=7)
def test_the_generated_client_gets_typed_schema_valid_answers(mcp_mock: McpMock) -> None:
    client = mcp_mock.client
    assert isinstance(client, Client)
    data = client.get_weather_data(location="Berlin")
    assert isinstance(data, models.GetWeatherDataOutput)
    users = client.list_users()
    assert all(isinstance(user, models.ListUsersOutputItem) for user in users)
    assert "get_weather called with" in client.get_weather(location="Oslo").text
    client.execute_sql(region="Zürich", query="SELECT 1")  # Mcp-Param-Region as Base64, checked by the mock
    mcp_mock.assert_calls(
        [
            ("get_weather_data", {"location": "Berlin"}),
            ("list_users", {}),
            ("get_weather", {"location": "Oslo"}),
            ("execute_sql", {"region": "Zürich", "query": "SELECT 1"}),
        ]
    )


@pytest.mark.mcp_mock(package="weather_client", responses=RESPONSES)
def test_code_under_test_with_canned_answers_and_failures(mcp_mock: McpMock) -> None:
    assert forecast_line(mcp_mock.client, "Berlin") == "Berlin: 21.5 °C, sunny, humidity 40 %"
    with pytest.raises(ToolError, match="No weather for Atlantis"):
        forecast_line(mcp_mock.client, "Atlantis")
    with pytest.raises(RemoteError, match="Upstream down"):
        forecast_line(mcp_mock.client, "Mordor")
    assert mcp_mock.client.get_weather(location="x").text == "Sunny all day"
    mcp_mock.assert_called("get_weather_data", location="Atlantis")
    assert [c["location"] for c in mcp_mock.calls_to("get_weather_data")] == ["Berlin", "Atlantis", "Mordor"]


@pytest.mark.mcp_mock(package="weather_client", transport="stdio", seed=7)
def test_over_stdio(mcp_mock: McpMock) -> None:
    assert mcp_mock.url is None and mcp_mock.command is not None
    data = mcp_mock.client.get_weather_data(location="Berlin")
    assert isinstance(data, models.GetWeatherDataOutput)
    mcp_mock.assert_calls([("get_weather_data", {"location": "Berlin"})])


def test_the_same_seed_gives_the_same_typed_answers(mcp_mock_factory: Callable[..., McpMock]) -> None:
    first = mcp_mock_factory(package="weather_client", seed=3)
    second = mcp_mock_factory(package="weather_client", seed=3, in_process=False)
    other = mcp_mock_factory(package="weather_client", seed=4)
    answers = [m.client.get_weather_data(location="Lagos") for m in (first, second, other)]
    assert answers[0] == answers[1] != answers[2]


def test_the_async_client(mcp_mock_factory: Callable[..., McpMock]) -> None:
    mock = mcp_mock_factory(package="weather_client", responses=RESPONSES)

    async def use() -> models.GetWeatherDataOutput:
        client = mock.new_async_client()
        assert isinstance(client, AsyncClient)
        async with client:
            return await client.get_weather_data(location="Berlin")

    assert asyncio.run(use()).temperature == 21.5


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_the_conformance_client_and_its_header_mirrors(
    transport: str, mcp_mock_factory: Callable[..., McpMock]
) -> None:
    mock = mcp_mock_factory(package="conformance_client", seed=1, transport=transport)
    client = mock.client
    assert type(client).__module__ == "conformance_client.client"
    result = client.test_custom_headers(
        region="us-west1",
        priority=5,
        verbose=True,
        debug=False,
        query="q",
        non_ascii_val="Zürich",
        leading_space_val=" lead",
    )
    assert result.is_error is False, result.text
    assert client.add_numbers(a=1, b=2).is_error is False
    client.my_hyphenated_tool()
    mock.assert_calls(
        [
            (
                "test_custom_headers",
                {
                    "region": "us-west1",
                    "priority": 5,
                    "verbose": True,
                    "debug": False,
                    "query": "q",
                    "non_ascii_val": "Zürich",
                    "leading_space_val": " lead",
                },
            ),
            ("add_numbers", {"a": 1, "b": 2}),
            ("my-hyphenated-tool", {}),
        ]
    )
