"""Versions that generated code and peers check against."""

# Bumped whenever the surface that generated code calls changes incompatibly.
RUNTIME_API_VERSION = 2

# The MCP revision this runtime speaks, and every revision of that (stateless) era it accepts.
PROTOCOL_VERSION = "2026-07-28"
SUPPORTED_PROTOCOL_VERSIONS: tuple[str, ...] = (PROTOCOL_VERSION,)

# The initialize-based revisions this runtime also speaks (protocol/legacy/handshake.py), newest first.
LEGACY_PROTOCOL_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26")

__version__ = "0.1.0"
