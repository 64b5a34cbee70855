"""Build-time metadata of `mcpgen`: the generator requires the runtime of exactly its own version.

Both distributions take their version from the same git tag (hatch-vcs); hatchling computes it before
this hook runs. Every `mcpgen-runtime` requirement listed in pyproject.toml's
[tool.hatch.metadata.hooks.custom] gets `==VERSION`, so `pip install mcpgen==X` brings
`mcpgen-runtime==X`, and the pre-commit hooks (which install this checkout and ./runtime together,
with no index carrying either) resolve to the pair built from the same commit.
"""

from __future__ import annotations

import re
from typing import Any

from hatchling.metadata.plugin.interface import MetadataHookInterface

_RUNTIME = re.compile(r"mcpgen-runtime(\[[a-z0-9,]+\])?")


def pin_runtime(requirement: str, version: str) -> str:
    """`mcpgen-runtime[extras]` -> `mcpgen-runtime[extras]==version`; any other requirement as it is."""
    match = _RUNTIME.fullmatch(requirement)
    return f"{requirement}=={version}" if match else requirement


class CustomMetadataHook(MetadataHookInterface):
    def update(self, metadata: dict[str, Any]) -> None:
        version = metadata["version"]
        metadata["dependencies"] = [pin_runtime(req, version) for req in self.config["dependencies"]]
        metadata["optional-dependencies"] = {
            extra: [pin_runtime(req, version) for req in requirements]
            for extra, requirements in self.config["optional-dependencies"].items()
        }
