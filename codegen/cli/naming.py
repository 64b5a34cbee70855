"""How what mcpgen writes is named when the command does not say.

The package: the name `mcpgen client` / `server` choose when `--package` is not given. In order: the
server's name in an MCP config file (`.mcp.json#github` → `github_client`: the user chose it); the name
a live server gives itself (`serverInfo.name`: untrusted text, made an identifier as every wire name is,
`model.naming.words`); the package, module or script a stdio command starts (`load.command.started`); a
URL's host; a spec file's name. A server's or a command's name loses its scope and the `mcp`/`server`
words around it (`@modelcontextprotocol/ server-everything` → `everything_client`, `mcp-server-fetch` →
`fetch_client`, `weather_server` → `weather_client`); a name that is nothing but a transport or launcher
word (`stdio`, `npx`, `python`, `http`, ...) is passed over for the next.

The project: `mcpgen client ... --project DIR` (and a `[tool.mcpgen]` target's `project`) writes an
installable project around the client package. What goes where and whose files are whose:
codegen/render/project.py and codegen/write/project.py.

The distribution's name and version come from `--project-name` / `--project-version`, else from the
server's `serverInfo` (a live server's discover answer, or a saved result's), else from the package:

    name     --project-name | serverInfo name, normalised, + "-client" | the package in kebab case
    version  --project-version | serverInfo version | 0.1.0

Each is checked (PEP 508 / PEP 440) wherever it came from; an error names the flag that fixes it."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import click

from mcpgen_runtime._version import __version__ as runtime_version

from ..load.command import LAUNCHERS
from ..load.mcp_config import split_config_source
from ..render.project import (
    ProjectMeta,
    check_project_name,
    check_project_version,
    console_script_name,
    runtime_requirement,
)
from .stages import Kind

__all__ = ["DEFAULT_VERSION", "default_package_name", "package_names", "project_meta", "project_options"]

_AFFIX_WORDS = frozenset({"mcp", "server"})
# names that say how a server is reached or started, or what it is built with, not which it is
_NOT_A_NAME = LAUNCHERS | frozenset(
    [
        "stdio",
        "sse",
        "http",
        "https",
        "streamable",
        "run",
        "exec",
        "localhost",
        "mcpgen",
        "mcpgen_mock",
        "fastmcp",
        "index",
        "main",
        "app",
        "cli",
        "build",
        "dist",
        "src",
        "lib",
        "bin",
        "out",
    ]
)
_FILE_SUFFIX = re.compile(r"\.(py|pyz|js|mjs|cjs|ts|mts|jar|git|exe)\Z", re.IGNORECASE)
_VERSION = re.compile(r"(?<=.)@.*\Z|[=<>~!].*\Z|\[.*\Z|:[^/\\]*\Z")  # pkg@1, pkg==1, pkg[x], image:tag


def _identifier(text: str) -> str:
    """`text` as a lower-case identifier (the words of `model.naming`, ASCII only; `mcp` when
    none is left, `mcp_` before a digit)."""
    from ..model.naming import cap_length, words

    ident = "_".join(words(text)).lower() or "mcp"
    return cap_length(f"mcp_{ident}" if ident[0].isdigit() else ident)


def _name_words(part: str) -> list[str]:
    """The words of one name, without the `mcp`/`server` words before and after it (none for a
    name such as `FastMCP`, which says what the server is built with)."""
    from ..model.naming import words

    found = [word.lower() for word in words(part)]
    if "".join(found) in _NOT_A_NAME:
        return []
    while found and found[0] in _AFFIX_WORDS:
        found.pop(0)
    while found and found[-1] in _AFFIX_WORDS:
        found.pop()
    return found


def _server_name(text: str, *, module: bool = False) -> str | None:
    """The name a package, script, module, image or server name carries: its last part that is a
    name (`@scope/server-x@1.2` → `x`, `weather-mcp/build/index.js` → `weather`, `pkg.server` →
    `pkg`), or None."""
    parts = text.split(".") if module else re.split(r"[/\\]+", text)
    for part in reversed(parts):
        part = _FILE_SUFFIX.sub("", _VERSION.sub("", part))
        found = _name_words(part)
        name = "_".join(found)
        if found and name not in _NOT_A_NAME:
            return name
    return None


def _from_command(stdio: str) -> str | None:
    from ..load.command import started

    try:
        argv = shlex.split(stdio)
    except ValueError:
        argv = stdio.split()
    what = started(argv)
    return None if what is None else _server_name(what.name, module=what.module)


def default_package_name(
    source: str | None, stdio: str | None, kind: Kind, server_info: Mapping[str, str] | None = None
) -> str:
    """`specs/weather.json` → `weather_client`; `.mcp.json#github` → `github_client`; a live server
    that calls itself `example-servers/everything` → `everything_client`; `--stdio "uvx
    mcp-server-fetch"` → `fetch_client`; `https://api.example.com/mcp` → `api_example_com_client`."""
    in_config = split_config_source(source) if source else None
    if in_config is not None:
        return f"{_identifier(in_config[1])}_{kind}"
    live = stdio is not None or (source is not None and "://" in source)
    name = None
    if live and server_info is not None and isinstance(server_info.get("name"), str):
        name = _server_name(server_info["name"])
    if name is None and stdio is not None:
        name = _from_command(stdio)
    if name is None and source:
        name = (urlsplit(source).hostname or "") if "://" in source else Path(source).stem
    return f"{_identifier(name or '')}_{kind}"


def package_names(servers: Iterable[str], kind: Kind) -> dict[str, str]:
    """A package name per server name of a config file, in order: the name made an identifier plus
    `_client` (`my-server` → `my_server_client`); a name taken by an earlier server gets `_2`, ..."""
    taken: set[str] = set()
    names: dict[str, str] = {}
    for server_name in servers:
        base = _identifier(server_name)
        candidate, number = f"{base}_{kind}", 1
        while candidate in taken:
            number += 1
            candidate = f"{base}_{number}_{kind}"
        taken.add(candidate)
        names[server_name] = candidate
    return names


DEFAULT_VERSION = "0.1.0"
_F = TypeVar("_F", bound=Callable[..., Any])


def project_options(function: _F) -> _F:
    for option in reversed(
        (
            click.option(
                "--project",
                "project",
                metavar="DIR",
                type=click.Path(file_okay=False, path_type=Path),
                help="Write an installable project: DIR/pyproject.toml, DIR/README.md, DIR/src/PACKAGE/ "
                "(instead of -o). The sections marked 'yours' in those files are kept when regenerating.",
            ),
            click.option(
                "--project-name",
                metavar="NAME",
                help="Distribution name (PEP 508) [default: the server's serverInfo name + '-client', "
                "else the package name in kebab case].",
            ),
            click.option(
                "--project-version",
                metavar="VERSION",
                help=(
                    "Distribution version (PEP 440) "
                    f"[default: the server's serverInfo version, else {DEFAULT_VERSION}]."
                ),
            ),
        )
    ):
        function = option(function)
    return function


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def project_meta(
    package: str, server_info: Mapping[str, str] | None, name: str | None, version: str | None
) -> ProjectMeta:
    """The checked name, version, console script and runtime requirement of a project."""
    info = server_info or {}
    if name is not None:
        name = check_project_name(name, "--project-name")
    elif "name" in info:
        found = check_project_name(info["name"], "the server's serverInfo name")
        name = found if _normalised(found).endswith("client") else f"{_normalised(found)}-client"
        name = check_project_name(name, "the serverInfo name + '-client'")
    else:
        name = console_script_name(package)
    if version is not None:
        version = check_project_version(version, "--project-version")
    elif "version" in info:
        version = check_project_version(info["version"], "the server's serverInfo version")
    else:
        version = DEFAULT_VERSION
    return ProjectMeta(
        name=name,
        version=version,
        script=console_script_name(package),
        requirement=runtime_requirement(runtime_version),
    )
