"""Build hook: write the runtime's blocking twins (`mcpgen_runtime/**/_sync/`) from their asyncio
sources before packaging (scripts/sync_twins.py). The twins are not kept in git: the asyncio
source is the only copy anyone edits."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class SyncTwinsHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        script = runpy.run_path(str(Path(self.root) / "scripts" / "sync_twins.py"))
        script["write_all"]()
        build_data["artifacts"].append("mcpgen_runtime/**/_sync/*.py")  # git-ignored, still packaged
