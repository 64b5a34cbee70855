"""mcpgen: typed Python bindings (clients and servers) from MCP tool definitions."""

import re

from mcpgen_runtime._version import __version__


def release_of(version: str) -> str:
    """The release a build descends from: `0.2.0` for 0.2.0 and for 0.2.0.post1.dev5+g1a2b3c4."""
    match = re.match(r"\d+(?:\.\d+)*", version)
    return match[0] if match else "0"


# What generated headers name, so checked-in bindings do not change with every commit of the generator.
RELEASE = release_of(__version__)

__all__ = ["RELEASE", "__version__", "release_of"]
