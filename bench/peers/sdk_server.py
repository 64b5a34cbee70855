"""`add(a, b) -> {sum}` on the official MCP Python SDK (`mcp`, `MCPServer`), as an ASGI app.

`build_app(json_response=False)` is the SDK's default Streamable HTTP app (replies are SSE
streams); `json_response=True` is its JSON-reply mode. Both validate arguments with the
function signature and the result with the output model (the SDK derives the outputSchema
`{"sum": number}` from `AddOutput`). bench/serve.py runs it under uvicorn like every server.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel


class AddOutput(BaseModel):
    sum: float


def build_app(*, json_response: bool = False) -> Any:
    server: MCPServer[Any] = MCPServer("bench-sdk", version="1.0.0", log_level="WARNING")

    @server.tool(description="Add two numbers")
    def add(a: float, b: float) -> AddOutput:
        return AddOutput(sum=a + b)

    return server.streamable_http_app(json_response=json_response)
