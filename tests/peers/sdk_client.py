"""Interop peer: drive a server with the official MCP Python SDK client (mcp==2.3.0).

    python tests/peers/sdk_client.py [--call NAME JSON]... [--progress] [--elicit-accept JSON] \\
        [--mode legacy] [--sample-text TEXT] [--log-level LEVEL] (http://host:port/mcp | -- COMMAND ARG...)

Connects over Streamable HTTP (a URL) or stdio (a command), lets the SDK negotiate
(`server/discover`), lists tools across every page, makes the calls in order and prints
one JSON object:

    {"protocolVersion", "serverInfo", "instructions", "capabilities",
     "tools": [names], "pages": n, "cache": [{"ttlMs", "cacheScope"} per page],
     "elicitations": [{"message", "requestedSchema"} the server asked for],
     "calls": [{"name", "isError", "content", "structuredContent", "progress"} | {"name", "error"}]}

`--call` names tools the SDK has listed (it mirrors x-mcp-header arguments and validates
structured output); `--progress` asks for progress notifications on every call;
`--elicit-accept JSON` registers an elicitation callback that accepts with that content
(so the SDK declares the elicitation capability and answers multi-round-trip requests);
`--sample-text` a sampling callback answering with that text. `--mode legacy` forces the
SDK's initialize handshake (the 2025 revisions: asks arrive as server-to-client requests);
`--log-level` then sends `logging/setLevel`, and log notifications are reported as "logs".
Only the SDK is used here; nothing from mcpgen.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--call", nargs=2, action="append", default=[], metavar=("NAME", "JSON"))
    parser.add_argument("--progress", action="store_true", help="request progress on every call")
    parser.add_argument(
        "--elicit-accept", metavar="JSON", help="answer every elicitation with accept + this content"
    )
    parser.add_argument("--mode", default="auto", help="the SDK's connect mode: auto (default) or legacy")
    parser.add_argument("--sample-text", metavar="TEXT", help="answer every sampling request with this text")
    parser.add_argument("--log-level", help="legacy mode: send logging/setLevel with this level first")
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("target", nargs="+", help="a URL, or a command after --")
    return parser.parse_args(argv)


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    target: list[str] = args.target
    server: str | StdioServerParameters
    if len(target) == 1 and target[0].startswith(("http://", "https://")):
        server = target[0]
    else:
        server = StdioServerParameters(command=target[0], args=target[1:], env=dict(os.environ))
    out: dict[str, Any] = {}
    elicitations: list[dict[str, Any]] = []
    callbacks: dict[str, Any] = {}
    if args.elicit_accept is not None:
        content = json.loads(args.elicit_accept)

        async def on_elicit(context: Any, params: Any) -> types.ElicitResult:
            elicitations.append(
                {"message": params.message, "requestedSchema": getattr(params, "requested_schema", None)}
            )
            return types.ElicitResult(action="accept", content=content)

        callbacks["elicitation_callback"] = on_elicit
    out["elicitations"] = elicitations
    samplings: list[dict[str, Any]] = []
    if args.sample_text is not None:

        async def on_sample(context: Any, params: Any) -> types.CreateMessageResult:
            samplings.append({"maxTokens": params.max_tokens})
            return types.CreateMessageResult(
                role="assistant",
                model="sdk2-test-model",
                stop_reason="endTurn",
                content=types.TextContent(type="text", text=args.sample_text),
            )

        callbacks["sampling_callback"] = on_sample
    out["samplings"] = samplings
    logs: list[dict[str, Any]] = []

    async def on_log(params: Any) -> None:
        logs.append({"level": params.level, "logger": params.logger, "data": params.data})

    out["logs"] = logs
    async with Client(
        server, read_timeout_seconds=args.timeout, mode=args.mode, logging_callback=on_log, **callbacks
    ) as client:
        out["protocolVersion"] = client.protocol_version
        if args.log_level is not None:
            await client.set_logging_level(args.log_level)
        info = client.server_info
        out["serverInfo"] = info.model_dump(mode="json", exclude_none=True) if info is not None else None
        out["instructions"] = client.instructions
        out["capabilities"] = client.server_capabilities.model_dump(mode="json", exclude_none=True)

        names: list[str] = []
        cache: list[dict[str, Any]] = []
        pages = 0
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            pages += 1
            names.extend(tool.name for tool in page.tools)
            cache.append(
                {"ttlMs": getattr(page, "ttl_ms", None), "cacheScope": getattr(page, "cache_scope", None)}
            )
            cursor = page.next_cursor
            if cursor is None or pages > 100:
                break
        out["tools"] = names
        out["cache"] = cache
        out["pages"] = pages

        calls: list[dict[str, Any]] = []
        for name, raw in args.call:
            progress: list[dict[str, Any]] = []

            async def on_progress(
                value: float, total: float | None, message: str | None, sink: list[dict[str, Any]] = progress
            ) -> None:
                sink.append({"progress": value, "total": total, "message": message})

            try:
                result = await client.call_tool(
                    name, json.loads(raw), progress_callback=on_progress if args.progress else None
                )
            except MCPError as exc:
                calls.append({"name": name, "error": {"code": exc.code, "message": exc.message}})
                continue
            calls.append(
                {
                    "name": name,
                    "isError": bool(result.is_error),
                    "content": [
                        block.model_dump(mode="json", by_alias=True, exclude_none=True)
                        for block in result.content
                    ],
                    "structuredContent": result.structured_content,
                    "progress": progress,
                }
            )
        out["calls"] = calls
    return out


def main(argv: list[str] | None = None) -> None:
    args = _parse(sys.argv[1:] if argv is None else argv)
    result = asyncio.run(_run(args))
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
