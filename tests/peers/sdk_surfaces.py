"""Interop peer: resources, resource templates, prompts and completion of a server, through the
official MCP Python SDK client (mcp==2.3.0).

    python tests/peers/sdk_surfaces.py [--mode legacy] [--read URI]... [--prompt NAME JSON]... \\
        [--complete REF KEY ARG VALUE]... [--watch URI] (http://host:port/mcp | -- COMMAND ARG...)

Lists every page of resources/list, resources/templates/list and prompts/list, reads the URIs,
gets the prompts, asks for completions (REF is `prompt` or `resource`), then with `--watch URI`
waits for `notifications/resources/updated` of that URI after calling the server's `touch` tool:
through `subscriptions/listen` (2026-07-28) or `resources/subscribe` (`--mode legacy`). Prints one
JSON object: {"protocolVersion", "capabilities", "resources": [uris], "resourcePages",
"templates": [uriTemplates], "prompts": [names], "reads": [{uri, contents} | {uri, error}],
"gets": [{name, description, messages} | {name, error}], "completions": [{values, total, hasMore}],
"updated": [uris]}. Only the SDK is used here; nothing from mcpgen.
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
    parser.add_argument("--mode", default="auto")
    parser.add_argument("--read", action="append", default=[])
    parser.add_argument("--prompt", nargs=2, action="append", default=[], metavar=("NAME", "JSON"))
    parser.add_argument(
        "--complete", nargs=4, action="append", default=[], metavar=("REF", "KEY", "ARG", "VALUE")
    )
    parser.add_argument("--watch")
    parser.add_argument("target", nargs="+")
    return parser.parse_args(argv)


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    target: list[str] = args.target
    server: str | StdioServerParameters
    if len(target) == 1 and target[0].startswith(("http://", "https://")):
        server = target[0]
    else:
        server = StdioServerParameters(command=target[0], args=target[1:], env=dict(os.environ))
    out: dict[str, Any] = {"updated": []}
    updated: list[str] = out["updated"]
    got_update = asyncio.Event()

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, types.ResourceUpdatedNotification):
            updated.append(root.params.uri)
            got_update.set()

    async with Client(server, read_timeout_seconds=20, mode=args.mode, message_handler=on_message) as client:
        out["protocolVersion"] = client.protocol_version
        out["capabilities"] = client.server_capabilities.model_dump(mode="json", exclude_none=True)
        uris: list[str] = []
        pages, cursor = 0, None
        while True:
            page = await client.list_resources(cursor=cursor)
            pages += 1
            uris.extend(r.uri for r in page.resources)
            cursor = page.next_cursor
            if cursor is None or pages > 20:
                break
        out["resources"], out["resourcePages"] = uris, pages
        templates: list[str] = []
        cursor = None
        while True:
            tpage = await client.list_resource_templates(cursor=cursor)
            templates.extend(t.uri_template for t in tpage.resource_templates)
            cursor = tpage.next_cursor
            if cursor is None:
                break
        out["templates"] = templates
        names: list[str] = []
        cursor = None
        while True:
            ppage = await client.list_prompts(cursor=cursor)
            names.extend(p.name for p in ppage.prompts)
            cursor = ppage.next_cursor
            if cursor is None:
                break
        out["prompts"] = names
        reads: list[dict[str, Any]] = []
        for uri in args.read:
            try:
                result = await client.read_resource(uri)
                reads.append({"uri": uri, "contents": [_dump(c) for c in result.contents]})
            except MCPError as exc:
                reads.append({"uri": uri, "error": {"code": exc.code, "message": exc.message}})
        out["reads"] = reads
        gets: list[dict[str, Any]] = []
        for name, raw in args.prompt:
            try:
                got = await client.get_prompt(name, json.loads(raw))
                gets.append(
                    {
                        "name": name,
                        "description": got.description,
                        "messages": [_dump(m) for m in got.messages],
                    }
                )
            except MCPError as exc:
                gets.append({"name": name, "error": {"code": exc.code, "message": exc.message}})
        out["gets"] = gets
        completions: list[dict[str, Any]] = []
        for ref_kind, key, arg, value in args.complete:
            ref: Any = (
                types.PromptReference(type="ref/prompt", name=key)
                if ref_kind == "prompt"
                else types.ResourceTemplateReference(type="ref/resource", uri=key)
            )
            done = await client.complete(ref, {"name": arg, "value": value})
            completions.append(_dump(done.completion))
        out["completions"] = completions
        if args.watch:
            if args.mode == "legacy":
                await client.subscribe_resource(args.watch)
                await client.call_tool("touch", {"uri": "other://not-subscribed"})
                await client.call_tool("touch", {"uri": args.watch})
                await asyncio.wait_for(got_update.wait(), 10)
                await client.unsubscribe_resource(args.watch)
            else:
                async with client.listen(resource_subscriptions=[args.watch]) as sub:
                    await client.call_tool("touch", {"uri": "other://not-subscribed"})
                    await client.call_tool("touch", {"uri": args.watch})
                    event = await asyncio.wait_for(sub.__anext__(), 10)
                    updated.append(getattr(event, "uri", repr(event)))
    return out


def main() -> None:
    print(json.dumps(asyncio.run(_run(_parse(sys.argv[1:])))))


if __name__ == "__main__":
    main()
