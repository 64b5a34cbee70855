"""`python -m mcpgen_runtime.mock SPEC [--http | --stdio] ...` (see command.py)."""

from .command import main

main()
