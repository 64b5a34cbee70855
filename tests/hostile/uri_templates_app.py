"""A server with a resource template of every RFC 6570 shape (issue 31, item 1), for
test_hostile_uri_templates.py: each reader answers the length of each variable it got, as JSON;
the tool `ping` answers "pong" (the other client's call that must not wait).

The HTTP header block may be 512 KiB here, since a 2026-07-28 `resources/read` repeats its URI in
`Mcp-Name` (base64 when not ASCII): hostile URIs of 64 KiB must reach the matcher.

Run: python -m tests.hostile.uri_templates_app --http --port 8000 --max-uri-length 65536 | --stdio
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from mcpgen_runtime.server import (
    RequestContext,
    ResourceNotFound,
    ServerConfig,
    ToolBinding,
    ToolContext,
    ToolServer,
    safe_join,
    serve_main,
)
from mcpgen_runtime.server.core.limits import HttpLimits

TEMPLATES = [
    "team://{org}-{team}-{member}",  # the example: three variables, literal separators
    "gh://{owner}-{repo}",
    "dns://{host}.{domain}",
    "pair://{a}{b}",  # adjacent variables
    "triple://{a}{b}{c}",
    "list://{x,y,z}",  # a simple list
    "keys://{keys*}",  # simple, exploded
    "prefix://{word:3}-{rest}",
    "file:///{+path}",  # reserved
    "two:///{+a}/{+b}",
    "rlist://{+a,b}",
    "mixed://{+a}{b}{+c}{d}",
    "frag://x{#f}",  # fragment
    "frags://x{#f,g}",
    "label://x{.ext}{.more*}",  # labels
    "seg://x{/segments*}",  # path segments
    "segs://x{/a,b}",
    "param://x{;p}{;q*}",  # path-style parameters
    "query://x{?q,lang}",  # form query
    "cont://x?fixed=1{&a}{&b*}",  # query continuation
    "all://{+base}{/segs*}{?q*}{#f}",
]


# Issue 31, item 8: readers of files under $URI_TEMPLATES_BASE (test_hostile_template_values.py).
BASE_ENV = "URI_TEMPLATES_BASE"
NAIVE = "notes://notes/{name}"  # joins `name` itself: safe only because such values never arrive
PATH = "docs:///{+path}"  # through safe_join
SEGMENTS = "tree://{/segments*}"  # through safe_join
RAW = "raw://notes/{name}"  # opted out: the value as decoded


class Args(BaseModel):
    model_config = ConfigDict(extra="allow")


TOOLS = [{"name": "ping", "description": "answers pong", "inputSchema": {"type": "object"}}]


class UriTemplatesServer(ToolServer):
    _tool_definitions_: ClassVar[list[dict[str, Any]]] = TOOLS
    _tool_bindings_: ClassVar[tuple[ToolBinding, ...]] = (ToolBinding("ping", "ping", Args, None),)

    @classmethod
    def default_config(cls) -> ServerConfig:
        return ServerConfig(
            name="uri-templates",
            version="1.0.0",
            http_limits=HttpLimits(max_header_bytes=512 * 1024),
            state_secrets=("uri-templates-test-secret-0123456789",),
        )

    def __init__(self, config: ServerConfig | None = None) -> None:
        super().__init__(config)
        for i, template in enumerate(TEMPLATES):
            self.add_resource_template({"uriTemplate": template, "name": f"t{i}"}, self.read, notify=False)
            variable = template.split("{", 1)[1].strip("+#./;?&").split("}")[0].split(",")[0]
            self.add_completion("resource", template, variable.rstrip("*").split(":")[0], self.complete)
        self.add_resource_template({"uriTemplate": NAIVE, "name": "naive"}, self.read_naive, notify=False)
        self.add_resource_template({"uriTemplate": PATH, "name": "path"}, self.read_path, notify=False)
        self.add_resource_template({"uriTemplate": SEGMENTS, "name": "tree"}, self.read_path, notify=False)
        self.add_resource_template(
            {"uriTemplate": RAW, "name": "raw"}, self.read, notify=False, raw_values=True
        )

    @staticmethod
    def _file(path: Path, uri: str) -> str:
        if not path.is_file():
            raise ResourceNotFound(uri)
        return path.read_text()

    async def read_naive(self, uri: str, variables: dict[str, Any], ctx: RequestContext) -> str:
        return self._file(Path(os.environ[BASE_ENV]) / "notes" / str(variables["name"]), uri)

    async def read_path(self, uri: str, variables: dict[str, Any], ctx: RequestContext) -> str:
        value = variables.get("path", variables.get("segments", ""))
        return self._file(safe_join(os.environ[BASE_ENV], value), uri)

    async def read(self, uri: str, variables: dict[str, Any], ctx: RequestContext) -> str:
        # The size of each value (items of a list): a short answer, whatever the URI's length.
        return json.dumps({name: len(value) for name, value in variables.items()})

    async def complete(self, value: str, context: dict[str, str], ctx: RequestContext) -> list[str]:
        return [value[:10]]

    async def ping(self, args: Args, ctx: ToolContext) -> str:
        return "pong"


if __name__ == "__main__":
    serve_main(UriTemplatesServer)
