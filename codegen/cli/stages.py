"""The generator stages the command line runs, imported when a command first needs them.

`mcpgen --help` stays fast: loading, validating and building import the runtime's client, jsonschema,
jinja2 and black only here, on first use. Commands call these through the module
(`stages.load_spec(...)`), so a test can replace one stage without running it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal, cast

if TYPE_CHECKING:
    from mcpgen_runtime.protocol.legacy.detect import EraChoice

    from ..render.black_format import Style
    from ..render.project import ProjectMeta
    from ..spec import GeneratedPackage, GeneratedProject, LoadedSpec, ValidatedSpec
    from .auth import Login

__all__ = ["Kind", "build_package", "build_project", "load_spec", "validate_spec"]

Kind = Literal["client", "server"]


def load_spec(
    source: str | None,
    stdio: str | None,
    headers: Mapping[str, str],
    login: Login | None = None,
    era: str = "auto",
    max_response_bytes: int | None = None,
) -> LoadedSpec:
    from ..load.source import load_source

    eras = cast("EraChoice", era)
    if login is None or stdio is not None or source is None or "://" not in source:
        return load_source(
            source,
            stdio=stdio,
            headers=dict(headers) or None,
            era=eras,
            max_response_bytes=max_response_bytes,
        )
    return load_source(
        source,
        headers=login.headers(headers) or None,
        auth=login.oauth(),
        era=eras,
        max_response_bytes=max_response_bytes,
    )


def validate_spec(spec: LoadedSpec, strict: bool, skip_invalid: bool = False) -> ValidatedSpec:
    from ..validate.checks import validate

    return validate(spec, strict=strict, skip_invalid=skip_invalid)


def build_package(
    kind: Kind, spec: ValidatedSpec, package: str, style: Style, cli: str | None = None
) -> GeneratedPackage:
    from ..pipeline import build_client, build_server

    if kind == "client":
        return build_client(spec, package=package, style=style, cli_name=cli)
    return build_server(spec, package=package, style=style)


def build_project(spec: ValidatedSpec, package: str, meta: ProjectMeta, style: Style) -> GeneratedProject:
    from ..pipeline import build_project as build

    return build(spec, package=package, meta=meta, style=style)
