"""Interop peer: a FastMCP 4.1.4 client (its SEP-2640 skills client half) against a server given by URL,
run by tests/peers/.venv-fastmcp/bin/python (`make peers-deps`; never imported by mcpgen).

    python tests/peers/fastmcp_skills_client.py http://127.0.0.1:8000/mcp
    python tests/peers/fastmcp_skills_client.py http://127.0.0.1:8000/mcp --read URI

Prints one JSON object per step on stdout (tests/interop/test_fastmcp_skills.py checks them):

- `listed`: `client.list_skills()` (FastMCP's models check each entry: name rules, the URI's last
  segment, every file within the skill), as JSON.
- `got`: `client.get_skill(uri)` of the first listed skill equals its listed entry.
- `read`: each file of every skill read with `client.read_resource`, its bytes checked against the
  entry's size and digest, a SKILL.md's frontmatter against the entry's (PyYAML).
- `unknown`: `get_skill` of a URI the server does not serve: the error FastMCP raises.

With `--read URI`: one `read`/`refused` step for URI (what a changed file gets).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import sys
from typing import Any

import yaml
from fastmcp import Client
from fastmcp.skills.client import SkillsClientExtension


def _say(step: str, **seen: Any) -> None:
    print(json.dumps({"step": step, **seen}), flush=True)


async def _bytes(client: Client, uri: str) -> tuple[bytes, str | None]:
    (contents,) = await client.read_resource(uri)
    text = getattr(contents, "text", None)
    data = text.encode("utf-8") if text is not None else base64.b64decode(contents.blob)
    return data, contents.mime_type


async def main(url: str, read: str | None) -> None:
    async with Client(url, extensions=[SkillsClientExtension()]) as client:
        if read is not None:
            try:
                data, mime = await _bytes(client, read)
            except Exception as exc:
                _say(
                    "refused",
                    error=f"{type(exc).__name__}: {exc}",
                    code=getattr(getattr(exc, "error", None), "code", None),
                )
            else:
                _say("read", uri=read, size=len(data), mime_type=mime)
            return
        skills = await client.list_skills()
        _say("listed", skills=[s.model_dump(mode="json", by_alias=True, exclude_none=True) for s in skills])
        first = skills[0]
        got = await client.get_skill(first.uri)
        _say("got", uri=got.uri, same=got == first)
        for skill in skills:
            for resource in skill.resources:
                data, mime = await _bytes(client, resource.uri)
                checks = {
                    "size": len(data) == resource.size,
                    "digest": "sha256:" + hashlib.sha256(data).hexdigest() == resource.digest,
                }
                if resource.uri == skill.uri:
                    block = data.decode("utf-8").split("---", 2)[1]
                    checks["frontmatter"] = yaml.safe_load(block) == skill.frontmatter.root
                _say("read", uri=resource.uri, mime_type=mime, checks=checks)
        try:
            await client.get_skill("skill://no-such-skill/SKILL.md")
        except Exception as exc:
            _say("unknown", error=f"{type(exc).__name__}: {exc}")
        else:
            _say("unknown", error=None)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    target = arguments[arguments.index("--read") + 1] if "--read" in arguments else None
    asyncio.run(main(arguments[0], target))
