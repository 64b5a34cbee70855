"""Which loader reads a source: `--stdio COMMAND`, an http(s):// URL, a server in an MCP config file
(`FILE#NAME`), or a spec file."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import SpecLoadError
from ..spec import LoadedSpec
from .document import load_file
from .launch import resolve_entry
from .live import display_url, load_stdio, load_stdio_argv, load_url
from .mcp_config import read_config, split_config_source

if TYPE_CHECKING:
    from mcpgen_runtime.protocol.legacy.detect import EraChoice

__all__ = ["load_config_server", "load_source"]

_URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def load_source(
    source: str | None,
    *,
    stdio: str | None = None,
    headers: Mapping[str, str] | None = None,
    era: EraChoice = "auto",
    auth: Any = None,
    max_response_bytes: int | None = None,
) -> LoadedSpec:
    """Dispatch: `--stdio COMMAND`, an http(s):// URL, or a file path (`max_response_bytes`
    bounds what a live server may send in one reply; None: the client's default)."""
    if stdio is not None:
        if source is not None:
            raise SpecLoadError(f"give either a source ({source!r}) or a stdio command, not both")
        if headers:
            raise SpecLoadError("HTTP headers apply to URL sources only, not to a stdio command")
        return load_stdio(stdio, era=era, max_response_bytes=max_response_bytes)
    if source is None:
        raise SpecLoadError("no source given: pass a JSON file, an http(s):// URL or a stdio command")
    if _URL_SCHEME.match(source):
        if source.lower().startswith(("http://", "https://")):
            return load_url(
                source, headers=headers, era=era, auth=auth, max_response_bytes=max_response_bytes
            )
        raise SpecLoadError(
            f"{display_url(source)!r}: unsupported URL scheme {urlsplit(source).scheme!r}; "
            "use http(s):// or a file path"
        )
    config_source = split_config_source(source)
    if config_source is not None:
        if headers:
            raise SpecLoadError(f"{source}: HTTP headers come from the config file, not from --header")
        path, name = config_source
        return load_config_server(path, name, era=era, max_response_bytes=max_response_bytes)
    if headers:
        raise SpecLoadError(f"{source}: HTTP headers apply to URL sources only, not to files")
    return load_file(source)


def load_config_server(
    path: str | os.PathLike[str],
    name: str,
    *,
    era: EraChoice = "auto",
    max_response_bytes: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> LoadedSpec:
    """The tools of server `name` of the MCP config file at `path`, started (stdio: its command,
    args, env and cwd) or reached (its URL and headers) as the file says. The spec's source is
    `PATH#NAME`; no value the file or the environment supplied is kept in it or in any message."""
    shown = os.fspath(path)
    launch = resolve_entry(read_config(path), name, environ=environ, shown_path=shown)
    if launch.transport == "stdio":
        return load_stdio_argv(
            launch.argv,
            source=launch.source,
            env=launch.env,
            cwd=launch.cwd,
            hidden=launch.secrets,
            era=era,
            max_response_bytes=max_response_bytes,
        )
    assert launch.url is not None
    return load_url(
        launch.url,
        headers=dict(launch.headers) or None,
        era=era,
        max_response_bytes=max_response_bytes,
        source=launch.source,
        hidden=launch.secrets,
    )
