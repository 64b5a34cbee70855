"""Versions that generated code and peers check against."""

# Bumped whenever the surface that generated code calls changes incompatibly.
RUNTIME_API_VERSION = 2

# The MCP revision this runtime speaks, and every revision of that (stateless) era it accepts.
PROTOCOL_VERSION = "2026-07-28"
SUPPORTED_PROTOCOL_VERSIONS: tuple[str, ...] = (PROTOCOL_VERSION,)

# The initialize-based revisions this runtime also speaks (protocol/legacy/handshake.py), newest first.
LEGACY_PROTOCOL_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26")


def _installed_version() -> str:
    try:  # written by the build from the git tag (runtime/pyproject.toml: hatch-vcs)
        from ._build_version import __version__ as built  # type: ignore[import-not-found,unused-ignore]

        return str(built)
    except ImportError:  # a source tree on sys.path that was never built: ask the installed metadata
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("mcpgen-runtime")
        except PackageNotFoundError:
            return "0+unknown"


__version__ = _installed_version()
