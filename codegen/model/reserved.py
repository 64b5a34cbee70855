"""The attribute names of the classes generated code subclasses, which generated names must not shadow.

    runtime_member_names()   every attribute of mcpgen_runtime's Client, AsyncClient and ToolServer
    basemodel_member_names() every attribute of pydantic's BaseModel and RootModel

Only the live classes know their `dir()`, and importing them costs about half a second, more than
the rest of generating a small spec. So each answer is kept in one small per-user cache file
(`$XDG_CACHE_HOME/mcpgen/reserved-names.json`, else `~/.cache/mcpgen/...`), keyed by everything it
depends on: the sources of mcpgen_runtime and of this module, the installed pydantic's version
file and the Python build. Any other key, or a file that cannot be read, means the classes are
imported again; the file is replaced atomically and a cache that cannot be written is skipped.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

__all__ = ["RUNTIME_FALLBACK_NAMES", "basemodel_member_names", "runtime_member_names"]

# Members of the runtime bases that generated methods must never shadow, used until (or in case)
# the runtime classes cannot be imported; the live `dir()` of each class is added when they can.
RUNTIME_FALLBACK_NAMES: Final[frozenset[str]] = frozenset(
    {
        "close",
        "aclose",
        "call_tool",
        "list_tools",
        "list_all_tools",
        "list_resources",
        "list_all_resources",
        "list_resource_templates",
        "list_all_resource_templates",
        "read_resource",
        "list_prompts",
        "list_all_prompts",
        "get_prompt",
        "complete",
        "discover",
        "stdio",
        "self",
        "cls",
        "handle_message",
        "asgi_app",
        "run_http",
        "run_stdio",
        "config",
        "tools",
        "transport",
        "headers",
        "timeout",
        "meta",
        "cursor",
        "client_info",
        "url",
    }
)

_CACHE_FILE: Final = "reserved-names.json"


def _live_runtime_members() -> tuple[frozenset[str], bool]:
    """(the names, whether every runtime class could be imported)."""
    names: set[str] = set(RUNTIME_FALLBACK_NAMES)
    complete = True
    try:
        from mcpgen_runtime.client import AsyncClient, Client

        names.update(dir(Client))
        names.update(dir(AsyncClient))
    except ImportError:  # pragma: no cover - runtime client not installed / being written
        complete = False
    try:
        from mcpgen_runtime.server import ToolServer

        names.update(dir(ToolServer))
    except ImportError:  # pragma: no cover
        complete = False
    return frozenset(names), complete


def _live_basemodel_members() -> frozenset[str]:
    from pydantic import BaseModel, RootModel

    return frozenset(dir(BaseModel)) | frozenset(dir(RootModel))


def _cache_key() -> str | None:
    """sha256 of everything the names depend on; None when a source cannot be located."""
    import mcpgen_runtime

    pydantic = importlib.util.find_spec("pydantic")  # located, not imported
    if pydantic is None or not pydantic.submodule_search_locations:
        return None
    digest = hashlib.sha256()
    digest.update(f"{sys.version}\0{sys.implementation.cache_tag}\0".encode())
    runtime = Path(mcpgen_runtime.__file__).resolve().parent
    files = [(runtime, path) for path in sorted(runtime.rglob("*.py"))]
    files.append((Path(__file__).resolve().parent, Path(__file__).resolve()))
    files.append(
        (
            Path(pydantic.submodule_search_locations[0]),
            Path(pydantic.submodule_search_locations[0]) / "version.py",
        )
    )
    try:
        for root, path in files:
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    except OSError:
        return None
    return digest.hexdigest()


def _cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mcpgen" / _CACHE_FILE


def _read_cache(path: Path, key: str) -> dict[str, frozenset[str]] | None:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key:
        return None
    names = {kind: data.get(kind) for kind in ("runtime", "basemodel")}
    if not all(isinstance(v, list) and all(isinstance(n, str) for n in v) for v in names.values()):
        return None
    return {kind: frozenset(value) for kind, value in names.items()}  # type: ignore[arg-type]


def _write_cache(path: Path, data: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".reserved-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass  # a read-only or missing home: the names are recomputed next time


@functools.cache
def _names() -> dict[str, frozenset[str]]:
    key = _cache_key()
    path = _cache_path()
    if key is not None:
        cached = _read_cache(path, key)
        if cached is not None:
            return cached
    runtime, complete = _live_runtime_members()
    names = {"runtime": runtime, "basemodel": _live_basemodel_members()}
    if key is not None and complete:  # never remember an answer from a half-importable runtime
        _write_cache(path, {"key": key, **{kind: sorted(value) for kind, value in names.items()}})
    return names


def runtime_member_names() -> frozenset[str]:
    """Every public and private attribute of the runtime bases generated classes inherit from."""
    return _names()["runtime"]


def basemodel_member_names() -> frozenset[str]:
    """Every attribute of pydantic's BaseModel and RootModel (generated models subclass them)."""
    return _names()["basemodel"]
