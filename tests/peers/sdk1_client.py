"""Interop peer: drive a server with the last 1.x release of the official MCP Python SDK (mcp==1.30.0),
a client of the initialize-based revisions only. Run it with tests/peers/.venv-sdk1's Python
(`tests.support.SDK1_PYTHON`).

    python tests/peers/sdk1_client.py [--call NAME JSON]... [--progress] [--elicit-accept JSON] \\
        [--sample-text TEXT] [--roots URI,...] [--log-level LEVEL] [--ping] \\
        (http://host:port/mcp | -- COMMAND ARG...)

Connects over Streamable HTTP (a URL) or stdio (a command), runs `initialize`, optionally sets
the log level and pings, lists tools across every page, makes the calls in order and prints one
JSON object (the same shape as tests/peers/sdk_client.py):

    {"protocolVersion", "serverInfo", "instructions", "capabilities", "sessionId",
     "tools": [names], "pages": n, "ping": {} | null,
     "elicitations": [{"message", "requestedSchema"}], "samplings": [{"messages", "maxTokens"}],
     "logs": [{"level", "logger", "data"}],
     "calls": [{"name", "isError", "content", "structuredContent", "progress"} | {"name", "error"}]}

`--elicit-accept JSON` answers every elicitation with accept + that content, `--sample-text`
answers sampling with that text, `--roots` answers roots/list; each also declares its capability.
Only the SDK is used here; nothing from mcpgen.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--call", nargs=2, action="append", default=[], metavar=("NAME", "JSON"))
    parser.add_argument("--progress", action="store_true", help="request progress on every call")
    parser.add_argument(
        "--elicit-accept", metavar="JSON", help="answer every elicitation with accept + this content"
    )
    parser.add_argument("--sample-text", metavar="TEXT", help="answer every sampling request with this text")
    parser.add_argument("--roots", metavar="URIS", help="answer roots/list with these comma-separated URIs")
    parser.add_argument("--log-level", help="send logging/setLevel with this level first")
    parser.add_argument("--ping", action="store_true", help="send ping after initialize")
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("target", nargs="+", help="a URL, or a command after --")
    return parser.parse_args(argv)


@asynccontextmanager
async def _connect(target: list[str]) -> AsyncIterator[tuple[Any, Any, Any]]:
    if len(target) == 1 and target[0].startswith(("http://", "https://")):
        async with streamablehttp_client(target[0]) as (read, write, session_id):
            yield read, write, session_id
    else:
        params = StdioServerParameters(command=target[0], args=target[1:], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            yield read, write, lambda: None


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"elicitations": [], "samplings": [], "logs": []}
    callbacks: dict[str, Any] = {}
    if args.elicit_accept is not None:
        content = json.loads(args.elicit_accept)

        async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            out["elicitations"].append(
                {"message": params.message, "requestedSchema": getattr(params, "requestedSchema", None)}
            )
            return types.ElicitResult(action="accept", content=content)

        callbacks["elicitation_callback"] = on_elicit
    if args.sample_text is not None:

        async def on_sample(
            context: Any, params: types.CreateMessageRequestParams
        ) -> types.CreateMessageResult:
            out["samplings"].append(
                {
                    "messages": [m.model_dump(mode="json", exclude_none=True) for m in params.messages],
                    "maxTokens": params.maxTokens,
                }
            )
            return types.CreateMessageResult(
                role="assistant",
                model="sdk1-test-model",
                stopReason="endTurn",
                content=types.TextContent(type="text", text=args.sample_text),
            )

        callbacks["sampling_callback"] = on_sample
    if args.roots is not None:

        async def on_roots(context: Any) -> types.ListRootsResult:
            return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in args.roots.split(",")])  # type: ignore[arg-type]

        callbacks["list_roots_callback"] = on_roots

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        out["logs"].append({"level": params.level, "logger": params.logger, "data": params.data})

    async with (
        _connect(args.target) as (read, write, session_id),
        ClientSession(
            read,
            write,
            read_timeout_seconds=timedelta(seconds=args.timeout),
            logging_callback=on_log,
            **callbacks,
        ) as session,
    ):
        init = await session.initialize()
        out["protocolVersion"] = init.protocolVersion
        out["serverInfo"] = init.serverInfo.model_dump(mode="json", exclude_none=True)
        out["instructions"] = init.instructions
        out["capabilities"] = init.capabilities.model_dump(mode="json", exclude_none=True)
        out["sessionId"] = session_id()
        if args.log_level is not None:
            await session.set_logging_level(args.log_level)
        out["ping"] = (
            (await session.send_ping()).model_dump(mode="json", exclude_none=True) if args.ping else None
        )

        names: list[str] = []
        pages = 0
        cursor: str | None = None
        while True:
            page = await session.list_tools(cursor=cursor)
            pages += 1
            names.extend(tool.name for tool in page.tools)
            cursor = page.nextCursor
            if cursor is None or pages > 100:
                break
        out["tools"] = names
        out["pages"] = pages

        calls: list[dict[str, Any]] = []
        for name, raw in args.call:
            progress: list[dict[str, Any]] = []

            async def on_progress(
                value: float, total: float | None, message: str | None, sink: list[dict[str, Any]] = progress
            ) -> None:
                sink.append({"progress": value, "total": total, "message": message})

            try:
                result = await session.call_tool(
                    name, json.loads(raw), progress_callback=on_progress if args.progress else None
                )
            except McpError as exc:
                calls.append({"name": name, "error": {"code": exc.error.code, "message": exc.error.message}})
                continue
            calls.append(
                {
                    "name": name,
                    "isError": bool(result.isError),
                    "content": [
                        block.model_dump(mode="json", by_alias=True, exclude_none=True)
                        for block in result.content
                    ],
                    "structuredContent": result.structuredContent,
                    "progress": progress,
                }
            )
        out["calls"] = calls
        await asyncio.sleep(0.05)  # late log notifications on the same stream
    return out


def main(argv: list[str] | None = None) -> None:
    args = _parse(sys.argv[1:] if argv is None else argv)
    result = asyncio.run(_run(args))
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
