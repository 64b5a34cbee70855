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

pytest imports this module in every session of an environment with mcpgen-runtime installed, so
it imports nothing but the standard library and pytest: the client and the mock (testing.py) load
only when a test asks for a fixture (tests/runtime/mock/test_pytest_plugin.py holds it to that). The
mock needs the `mcpgen-runtime[mock]` extra; without it a test that asks for one fails with one line
saying what to install, not an import traceback.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

if TYPE_CHECKING:
    from .testing import McpMock

__all__ = ["mcp_mock", "mcp_mock_factory"]

_MARKER = "mcp_mock"
_INSTALL = "pip install 'mcpgen-runtime[mock]'"
# The top-level modules of the mock extra's requirements (uvicorn and click come with its [server]).
_MOCK_EXTRA_MODULES = frozenset({"uvicorn", "click", "hypothesis", "hypothesis_jsonschema", "yaml"})


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
    with _mock_extra_required():
        from .mock import MockDependencyError
        from .testing import start_mock  # only tests that use a mock pay for importing it

    with contextlib.ExitStack() as stack:

        def start(**options: Any) -> McpMock:
            with _mock_extra_required():
                try:
                    return start_mock(stack, **options)
                except MockDependencyError as exc:  # hypothesis, checked as a mock that draws values starts
                    missing = getattr(exc.__cause__, "name", None)
                    _fail(_missing_extra(missing) if missing else f"the mcp_mock fixture: {exc}")

        yield start


@contextlib.contextmanager
def _mock_extra_required() -> Iterator[None]:
    """A module of the mock extra missing: the test fails with one line naming the extra."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in _MOCK_EXTRA_MODULES:
            raise
        _fail(_missing_extra(exc.name))


def _missing_extra(module: str | None) -> str:
    return f"the mcp_mock fixture needs the mock extra ({module} is not installed): {_INSTALL}"


def _fail(message: str) -> NoReturn:
    """Fail the test with `message` alone: no traceback, no chained import error."""
    raise pytest.fail.Exception(message, pytrace=False) from None


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
