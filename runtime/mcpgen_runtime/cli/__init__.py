"""The typed command line every generated client package has: `python -m PKG --url URL TOOL --opt value`.

- `app.py`: the click group (connection options, one subcommand per tool), the call, output and exit codes
- `options.py`: a tool's input schema as click options, and the options back as wire arguments
- `prompts.py`: elicitation forms asked on the terminal (`--no-input` refuses instead)
- `progress.py`: the call's progress on stderr (a bar or spinner on a terminal, plain lines elsewhere)
- `text.py`: server-supplied text made inert for a terminal and for click's help formatter

This package sits above `client/` (it drives the generated `Client`) and needs click: the
`mcpgen-runtime[cli]` extra, so that a program that only calls tools does not install it.
"""

try:
    import click  # noqa: F401
except (
    ImportError
) as exc:  # pragma: no cover - exercised in the runtime-only venv (tests/test_distributions.py)
    raise ImportError(
        "the command line of generated clients needs click: pip install 'mcpgen-runtime[cli]'"
    ) from exc

from .app import EXIT_INPUT, EXIT_PROTOCOL, EXIT_TOOL_ERROR, EXIT_USAGE, CliTool, build_cli, run_cli

__all__ = ["EXIT_INPUT", "EXIT_PROTOCOL", "EXIT_TOOL_ERROR", "EXIT_USAGE", "CliTool", "build_cli", "run_cli"]
