"""A hand-written server for specs/weather.json, shaped like what `mcpgen server` generates.

`WeatherServerBase` is what `base.py` would hold (models, definitions, bindings, stubs that
raise NotImplementedError); `WeatherServer` is the user's `handlers.py`. Besides the
weather data, a few inputs trigger behaviours the tests need:

    get_weather  location "Atlantis"  -> ToolExecutionError (isError with its message)
                 location "Crash"     -> RuntimeError (isError, short message)
                 location "Slow"      -> progress 0/50/100 of 100, then the answer
    get_weather_data location "Mars"  -> output that breaks outputSchema (TOOLS-19)
    execute_sql  query "SLEEP <s>"    -> progress, then sleeps; records a cancellation
                 query "CANCELLED"    -> how many SLEEPs were cancelled so far
                 query "NEEDS SAMPLING" -> -32021 unless the client declared `sampling`
    calculate_sum                     -> also print()s, which must not reach stdout on stdio

Run: python -m tests.runtime.weather_server_app --http --port 8000 | --stdio
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, RootModel

from mcpgen_runtime.server import (
    ServerConfig,
    ToolBinding,
    ToolContext,
    ToolExecutionError,
    ToolServer,
    serve_main,
)

SPEC = Path(__file__).resolve().parents[2] / "specs" / "weather.json"


# ---- models (datamodel-code-generator style) ------------------------------------------


class GetWeatherInput(BaseModel):
    location: str = Field(..., description="City name or zip code")


class GetWeatherDataInput(BaseModel):
    location: str = Field(..., description="City name or zip code")


class GetWeatherDataOutput(BaseModel):
    temperature: float = Field(..., description="Temperature in celsius")
    conditions: str = Field(..., description="Weather conditions description")
    humidity: float = Field(..., description="Humidity percentage")


class ListUsersInput(BaseModel):
    pass


class ListUsersOutputItem(BaseModel):
    id: str
    name: str
    email: str


class ListUsersOutput(RootModel[list[ListUsersOutputItem]]):
    root: list[ListUsersOutputItem]


class ExecuteSqlInput(BaseModel):
    region: str = Field(..., description="The region to execute the query in")
    query: str = Field(..., description="The SQL query to execute")


class CalculateSumInput(BaseModel):
    a: float
    b: float


class GetCurrentTimeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---- generated base --------------------------------------------------------------------


class WeatherServerBase(ToolServer):
    _tool_definitions_: ClassVar[list[dict[str, Any]]] = json.loads(SPEC.read_text())["tools"]
    _tool_bindings_: ClassVar[tuple[ToolBinding, ...]] = (
        ToolBinding("get_weather", "get_weather", GetWeatherInput, None),
        ToolBinding("get_weather_data", "get_weather_data", GetWeatherDataInput, GetWeatherDataOutput),
        ToolBinding("list_users", "list_users", ListUsersInput, ListUsersOutput, output_is_root=True),
        ToolBinding("execute_sql", "execute_sql", ExecuteSqlInput, None),
        ToolBinding("calculate_sum", "calculate_sum", CalculateSumInput, None),
        ToolBinding("get_current_time", "get_current_time", GetCurrentTimeInput, None),
    )
    _server_config_: ClassVar[ServerConfig | None] = ServerConfig(
        name="weather-test", version="1.2.3", instructions="Weather tools for tests."
    )

    async def get_weather(self, args: GetWeatherInput, ctx: ToolContext) -> Any:
        raise NotImplementedError

    async def get_weather_data(self, args: GetWeatherDataInput, ctx: ToolContext) -> GetWeatherDataOutput:
        raise NotImplementedError

    async def list_users(self, args: ListUsersInput, ctx: ToolContext) -> list[ListUsersOutputItem]:
        raise NotImplementedError

    async def execute_sql(self, args: ExecuteSqlInput, ctx: ToolContext) -> Any:
        raise NotImplementedError

    async def calculate_sum(self, args: CalculateSumInput, ctx: ToolContext) -> Any:
        raise NotImplementedError

    async def get_current_time(self, args: GetCurrentTimeInput, ctx: ToolContext) -> Any:
        raise NotImplementedError


# ---- user handlers ---------------------------------------------------------------------

WEATHER = {
    "Paris": (22.5, "Partly cloudy", 65.0),
    "Zürich": (18.0, "Sunny", 40.0),
    "Seattle, WA": (12.0, "Rain", 90.0),
}
USERS = [
    ListUsersOutputItem(id="1", name="Alice", email="alice@example.com"),
    ListUsersOutputItem(id="2", name="Bob", email="bob@example.com"),
]


class WeatherServer(WeatherServerBase):
    def __init__(self, config: ServerConfig | None = None) -> None:
        super().__init__(config)
        self.cancelled_sleeps = 0

    async def get_weather(self, args: GetWeatherInput, ctx: ToolContext) -> str:
        if args.location == "Atlantis":
            raise ToolExecutionError("Unknown location 'Atlantis'; try a real city such as 'Paris'.")
        if args.location == "Crash":
            raise RuntimeError("secret internal detail")
        if args.location == "Slow":
            for step in (0, 50, 100):
                await ctx.report_progress(step, 100, f"step {step}")
                await asyncio.sleep(0.01)
            return "Weather in Slow: foggy"
        temperature, conditions, _ = WEATHER.get(args.location, (20.0, "Clear", 50.0))
        return f"Weather in {args.location}: {conditions.lower()}, {temperature:g}C"

    async def get_weather_data(self, args: GetWeatherDataInput, ctx: ToolContext) -> GetWeatherDataOutput:
        if args.location == "Mars":
            # Bypasses pydantic, so only the outputSchema check can catch it.
            return GetWeatherDataOutput.model_construct(
                temperature="very cold", conditions="dusty", humidity=0
            )
        temperature, conditions, humidity = WEATHER.get(args.location, (20.0, "Clear", 50.0))
        return GetWeatherDataOutput(temperature=temperature, conditions=conditions, humidity=humidity)

    async def list_users(self, args: ListUsersInput, ctx: ToolContext) -> list[ListUsersOutputItem]:
        return USERS

    async def execute_sql(self, args: ExecuteSqlInput, ctx: ToolContext) -> str:
        query = args.query.strip()
        if query.startswith("SLEEP"):
            seconds = float(query.split()[1])
            try:
                await ctx.report_progress(1, None, "sleeping")
                await asyncio.sleep(seconds)
            except asyncio.CancelledError:
                self.cancelled_sleeps += 1
                raise
            return f"slept {seconds:g}s in {args.region}"
        if query == "CANCELLED":
            return str(self.cancelled_sleeps)
        if query == "NEEDS SAMPLING":
            ctx.require_capability("sampling")
            return "sampling available"
        return f"{args.region}: {query} -> 0 rows"

    async def calculate_sum(self, args: CalculateSumInput, ctx: ToolContext) -> str:
        print("debug: adding", args.a, args.b)  # a stray print must not reach the stdio stream (STDIO-03)
        return f"{args.a + args.b:g}"

    # get_current_time is left unimplemented: the base stub raises NotImplementedError.


if __name__ == "__main__":
    serve_main(WeatherServer)
