"""`mcpgen client ... --project DIR` (and a `[tool.mcpgen]` target's `project`): an installable
project around the client package. What goes where and whose files are whose: codegen/render/project.py
and codegen/write/project.py.

The distribution's name and version come from `--project-name` / `--project-version`, else from the
server's `serverInfo` (a live server's discover answer, or a saved result's), else from the package:

    name     --project-name | serverInfo name, normalised, + "-client" | the package in kebab case
    version  --project-version | serverInfo version | 0.1.0

Each is checked (PEP 508 / PEP 440) wherever it came from; an error names the flag that fixes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click

from mcpgen_runtime._version import __version__ as runtime_version

from ..render.project import (
    ProjectMeta,
    check_project_name,
    check_project_version,
    console_script_name,
    runtime_requirement,
)

__all__ = ["DEFAULT_VERSION", "project_meta", "project_options"]

DEFAULT_VERSION = "0.1.0"
_F = TypeVar("_F", bound=Callable[..., Any])


def project_options(function: _F) -> _F:
    for option in reversed(
        (
            click.option(
                "--project",
                "project",
                metavar="DIR",
                type=click.Path(file_okay=False, path_type=Path),
                help="Write an installable project: DIR/pyproject.toml, DIR/README.md, DIR/src/PACKAGE/ "
                "(instead of -o). The sections marked 'yours' in those files are kept when regenerating.",
            ),
            click.option(
                "--project-name",
                metavar="NAME",
                help="Distribution name (PEP 508) [default: the server's serverInfo name + '-client', "
                "else the package name in kebab case].",
            ),
            click.option(
                "--project-version",
                metavar="VERSION",
                help=(
                    "Distribution version (PEP 440) "
                    f"[default: the server's serverInfo version, else {DEFAULT_VERSION}]."
                ),
            ),
        )
    ):
        function = option(function)
    return function


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def project_meta(
    package: str, server_info: Mapping[str, str] | None, name: str | None, version: str | None
) -> ProjectMeta:
    """The checked name, version, console script and runtime requirement of a project."""
    info = server_info or {}
    if name is not None:
        name = check_project_name(name, "--project-name")
    elif "name" in info:
        found = check_project_name(info["name"], "the server's serverInfo name")
        name = found if _normalised(found).endswith("client") else f"{_normalised(found)}-client"
        name = check_project_name(name, "the serverInfo name + '-client'")
    else:
        name = console_script_name(package)
    if version is not None:
        version = check_project_version(version, "--project-version")
    elif "version" in info:
        version = check_project_version(info["version"], "the server's serverInfo version")
    else:
        version = DEFAULT_VERSION
    return ProjectMeta(
        name=name,
        version=version,
        script=console_script_name(package),
        requirement=runtime_requirement(runtime_version),
    )
