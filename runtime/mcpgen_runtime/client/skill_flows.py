"""Flows of the skills extension (`io.modelcontextprotocol/skills`, SEP-2640) on the client side.

Nothing is fetched ahead of need (spec § Lazy Retrieval): listing reads only `skills/list`,
`skills/get` only the entry, and a file is read when it is asked for, then checked against the
entry before it is returned (`skills.verified`). Methods of the extension are sent only to a
server that declares it in its capabilities (`server/discover`, or what `initialize` settled).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..errors import ProtocolError
from ..skills import EXTENSION, GET, LIST, Skill, SkillError, SkillFile, SkillVerificationError, verified
from ..surfaces import BlobResourceContents
from .core import ClientCore
from .steps import Flow
from .surface_flows import list_all_flow, read_resource_flow

__all__ = [
    "declared_flow",
    "decoded",
    "get_skill_flow",
    "list_skills_flow",
    "read_file_flow",
    "read_unverified_flow",
]


def declared_flow(core: ClientCore, *, partition: str | None) -> Flow[dict[str, Any]]:
    """The server's settings of the extension; SkillError when it does not declare it."""
    discovered = yield from core.discover_flow(partition=partition)
    capabilities = discovered.get("capabilities")
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    settings = extensions.get(EXTENSION) if isinstance(extensions, dict) else None
    if not isinstance(settings, dict):
        raise SkillError(f"the server does not declare the skills extension ({EXTENSION})")
    return settings


def list_skills_flow(
    core: ClientCore, max_pages: int, *, partition: str | None, refresh: bool
) -> Flow[list[Skill]]:
    yield from declared_flow(core, partition=partition)
    skills: list[Skill] = yield from list_all_flow(
        core, LIST, max_pages, partition=partition, refresh=refresh
    )
    return skills


def get_skill_flow(core: ClientCore, uri: str, *, partition: str | None) -> Flow[Skill]:
    yield from declared_flow(core, partition=partition)
    result = yield from core.request_flow(GET, {"uri": uri})
    try:
        skill = Skill.model_validate(result.get("skill"), strict=False)
    except ValidationError as exc:
        raise ProtocolError(f"{GET}: malformed skill entry: {str(exc)[:300]}") from exc
    if skill.uri != uri:
        raise ProtocolError(f"{GET} for {uri[:200]} answered the entry of {skill.uri[:200]}")
    return skill


def read_file_flow(core: ClientCore, file: SkillFile, *, partition: str | None) -> Flow[bytes]:
    """One skill file, read and checked against its entry (size, then digest)."""
    data = yield from read_unverified_flow(core, file.uri, partition=partition)
    return verified(file, data)


def read_unverified_flow(core: ClientCore, uri: str, *, partition: str | None) -> Flow[bytes]:
    """The bytes `resources/read` returns for `uri` (exactly one contents item for it)."""
    result = yield from read_resource_flow(core, uri, partition=partition)
    matching = [item for item in result.contents if item.uri == uri]
    if len(matching) != 1:
        raise SkillVerificationError(uri, f"the read returned {len(matching)} contents for it, not 1")
    (item,) = matching
    return item.blob if isinstance(item, BlobResourceContents) else item.text.encode("utf-8")


def decoded(uri: str, data: bytes) -> str:
    """A verified text file (SKILL.md) as text."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillVerificationError(uri, "it is not UTF-8 text") from None
