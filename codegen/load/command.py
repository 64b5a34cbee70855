"""What a stdio server's command line starts: the package, module or script after its launcher
(`npx -y @modelcontextprotocol/server-everything stdio` → `@modelcontextprotocol/server-everything`,
`uvx mcp-server-fetch` → `mcp-server-fetch`, `python -m weather_server` → the module
`weather_server`). Messages and generated headers name a stdio source by it (`shown_command`), and
`mcpgen client` names a package after it when the server does not name itself."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["LAUNCHERS", "Started", "shown_command", "started"]

# programs that start another one, and the words that follow them before it (`uv run`, `npm exec`)
LAUNCHERS = frozenset(
    [
        "npx",
        "bunx",
        "pnpx",
        "uvx",
        "pipx",
        "uv",
        "node",
        "nodejs",
        "deno",
        "bun",
        "npm",
        "pnpm",
        "yarn",
        "docker",
        "podman",
        "env",
        "sh",
        "bash",
        "java",
        "python",
        "python3",
        "py",
        "pypy",
        "pypy3",
    ]
)
_SUBCOMMANDS = frozenset(["run", "exec", "dlx", "x", "tool", "start"])
_PYTHON = re.compile(r"(python|pypy)[0-9.]*|py\Z")
# launcher options whose value is the next argument (`uv --directory DIR run server.py`)
_VALUED = frozenset(
    [
        "--directory",
        "--project",
        "--with",
        "--from",
        "--python",
        "-p",
        "--package",
        "-e",
        "--env",
        "--env-file",
        "-v",
        "--volume",
        "--name",
        "--network",
        "--mount",
        "-w",
        "--workdir",
        "-u",
        "--user",
        "--index-url",
        "--cwd",
    ]
)
_ENV_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Started:
    """The package, script or module (`module`: after `python -m`) a command line starts."""

    name: str
    module: bool = False


def _program(arg: str) -> str:
    name = os.path.basename(arg).lower()
    return name[:-4] if name.endswith(".exe") else name


def _is_launcher(arg: str) -> bool:
    name = _program(arg)
    return name in LAUNCHERS or bool(_PYTHON.fullmatch(name))


def started(argv: Sequence[str]) -> Started | None:
    """What `argv` starts: argv[0] itself unless it is a launcher (npx, uvx, node, python, docker,
    ...), else the first argument after it that is no option, no `NAME=value` and no subcommand.
    None when nothing is named (`python -c CODE`)."""
    if not argv:
        return None
    if not _is_launcher(argv[0]):
        return Started(argv[0])
    index = 1
    while index < len(argv):
        arg = argv[index]
        if arg in ("-m", "--module") and index + 1 < len(argv):
            return Started(argv[index + 1], module=True)
        if arg.startswith("-m") and len(arg) > 2 and _PYTHON.fullmatch(_program(argv[0])):
            return Started(arg[2:], module=True)
        if arg == "-c":
            return None
        if arg in _VALUED:
            index += 2
            continue
        if arg.startswith("-") or _ENV_ASSIGNMENT.match(arg) or arg in _SUBCOMMANDS or _is_launcher(arg):
            index += 1
            continue
        return Started(arg)
    return None


def shown_command(argv: Sequence[str]) -> str:
    """The display name of a stdio source: `stdio:` and the program, then what it starts
    (`stdio:npx @modelcontextprotocol/server-everything`, `stdio:python -m weather_server`); an
    absolute path by its last three parts only (`weather-mcp/build/index.js`), so the name is the
    same in every checkout and tells two servers' scripts apart."""
    program = os.path.basename(argv[0]) if argv else ""
    what = started(argv)
    if what is None or what.name == argv[0]:
        return f"stdio:{program}"
    if what.module:
        return f"stdio:{program} -m {what.name}"
    name = what.name
    if os.path.isabs(name) or name.startswith("~"):
        name = "/".join([part for part in re.split(r"[/\\]+", name) if part][-3:])
    return f"stdio:{program} {name}"
