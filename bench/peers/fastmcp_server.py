"""`add(a, b) -> {sum}` on FastMCP (`fastmcp`), as an ASGI app with FastMCP's HTTP defaults.

FastMCP validates arguments from the signature and derives the outputSchema `{"sum": number}`
from `AddOutput`. bench/serve.py runs it under uvicorn like every server.
"""

from __future__ import annotations

from typing import Any

from fastmcp import FastMCP
from pydantic import BaseModel


class AddOutput(BaseModel):
    sum: float


def build_app() -> Any:
    server = FastMCP("bench-fastmcp")

    @server.tool(description="Add two numbers")
    def add(a: float, b: float) -> AddOutput:
        return AddOutput(sum=a + b)

    return server.http_app(path="/mcp")
