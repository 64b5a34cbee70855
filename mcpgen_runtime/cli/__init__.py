"""The typed command line every generated client package has: `python -m PKG --url URL TOOL --opt value`.

- `app.py`: the click group (connection options, one subcommand per tool), the call, output and exit codes
- `options.py`: a tool's input schema as click options, and the options back as wire arguments
- `prompts.py`: elicitation forms asked on the terminal (`--no-input` refuses instead)
- `text.py`: server-supplied text made inert for a terminal and for click's help formatter

This package sits above `client/` (it drives the generated `Client`) and is the one part of the
runtime that imports click (a dependency of mcpgen itself, for the generator's command line).
"""

from .app import EXIT_INPUT, EXIT_PROTOCOL, EXIT_TOOL_ERROR, EXIT_USAGE, CliTool, build_cli, run_cli

__all__ = ["EXIT_INPUT", "EXIT_PROTOCOL", "EXIT_TOOL_ERROR", "EXIT_USAGE", "CliTool", "build_cli", "run_cli"]
