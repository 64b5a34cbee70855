"""Interop peer: a server with resources, resource templates, prompts and completion, written with the
official MCP SDK the way Python servers are: SDK 1.x `FastMCP` (run with tests/support.py
`SDK1_PYTHON`, initialize-based revisions only) or SDK 2.x `MCPServer` (run with the dev venv).

    python tests/peers/surfaces_server.py --http --port 8765   # Streamable HTTP at /mcp
    python tests/peers/surfaces_server.py --stdio

Resources: `docs://readme` (text), `docs://logo.png` (binary); templates `users://{user_id}/profile`
(text) and `files://{name}` (echoes the name it was asked for, so a client's RFC 6570 encoding
can be seen); prompts `greet` (one required argument, one optional) and `review` (no arguments,
two messages); completion for the prompt argument `language` and the template variable `user_id`.
"""

from __future__ import annotations

import argparse

try:  # SDK 1.x
    from mcp.server.fastmcp import FastMCP
    from mcp.types import (
        Completion,
        CompletionArgument,
        CompletionContext,
        PromptReference,
        ResourceTemplateReference,
    )

    SDK = 1
except ImportError:  # SDK 2.x
    from mcp.server.mcpserver import MCPServer as FastMCP  # type: ignore[assignment]
    from mcp_types import (  # type: ignore[no-redef]
        Completion,
        CompletionArgument,
        CompletionContext,
        PromptReference,
        ResourceTemplateReference,
    )

    SDK = 2

LOGO = bytes(range(256)) + b"\x89PNG\r\n\x1a\n"
LANGUAGES = ["python", "pytorch", "pyside", "rust"]
USERS = ["alice", "albert", "bob"]


def build(port: int) -> FastMCP:
    server = FastMCP("sdk-surfaces", port=port) if SDK == 1 else FastMCP("sdk-surfaces")

    @server.resource("docs://readme", name="readme", description="The README", mime_type="text/markdown")
    def readme() -> str:
        return "# Read me\n"

    @server.resource("docs://logo.png", name="logo", description="A binary logo", mime_type="image/png")
    def logo() -> bytes:
        return LOGO

    @server.resource("users://{user_id}/profile", name="user_profile", description="A user's profile")
    def user_profile(user_id: str) -> str:
        return f"profile of {user_id}"

    @server.resource("files://{name}", name="file", description="Echoes the name it was asked for")
    def file(name: str) -> str:
        return f"name={name}"

    @server.prompt(name="greet", description="Greet someone")
    def greet(name: str, language: str = "en") -> str:
        return f"Say hello to {name} in {language}."

    @server.prompt(name="review", description="A two-message prompt")
    def review() -> list[dict[str, object]]:
        return [
            {"role": "user", "content": {"type": "text", "text": "Review this."}},
            {"role": "assistant", "content": {"type": "text", "text": "Sure."}},
        ]

    @server.completion()
    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion | None:
        if isinstance(ref, PromptReference) and argument.name == "language":
            values = [value for value in LANGUAGES if value.startswith(argument.value)]
        elif isinstance(ref, ResourceTemplateReference) and argument.name == "user_id":
            values = [value for value in USERS if value.startswith(argument.value)]
        else:
            return None
        return Completion(values=values, total=len(values), hasMore=False)

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--http", action="store_true")
    mode.add_argument("--stdio", action="store_true")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    server = build(args.port)
    if not args.http:
        server.run("stdio")
    elif SDK == 1:
        server.run("streamable-http")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
