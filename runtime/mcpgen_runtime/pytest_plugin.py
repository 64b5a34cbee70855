"""pytest plugin (entry point `pytest11`): the `mcp_mock` fixture, a mock MCP server per test.

    @pytest.mark.mcp_mock(package="weather_client", seed=7, responses="tests/weather-responses.yaml")
    def test_forecast(mcp_mock):
        data = mcp_mock.client.get_weather_data(location="Berlin")     # the generated client, connected
        mcp_mock.assert_called("get_weather_data", location="Berlin")

The marker (or the `mcp_mock_factory` fixture, for several mocks or options chosen in the
test) takes what `mcpgen_runtime.mock.running_mock` takes: `spec=` (a spec file) or
`package=` (a generated package: its tools.json, and its `Client` for `mcp_mock.client`) or
`tools=`; `seed=`, `responses=` (a file or a mapping), `transport="http"|"stdio"`,
`in_process=` (HTTP in a thread of this process, the default, or a subprocess), and
`client_class=`; `cassette=` (a cassette `mcpgen mock --record` wrote: its recorded answers are
served, a request it lacks fails with an error naming it, `mcp_mock.misses` lists them) and
`faults=` (`{"latency": "100ms", "error_rate": 0.5, "drop_connection": 0.1, "slow_stream": "5ms"}`,
deterministic with `seed=`). The fixture yields a `mcpgen_runtime.testing.McpMock`; everything started
is stopped after the test.

pytest imports this module in every session of an environment with mcpgen installed, so it
imports the client and the mock (testing.py) only when a test asks for a fixture.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .testing import McpMock

__all__ = ["mcp_mock", "mcp_mock_factory"]

_MARKER = "mcp_mock"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{_MARKER}(spec=None, package=None, tools=None, cassette=None, seed=0, responses=None, "
        "transport='http', in_process=True, client_class=None, faults=None): how the mcp_mock "
        "fixture starts its mock MCP server",
    )


@pytest.fixture
def mcp_mock_factory() -> Iterator[Callable[..., McpMock]]:
    """`start(**options) -> McpMock`: start a mock (options as the `mcp_mock` marker takes);
    every mock started is stopped after the test."""
    from .testing import start_mock  # only tests that use a mock pay for importing it

    with contextlib.ExitStack() as stack:

        def start(**options: Any) -> McpMock:
            return start_mock(stack, **options)

        yield start


@pytest.fixture
def mcp_mock(request: pytest.FixtureRequest, mcp_mock_factory: Callable[..., McpMock]) -> McpMock:
    """A mock MCP server for this test, configured by `@pytest.mark.mcp_mock(...)` (see the module
    docstring)."""
    marker = request.node.get_closest_marker(_MARKER)
    if marker is None:
        raise pytest.UsageError(
            f"the mcp_mock fixture needs @pytest.mark.{_MARKER}(spec=... or package=...) on the test, "
            "or use mcp_mock_factory"
        )
    if marker.args:
        raise pytest.UsageError(f"@pytest.mark.{_MARKER} takes keyword arguments only")
    return mcp_mock_factory(**marker.kwargs)
