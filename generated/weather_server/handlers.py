# Created by mcpgen 0.1.0 from specs/weather.json (sha256 9b9eced6780b728cb2759408addb98811ab51bf8046f215454eadf8d43826caf).
# This file is yours: mcpgen writes it once and never overwrites it. Regenerating updates base.py only.
"""Tool handlers: override each method, then serve with
`python -m weather_server --http --port 8000` or `python -m weather_server --stdio`.

Return the output model (or its root value) for tools with an outputSchema; otherwise a str,
a content block, a list of blocks or a ToolResult. Raise ToolExecutionError for a tool error.
"""

from datetime import UTC, datetime

from mcpgen_runtime.server import ToolContext, ToolExecutionError, ToolReturn

from . import models as _m
from .base import ServerBase

# Demo data: a real deployment would call a weather API and a database here.
_CONDITIONS = ("sunny", "partly cloudy", "overcast", "light rain", "snow")
_USERS = (
    _m.ListUsersOutputItem(id="1", name="Alice", email="alice@example.com"),
    _m.ListUsersOutputItem(id="2", name="Bob", email="bob@example.com"),
)


def _reading(location: str) -> _m.GetWeatherDataOutput:
    """A stable made-up reading per location, so demos and tests can assert on it."""
    seed = sum(location.encode("utf-8"))
    return _m.GetWeatherDataOutput(
        temperature=round(-5 + (seed % 350) / 10, 1),
        conditions=_CONDITIONS[seed % len(_CONDITIONS)],
        humidity=float(30 + seed % 60),
    )


class Server(ServerBase):
    """Your tool implementations. Methods you do not override answer "not implemented"."""

    async def get_weather(self, args: _m.GetWeatherInput, ctx: ToolContext) -> ToolReturn:
        """Get current weather information for a location"""
        reading = _reading(args.location)
        return (
            f"Current weather in {args.location}:\n"
            f"Temperature: {reading.temperature}°C\nConditions: {reading.conditions}"
        )

    async def get_weather_data(
        self, args: _m.GetWeatherDataInput, ctx: ToolContext
    ) -> _m.GetWeatherDataOutput:
        """Get current weather data for a location"""
        return _reading(args.location)

    async def list_users(self, args: _m.ListUsersInput, ctx: ToolContext) -> list[_m.ListUsersOutputItem]:
        """Returns a list of all users"""
        return list(_USERS)

    async def execute_sql(self, args: _m.ExecuteSqlInput, ctx: ToolContext) -> ToolReturn:
        """Execute SQL on Google Cloud Spanner"""
        if not args.query.strip().upper().startswith("SELECT"):
            raise ToolExecutionError("only SELECT statements are allowed in this demo")
        return f"Executed in {args.region}: {args.query} (0 rows)"

    async def calculate_sum(self, args: _m.CalculateSumInput, ctx: ToolContext) -> ToolReturn:
        """Add two numbers"""
        return str(args.a + args.b)

    async def get_current_time(self, args: _m.GetCurrentTimeInput, ctx: ToolContext) -> ToolReturn:
        """Returns the current server time"""
        return datetime.now(UTC).isoformat(timespec="seconds")
