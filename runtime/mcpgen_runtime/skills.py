"""Skills (the `io.modelcontextprotocol/skills` extension, SEP-2640) as a client sees them: the typed
entries `skills/list` and `skills/get` return, and the checks a client makes before it uses a file
it read (spec: modelcontextprotocol/ext-skills, specification/stable/skills.mdx).

- `Skill`: a skill's `SKILL.md` URI, its frontmatter (`SkillFrontmatter`: `name` and `description`,
  and every other field the author wrote, kept as extras) and its files (`SkillFile`: URI, SHA-256
  digest and size), or `"dynamic"` for generated skills, which carry no digests.
- `verified(file, data)`: the bytes of a file read, checked against its entry: the size first (a
  longer or shorter read fails before anything is hashed), then the digest. `check_frontmatter`:
  a fetched SKILL.md's YAML frontmatter, read as a server reads it (`mcpgen_runtime.frontmatter`;
  PyYAML: the `skills` extra), field by field against the entry's.
- `LIMITS`: the spec's per-skill limits (512 files, 16 MiB), which a client checks from the entry
  alone before it reads anything.

A failed check is a `SkillVerificationError` naming the file and what did not match; content that
fails is never returned.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .errors import McpRuntimeError
from .frontmatter import MAX_FRONTMATTER_BYTES, read_frontmatter

__all__ = [
    "DIRECTORY_READ",
    "EXTENSION",
    "GET",
    "LIST",
    "MAX_FILES",
    "MAX_FRONTMATTER",
    "MAX_TOTAL_BYTES",
    "Skill",
    "SkillError",
    "SkillFile",
    "SkillFrontmatter",
    "SkillVerificationError",
    "check_frontmatter",
    "verified",
]

EXTENSION: Final = "io.modelcontextprotocol/skills"
LIST: Final = "skills/list"
GET: Final = "skills/get"
DIRECTORY_READ: Final = "resources/directory/read"
MAX_FILES: Final = 512  # resources per skill (the spec's limit every host supports)
MAX_TOTAL_BYTES: Final = 16 * 1024 * 1024  # total file size per skill
MAX_FRONTMATTER: Final = MAX_FRONTMATTER_BYTES  # bytes of YAML frontmatter a client parses
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_CONFIG = ConfigDict(extra="allow", populate_by_name=True, frozen=True, defer_build=True)


class SkillError(McpRuntimeError):
    """A skill that cannot be used as asked (not served, not unique by name, over the limits)."""


class SkillVerificationError(SkillError):
    """A skill file whose content is not what its entry describes (size, digest, frontmatter), or
    a read of a file the entry does not list: the content is not used (spec § Integrity)."""

    def __init__(self, uri: str, message: str) -> None:
        super().__init__(f"skill file {uri[:300]}: {message}")
        self.uri = uri


class SkillFile(BaseModel):
    """One file of a skill: its resource URI, `sha256:<hex>` digest and size in bytes."""

    model_config = _CONFIG
    uri: str = Field(max_length=2048)
    digest: str
    size: int = Field(ge=0)

    @field_validator("digest")
    @classmethod
    def _digest(cls, value: str) -> str:
        if not _DIGEST.fullmatch(value):
            raise ValueError("digest must be sha256: and 64 lowercase hexadecimal characters")
        return value


class SkillFrontmatter(BaseModel):
    """A SKILL.md's YAML frontmatter: `name` and `description` typed, every other field the author
    wrote (`license`, `metadata`, `allowed-tools`, ...) kept as an extra (`model_extra`, and
    `as_dict()` for all of it as the server sent it)."""

    model_config = _CONFIG
    name: str = Field(min_length=1, max_length=64)
    description: str = Field(min_length=1, max_length=1024)
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        """The frontmatter as the server sent it (every field, none added)."""
        return self.model_dump(by_alias=True, exclude_unset=True)


class Skill(BaseModel):
    """A skill entry (`skills/list`, `skills/get`): where its SKILL.md is, its frontmatter, its
    files with digests — or `"dynamic"`, for a skill generated on demand (no integrity)."""

    model_config = _CONFIG
    uri: str = Field(max_length=2048)
    frontmatter: SkillFrontmatter
    resources: list[SkillFile] | Literal["dynamic"]

    @property
    def name(self) -> str:
        return self.frontmatter.name

    @property
    def description(self) -> str:
        return self.frontmatter.description

    @property
    def root(self) -> str:
        """The skill's directory URI: its SKILL.md URI without `/SKILL.md`."""
        return self.uri.rsplit("/", 1)[0]

    def file(self, uri: str) -> SkillFile | None:
        """The entry of the file at `uri` (None: not listed)."""
        if self.resources == "dynamic":
            return None
        return next((item for item in self.resources if item.uri == uri), None)

    def over_limits(self) -> str | None:
        """Why this skill is past the spec's per-skill limits (None: within them)."""
        if self.resources == "dynamic":
            return None
        if len(self.resources) > MAX_FILES:
            return f"it lists {len(self.resources)} files (more than {MAX_FILES})"
        total = sum(item.size for item in self.resources)
        if total > MAX_TOTAL_BYTES:
            return f"its files hold {total} bytes (more than {MAX_TOTAL_BYTES})"
        return None


def verified(file: SkillFile, data: bytes) -> bytes:
    """`data` when its size and digest are the entry's; SkillVerificationError otherwise (the
    size is compared first: a read longer than the entry says is refused before it is hashed)."""
    if len(data) != file.size:
        longer = "longer" if len(data) > file.size else "shorter"
        raise SkillVerificationError(
            file.uri, f"{len(data)} bytes read, {longer} than the {file.size} its entry declares; not used"
        )
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if digest != file.digest:
        raise SkillVerificationError(
            file.uri, "its SHA-256 digest is not the one its entry declares; not used"
        )
    return data


def check_frontmatter(uri: str, text: str, expected: SkillFrontmatter) -> None:
    """The YAML frontmatter at the top of a fetched SKILL.md equals the entry's, field by field."""
    found = _frontmatter(uri, text)
    wanted = expected.as_dict()
    if found != wanted:
        fields = sorted(
            key for key in set(found) | set(wanted) if found.get(key, _MISSING) != wanted.get(key, _MISSING)
        )
        raise SkillVerificationError(
            uri,
            f"its frontmatter differs from the entry's in {', '.join(map(repr, fields))[:300]}; not loaded",
        )


_MISSING = object()


def _frontmatter(uri: str, text: str) -> Mapping[str, Any]:
    """A fetched SKILL.md's frontmatter, read as a server reads it (`mcpgen_runtime.frontmatter`)."""
    try:
        return read_frontmatter(text.encode("utf-8"))
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise SkillError(str(exc)) from None
    except ValueError as exc:
        raise SkillVerificationError(uri, str(exc)[:300]) from None
