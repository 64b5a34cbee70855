"""A hand-written server with resources, resource templates, prompts and completions (issue 22),
for the official SDK clients and the runtime tests.

    resources   note://readme (text/markdown), note://logo (a PNG, binary), note://empty-name (text);
                two per page (page size 2), so resources/list has two pages
    templates   note://notes/{name} (text: "Note <name>"), file:///{+path} (text: "path=<path>"),
                search://q{?term,limit} (text: "term=<term> limit=<limit>")
    prompts     greet (name required, style optional), plain (no arguments)
    completion  greet.name, greet.style, note://notes/{name} name
    tools       touch {uri}: notifications/resources/updated for it; grow: adds the prompt "late"
                (notifications/prompts/list_changed); shrink: removes it

Run: python -m tests.runtime.surfaces_server_app --http --port 8000 | --stdio
"""

from __future__ import annotations

import base64
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from mcpgen_runtime.content import ImageContent
from mcpgen_runtime.server import (
    RequestContext,
    ResourceNotFound,
    ServerConfig,
    ToolBinding,
    ToolContext,
    ToolServer,
    serve_main,
)

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
NAMES = ("ada", "alan", "grace", "guido")


class Args(BaseModel):
    model_config = ConfigDict(extra="allow")


TOOLS = [
    {
        "name": "touch",
        "description": "announce that a resource changed",
        "inputSchema": {"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]},
    },
    {"name": "grow", "description": "add the prompt 'late'", "inputSchema": {"type": "object"}},
    {"name": "shrink", "description": "remove the prompt 'late'", "inputSchema": {"type": "object"}},
]
RESOURCES = [
    {"uri": "note://readme", "name": "readme", "title": "Read me", "mimeType": "text/markdown"},
    {"uri": "note://logo", "name": "logo", "description": "a 1x1 PNG", "mimeType": "image/png"},
    {"uri": "note://empty-name", "name": "empty-name"},
]
TEMPLATES = [
    {"uriTemplate": "note://notes/{name}", "name": "note", "mimeType": "text/plain"},
    {"uriTemplate": "file:///{+path}", "name": "file"},
    {"uriTemplate": "search://q{?term,limit}", "name": "search"},
]
GREET = {
    "name": "greet",
    "description": "Greets someone",
    "arguments": [
        {"name": "name", "description": "who", "required": True},
        {"name": "style", "description": "how"},
    ],
}
PLAIN = {"name": "plain", "description": "A plain prompt"}


class SurfacesServer(ToolServer):
    _tool_definitions_: ClassVar[list[dict[str, Any]]] = TOOLS
    _tool_bindings_: ClassVar[tuple[ToolBinding, ...]] = tuple(
        ToolBinding(t["name"], t["name"], Args, None) for t in TOOLS
    )

    @classmethod
    def default_config(cls) -> ServerConfig:
        return ServerConfig(
            name="surfaces-test",
            version="1.0.0",
            page_size=2,
            state_secrets=("surfaces-test-secret-0123456789",),
        )

    def __init__(self, config: ServerConfig | None = None) -> None:
        super().__init__(config)
        for resource in RESOURCES:
            self.add_resource(resource, self.read_static, notify=False)
        self.add_resource_template(TEMPLATES[0], self.read_note, notify=False)
        self.add_resource_template(TEMPLATES[1], self.read_file, notify=False)
        self.add_resource_template(TEMPLATES[2], self.read_search, notify=False)
        self.add_prompt(GREET, self.greet, notify=False)
        self.add_prompt(PLAIN, self.plain, notify=False)
        self.add_completion("prompt", "greet", "name", self.complete_name)
        self.add_completion("prompt", "greet", "style", self.complete_style)
        self.add_completion("resource", "note://notes/{name}", "name", self.complete_name)

    async def read_static(self, uri: str, ctx: RequestContext) -> Any:
        if uri == "note://readme":
            return "# Read me\nmcpgen serves resources."
        if uri == "note://logo":
            return PNG
        return {"uri": uri, "text": "no mime type", "_meta": {"kind": "plain"}}

    async def read_note(self, uri: str, variables: dict[str, Any], ctx: RequestContext) -> str:
        if variables["name"] == "missing":
            raise ResourceNotFound(uri)
        return f"Note {variables['name']}"

    async def read_file(self, uri: str, variables: dict[str, Any], ctx: RequestContext) -> str:
        return f"path={variables['path']}"

    async def read_search(self, uri: str, variables: dict[str, Any], ctx: RequestContext) -> str:
        return f"term={variables.get('term')} limit={variables.get('limit')}"

    async def greet(self, arguments: dict[str, str], ctx: RequestContext) -> list[Any]:
        style = arguments.get("style", "plain")
        return [
            {"role": "assistant", "content": f"({style})"},
            f"Hello, {arguments['name']}!",
            ImageContent(data=base64.b64encode(PNG).decode(), mime_type="image/png"),
        ]

    async def plain(self, arguments: dict[str, str], ctx: RequestContext) -> str:
        return "Just text."

    async def complete_name(self, value: str, context: dict[str, str], ctx: RequestContext) -> list[str]:
        return [n for n in NAMES if n.startswith(value)]

    async def complete_style(
        self, value: str, context: dict[str, str], ctx: RequestContext
    ) -> dict[str, Any]:
        # Over the limit: the first 100 are sent, with hasMore and the total.
        return {"values": [f"{value}{i}" for i in range(150)]}

    async def touch(self, args: Args, ctx: ToolContext) -> str:
        count = self.notify_resource_updated(str(getattr(args, "uri", "")))
        return f"updated sent to {count}"

    async def grow(self, args: Args, ctx: ToolContext) -> str:
        async def late(arguments: dict[str, str], ctx: RequestContext) -> str:
            return "late"

        self.add_prompt({"name": "late", "description": "added at run time"}, late)
        return "grown"

    async def shrink(self, args: Args, ctx: ToolContext) -> str:
        self.remove_prompt("late")
        return "shrunk"


if __name__ == "__main__":
    serve_main(SurfacesServer)
