"""A folder of skills, read once when the server starts (SEP-2640, the `io.modelcontextprotocol/skills`
extension).

The folder holds skill folders, each with a `SKILL.md` (frontmatter.py checks it), at any depth:
`git-workflow/SKILL.md` is served as `skill://git-workflow/SKILL.md`, `acme/billing/refunds/SKILL.md`
as the skill `refunds` under the prefix `acme/billing`. A skill inside another (nested) is a skill of
its own and, for the enclosing one, supporting files (the spec's Nested Skills). Files outside every
skill folder and names starting with `.` are not served.

Everything a request needs is computed here, once: each file's URI, size, SHA-256 digest and
mimeType, each skill's entry, each directory's children. Anything that cannot be served stops the
server with `SkillError` (its path and the rule): a bad frontmatter, a `name` other than its
folder's, a skill over the spec's limits (`MAX_SKILL_FILES` files, `MAX_SKILL_BYTES` bytes), a URI
over `max_uri_length`, a symbolic link leading out of the folder or to a directory, a special file,
a name with a backslash, a folder of more than `MAX_FOLDER_FILES` files.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

from .frontmatter import parse_frontmatter

__all__ = [
    "DIRECTORY_MIME",
    "MAX_FOLDER_FILES",
    "MAX_SKILL_BYTES",
    "MAX_SKILL_FILES",
    "SKILL_FILE",
    "Skill",
    "SkillError",
    "SkillFile",
    "SkillFolder",
    "load_skills",
]

# The spec's per-skill limits (Limits): every conforming host accepts skills up to these.
MAX_SKILL_FILES: Final = 512
MAX_SKILL_BYTES: Final = 16 * 1024 * 1024
# Files the walk of one skills folder takes before it stops the server (a wrong --skills path).
MAX_FOLDER_FILES: Final = 100_000
SKILL_FILE: Final = "SKILL.md"
DIRECTORY_MIME: Final = "inode/directory"
_SCHEME = "skill://"
# RFC 3986 unreserved and sub-delims: valid in the authority (reg-name) and in path segments alike.
_SAFE = "-._~!$&'()*+,;="
# Built-in types only (not /etc/mime.types): the same mimeType on every machine.
_TYPES = mimetypes.MimeTypes(filenames=())
_MARKDOWN = frozenset({".md", ".markdown"})


class SkillError(ValueError):
    """A skills folder that cannot be served: the path and the rule it breaks."""

    def __init__(self, path: str | os.PathLike[str], rule: str) -> None:
        super().__init__(f"skill {os.fspath(path)}: {rule}")
        self.path = os.fspath(path)
        self.rule = rule


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One served file: `parts` are its path's segments below the folder."""

    uri: str
    parts: tuple[str, ...]
    size: int
    digest: str  # sha256:<64 lowercase hex>
    mime_type: str
    text: bool  # UTF-8 without NUL: sent as text, else as a base64 blob

    def resource(self) -> dict[str, Any]:
        """Its `Resource` metadata, as a directory read lists it."""
        return {"uri": self.uri, "name": self.parts[-1], "mimeType": self.mime_type, "size": self.size}


@dataclass(frozen=True, slots=True)
class Skill:
    uri: str  # its SKILL.md
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...]  # SKILL.md first, then by path; nested skills' files included

    def entry(self) -> dict[str, Any]:
        """The `Skill` entry skills/list and skills/get return."""
        return {
            "uri": self.uri,
            "frontmatter": self.frontmatter,
            "resources": [{"uri": f.uri, "digest": f.digest, "size": f.size} for f in self.files],
        }

    def resource(self) -> dict[str, Any]:
        """Its SKILL.md's `Resource` as resources/list lists it (name and description from the
        frontmatter, as the spec's Resource Metadata says)."""
        skill_md = self.files[0]
        return {
            "uri": self.uri,
            "name": self.frontmatter["name"],
            "description": self.frontmatter["description"],
            "mimeType": skill_md.mime_type,
            "size": skill_md.size,
        }


@dataclass(slots=True)
class SkillFolder:
    """What `load_skills` read: the skills by URI (listing order), every served file by URI, and
    each directory's direct children (`Resource` metadata; subdirectories as `inode/directory`)."""

    root: Path
    skills: dict[str, Skill] = field(default_factory=dict)
    files: dict[str, SkillFile] = field(default_factory=dict)
    directories: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def _uri(parts: tuple[str, ...]) -> str:
    return _SCHEME + "/".join(quote(part, safe=_SAFE) for part in parts)


def _inside(root: Path, path: Path) -> bool:
    return path == root or root in path.parents


def _walk(root: Path) -> dict[tuple[str, ...], Path]:
    """Every file under `root` (names starting with `.` left out) by its segments, in name order."""
    found: dict[tuple[str, ...], Path] = {}
    stack: list[tuple[Path, tuple[str, ...]]] = [(root, ())]
    while stack:
        directory, parts = stack.pop()
        with os.scandir(directory) as entries:
            listed = sorted(entries, key=lambda e: e.name, reverse=True)
        for entry in listed:
            if entry.name.startswith("."):
                continue
            path, sub = Path(entry.path), (*parts, entry.name)
            if "\\" in entry.name:  # a separator to safe_join, and on Windows
                raise SkillError(path, "a backslash in a name: it cannot be served")
            if entry.is_symlink():
                target = path.resolve()
                if not _inside(root, target):
                    raise SkillError(path, "a symbolic link that leads out of the skills folder")
                if target.is_dir():
                    raise SkillError(path, "a symbolic link to a directory (link its files, or copy it)")
                if not target.is_file():
                    raise SkillError(path, "a symbolic link to what is not a regular file")
                found[sub] = target
            elif entry.is_dir(follow_symlinks=False):
                stack.append((path, sub))
            elif entry.is_file(follow_symlinks=False):
                found[sub] = path
            else:
                raise SkillError(path, "neither a regular file nor a directory")
            if len(found) > MAX_FOLDER_FILES:
                raise SkillError(root, f"more than {MAX_FOLDER_FILES} files; is this the skills folder?")
    return dict(sorted(found.items()))


def _mime_type(name: str, text: bool) -> str:
    suffix = os.path.splitext(name)[1].lower()
    if suffix in _MARKDOWN:
        return "text/markdown"
    guessed = _TYPES.guess_type(name, strict=False)[0]
    return guessed or ("text/plain" if text else "application/octet-stream")


def _read_file(path: Path, parts: tuple[str, ...], max_uri_length: int) -> tuple[SkillFile, bytes]:
    uri = _uri(parts)
    if len(uri) > max_uri_length:
        raise SkillError(path, f"its URI is {len(uri)} characters, over max_uri_length ({max_uri_length})")
    size = path.stat().st_size
    if size > MAX_SKILL_BYTES:
        raise SkillError(path, f"{size} bytes: a skill holds at most {MAX_SKILL_BYTES} bytes")
    data = path.read_bytes()
    text = b"\x00" not in data
    if text:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            text = False
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    return SkillFile(uri, parts, len(data), digest, _mime_type(parts[-1], text), text), data


def load_skills(folder: str | os.PathLike[str], *, max_uri_length: int) -> SkillFolder:
    """Read `folder` (module docstring); `SkillError` when it cannot be served."""
    given = Path(folder)
    if not given.is_dir():
        raise SkillError(given, "the skills folder is not a directory")
    root = given.resolve()
    files = _walk(root)
    skill_dirs = sorted(parts[:-1] for parts in files if parts[-1] == SKILL_FILE)
    if () in skill_dirs:
        raise SkillError(
            root / SKILL_FILE, "a SKILL.md at the top of the skills folder: each skill is a folder in it"
        )
    # Each file of a skill folder, for every skill it belongs to (nested skills: several).
    owned: dict[tuple[str, ...], list[SkillFile]] = {d: [] for d in skill_dirs}
    result = SkillFolder(root)
    contents: dict[tuple[str, ...], bytes] = {}
    by_parts: dict[tuple[str, ...], SkillFile] = {}
    for parts, path in files.items():
        owners = [parts[:depth] for depth in range(1, len(parts)) if parts[:depth] in owned]
        if not owners:
            continue  # outside every skill folder: not served
        file, data = _read_file(path, parts, max_uri_length)
        result.files[file.uri] = by_parts[parts] = file
        for owner in owners:
            owned[owner].append(file)
        if parts[-1] == SKILL_FILE:
            contents[parts] = data
    for directory in skill_dirs:
        skill_md = root.joinpath(*directory, SKILL_FILE)
        try:
            frontmatter = parse_frontmatter(contents[(*directory, SKILL_FILE)])
        except ValueError as exc:
            raise SkillError(skill_md, str(exc)) from None
        if frontmatter["name"] != directory[-1]:
            raise SkillError(
                skill_md, f"`name` {frontmatter['name']!r} differs from its folder's name {directory[-1]!r}"
            )
        mine = owned[directory]
        mine.sort(key=lambda f: (f.parts != (*directory, SKILL_FILE), f.parts))
        if len(mine) > MAX_SKILL_FILES:
            raise SkillError(skill_md, f"{len(mine)} files: a skill holds at most {MAX_SKILL_FILES}")
        if (total := sum(f.size for f in mine)) > MAX_SKILL_BYTES:
            raise SkillError(skill_md, f"{total} bytes: a skill holds at most {MAX_SKILL_BYTES} bytes")
        skill = Skill(mine[0].uri, frontmatter, tuple(mine))
        result.skills[skill.uri] = skill
    result.directories = _directories(by_parts)
    return result


def _directories(files: dict[tuple[str, ...], SkillFile]) -> dict[str, list[dict[str, Any]]]:
    """Each directory holding a served file, below the folder itself, with its direct children."""
    children: dict[tuple[str, ...], dict[str, dict[str, Any]]] = {}
    for parts, file in files.items():
        for depth in range(1, len(parts)):
            directory = parts[:depth]
            listed = children.setdefault(directory, {})
            if depth == len(parts) - 1:
                listed[parts[-1]] = file.resource()
            else:
                sub = parts[: depth + 1]
                listed[sub[-1]] = {"uri": _uri(sub), "name": sub[-1], "mimeType": DIRECTORY_MIME}
    return {_uri(d): [listed[name] for name in sorted(listed)] for d, listed in sorted(children.items())}
