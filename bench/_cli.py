"""How a benchmark script runs its click command from `main(argv)`, as its argparse parser did.

`run(command, argv)` parses `argv` (None: the process's own arguments) and returns what the command
returns, so `main(argv)` keeps its return value; `--help` prints and exits 0, a usage error prints
the usage and exits 2, and Ctrl-C stays a KeyboardInterrupt. (bench/gen_bench.py, also run as a
plain file, carries its own copy of these few lines.)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import click


def prog_name(command: click.Command) -> str:
    """`python -m bench.<module>` for the usage line, as `python -m` ran it."""
    module = getattr(command.callback, "__module__", None) or ""
    if module == "__main__":
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        if spec is None:
            return os.path.basename(sys.argv[0])
        module = spec.name
    return f"python -m {module.removesuffix('.__main__')}"


def run(command: click.Command, argv: Sequence[str] | None = None, **extra: Any) -> Any:
    """`command` on `argv`; `extra` goes to its context (e.g. `obj`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        with command.make_context(prog_name(command), args, **extra) as ctx:
            return command.invoke(ctx)
    except click.exceptions.Exit as exc:  # --help
        raise SystemExit(exc.exit_code) from None
    except click.ClickException as exc:
        exc.show()
        raise SystemExit(exc.exit_code) from None
