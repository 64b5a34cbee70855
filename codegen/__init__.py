"""mcpgen: typed Python bindings from MCP tool definitions."""

from mcpgen_runtime._version import __version__

__all__ = ["__version__"]
