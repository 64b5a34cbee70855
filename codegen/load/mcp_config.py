"""MCP config files as sources: the server definitions editors and hosts already keep.

    mcpServers files   Claude Desktop `claude_desktop_config.json`, Cursor `.cursor/mcp.json`, Claude
                       Code `.mcp.json` (`type`: stdio | http | sse), Windsurf `mcp_config.json`
                       (`serverUrl` for remote servers), `~/.claude.json`
    VS Code            `.vscode/mcp.json`: top-level `servers` and `inputs`, JSON with comments and
                       trailing commas
    Codex              `config.toml`: `[mcp_servers.NAME]` (`command`, `args`, `env`, `env_vars`, `cwd`;
                       `url`, `http_headers`, `env_http_headers`, `bearer_token_env_var`)

`read_config` parses a file into `ConfigEntry`s without resolving anything (so `mcpgen servers` can
list a file whose variables are not set); `launch.resolve_entry` turns one entry into a `ServerLaunch`:
an argv with its env and cwd, or a URL with its headers. Variables in strings of the JSON formats:
`${env:NAME}`, `${NAME}` and `${NAME:-default}` (Claude Code's form), `${input:ID}` (read from the
environment variable `MCPGEN_INPUT_<ID>`: mcpgen never prompts), `${userHome}`, `${workspaceFolder}`,
`${workspaceFolderBasename}`, `${pathSeparator}` / `${/}`. Codex expands nothing in its file; its
`*_env_var` keys name environment variables instead.

Every value that came from the environment or an input, every env and header value of the entry,
each query value of its URL and each literal argument that carries a credential is in
`ServerLaunch.secrets` (the policy and its threshold: `mcpgen_runtime.masking`): no message, log
line or file shows it. A `ServerLaunch` is used, never written: generated files record `source`
(`FILE#NAME`) only.

Errors name the file, the server and the RFC 6901 pointer into the file's data (TOML tables read
as JSON would be), with the rule name `MCPGEN-CONFIG`.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from mcpgen_runtime.masking import Secrets

from ..errors import SpecLoadError
from ..refs import escape_token

__all__ = [
    "INPUT_ENV_PREFIX",
    "RULE",
    "ConfigEntry",
    "ConfigFile",
    "McpConfigError",
    "ServerLaunch",
    "config_error",
    "read_config",
    "shown_url",
    "split_config_source",
    "strip_jsonc",
    "type_name",
    "well_known_files",
]

RULE: Final = "MCPGEN-CONFIG"
INPUT_ENV_PREFIX: Final = "MCPGEN_INPUT_"
MAX_CONFIG_BYTES: Final = 16 * 1024 * 1024

# Repeats in shape only (duplicates): a Literal and a Final table, as diff/formats.py declares its own.
Format = Literal["mcpServers", "vscode", "codex"]
Transport = Literal["stdio", "http", "sse"]

_REMOTE_TYPES: Final[dict[str, Transport]] = {
    "http": "http",
    "streamable-http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}


class McpConfigError(SpecLoadError):
    """A config file that cannot be read, or a server entry that cannot be used."""


def _where(path: Path | str, server: str | None, pointer: str) -> str:
    who = f"server {server!r} " if server is not None else ""
    return f"{path}: {who}at {pointer or '/'}: {RULE}"


def config_error(path: Path | str, server: str | None, pointer: str, what: str) -> McpConfigError:
    return McpConfigError(f"{_where(path, server, pointer)}: {what}")


@dataclass(frozen=True)
class ConfigEntry:
    """One server as the file defines it (variables not yet expanded)."""

    file: Path
    format: Format
    name: str
    pointer: str  # where the entry is in the file's data: /mcpServers/NAME, /servers/NAME, /mcp_servers/NAME
    transport: Transport
    data: Mapping[str, Any]
    disabled: bool = False

    @property
    def remote(self) -> bool:
        return self.transport != "stdio"

    def summary(self) -> str:
        """What `mcpgen servers` shows: the command's name or the URL without query or credentials;
        never arguments, env values or headers (they may hold secrets)."""
        if self.transport == "stdio":
            args = self.data.get("args") or []
            count = f" (+{len(args)} argument(s))" if isinstance(args, list) and args else ""
            return f"{os.path.basename(str(self.data.get('command', '')))}{count}"
        url = str(self.data.get("url") or self.data.get("serverUrl") or "")
        return shown_url(url)


@dataclass(frozen=True)
class ConfigFile:
    path: Path
    format: Format
    entries: Mapping[str, ConfigEntry]
    inputs: Mapping[str, str] = field(default_factory=dict)  # ${input:ID} declared: ID -> description

    def entry(self, name: str) -> ConfigEntry:
        if name in self.entries:
            return self.entries[name]
        known = ", ".join(repr(n) for n in self.entries) or "none"
        raise config_error(
            self.path, name, _servers_pointer(self.format), f"no server named {name!r} (servers: {known})"
        )


@dataclass(frozen=True)
class ServerLaunch:
    """One entry resolved: how to reach the server. Never written anywhere."""

    source: str  # FILE#NAME: what messages and generated headers say
    transport: Transport
    argv: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)  # added to the current environment
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    # never shown: replaced with *** in any message; a listing holding one of its credentials is refused
    secrets: Secrets = field(default_factory=Secrets)


def shown_url(url: str) -> str:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<invalid URL>"
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme.lower()}://{host}{parts.path}" if parts.scheme else url.split("?")[0]


def _servers_pointer(fmt: Format) -> str:
    return {"mcpServers": "/mcpServers", "vscode": "/servers", "codex": "/mcp_servers"}[fmt]


# -- reading ---------------------------------------------------------------------------------------


def strip_jsonc(text: str) -> str:
    """JSON with comments (`//`, `/* */`) and trailing commas, as VS Code reads its settings, made
    plain JSON. Comments become spaces (newlines kept) so line and column numbers stay right;
    strings are left exactly as they are."""
    out: list[str] = []
    i, n = 0, len(text)
    pending_comma: int | None = None  # index in `out` of a comma that may turn out to be trailing
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            pending_comma = None
            i = j + 1
        elif ch == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif ch == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif ch == ",":
            pending_comma = len(out)
            out.append(ch)
            i += 1
        elif ch in "}]":
            if pending_comma is not None:
                out[pending_comma] = " "
            pending_comma = None
            out.append(ch)
            i += 1
        else:
            if not ch.isspace():
                pending_comma = None
            out.append(ch)
            i += 1
    return "".join(out)


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"member {key[:80]!r} appears twice in one object")
        result[key] = value
    return result


def _read_document(path: Path) -> tuple[Any, bool]:
    """(the file's data, whether it is TOML)."""
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise McpConfigError(f"{path}: cannot read the config file: {exc.strerror or exc}") from exc
    if len(data) > MAX_CONFIG_BYTES:
        raise McpConfigError(
            f"{path}: larger than {MAX_CONFIG_BYTES // (1024 * 1024)} MiB; not a config file"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise McpConfigError(f"{path}: not UTF-8 (byte {exc.start})") from exc
    if path.suffix.lower() == ".toml":
        try:
            return tomllib.loads(text), True
        except tomllib.TOMLDecodeError as exc:
            raise McpConfigError(f"{path}: {RULE}: invalid TOML: {exc}") from exc
    try:
        return json.loads(strip_jsonc(text), object_pairs_hook=_unique_members), False
    except json.JSONDecodeError as exc:
        raise McpConfigError(
            f"{path}: {RULE}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    except ValueError as exc:  # a duplicate member, or a number json cannot hold
        raise McpConfigError(f"{path}: {RULE}: invalid JSON: {exc}") from exc


def read_config(path: str | os.PathLike[str], *, cwd: Path | None = None) -> ConfigFile:
    """The servers a config file defines, in file order; nothing expanded, nothing started.

    `~/.claude.json` also holds Claude Code's local servers of each project (`claude mcp add`'s
    default scope) under `/projects/<directory>/mcpServers`: those of `cwd` (default: the current
    directory) are read too, after the user's, and win over a user server of the same name."""
    path = Path(path)
    document, is_toml = _read_document(path)
    if not isinstance(document, dict):
        raise config_error(path, None, "", f"expected an object, found {type_name(document)}")
    tables: list[tuple[str, Any]] = []
    if is_toml:
        fmt: Format = "codex"
        tables.append(("/mcp_servers", document.get("mcp_servers", {})))
    elif path.name == ".claude.json":
        fmt = "mcpServers"
        tables.append(("/mcpServers", document.get("mcpServers", {})))
        projects = document.get("projects")
        here = str((Path.cwd() if cwd is None else cwd).resolve())
        if (
            isinstance(projects, dict)
            and isinstance(projects.get(here), dict)
            and "mcpServers" in projects[here]
        ):
            tables.append((f"/projects/{escape_token(here)}/mcpServers", projects[here]["mcpServers"]))
    elif "mcpServers" in document:
        fmt = "mcpServers"
        tables.append(("/mcpServers", document["mcpServers"]))
    elif "servers" in document:
        fmt = "vscode"
        tables.append(("/servers", document["servers"]))
    else:
        raise config_error(
            path,
            None,
            "",
            "no servers: expected `mcpServers` (Claude, Cursor, Windsurf), `servers` (VS Code) "
            "or, in a .toml file, [mcp_servers.NAME] tables (Codex)",
        )
    entries: dict[str, ConfigEntry] = {}
    for top, table in tables:
        if not isinstance(table, dict):
            raise config_error(path, None, top, f"expected an object of servers, found {type_name(table)}")
        for name, data in table.items():
            pointer = f"{top}/{escape_token(name)}"
            if not isinstance(data, dict):
                raise config_error(path, name, pointer, f"expected an object, found {type_name(data)}")
            entries.pop(name, None)  # a project's own server comes after the user's of that name
            entries[name] = ConfigEntry(
                file=path,
                format=fmt,
                name=name,
                pointer=pointer,
                transport=_transport(path, name, pointer, data, fmt),
                data=data,
                disabled=data.get("disabled") is True or data.get("enabled") is False,
            )
    inputs: dict[str, str] = {}
    if fmt == "vscode":
        inputs = _inputs(path, document.get("inputs", []))
    return ConfigFile(path, fmt, entries, inputs)


def _inputs(path: Path, raw: Any) -> dict[str, str]:
    if not isinstance(raw, list):
        raise config_error(path, None, "/inputs", f"expected an array, found {type_name(raw)}")
    inputs: dict[str, str] = {}
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise config_error(path, None, f"/inputs/{index}", "expected an object with a string `id`")
        description = item.get("description")
        inputs[item["id"]] = description if isinstance(description, str) else ""
    return inputs


def _transport(path: Path, name: str, pointer: str, data: Mapping[str, Any], fmt: Format) -> Transport:
    kind = data.get("type", data.get("transport"))
    has_command = "command" in data
    url_key = "serverUrl" if "serverUrl" in data else "url"
    has_url = url_key in data
    if kind is not None:
        key = "type" if "type" in data else "transport"
        if not isinstance(kind, str):
            raise config_error(path, name, f"{pointer}/{key}", f"expected a string, found {type_name(kind)}")
        lowered = kind.lower()
        if lowered == "stdio":
            if not has_command:
                raise config_error(path, name, pointer, "a stdio server needs `command`")
            return "stdio"
        if lowered in _REMOTE_TYPES:
            if not has_url:
                raise config_error(path, name, pointer, f"a {kind} server needs `url`")
            return _REMOTE_TYPES[lowered]
        raise config_error(
            path, name, f"{pointer}/{key}", f"unknown server type {kind[:80]!r}; expected stdio, http or sse"
        )
    if has_command and has_url:
        raise config_error(path, name, pointer, f"both `command` and `{url_key}`: give one (or `type`)")
    if has_command:
        return "stdio"
    if has_url:
        return "http"
    raise config_error(path, name, pointer, "neither `command` (a stdio server) nor `url` (a remote server)")


def type_name(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else "a number"
    )


# -- resolving -------------------------------------------------------------------------------------


def split_config_source(source: str, base: Path | None = None) -> tuple[Path, str] | None:
    """`FILE#NAME` -> (FILE, NAME) when FILE is an existing file (relative paths: to `base`, else
    the current directory) and the whole source is not one; the first `#` whose left side is a
    file counts, so a server name may hold `#`."""
    root = Path() if base is None else base
    if "#" not in source or "://" in source or (root / source).is_file():
        return None
    for match in re.finditer("#", source):
        left, name = source[: match.start()], source[match.end() :]
        if left and name and (root / left).is_file():
            return root / left, name
    return None


def well_known_files(
    cwd: Path, home: Path, platform: str = sys.platform, environ: Mapping[str, str] | None = None
) -> list[tuple[str, str, Path]]:
    """(scope, host, path) of every place a host keeps MCP servers, project files first; they
    need not exist."""
    environ = os.environ if environ is None else environ
    if platform == "darwin":
        app_data = home / "Library" / "Application Support"
    elif platform == "win32":
        app_data = Path(environ.get("APPDATA", str(home)))
    else:
        app_data = Path(environ.get("XDG_CONFIG_HOME", str(home / ".config")))
    claude_desktop = app_data / "Claude" / "claude_desktop_config.json"
    codex_home = Path(environ["CODEX_HOME"]) if environ.get("CODEX_HOME") else home / ".codex"
    project = [
        ("project", "Claude Code", cwd / ".mcp.json"),
        ("project", "Cursor", cwd / ".cursor" / "mcp.json"),
        ("project", "VS Code", cwd / ".vscode" / "mcp.json"),
        ("project", "Codex", cwd / ".codex" / "config.toml"),
    ]
    user = [
        ("user", "Claude Desktop", claude_desktop),
        ("user", "Claude Code", home / ".claude.json"),
        ("user", "Cursor", home / ".cursor" / "mcp.json"),
        ("user", "VS Code", app_data / "Code" / "User" / "mcp.json"),
        ("user", "Windsurf", home / ".codeium" / "windsurf" / "mcp_config.json"),
        ("user", "Codex", codex_home / "config.toml"),
    ]
    seen: set[Path] = set()
    found = []
    for scope, host, path in project + user:
        key = path.resolve()
        if key not in seen:  # run in the home directory, the project files are the user's
            seen.add(key)
            found.append((scope, host, path))
    return found
