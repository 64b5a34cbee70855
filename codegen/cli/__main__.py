"""`python -m codegen.cli`: the `mcpgen` command line."""

from .app import main

main()
