"""Versions that generated code and peers check against."""

# Bumped whenever the surface that generated code calls changes incompatibly.
RUNTIME_API_VERSION = 1

# The MCP revision this runtime speaks, and every revision it accepts.
PROTOCOL_VERSION = "2026-07-28"
SUPPORTED_PROTOCOL_VERSIONS: tuple[str, ...] = (PROTOCOL_VERSION,)

__version__ = "0.1.0"
