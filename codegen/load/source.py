"""Which loader reads a source: `--stdio COMMAND`, an http(s):// URL, or a spec file."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import SpecLoadError
from ..spec import LoadedSpec
from .document import load_file
from .live import display_url, load_stdio, load_url

if TYPE_CHECKING:
    from mcpgen_runtime.protocol.legacy.detect import EraChoice

__all__ = ["load_source"]

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
    if headers:
        raise SpecLoadError(f"{source}: HTTP headers apply to URL sources only, not to files")
    return load_file(source)
