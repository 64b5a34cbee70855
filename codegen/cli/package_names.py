"""The package name `mcpgen client` / `server` choose when `--package` is not given.

In order: the server's name in an MCP config file (`.mcp.json#github` → `github_client`: the user
chose it); the name a live server gives itself (`serverInfo.name`: untrusted text, made an
identifier as every wire name is, `model.naming.words`); the package, module or script a stdio
command starts (`load.command.started`); a URL's host; a spec file's name. A server's or a
command's name loses its scope and the `mcp`/`server` words around it (`@modelcontextprotocol/
server-everything` → `everything_client`, `mcp-server-fetch` → `fetch_client`, `weather_server` →
`weather_client`); a name that is nothing but a transport or launcher word (`stdio`, `npx`,
`python`, `http`, ...) is passed over for the next.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from ..load.command import LAUNCHERS
from ..load.mcp_config import split_config_source
from .stages import Kind

__all__ = ["default_package_name", "package_names"]

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
