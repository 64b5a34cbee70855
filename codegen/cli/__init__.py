"""CLI: the `mcpgen` command line (click). `main` is the console script `mcpgen`."""

from .generate import main

__all__ = ["main"]
