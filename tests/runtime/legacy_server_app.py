"""A hand-written server for the legacy (initialize-based) era tests: handlers that ask the client,
log, report progress, sleep, close their stream, change the tool set — written exactly as for
2026-07-28, since the same handlers serve both eras.

    ask         elicits a name, answers "Hello, <name>!"
    ask_three   asks for a name, a sample and the roots at once (three server-to-client requests)
    sample      samples "Say hi", answers with the model's text
    roots       lists the client's roots
    log         logs one message per level (debug .. error), answers "logged"
    progress    {"steps": n}: n progress notifications 10 ms apart, answers "done"
    sleep       {"seconds": s}: opens its SSE stream (2025-11-25: a priming event), sleeps;
                records cancellations
    cancelled   how many sleeps were cancelled
    poll        closes its SSE stream (2025-11-25 polling), waits 0.2 s, answers "polled"
    mutate      {"op": "add"|"remove"|"touch"}: changes the tool set (list_changed)
    whoami      the principal

Environment: MCPGEN_TEST_AUTH=1 requires `Authorization: Bearer token-<name>` (principal "<name>");
MCPGEN_TEST_RATE="<rate>,<burst>" limits tool calls; MCPGEN_TEST_SESSIONS="<max sessions>,<idle s>,
<client request timeout s>,<max pending>,<replay events>"; MCPGEN_TEST_KEEPALIVE=<seconds>.

Run: python -m tests.runtime.legacy_server_app --http --port 8000 [--modern-only] | --stdio
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from mcpgen_runtime.server import (
    BearerAuth,
    Elicit,
    LegacySessionOptions,
    ListRoots,
    RateLimit,
    Sample,
    ServerConfig,
    ToolBinding,
    ToolContext,
    ToolServer,
    serve_main,
)


class Args(BaseModel):
    model_config = ConfigDict(extra="allow")


def _tool(name: str, properties: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"test tool {name}",
        "inputSchema": {"type": "object", "properties": properties or {}},
    }


TOOLS = [
    _tool("ask"),
    _tool("ask_three"),
    _tool("sample"),
    _tool("roots"),
    _tool("log"),
    _tool("progress", {"steps": {"type": "integer"}}),
    _tool("sleep", {"seconds": {"type": "number"}}),
    _tool("cancelled"),
    _tool("poll"),
    _tool("mutate", {"op": {"type": "string", "enum": ["add", "remove", "touch"]}}),
    _tool("whoami"),
]
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _verify(token: str) -> str | None:
    return token.removeprefix("token-") if token.startswith("token-") else None


def _config() -> ServerConfig:
    rate = os.environ.get("MCPGEN_TEST_RATE")
    limit = None
    if rate:
        per_second, burst = rate.split(",")
        limit = RateLimit(float(per_second), int(burst))
    sessions = LegacySessionOptions()
    if os.environ.get("MCPGEN_TEST_SESSIONS"):
        cap, idle, timeout, pending, replay = os.environ["MCPGEN_TEST_SESSIONS"].split(",")
        sessions = LegacySessionOptions(
            max_sessions=int(cap),
            idle_timeout_s=float(idle),
            client_request_timeout_s=float(timeout),
            max_pending_client_requests=int(pending),
            replay_events=int(replay),
            retry_ms=200,
        )
    return ServerConfig(
        name="legacy-test",
        version="1.0.0",
        title="Legacy test server",
        auth=BearerAuth(_verify) if os.environ.get("MCPGEN_TEST_AUTH") == "1" else None,
        rate_limit=limit,
        keepalive_s=float(os.environ.get("MCPGEN_TEST_KEEPALIVE", "15")),
        state_secrets=("legacy-test-secret-0123456789",),
        legacy_sessions=sessions,
    )


class LegacyTestServer(ToolServer):
    _tool_definitions_: ClassVar[list[dict[str, Any]]] = TOOLS
    _tool_bindings_: ClassVar[tuple[ToolBinding, ...]] = tuple(
        ToolBinding(t["name"], t["name"], Args, None) for t in TOOLS
    )

    @classmethod
    def default_config(cls) -> ServerConfig:
        return _config()

    def __init__(self, config: ServerConfig | None = None) -> None:
        super().__init__(config)
        self.cancelled_sleeps = 0

    async def ask(self, args: Args, ctx: ToolContext) -> str:
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        return f"Hello, {answer.get('name')}!" if answer.accepted else f"No name ({answer.action})"

    async def ask_three(self, args: Args, ctx: ToolContext) -> str:
        name = ctx.need(Elicit("What is your name?", NAME_SCHEMA, key="user_name"))
        greeting = ctx.need(Sample("Say hi", max_tokens=20, key="greeting"))
        roots = ctx.need(ListRoots(key="roots"))
        await ctx.ask()
        return f"{greeting.value.text}, {name.value.get('name')}; {len(roots.value.roots)} root(s)"

    async def sample(self, args: Args, ctx: ToolContext) -> str:
        sampled = await ctx.sample("Say hi", max_tokens=20)
        return f"model said: {sampled.text}"

    async def roots(self, args: Args, ctx: ToolContext) -> str:
        return ", ".join(root.uri for root in await ctx.list_roots())

    async def log(self, args: Args, ctx: ToolContext) -> str:
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, {"level was": level}, logger="legacy-test")
        return "logged"

    async def progress(self, args: Args, ctx: ToolContext) -> str:
        steps = int(getattr(args, "steps", 3))
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps)
            await asyncio.sleep(0.01)
        return "done"

    async def sleep(self, args: Args, ctx: ToolContext) -> str:
        await ctx.open_stream()
        try:
            await asyncio.sleep(float(getattr(args, "seconds", 30)))
        except asyncio.CancelledError:
            self.cancelled_sleeps += 1
            raise
        return "slept"

    async def cancelled(self, args: Args, ctx: ToolContext) -> str:
        return str(self.cancelled_sleeps)

    async def poll(self, args: Args, ctx: ToolContext) -> str:
        await ctx.close_sse_stream()
        await asyncio.sleep(0.2)
        return "polled"

    async def mutate(self, args: Args, ctx: ToolContext) -> str:
        op = getattr(args, "op", "touch")
        if op == "add":

            async def extra(arguments: dict[str, Any], ctx: ToolContext) -> str:
                return "extra"

            self.add_tool(_tool("extra"), extra)
        elif op == "remove":
            self.remove_tool("extra")
        else:
            self.notify_list_changed("tools")
        return f"{op} done"

    async def whoami(self, args: Args, ctx: ToolContext) -> str:
        return repr(ctx.principal)


if __name__ == "__main__":
    serve_main(LegacyTestServer)
