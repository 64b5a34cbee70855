"""Interop peer: the tools of specs/weather.json served by the official MCP Python SDK (mcp==2.3.0).

    python tests/peers/sdk_server.py --http --port 8765 [--page-size 4]   # Streamable HTTP at /mcp
    python tests/peers/sdk_server.py --stdio [--page-size 4]

Tools are implemented with `MCPServer` (the SDK validates arguments and builds results);
`tools/list` serves the definitions of weather.json verbatim (exact schemas, including the
`x-mcp-header` on `execute_sql.region`, the draft-07 `$schema` and the array outputSchema),
plus a few test-only tools, in pages of `--page-size`. The cursor of the second page is the
empty string on purpose: it is a valid cursor (PAGE-07), not the end of the listing.
On HTTP the SDK checks `Mcp-Param-*` against that same inputSchema and answers a missing or
wrong header with -32020.
`execute_sql` answers anything but a SELECT with an isError result, like the demo handler.

Callable but not listed (so the listing other tests pin stays as it is), for the client's
multi-round-trip, progress and subscription tests (`UNLISTED_TOOLS`):
`confirm_delete(path)` asks to confirm (elicitation; requestState `delete:<path>`, sealed by
the SDK), `ask_everything()` asks for a name, a sampled answer and the roots in one round,
`ask_twice()` asks for a name, then a colour (two rounds, different states), `always_ask()`
never stops asking, `change_tools()` tells `subscriptions/listen` streams that the tool list
changed.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

SPEC = Path(__file__).resolve().parents[2] / "specs" / "weather.json"
LIST_USERS = [
    {"id": "u1", "name": "Ada Lovelace", "email": "ada@example.com"},
    {"id": "u2", "name": "Alan Turing", "email": "alan@example.com"},
]

# Test-only tools appended after the weather.json ones.
EXTRA_TOOLS: list[dict[str, Any]] = [
    {
        "name": "report_error",
        "description": "Always fails with the given message (isError: true)",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
    },
    {
        "name": "slow_echo",
        "description": "Echo text after sleeping the given number of seconds",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "seconds": {"type": "number"}},
            "required": ["text", "seconds"],
        },
    },
    {
        "name": "count_progress",
        "description": "Report `steps` progress notifications, then return 'counted N'",
        "inputSchema": {
            "type": "object",
            "properties": {"steps": {"type": "integer"}},
            "required": ["steps"],
        },
    },
]


UNLISTED_TOOLS = ("confirm_delete", "ask_everything", "ask_twice", "always_ask", "change_tools")

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _elicit(message: str, schema: dict[str, Any]) -> types.ElicitRequest:
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))


def _answer(ctx: Context, key: str) -> dict[str, Any] | None:
    """The retry's answer to input request `key`, as a plain dict."""
    answer = (ctx.input_responses or {}).get(key)
    if answer is None:
        return None
    return (
        answer
        if isinstance(answer, dict)
        else answer.model_dump(by_alias=True, exclude_none=True, mode="json")
    )


def tool_definitions() -> list[dict[str, Any]]:
    return [*json.loads(SPEC.read_text())["tools"], *EXTRA_TOOLS]


class WeatherData(BaseModel):
    temperature: float
    conditions: str
    humidity: float


def build_server(page_size: int) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(
        "mcpgen-sdk-peer",
        version="1.0.0",
        instructions="mcpgen interop peer (weather.json tools)",
        cache_hints={"tools/list": CacheHint(ttl_ms=60000, scope="public")},
        log_level="WARNING",
    )

    @server.tool(structured_output=False)
    def get_weather(location: str) -> str:
        return f"Weather in {location}: sunny, 22C"

    @server.tool()
    def get_weather_data(location: str) -> WeatherData:
        return WeatherData(temperature=21.5, conditions=f"Sunny in {location}", humidity=40.0)

    @server.tool()
    def list_users() -> types.CallToolResult:
        # An array as structuredContent (allowed on 2026-07-28); the SDK would otherwise wrap it in
        # {"result": ...}.
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(LIST_USERS))],
            structured_content=LIST_USERS,
        )

    @server.tool(structured_output=False)
    def execute_sql(region: str, query: str) -> str:
        if not query.strip().upper().startswith("SELECT"):  # like the demo handler: a forced isError
            raise ToolError("only SELECT statements are allowed")
        return f"Executed {query!r} in region {region}: 2 rows"

    @server.tool(structured_output=False)
    def calculate_sum(a: float, b: float) -> str:
        return f"{a + b:g}"

    @server.tool(structured_output=False)
    def get_current_time() -> str:
        return datetime.now(UTC).isoformat()

    @server.tool(structured_output=False)
    def report_error(message: str) -> str:
        raise ToolError(message)

    @server.tool(structured_output=False)
    async def slow_echo(text: str, seconds: float) -> str:
        await asyncio.sleep(seconds)
        return text

    @server.tool(structured_output=False)
    async def count_progress(steps: int, ctx: Context) -> str:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return f"counted {steps}"

    @server.tool(structured_output=False)
    async def confirm_delete(path: str, ctx: Context) -> str | types.InputRequiredResult:
        answer = _answer(ctx, "confirm")
        if answer is None:
            schema = {
                "type": "object",
                "properties": {"confirm": {"type": "boolean", "title": "Confirm deletion"}},
                "required": ["confirm"],
            }
            return types.InputRequiredResult(
                input_requests={"confirm": _elicit(f"Really delete {path}?", schema)},
                request_state=f"delete:{path}",
            )
        if ctx.request_state != f"delete:{path}":
            raise ToolError(f"requestState {ctx.request_state!r} is not for {path}")
        accepted = answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm") is True
        return f"Deleted {path}" if accepted else f"Kept {path}"

    @server.tool(structured_output=False)
    async def ask_everything(ctx: Context) -> str | types.InputRequiredResult:
        name, sampled, roots = (
            _answer(ctx, "user_name"),
            _answer(ctx, "capital"),
            _answer(ctx, "client_roots"),
        )
        if name is None or sampled is None or roots is None:
            question = types.SamplingMessage(
                role="user", content=types.TextContent(type="text", text="Capital of France?")
            )
            return types.InputRequiredResult(
                input_requests={
                    "user_name": _elicit("Your name?", NAME_SCHEMA),
                    "capital": types.CreateMessageRequest(
                        params=types.CreateMessageRequestParams(messages=[question], max_tokens=20)
                    ),
                    "client_roots": types.ListRootsRequest(),
                },
                request_state="everything",
            )
        content = sampled["content"]
        text = content["text"] if isinstance(content, dict) else content[0]["text"]
        return f"{name['content']['name']}|{text}|{','.join(root['uri'] for root in roots['roots'])}"

    @server.tool(structured_output=False)
    async def ask_twice(ctx: Context) -> str | types.InputRequiredResult:
        state = ctx.request_state
        if state is None:
            return types.InputRequiredResult(
                input_requests={"name": _elicit("Your name?", NAME_SCHEMA)}, request_state="round-1"
            )
        if state == "round-1":
            name = (_answer(ctx, "name") or {}).get("content", {}).get("name")
            schema = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
            return types.InputRequiredResult(
                input_requests={"color": _elicit("Your colour?", schema)}, request_state=f"round-2:{name}"
            )
        color = (_answer(ctx, "color") or {}).get("content", {}).get("color")
        return f"{state.removeprefix('round-2:')} likes {color}"

    @server.tool(structured_output=False)
    async def always_ask(ctx: Context) -> types.InputRequiredResult:
        return types.InputRequiredResult(input_requests={"again": _elicit("Once more?", NAME_SCHEMA)})

    @server.tool(structured_output=False)
    async def change_tools(ctx: Context) -> str:
        await ctx.notify_tools_changed()
        return "changed"

    definitions = tool_definitions()
    by_name = {d["name"]: d for d in definitions}
    listed = [types.Tool.model_validate(d) for d in definitions]

    def cursor_for(offset: int) -> str:
        # Page 2 is addressed by "" (a valid cursor, PAGE-07); later pages by an opaque token.
        return "" if offset == page_size else base64.b64encode(f"o:{offset}".encode()).decode()

    def offset_of(cursor: str | None) -> int:
        if cursor is None:
            return 0
        if cursor == "":
            return page_size
        try:
            tag, _, number = base64.b64decode(cursor, validate=True).decode().partition(":")
            offset = int(number) if tag == "o" else -1
        except ValueError:  # binascii.Error and UnicodeDecodeError included
            offset = -1
        if not 0 < offset < len(listed) or offset == page_size:
            raise MCPError(types.INVALID_PARAMS, "Invalid cursor")
        return offset

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams) -> types.ListToolsResult:
        offset = offset_of(params.cursor)
        end = offset + page_size
        return types.ListToolsResult(
            tools=listed[offset:end], next_cursor=cursor_for(end) if end < len(listed) else None
        )

    lowlevel = server._lowlevel_server  # the SDK exposes no public hook for a paginated tools/list
    lowlevel.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)
    # Validate Mcp-Param-* against the schemas we list, not the ones MCPServer derived.
    lowlevel.get_tool_input_schema = lambda name: by_name[name]["inputSchema"] if name in by_name else None
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--http", action="store_true")
    mode.add_argument("--stdio", action="store_true")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--page-size", type=int, default=4)
    args = parser.parse_args()
    server = build_server(args.page_size)
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.port)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
