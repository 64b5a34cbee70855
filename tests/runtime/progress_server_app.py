"""A hand-written server whose tools report progress, shaped like what `mcpgen server` generates
(both eras: it is a plain `ToolServer`). For the progress display of the command line and the
progress-reset deadline of the client (`max_time`):

    tick     steps, interval[, total]  -> progress 1..steps (of `steps`, or of no total when
                                          total is false), "step N", `interval` seconds apart
    hostile                            -> progress whose messages carry terminal escapes
                                          (colour, cursor, window title, C1 CSI, bidi override)
    silent   seconds                   -> sleeps without any progress
    resume   steps, interval           -> like tick, but ends its SSE reply after the first step
                                          (2025-11-25 polling: the client resumes with
                                          Last-Event-ID; elsewhere that is a no-op)

Run: python -m tests.runtime.progress_server_app --http --port 8000 | --stdio
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar, Final

from pydantic import BaseModel, ConfigDict, Field

from mcpgen_runtime.server import (
    LegacySessionOptions,
    ServerConfig,
    ToolBinding,
    ToolContext,
    ToolServer,
    serve_main,
)

# What a hostile server might put in a progress message: SGR colour, cursor movement and line
# erasure, an OSC window title (BEL-terminated), a C1 CSI, a carriage return and a bidi override.
HOSTILE_MESSAGES: Final = (
    "\x1b[31mred\x1b[0m \x1b[2J\x1b[H cleared",
    "\x1b]0;pwned\x07title \x9b31m c1 \rback",
    "\u202eevil\u202c \x1b[1A up\nnext line",
)

DEFINITIONS: Final[list[dict[str, Any]]] = [
    {
        "name": "tick",
        "description": "Report progress `steps` times, `interval` seconds apart, then answer.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "steps": {"type": "integer", "minimum": 1, "maximum": 1000},
                "interval": {"type": "number", "minimum": 0, "maximum": 10},
                "total": {"type": "boolean", "default": True, "description": "Send the total."},
            },
            "required": ["steps", "interval"],
            "additionalProperties": False,
        },
    },
    {
        "name": "resume",
        "description": "Like tick, but ends its SSE reply after the first step (2025-11-25 polling).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "steps": {"type": "integer", "minimum": 1, "maximum": 1000},
                "interval": {"type": "number", "minimum": 0, "maximum": 10},
            },
            "required": ["steps", "interval"],
            "additionalProperties": False,
        },
    },
    {
        "name": "hostile",
        "description": "Report progress whose messages hold terminal escape sequences.",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
    },
    {
        "name": "silent",
        "description": "Sleep `seconds` without reporting progress.",
        "inputSchema": {
            "type": "object",
            "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 60}},
            "required": ["seconds"],
            "additionalProperties": False,
        },
    },
]


class TickInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    steps: int = Field(..., ge=1, le=1000)
    interval: float = Field(..., ge=0, le=10)
    total: bool = True


class ResumeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    steps: int = Field(..., ge=1, le=1000)
    interval: float = Field(..., ge=0, le=10)


class HostileInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SilentInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seconds: float = Field(..., ge=0, le=60)


class ProgressServer(ToolServer):
    _tool_definitions_: ClassVar[list[dict[str, Any]]] = DEFINITIONS
    _tool_bindings_: ClassVar[tuple[ToolBinding, ...]] = (
        ToolBinding("tick", "tick", TickInput, None),
        ToolBinding("resume", "resume", ResumeInput, None),
        ToolBinding("hostile", "hostile", HostileInput, None),
        ToolBinding("silent", "silent", SilentInput, None),
    )
    _server_config_: ClassVar[ServerConfig | None] = ServerConfig(
        name="progress-test", version="1.0.0", legacy_sessions=LegacySessionOptions(retry_ms=200)
    )

    async def tick(self, args: TickInput, ctx: ToolContext) -> str:
        for step in range(1, args.steps + 1):
            await asyncio.sleep(args.interval)
            await ctx.report_progress(step, args.steps if args.total else None, f"step {step}")
        return f"ticked {args.steps}"

    async def resume(self, args: ResumeInput, ctx: ToolContext) -> str:
        await ctx.report_progress(0, args.steps, "started")
        await ctx.close_sse_stream()
        for step in range(1, args.steps + 1):
            await asyncio.sleep(args.interval)
            await ctx.report_progress(step, args.steps, f"step {step}")
        return f"resumed after {args.steps}"

    async def hostile(self, args: HostileInput, ctx: ToolContext) -> str:
        for step, message in enumerate(HOSTILE_MESSAGES, 1):
            await ctx.report_progress(step, len(HOSTILE_MESSAGES), message)
            await asyncio.sleep(0.3)
        return "done"

    async def silent(self, args: SilentInput, ctx: ToolContext) -> str:
        await asyncio.sleep(args.seconds)
        return f"slept {args.seconds:g}s"


if __name__ == "__main__":
    serve_main(ProgressServer)
