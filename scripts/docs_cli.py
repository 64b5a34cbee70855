"""The click commands the CLI reference (docs/reference/cli.md, docs/reference/command-line.md)
documents with mkdocs-click, which takes a module attribute: the generator's group is one already;
a generated package's command line and a generated server's `python -m PKG` are built on call, so
they are built here, from the checked-in weather bindings (generated/)."""

from __future__ import annotations

import weather_client.__main__ as weather_cli  # generated/ is on the path (scripts/docs_hooks.py)

from codegen.cli import main as mcpgen
from mcpgen_runtime.cli.app import build_cli
from mcpgen_runtime.server.cli import build_command

client = build_cli(
    weather_cli.Client, weather_cli._TOOLS, prog="python -m weather_client", models=weather_cli._m
)
server = build_command()

__all__ = ["client", "mcpgen", "server"]
