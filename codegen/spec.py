"""The hand-off types between pipeline stages: what load produces and validate returns."""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import Diagnostic

SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"  # mcpgen_runtime.protocol.meta.SERVER_INFO_KEY


def server_info_of(result: Any) -> dict[str, str] | None:
    """`serverInfo` of a result: `_meta["io.modelcontextprotocol/serverInfo"]` (2026-07-28) or the
    member `serverInfo` (an initialize result, or a discover answer from a legacy server); only
    its string members are kept."""
    if not isinstance(result, dict):
        return None
    meta = result.get("_meta")
    info = meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None
    if not isinstance(info, dict):
        info = result.get("serverInfo")
    if not isinstance(info, dict):
        return None
    return {key: value for key, value in info.items() if isinstance(key, str) and isinstance(value, str)}


def canonical_digest(tools: list[dict[str, Any]] | dict[str, Any]) -> str:
    """sha256 of the tools as canonical JSON (sorted keys, compact, UTF-8); tool order is kept."""
    text = json.dumps(tools, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    # "surrogatepass": JSON text may spell a lone surrogate ("\ud800"); the digest must still exist
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class ToolFilter:
    """Which of a source's tools to generate (`--include-tools` / `--exclude-tools`, a target's
    `include_tools` / `exclude_tools`): shell globs matched case-sensitively against each tool's wire
    name (`fnmatch.fnmatchcase`: `*`, `?`, `[seq]`, `[!seq]`; `*` also matches `.`, `/` and `-`). A
    tool is kept when it matches an include glob (or none is given) and no exclude glob: include
    first, then exclude. Globs are kept sorted and once each, so the order they are given in never
    changes what is generated or recorded (`record`, the package manifest's `filters`)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @classmethod
    def of(cls, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> ToolFilter:
        return cls(tuple(sorted(set(include))), tuple(sorted(set(exclude))))

    def __bool__(self) -> bool:
        return bool(self.include or self.exclude)

    def keeps(self, name: object) -> bool:
        """Whether a tool named `name` is generated; a tool without a string name matches no glob."""
        if not isinstance(name, str):
            return not self.include
        if self.include and not any(fnmatch.fnmatchcase(name, glob) for glob in self.include):
            return False
        return not any(fnmatch.fnmatchcase(name, glob) for glob in self.exclude)

    def record(self) -> dict[str, list[str]]:
        """The filters as the manifest records them: `include_tools` / `exclude_tools`, each only
        when given (the keys of a `[tool.mcpgen]` target)."""
        kept = {"include_tools": list(self.include), "exclude_tools": list(self.exclude)}
        return {key: globs for key, globs in kept.items() if globs}

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> ToolFilter:
        """The filters `record` wrote (a manifest's `filters`; anything else reads as none)."""

        def globs(key: str) -> list[str]:
            value = record.get(key)
            if isinstance(value, list) and all(isinstance(glob, str) for glob in value):
                return value
            return []

        return cls.of(globs("include_tools"), globs("exclude_tools"))


NO_FILTER = ToolFilter()


@dataclass(frozen=True)
class LoadedSpec:
    """LOAD output: tool objects as found, in source order, and where they came from."""

    source: str  # display name: file path as given, or URL without credentials/query
    tools: list[dict[str, Any]]
    pointer_prefix: str = "/tools"  # RFC 6901 pointer of the tools array inside the loaded document
    single_tool: bool = False  # the document *is* one tool object: its pointer is "" (pointer_prefix unused)
    # What reading the document noticed (warnings; validate reports them with its own) and the
    # positions of tools it found unusable (validate excludes them)
    notes: tuple[Diagnostic, ...] = ()
    unusable: frozenset[int] = frozenset()
    # The server's `serverInfo` as found (untrusted; its string members only): a live server's
    # `server/discover` answer, or a saved result's `_meta` / `serverInfo`. `mcpgen client
    # --project` names and versions the project after it.
    server_info: dict[str, str] | None = None
    # Beyond tools (issue 22): the wire objects of `resources/list`, `resources/templates/list` and
    # `prompts/list`, or a spec file's `resources`, `resourceTemplates` and `prompts` arrays, as found.
    resources: list[dict[str, Any]] = field(default_factory=list)
    resource_templates: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    # The skills the server serves (the skills extension, SEP-2640): `skills/list` entries, or a spec
    # file's `skills` array, as found. Nothing is generated from them (so they are not in `digest`);
    # `mcpgen snapshot` keeps them and `mcpgen diff` compares them.
    skills: list[dict[str, Any]] = field(default_factory=list)
    # Tool filters (`load/filters.py`): the filters that chose `tools`, and the position in the
    # loaded document of each tool kept (empty: every tool is where it was listed), so diagnostics
    # still point into the document as the user wrote it
    filters: ToolFilter = NO_FILTER
    positions: tuple[int, ...] = ()

    @functools.cached_property
    def digest(self) -> str:
        """Of the tools alone while there is nothing else (the digests of existing specs stay as they
        were); with resources, templates or prompts, of all four arrays. Computed once: `mcpgen
        generate` keys its targets by it and validate records it (what was loaded is not changed)."""
        if not (self.resources or self.resource_templates or self.prompts):
            return canonical_digest(self.tools)
        return canonical_digest(
            {
                "tools": self.tools,
                "resources": self.resources,
                "resourceTemplates": self.resource_templates,
                "prompts": self.prompts,
            }
        )

    def tool_pointer(self, index: int) -> str:
        if self.single_tool:
            return ""
        return f"{self.pointer_prefix}/{self.positions[index] if self.positions else index}"


@dataclass(frozen=True)
class ValidatedSpec:
    """VALIDATE output: the usable tools (source order) plus the warnings that let others through."""

    source: str
    tools: list[dict[str, Any]]
    digest: str  # of the loaded input, so the header names what the user fed in
    warnings: list[Diagnostic] = field(default_factory=list)
    # The usable resources, resource templates and prompts (wire shapes, source order)
    resources: list[dict[str, Any]] = field(default_factory=list)
    resource_templates: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    filters: ToolFilter = NO_FILTER  # the tool filters the loaded spec was chosen by


@dataclass(frozen=True)
class GeneratedPackage:
    """FORMAT output, WRITE input: every file of one package, as bytes, keyed by relative path."""

    package: str  # import name, also the directory name under the output folder
    files: dict[str, bytes]  # generator-owned; rewritten by every run
    user_files: dict[str, bytes] = field(default_factory=dict)  # created once, then the user's (handlers.py)
    input_key: str | None = None  # pipeline.input_key of a [tool.mcpgen] target: recorded in the manifest
    filters: ToolFilter = NO_FILTER  # the tool filters it was generated with: recorded in the manifest


@dataclass(frozen=True)
class GeneratedProject:
    """An installable project around a client package (`mcpgen client --project DIR`): the package
    goes to `src/PACKAGE/`, `files` (pyproject.toml, README.md) to the project directory. Their user
    sections hold their first content; the writer keeps what the user made of them."""

    package: GeneratedPackage
    files: dict[str, bytes]
