"""Interop peer: a legacy-only server on the last 1.x release of the official MCP SDK (mcp==1.30.0,
run with tests/support.py `SDK1_PYTHON`), the way most Python servers in use today are written.

    python tests/peers/sdk1_server.py --http --port 8765   # Streamable HTTP at /mcp (sessions)
    python tests/peers/sdk1_server.py --stdio
    python tests/peers/sdk1_server.py --sse --port 8765    # the deprecated HTTP+SSE transport at /sse

Run with the dev venv's Python instead, the same tools are served by SDK 2.3.0's `MCPServer`
(dual-era: a client forced to the legacy era talks to its initialize-based side).

Weather-like tools (`get_weather` with structured output, `add`), one that asks the user
(`confirm_delete`: an `elicitation/create` mid-call), one that reports progress and logs
(`count_progress`), one that samples and lists roots (`ask_model`), one that announces a tool
list change (`change_tools`), and `slow_echo` (for timeouts and cancellation). It speaks only the
initialize-based revisions: `server/discover` before `initialize` is an error, as with any such
server.
"""

from __future__ import annotations

import argparse
import asyncio

from pydantic import BaseModel

try:  # SDK 1.x
    from mcp.server.fastmcp import Context, FastMCP
    from mcp.types import SamplingMessage, TextContent

    SDK = 1
except ImportError:  # SDK 2.x
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as FastMCP  # type: ignore[assignment]
    from mcp_types import SamplingMessage, TextContent  # type: ignore[no-redef]

    SDK = 2


class Weather(BaseModel):
    city: str
    temperature_c: float
    conditions: str


class Confirmation(BaseModel):
    confirm: bool
    reason: str = ""


def build(port: int) -> FastMCP:
    server = FastMCP("sdk1-weather", port=port) if SDK == 1 else FastMCP("sdk2-weather")

    @server.tool(description="Current weather for a city")
    def get_weather(city: str) -> Weather:
        return Weather(city=city, temperature_c=21.5, conditions="sunny")

    @server.tool(description="Add two numbers")
    def add(a: float, b: float) -> str:
        return f"{a + b:g}"

    @server.tool(description="Delete a file after the user confirms")
    async def confirm_delete(path: str, ctx: Context) -> str:  # type: ignore[type-arg]
        answer = await ctx.elicit(f"Delete {path}?", schema=Confirmation)
        if answer.action == "accept" and answer.data.confirm:
            return f"deleted {path}"
        return f"kept {path} ({answer.action})"

    @server.tool(description="Report `steps` progress notifications and log lines")
    async def count_progress(steps: int, ctx: Context) -> str:  # type: ignore[type-arg]
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
            await ctx.info(f"did step {step}")
        return f"counted {steps}"

    @server.tool(description="Ask the client's model a question and name the client's roots")
    async def ask_model(question: str, ctx: Context) -> str:  # type: ignore[type-arg]
        sampled = await ctx.session.create_message(
            [SamplingMessage(role="user", content=TextContent(type="text", text=question))], max_tokens=50
        )
        roots = await ctx.session.list_roots()
        text = sampled.content.text if isinstance(sampled.content, TextContent) else "?"
        return f"{text} | roots: {', '.join(str(root.uri) for root in roots.roots)}"

    @server.tool(description="Tell the client the tool list changed (on the session's GET stream)")
    async def change_tools(ctx: Context) -> str:  # type: ignore[type-arg]
        await ctx.session.send_tool_list_changed()
        return "changed"

    @server.tool(description="Echo text after sleeping the given number of seconds")
    async def slow_echo(text: str, seconds: float) -> str:
        await asyncio.sleep(seconds)
        return text

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--http", action="store_true")
    mode.add_argument("--stdio", action="store_true")
    mode.add_argument("--sse", action="store_true", help="HTTP+SSE (2024-11-05 transport), SDK 1.x only")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    server = build(args.port)
    if args.sse:
        server.run("sse")
    elif not args.http:
        server.run("stdio")
    elif SDK == 1:
        server.run("streamable-http")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
