"""CLI: the `mcpgen` command line (click). `main` is the console script `mcpgen`.

app.py       the `mcpgen` group: every command added under it
common.py    exit codes, error reporting, the source options, a loaded spec checked for use
stages.py    load / validate / build, imported on first use (`mcpgen --help` stays fast)
inspect.py   `mcpgen validate`, `mcpgen snapshot`
generate.py  `mcpgen client`, `mcpgen server`, `mcpgen generate` ([tool.mcpgen] targets, --check)
diff.py      `mcpgen diff`
mock.py      `mcpgen mock`
auth.py      `mcpgen auth login|logout|status` and the login options of commands that read a URL
config.py    `[tool.mcpgen]` targets and the `[tool.black]` style of an output directory
"""

from .app import main

__all__ = ["main"]
