"""A skill loaded through a client (`AsyncClient.load_skill`; `_sync/skills.py`: `LoadedSkill`):
its entry, its SKILL.md as verified text, and its other files read, and verified, only when asked.

While a skill is loaded the client acts under the entry it loaded it from (spec § The Acting
Window): only files that entry lists are read, each checked against its size and digest, and a
path outside the skill (`..`, another skill, another scheme) is refused before anything is sent.
"""

from __future__ import annotations

import posixpath
from typing import Protocol

from ...skills import MAX_TOTAL_BYTES, Skill, SkillFile, SkillVerificationError
from ..skill_flows import decoded

__all__ = ["AsyncLoadedSkill"]


class _Reader(Protocol):
    async def _read_skill_file(self, file: SkillFile | str) -> bytes: ...


class AsyncLoadedSkill:
    """`entry` (the `Skill` it was loaded from), `text` (its SKILL.md, verified: size, digest and
    frontmatter), `files` (the paths its entry lists, relative to the skill's root); `await
    read(path)` / `read_text(path)` fetch one of them and verify it."""

    def __init__(self, reader: _Reader, entry: Skill, text: str) -> None:
        self._reader = reader
        self.entry = entry
        self.text = text
        self._read_bytes = len(text.encode("utf-8"))

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def files(self) -> list[str]:
        """The skill's files other than SKILL.md, as paths relative to its root (none for a
        `"dynamic"` skill, whose files are not listed)."""
        if self.entry.resources == "dynamic":
            return []
        prefix = self.entry.root + "/"
        return [f.uri[len(prefix) :] for f in self.entry.resources if f.uri != self.entry.uri]

    async def read(self, path: str) -> bytes:
        """The bytes of the skill's file at `path` (relative to its root, as SKILL.md refers to
        it), verified against the entry; SkillVerificationError for a file the entry does not
        list or content that does not match it."""
        uri = self._uri(path)
        if self.entry.resources == "dynamic":
            data = await self._reader._read_skill_file(uri)  # unverifiable: only bounded
            self._read_bytes += len(data)
            if self._read_bytes > MAX_TOTAL_BYTES:
                raise SkillVerificationError(
                    uri, f"the skill's files exceed {MAX_TOTAL_BYTES} bytes; not used"
                )
            return data
        file = self.entry.file(uri)
        if file is None:
            raise SkillVerificationError(
                uri, "its skill's entry does not list it (an unlisted file is not read)"
            )
        return await self._reader._read_skill_file(file)

    async def read_text(self, path: str) -> str:
        """`read(path)` as UTF-8 text."""
        uri = self._uri(path)
        return decoded(uri, await self.read(path))

    def _uri(self, path: str) -> str:
        normal = posixpath.normpath("/" + path.lstrip("/"))[1:]
        if not path or normal != path.lstrip("/") or normal.startswith("..") or "://" in path or "\\" in path:
            raise SkillVerificationError(
                f"{self.entry.root}/{path[:200]}",
                "not a path inside the skill (no `..`, no other skill or scheme)",
            )
        return f"{self.entry.root}/{normal}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.entry.uri!r})"
