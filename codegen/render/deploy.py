"""The `Dockerfile` and `deploy/` folder (`nginx.conf`, `compose.yaml`) that
`mcpgen server` writes into a server package, from `templates/deploy/*.tmpl`.

They are user files, written once like `handlers.py`: deployment files are meant to be edited
(TLS, server names, limits, the handlers' own dependencies), a regeneration must never take
those edits away, and nothing in them depends on the tools, so regenerating would have nothing
new to say. The only values substituted are the validated package name, the generator's release
(in the header) and the runtime version the image installs (the one the generator ran with, which
it requires exactly); no text from a spec or a server reaches them.

The tests render `nginx.conf` with loopback addresses through `nginx_conf` (tests/cluster/), so
the configuration users get is the one the cluster tests run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import InternalGeneratorError
from .templates import templates_dir

__all__ = ["DEPLOY_FILES", "deploy_files", "nginx_conf"]

DEPLOY_FILES = ("Dockerfile", "deploy/compose.yaml", "deploy/nginx.conf")
_TEMPLATES = {
    "Dockerfile": "Dockerfile.tmpl",
    "deploy/compose.yaml": "compose.yaml.tmpl",
    "deploy/nginx.conf": "nginx.conf.tmpl",
}
_PLACEHOLDER = re.compile(r"@[A-Z_]+@")
_ADDRESS = re.compile(r"[A-Za-z0-9.\-\[\]:]{1,100}")  # host:port, [v6]:port, or a port
_DIRECTIVE = re.compile(r"[a-z_]+ [^;{}\n]*;")


def _header(package: str, version: str) -> str:
    return (
        f"# Created by mcpgen {version} for the package {package}.\n"
        "# This file is yours: mcpgen writes it once and never overwrites it."
    )


def _template(name: str) -> str:
    return (templates_dir() / "deploy" / name).read_text(encoding="utf-8")


def _substitute(text: str, values: dict[str, str]) -> str:
    for token, value in values.items():
        text = text.replace(token, value)
    left = _PLACEHOLDER.search(text)
    if left is not None:
        raise InternalGeneratorError(f"deployment template token {left.group()} was not substituted")
    return text


def _check_package(package: str, version: str) -> None:
    if not (package.isidentifier() and package.isascii()):
        raise InternalGeneratorError(f"package name {package!r} reached the deployment files unvalidated")
    if not re.fullmatch(r"[0-9A-Za-z.+\-]{1,80}", version):
        raise InternalGeneratorError(f"generator version {version!r} is not a version string")


def nginx_conf(
    package: str,
    version: str,
    *,
    upstreams: Sequence[str] = ("app:8000",),
    listen: str = "8080",
    http_extra: Sequence[str] = (),
) -> str:
    """`deploy/nginx.conf`: one `server` line per upstream address (same health parameters for
    each), listening on `listen`; `http_extra` directives (a test's temp and log paths) open the
    `http` block."""
    _check_package(package, version)
    for address in (*upstreams, listen):
        if not _ADDRESS.fullmatch(address):
            raise ValueError(f"not an address for nginx: {address!r}")
    for directive in http_extra:
        if not _DIRECTIVE.fullmatch(directive):
            raise ValueError(f"not one simple nginx directive: {directive!r}")
    if not upstreams:
        raise ValueError("nginx needs at least one upstream")
    lines: list[str] = []
    for line in _template("nginx.conf.tmpl").splitlines():
        if "@UPSTREAM@" in line:
            lines.extend(line.replace("@UPSTREAM@", address) for address in upstreams)
        elif line.strip() == "@HTTP_EXTRA@":
            lines.extend(f"    {directive}" for directive in http_extra)
        else:
            lines.append(line)
    return _substitute(
        "\n".join(lines) + "\n",
        {"@HEADER@": _header(package, version), "@PACKAGE@": package, "@LISTEN@": listen},
    )


def deploy_files(package: str, version: str, runtime_version: str | None = None) -> dict[str, str]:
    """{path inside the package: text} for the deployment files, as shipped: created by the release
    `version`, installing `mcpgen-runtime==runtime_version` (default: `version`)."""
    runtime_version = version if runtime_version is None else runtime_version
    _check_package(package, version)
    _check_package(package, runtime_version)
    values = {"@HEADER@": _header(package, version), "@PACKAGE@": package, "@VERSION@": runtime_version}
    files = {
        path: _substitute(_template(name), values)
        for path, name in _TEMPLATES.items()
        if path != "deploy/nginx.conf"
    }
    files["deploy/nginx.conf"] = nginx_conf(package, version)
    return dict(sorted(files.items()))
