# Created by mcpgen 0.1.0 from specs/bench.json (sha256 03583bfa831e8d3ac126c337114409e7b0a5bd08109e20774ddd7c6969d665ca).
# This file is yours: mcpgen writes it once and never overwrites it. Regenerating updates base.py only.
"""Tool handlers: override each method, then serve with
`python -m bench_server --http --port 8000` or `python -m bench_server --stdio`.

Return the output model (or its root value) for tools with an outputSchema; otherwise a str,
a content block, a list of blocks or a ToolResult. Raise ToolExecutionError for a tool error.
"""

from mcpgen_runtime.server import ToolContext

from . import models as _m
from .base import ServerBase


class Server(ServerBase):
    """Your tool implementations. Methods you do not override answer "not implemented"."""

    async def add(self, args: _m.AddInput, ctx: ToolContext) -> _m.AddOutput:
        """Add two numbers (the benchmark tool: bench/)"""
        return _m.AddOutput(sum=args.a + args.b)
