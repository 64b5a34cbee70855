"""Interop peer: resources, resource templates, prompts and completion of a server, through the last
1.x release of the official MCP Python SDK (mcp==1.30.0, initialize-based revisions only). Run it
with tests/peers/.venv-sdk1's Python (`tests.support.SDK1_PYTHON`).

    python tests/peers/sdk1_surfaces.py [--read URI]... [--prompt NAME JSON]... \\
        [--complete REF KEY ARG VALUE]... [--watch URI] (http://host:port/mcp | -- COMMAND ARG...)

The same options and JSON report as tests/peers/sdk_surfaces.py; `--watch` uses
`resources/subscribe` (then the server's `touch` tool) and waits for
`notifications/resources/updated`. Only the SDK is used here; nothing from mcpgen.
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
    parser.add_argument("--read", action="append", default=[])
    parser.add_argument("--prompt", nargs=2, action="append", default=[], metavar=("NAME", "JSON"))
    parser.add_argument(
        "--complete", nargs=4, action="append", default=[], metavar=("REF", "KEY", "ARG", "VALUE")
    )
    parser.add_argument("--watch")
    parser.add_argument("target", nargs="+")
    return parser.parse_args(argv)


@asynccontextmanager
async def _connect(target: list[str]) -> AsyncIterator[tuple[Any, Any]]:
    if len(target) == 1 and target[0].startswith(("http://", "https://")):
        async with streamablehttp_client(target[0]) as (read, write, _session_id):
            yield read, write
    else:
        params = StdioServerParameters(command=target[0], args=target[1:], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            yield read, write


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"updated": []}
    got_update = asyncio.Event()

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", None)
        if isinstance(root, types.ResourceUpdatedNotification):
            out["updated"].append(str(root.params.uri))
            got_update.set()

    async with (
        _connect(args.target) as (read, write),
        ClientSession(
            read, write, read_timeout_seconds=timedelta(seconds=20), message_handler=on_message
        ) as session,
    ):
        init = await session.initialize()
        out["protocolVersion"] = init.protocolVersion
        out["capabilities"] = init.capabilities.model_dump(mode="json", exclude_none=True)
        uris: list[str] = []
        pages, cursor = 0, None
        while True:
            page = await session.list_resources(cursor=cursor)
            pages += 1
            uris.extend(str(r.uri) for r in page.resources)
            cursor = page.nextCursor
            if cursor is None or pages > 20:
                break
        out["resources"], out["resourcePages"] = uris, pages
        out["templates"], cursor = [], None
        while True:
            tpage = await session.list_resource_templates(cursor=cursor)
            out["templates"].extend(t.uriTemplate for t in tpage.resourceTemplates)
            cursor = tpage.nextCursor
            if cursor is None:
                break
        out["prompts"], cursor = [], None
        while True:
            ppage = await session.list_prompts(cursor=cursor)
            out["prompts"].extend(p.name for p in ppage.prompts)
            cursor = ppage.nextCursor
            if cursor is None:
                break
        reads: list[dict[str, Any]] = []
        for uri in args.read:
            try:
                result = await session.read_resource(uri)  # type: ignore[arg-type]
                reads.append({"uri": uri, "contents": [_dump(c) for c in result.contents]})
            except McpError as exc:
                reads.append({"uri": uri, "error": {"code": exc.error.code, "message": exc.error.message}})
        out["reads"] = reads
        gets: list[dict[str, Any]] = []
        for name, raw in args.prompt:
            try:
                got = await session.get_prompt(name, json.loads(raw))
                gets.append(
                    {
                        "name": name,
                        "description": got.description,
                        "messages": [_dump(m) for m in got.messages],
                    }
                )
            except McpError as exc:
                gets.append({"name": name, "error": {"code": exc.error.code, "message": exc.error.message}})
        out["gets"] = gets
        completions: list[dict[str, Any]] = []
        for ref_kind, key, arg, value in args.complete:
            ref: Any = (
                types.PromptReference(type="ref/prompt", name=key)
                if ref_kind == "prompt"
                else types.ResourceTemplateReference(type="ref/resource", uri=key)
            )
            done = await session.complete(ref, {"name": arg, "value": value})
            completions.append(_dump(done.completion))
        out["completions"] = completions
        if args.watch:
            await session.subscribe_resource(args.watch)  # type: ignore[arg-type]
            await session.call_tool("touch", {"uri": "other://not-subscribed"})
            await session.call_tool("touch", {"uri": args.watch})
            await asyncio.wait_for(got_update.wait(), 10)
            await session.unsubscribe_resource(args.watch)  # type: ignore[arg-type]
    return out


def main() -> None:
    sys.stdout.write(json.dumps(asyncio.run(_run(_parse(sys.argv[1:])))) + "\n")


if __name__ == "__main__":
    main()
