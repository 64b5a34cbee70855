"""The checked-in generated weather server with one more tool, `whoami`, that reports the
principal the server verified (`ctx.principal`), and the per-tool scope a generated server
declares (`_tool_scopes_`). Run as `python -m tests.auth.oauth_server_app` with
`mcpgen_runtime.server.serve_main`'s flags (`--oauth-issuer`, `--resource`, ...)."""

from __future__ import annotations

from typing import Any, ClassVar

from weather_server.handlers import Server

from mcpgen_runtime.server import ServerConfig, ToolContext, serve_main


class WhoAmIServer(Server):
    _tool_scopes_: ClassVar[dict[str, tuple[str, ...]]] = {"execute_sql": ("mcp:admin",)}

    def __init__(self, config: ServerConfig | None = None) -> None:
        super().__init__(config)
        self.add_tool(
            {
                "name": "whoami",
                "description": "The caller as the server sees it.",
                "inputSchema": {"type": "object"},
            },
            self._whoami,
        )

    async def _whoami(self, args: Any, ctx: ToolContext) -> str:
        principal = ctx.principal
        return f"{principal.subject} | {' '.join(sorted(principal.scopes))} | {principal}"


if __name__ == "__main__":
    serve_main(WhoAmIServer)
