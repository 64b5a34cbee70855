"""The methods of the skills extension over a `SkillFolder` (folder.py), and the reader of its files.

    skills/list                  every skill's entry, paginated as the server's other lists (page_size)
    skills/get                   one entry by its SKILL.md URI; -32602 for a URI that is no served skill
    resources/directory/read     a directory's direct children, paginated; -32602 for a URI that is
                                 no served directory (a file included)
    resources/read               (through Surfaces) each file by its exact URI

No request URI ever becomes a path: each is looked up among the URIs computed at start, so `..`,
percent-encoded separators and the like name nothing and get -32602. Reading a file joins its
stored segments again with `safe_join` and opens it without following a final symbolic link: a
link swapped in after start that leads out of the folder is refused (-32602, as an unknown
resource), and content that no longer matches its size and digest is refused (-32603), never
served under a stale manifest.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

from ....protocol import jsonrpc
from ..context import RequestContext
from ..handler_errors import RpcError
from ..resources.safe_paths import safe_join
from ..resources.surfaces import ResourceNotFound, listing_digest, page_of
from ..resources.uri_match import check_uri_length
from .folder import SkillFolder

__all__ = ["DIRECTORY_READ", "EXTENSION", "SKILLS_GET", "SKILLS_LIST", "SkillMethods"]

EXTENSION: Final = "io.modelcontextprotocol/skills"
SKILLS_LIST: Final = "skills/list"
SKILLS_GET: Final = "skills/get"
DIRECTORY_READ: Final = "resources/directory/read"

Method = Callable[[dict[str, Any], RequestContext], Awaitable[dict[str, Any]]]


def _uri_param(params: dict[str, Any], max_uri_length: int) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise RpcError(jsonrpc.INVALID_PARAMS, "params.uri must be a string")
    check_uri_length(uri, max_uri_length)
    return uri


def _read_exactly(path: Path, size: int) -> bytes | None:
    """The file's bytes when it is still a regular file of `size` bytes; None otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        data = handle.read(size + 1)
    return data if len(data) == size else None


class SkillMethods:
    """The skills extension's methods and file reader for one folder (module docstring)."""

    __slots__ = ("_dir_digests", "_entries", "_entry_digest", "_max_uri_length", "_page_size", "folder")

    def __init__(self, folder: SkillFolder, page_size: int | None, max_uri_length: int) -> None:
        self.folder = folder
        self._page_size = page_size
        self._max_uri_length = max_uri_length
        self._entries = [skill.entry() for skill in folder.skills.values()]
        self._entry_digest = listing_digest(self._entries)
        self._dir_digests = {uri: listing_digest(children) for uri, children in folder.directories.items()}

    def handlers(self) -> dict[str, Method]:
        return {SKILLS_LIST: self.list, SKILLS_GET: self.get, DIRECTORY_READ: self.read_directory}

    async def list(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        return page_of("skills", self._entries, self._entry_digest, params, self._page_size)

    async def get(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        uri = _uri_param(params, self._max_uri_length)
        skill = self.folder.skills.get(uri)
        if skill is None:
            raise RpcError(jsonrpc.INVALID_PARAMS, f"No skill is served at {uri[:300]}", {"uri": uri})
        return {"skill": skill.entry()}

    async def read_directory(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        uri = _uri_param(params, self._max_uri_length)
        children = self.folder.directories.get(uri)
        if children is None:
            what = "is not a directory resource" if uri in self.folder.files else "names no served directory"
            raise RpcError(jsonrpc.INVALID_PARAMS, f"{uri[:300]} {what}", {"uri": uri})
        return page_of("resources", children, self._dir_digests[uri], params, self._page_size)

    async def read(self, uri: str, ctx: RequestContext) -> str | bytes:
        """A file's contents (a `Surfaces` resource reader, its mimeType from the definition): text
        for UTF-8 text, else bytes (a blob)."""
        file = self.folder.files.get(uri)
        if file is None:
            raise ResourceNotFound(uri)
        path = safe_join(self.folder.root, file.parts)  # PathEscapeError: Surfaces answers -32602
        data = await asyncio.to_thread(_read_exactly, path, file.size)
        if data is None or "sha256:" + hashlib.sha256(data).hexdigest() != file.digest:
            raise RpcError(
                jsonrpc.INTERNAL_ERROR,
                f"{uri[:300]} changed since the server started; restart it to serve the new content",
            )
        return data.decode("utf-8") if file.text else data
