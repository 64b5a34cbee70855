"""One server of an MCP config file made ready to start or reach: `resolve_entry` expands the
entry's variables (`${env:NAME}`, `${NAME:-default}`, `${input:ID}` from `MCPGEN_INPUT_<ID>`,
`${userHome}`, `${workspaceFolder}`, ...; Codex's `*_env_var` keys) and gives a `ServerLaunch`: an
argv with its env and cwd, or a URL with its headers, every value that came from the environment
or could carry a credential among its secrets. The file formats themselves are mcp_config.py's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcpgen_runtime.masking import Secrets

from ..refs import escape_token
from .mcp_config import (
    INPUT_ENV_PREFIX,
    ConfigEntry,
    ConfigFile,
    McpConfigError,
    ServerLaunch,
    config_error,
    shown_url,
    type_name,
)

__all__ = ["input_env_name", "resolve_entry", "workspace_folder"]

_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_VARIABLE = re.compile(r"\$\{([^{}]*)\}")


def input_env_name(input_id: str) -> str:
    """`${input:api-key}` is read from MCPGEN_INPUT_API_KEY."""
    return INPUT_ENV_PREFIX + re.sub(r"[^0-9A-Za-z]", "_", input_id).upper()


def workspace_folder(path: Path, cwd: Path, home: Path) -> Path:
    """`${workspaceFolder}` and the default working directory of a stdio server: the project a
    project-level file belongs to (`PROJECT/.vscode/mcp.json`, `PROJECT/.cursor/mcp.json`,
    `PROJECT/.codex/config.toml`, `PROJECT/.mcp.json`), else the current directory."""
    parent = path.resolve().parent
    if parent.name in (".vscode", ".cursor", ".codex") and parent.parent != home.resolve():
        return parent.parent
    if path.name == ".mcp.json":
        return parent
    return cwd


class _Expander:
    def __init__(
        self,
        entry: ConfigEntry,
        inputs: Mapping[str, str],
        environ: Mapping[str, str],
        workspace: Path,
        home: Path,
    ) -> None:
        self.entry = entry
        self.inputs = inputs
        self.environ = environ
        self.workspace = workspace
        self.home = home
        self.secrets = Secrets()

    def fail(self, pointer: str, what: str) -> McpConfigError:
        return config_error(self.entry.file, self.entry.name, pointer, what)

    def string(self, value: Any, pointer: str) -> str:
        if not isinstance(value, str):
            raise self.fail(pointer, f"expected a string, found {type_name(value)}")
        if "\x00" in value:
            raise self.fail(pointer, "the string contains NUL")
        if self.entry.format == "codex":
            return value
        return _VARIABLE.sub(lambda match: self._variable(match.group(1), pointer), value)

    def _variable(self, name: str, pointer: str) -> str:
        fixed = {
            "userHome": str(self.home),
            "workspaceFolder": str(self.workspace),
            "workspaceFolderBasename": self.workspace.name,
            "pathSeparator": os.sep,
            "/": os.sep,
        }
        if name in fixed:
            return fixed[name]
        scheme, colon, rest = name.partition(":")
        if colon and scheme == "env":
            return self._env(rest, None, pointer, name)
        if colon and scheme == "input":
            return self._input(rest, pointer)
        var, dash, default = name.partition(":-")
        if _ENV_NAME.match(var) and (dash or not colon):
            return self._env(var, default if dash else None, pointer, name)
        raise self.fail(
            pointer,
            f"unsupported variable ${{{name[:80]}}}: mcpgen expands ${{env:NAME}}, ${{NAME}}, "
            "${NAME:-default}, ${input:ID}, ${userHome}, ${workspaceFolder}, "
            "${workspaceFolderBasename} and ${pathSeparator}",
        )

    def _env(self, var: str, default: str | None, pointer: str, written: str) -> str:
        if var in self.environ:
            value = self.environ[var]
            self.secrets.add_named(var, value)
            return value
        if default is not None:
            return default
        raise self.fail(
            pointer, f"environment variable {var[:80]!r} is not set (used as ${{{written[:80]}}})"
        )

    def _input(self, input_id: str, pointer: str) -> str:
        var = input_env_name(input_id)
        if var in self.environ:
            value = self.environ[var]
            self.secrets.add(value)
            return value
        declared = self.inputs.get(input_id)
        said = f" ({declared[:100]!r})" if declared else ""
        undeclared = (
            "" if input_id in self.inputs or self.entry.format != "vscode" else "; it is not in /inputs"
        )
        raise self.fail(
            pointer,
            f"${{input:{input_id[:80]}}}{said} has no value: mcpgen does not prompt; set the environment "
            f"variable {var}{undeclared}",
        )

    def strings(self, value: Any, pointer: str) -> list[str]:
        if not isinstance(value, list):
            raise self.fail(pointer, f"expected an array of strings, found {type_name(value)}")
        return [self.string(item, f"{pointer}/{index}") for index, item in enumerate(value)]

    def table(self, value: Any, pointer: str, *, headers: bool = False) -> dict[str, str]:
        if not isinstance(value, dict):
            raise self.fail(pointer, f"expected an object of strings, found {type_name(value)}")
        result: dict[str, str] = {}
        for key, item in value.items():
            where = f"{pointer}/{escape_token(key)}"
            if headers and not _HEADER_NAME.match(key):
                raise self.fail(where, f"{key[:80]!r} is not an HTTP header name")
            if not headers and (not key or "=" in key or "\x00" in key):
                raise self.fail(where, f"{key[:80]!r} is not an environment variable name")
            if not headers and isinstance(item, (int, float)) and not isinstance(item, bool):
                item = str(item)  # VS Code and Claude accept numbers in env
            text = self.string(item, where)
            if headers and any(ch in text for ch in "\r\n"):
                raise self.fail(where, "the header value contains a line break")
            result[key] = text
            self.secrets.add_named(key, text)
        return result


def resolve_entry(
    config: ConfigFile,
    name: str,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    home: Path | None = None,
    shown_path: str | None = None,
) -> ServerLaunch:
    """The server `name` of `config` with its variables expanded from `environ` (default: the
    process environment). `shown_path` is the file as messages and headers name it."""
    entry = config.entry(name)
    environ = os.environ if environ is None else environ
    cwd = Path.cwd() if cwd is None else cwd
    home = Path.home() if home is None else home
    workspace = workspace_folder(config.path, cwd, home)
    x = _Expander(entry, config.inputs, environ, workspace, home)
    data, pointer = entry.data, entry.pointer
    source = f"{shown_path if shown_path is not None else config.path}#{name}"
    if entry.transport == "stdio":
        command = x.string(data["command"], f"{pointer}/command")
        if not command.strip():
            raise x.fail(f"{pointer}/command", "the command is empty")
        args = x.strings(data.get("args", []), f"{pointer}/args")
        x.secrets.add_arguments(args)
        env = x.table(data.get("env", {}), f"{pointer}/env")
        if entry.format == "vscode" and "envFile" in data:
            env = {**_env_file(x, data["envFile"], f"{pointer}/envFile"), **env}
        if entry.format == "codex" and "env_vars" in data:
            for index, var in enumerate(x.strings(data["env_vars"], f"{pointer}/env_vars")):
                if var not in environ:
                    raise x.fail(f"{pointer}/env_vars/{index}", f"environment variable {var!r} is not set")
                env.setdefault(var, environ[var])
                x.secrets.add_named(var, environ[var])
        workdir: str | None = str(workspace)
        if "cwd" in data:
            given = Path(x.string(data["cwd"], f"{pointer}/cwd")).expanduser()
            workdir = str(given if given.is_absolute() else workspace / given)
        return ServerLaunch(source, "stdio", argv=(command, *args), env=env, cwd=workdir, secrets=x.secrets)
    url_key = "serverUrl" if "serverUrl" in data else "url"
    url = x.string(data[url_key], f"{pointer}/{url_key}")
    if not url.lower().startswith(("http://", "https://")):
        raise x.fail(f"{pointer}/{url_key}", f"{shown_url(url)!r} is not an http(s) URL")
    if any(ch.isspace() or ord(ch) < 0x20 for ch in url):
        raise x.fail(f"{pointer}/{url_key}", "the URL contains whitespace or a control character")
    header_key = "http_headers" if entry.format == "codex" else "headers"
    headers = x.table(data.get(header_key, {}), f"{pointer}/{header_key}", headers=True)
    if entry.format == "codex":
        for key, var in x.table(
            data.get("env_http_headers", {}), f"{pointer}/env_http_headers", headers=True
        ).items():
            headers[key] = _codex_env(x, environ, var, f"{pointer}/env_http_headers/{escape_token(key)}")
        if "bearer_token_env_var" in data:
            where = f"{pointer}/bearer_token_env_var"
            headers["Authorization"] = "Bearer " + _codex_env(
                x, environ, x.string(data["bearer_token_env_var"], where), where
            )
            x.secrets.add_named("Authorization", headers["Authorization"])
    x.secrets.add_url(url)
    return ServerLaunch(source, entry.transport, url=url, headers=headers, secrets=x.secrets)


def _codex_env(x: _Expander, environ: Mapping[str, str], var: str, pointer: str) -> str:
    if var not in environ:
        raise x.fail(pointer, f"environment variable {var!r} is not set")
    value = environ[var]
    if any(ch in value for ch in "\r\n\x00"):
        raise x.fail(pointer, f"environment variable {var!r} holds a line break or NUL")
    x.secrets.add_named(var, value)
    return value


def _env_file(x: _Expander, value: Any, pointer: str) -> dict[str, str]:
    """VS Code's `envFile`: KEY=VALUE lines, `#` comments, optional quotes around the value."""
    path = Path(x.string(value, pointer)).expanduser()
    if not path.is_absolute():
        path = x.workspace / path
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise x.fail(
            pointer, f"cannot read the envFile {path}: {getattr(exc, 'strerror', None) or exc}"
        ) from exc
    env: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, val = line.removeprefix("export ").partition("=")
        key, val = key.strip(), val.strip()
        if not sep or not _ENV_NAME.match(key):
            continue
        if len(val) >= 2 and val[0] == val[-1] and val[0] in "'\"":
            val = val[1:-1]
        env[key] = val
        x.secrets.add_named(key, val)
    return env


# -- naming sources and finding files --------------------------------------------------------------
