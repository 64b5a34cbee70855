"""The driver's methods for surfaces (resources, resource templates, prompts, completions, and the
skills extension's skills): `AsyncSurfaceMethods`, a base of `AsyncClient` (`SurfaceMethods` of
`Client`, its twin).

Each method runs one flow of client/surface_flows.py through the driver's `_run`; the driver
(client.py) owns the pump, the tool methods and the connection's life.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ...errors import McpRuntimeError
from ...protocol.input_messages import InputResult
from ...types import Unset
from ...uri_template import expand
from ..common import AsyncClientBase
from ..legacy_flows import MODERN

if TYPE_CHECKING:
    from ... import surfaces
    from ...skills import Skill, SkillFile
    from ..steps import Flow
    from .skills import AsyncLoadedSkill

__all__ = ["AsyncSurfaceMethods"]

T = TypeVar("T")


class AsyncSurfaceMethods(AsyncClientBase):
    """`resources/*`, `prompts/*` and `completion/complete` on a driver (client/surface_flows.py)."""

    if TYPE_CHECKING:  # the driver's (client.py)

        async def _run(self, flow: Flow[T]) -> T: ...

        async def _partition(self) -> str | None: ...

    async def _page(self, method: str, cursor: str | None, refresh: bool) -> surfaces.Page[Any]:
        from ..surface_flows import list_page_flow  # surfaces.py's models: imported on first use

        return await self._run(
            list_page_flow(self._core, method, cursor, partition=await self._partition(), refresh=refresh)
        )

    async def _every_page(self, method: str, max_pages: int, refresh: bool) -> list[Any]:
        from ..surface_flows import list_all_flow  # surfaces.py's models: imported on first use

        return await self._run(
            list_all_flow(self._core, method, max_pages, partition=await self._partition(), refresh=refresh)
        )

    async def list_resources(
        self, cursor: str | None = None, *, refresh: bool = False
    ) -> surfaces.Page[surfaces.Resource]:
        """One `resources/list` page (cached per page for its `ttlMs`)."""
        return await self._page("resources/list", cursor, refresh)

    async def list_all_resources(
        self, *, max_pages: int = 1000, refresh: bool = False
    ) -> list[surfaces.Resource]:
        """Every `resources/list` page, in order."""
        return await self._every_page("resources/list", max_pages, refresh)

    async def list_resource_templates(
        self, cursor: str | None = None, *, refresh: bool = False
    ) -> surfaces.Page[surfaces.ResourceTemplate]:
        """One `resources/templates/list` page."""
        return await self._page("resources/templates/list", cursor, refresh)

    async def list_all_resource_templates(
        self, *, max_pages: int = 1000, refresh: bool = False
    ) -> list[surfaces.ResourceTemplate]:
        """Every `resources/templates/list` page, in order."""
        return await self._every_page("resources/templates/list", max_pages, refresh)

    async def read_resource(
        self,
        uri: str,
        *,
        refresh: bool = False,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        input_responses: Mapping[str, InputResult | Mapping[str, Any]] | None = None,
        request_state: str | None = None,
    ) -> surfaces.ReadResourceResult:
        """`resources/read`: text contents as `TextResourceContents`, binary ones as
        `BlobResourceContents` (bytes). Cached per URI for the result's `ttlMs`; input the server
        asks for is answered by the callbacks (or resumed with `input_responses`/`request_state`)."""
        from ..surface_flows import read_resource_flow  # surfaces.py's models: imported on first use

        return await self._run(
            read_resource_flow(
                self._core,
                uri,
                partition=await self._partition(),
                refresh=refresh,
                meta=meta,
                timeout=self._call_timeout if timeout is None else timeout,
                input_responses=input_responses,
                request_state=request_state,
            )
        )

    async def list_prompts(
        self, cursor: str | None = None, *, refresh: bool = False
    ) -> surfaces.Page[surfaces.Prompt]:
        """One `prompts/list` page."""
        return await self._page("prompts/list", cursor, refresh)

    async def list_all_prompts(
        self, *, max_pages: int = 1000, refresh: bool = False
    ) -> list[surfaces.Prompt]:
        """Every `prompts/list` page, in order."""
        return await self._every_page("prompts/list", max_pages, refresh)

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        input_responses: Mapping[str, InputResult | Mapping[str, Any]] | None = None,
        request_state: str | None = None,
    ) -> surfaces.PromptResult:
        """`prompts/get`: the prompt's messages (role + one content block each)."""
        from ..surface_flows import get_prompt_flow  # surfaces.py's models: imported on first use

        return await self._run(
            get_prompt_flow(
                self._core,
                name,
                arguments,
                meta=meta,
                timeout=self._call_timeout if timeout is None else timeout,
                input_responses=input_responses,
                request_state=request_state,
            )
        )

    async def complete(
        self,
        ref: surfaces.PromptRef | surfaces.ResourceTemplateRef | Mapping[str, Any],
        argument: str,
        value: str = "",
        *,
        context: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> surfaces.Completion:
        """`completion/complete`: suggestions for a prompt argument (`PromptRef(name)`) or a
        template variable (`ResourceTemplateRef(uri_template)`); `context` holds the arguments
        already chosen."""
        from ..surface_flows import complete_flow  # surfaces.py's models: imported on first use

        return await self._run(
            complete_flow(
                self._core,
                ref,
                argument,
                value,
                context=context,
                timeout=self._call_timeout if timeout is None else timeout,
            )
        )

    async def subscribe_resource(self, uri: str) -> None:
        """`resources/subscribe` (initialize-based revisions only): the server then sends
        `notifications/resources/updated` for `uri`, which `on_notification` receives (and
        `listen(resource_subscriptions=[uri])` subscribes by itself). 2026-07-28 has no such request."""
        if self._core.era == MODERN:
            raise McpRuntimeError(
                "resources/subscribe does not exist in MCP 2026-07-28; use "
                "listen(resource_subscriptions=[uri]) instead"
            )
        await self._run(self._core.request_flow("resources/subscribe", {"uri": uri}, name=uri))

    async def unsubscribe_resource(self, uri: str) -> None:
        """`resources/unsubscribe` (initialize-based revisions only)."""
        if self._core.era == MODERN:
            raise McpRuntimeError(
                "resources/unsubscribe does not exist in MCP 2026-07-28; close the listen stream"
            )
        await self._run(self._core.request_flow("resources/unsubscribe", {"uri": uri}, name=uri))

    async def _read_template(
        self, uri_template: str, values: Mapping[str, Any]
    ) -> surfaces.ReadResourceResult:
        """A generated template method: the URI expanded by RFC 6570 (uri_template.py), then read."""
        uri = expand(uri_template, {k: v for k, v in values.items() if not isinstance(v, Unset)})
        return await self.read_resource(uri)

    async def _get_prompt(self, name: str, arguments: Mapping[str, Any]) -> surfaces.PromptResult:
        """A generated prompt method: arguments left at `UNSET` are not sent."""
        return await self.get_prompt(name, {k: v for k, v in arguments.items() if not isinstance(v, Unset)})

    # ---- skills (the skills extension, SEP-2640: client/skill_flows.py) ----

    async def list_skills(self, *, max_pages: int = 1000, refresh: bool = False) -> list[Skill]:
        """Every `skills/list` page: each skill's entry (its SKILL.md URI, typed frontmatter, its
        files with digests). Nothing else is fetched. SkillError when the server does not declare
        the extension."""
        from ..skill_flows import list_skills_flow

        partition = await self._partition()
        return await self._run(list_skills_flow(self._core, max_pages, partition=partition, refresh=refresh))

    async def list_skills_page(
        self, cursor: str | None = None, *, refresh: bool = False
    ) -> surfaces.Page[Skill]:
        """One `skills/list` page (`Page.listed`: its entries as the server sent them)."""
        from ..skill_flows import declared_flow

        await self._run(declared_flow(self._core, partition=await self._partition()))
        return await self._page("skills/list", cursor, refresh)

    async def get_skill(self, uri: str) -> Skill:
        """`skills/get`: the current entry of the skill whose SKILL.md is at `uri` (listed or not)."""
        from ..skill_flows import get_skill_flow

        return await self._run(get_skill_flow(self._core, uri, partition=await self._partition()))

    async def load_skill(self, skill: str | Skill, *, allow_dynamic: bool = False) -> AsyncLoadedSkill:
        """Load a skill — by name (from `list_skills`), by its SKILL.md URI (`skills/get`), or from an
        entry you hold — reading only its SKILL.md, checked against the entry (size, digest, and
        its frontmatter field by field); its other files are read when asked (`read(path)`).
        SkillError for an unknown or ambiguous name, a skill past the spec's limits, or a
        `"dynamic"` skill (no digests) unless `allow_dynamic`; SkillVerificationError for content
        that is not what the entry says."""
        from ...skills import MAX_TOTAL_BYTES, SkillError, SkillVerificationError, check_frontmatter
        from ..skill_flows import decoded
        from .skills import AsyncLoadedSkill

        entry = await self._skill_entry(skill)
        if entry.resources == "dynamic" and not allow_dynamic:
            raise SkillError(
                f"skill {entry.uri[:200]} is generated on demand (resources: dynamic): its files carry no "
                "digests; pass allow_dynamic=True to load it unverified"
            )
        if (why := entry.over_limits()) is not None:
            raise SkillError(f"skill {entry.uri[:200]} is past the limits every host supports: {why}")
        if entry.resources == "dynamic":
            data = await self._read_skill_file(entry.uri)  # unverifiable: only bounded
            if len(data) > MAX_TOTAL_BYTES:
                raise SkillVerificationError(entry.uri, f"larger than {MAX_TOTAL_BYTES} bytes; not used")
        else:
            file = entry.file(entry.uri)
            if file is None:
                raise SkillVerificationError(entry.uri, "the skill's entry does not list its SKILL.md")
            data = await self._read_skill_file(file)
        text = decoded(entry.uri, data)
        check_frontmatter(entry.uri, text, entry.frontmatter)
        return AsyncLoadedSkill(self, entry, text)

    async def _skill_entry(self, skill: str | Skill) -> Skill:
        from ...skills import Skill, SkillError

        if isinstance(skill, Skill):
            return skill
        if "://" in skill:
            return await self.get_skill(skill)
        named = [entry for entry in await self.list_skills() if entry.name == skill]
        if len(named) == 1:
            return named[0]
        if not named:
            raise SkillError(f"the server lists no skill named {skill[:100]!r}")
        uris = ", ".join(entry.uri for entry in named[:10])
        raise SkillError(f"{len(named)} skills are named {skill[:100]!r} ({uris[:500]}): pass the URI of one")

    async def _read_skill_file(self, file: SkillFile | str) -> bytes:
        """A skill file: verified against its entry (`SkillFile`), or only read (a URI: dynamic)."""
        from ...skills import SkillFile
        from ..skill_flows import read_file_flow, read_unverified_flow

        partition = await self._partition()
        if isinstance(file, SkillFile):
            return await self._run(read_file_flow(self._core, file, partition=partition))
        return await self._run(read_unverified_flow(self._core, file, partition=partition))
