"""`python -m codegen.cli`: the `mcpgen` command line."""

from .generate import main

main()
