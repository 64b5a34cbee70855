"""`[tool.mcpgen]` in pyproject.toml: the targets `mcpgen generate` keeps fresh.

```toml
[[tool.mcpgen.targets]]
source = "specs/weather.json"   # a spec file, relative to the pyproject.toml
kind = "client"                 # "client" or "server"
output = "generated"            # output directory, relative to the pyproject.toml
package = "weather_client"      # package (directory) name written under `output`
strict = false                  # optional: warnings become errors
skip_invalid = false            # optional: leave out tools with errors (warned) instead of failing
line-length = 100               # optional: overrides the formatter's line length for this target
cli = "weather"                 # optional, clients only: the command name of the package's CLI
include_tools = ["get_*"]       # optional: only the tools whose wire name matches a glob
exclude_tools = ["get_secret"]  # optional: then leave out those matching a glob
```

`include_tools` / `exclude_tools` are `--include-tools` / `--exclude-tools` (load/filters.py says what
they mean); the package's manifest records them, and changing them makes the target stale.

A client target may instead write an installable project (`mcpgen client --project`):
`project = "clients/weather"` (relative to the pyproject.toml, in place of `output`: the package
goes to `clients/weather/src/PACKAGE/`), with optional `project-name` and `project-version`. Its
console script is the package name in kebab case (`cli` is not used with `project`).

`cli` names the generated command line (`python -m weather_client ...`) as a console script: its
usage lines and `--help` say `weather`, and `mcpgen generate` reminds you of the line that
installs it, `weather = "weather_client.__main__:main"` under `[project.scripts]` of the
distribution that ships the package (mcpgen writes only generated files, never your pyproject).

`line-length` may also sit in `[tool.mcpgen]` itself (every target's default). Without it the
generated code follows the formatter configuration of the project it lands in (`project_style`):
the `[tool.black]` table black itself would read for the output directory, else black's defaults,
so `black .` leaves generated files as they are.

Sources are files, never URLs: a build must be replayable offline (`mcpgen snapshot` saves a live
server's tools to a file first). A source may also name a server of an MCP config file,
`source = ".mcp.json#github"` (the file relative to the pyproject.toml): that server is started (or
reached) on every run, `--check` too, as `mcpgen client --config .mcp.json --server github` would.
Unknown keys and kinds are errors, not silently ignored. A
target's `source` is recorded in generated headers relative to the pyproject.toml's directory (the
project root), so every checkout writes the same bytes.
"""

from __future__ import annotations

import dataclasses
import keyword
import os
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import McpgenError
from ..load.mcp_config import split_config_source
from ..render.python.black_format import BLACK_DEFAULTS, LINE_LENGTH_RANGE, Style
from ..spec import NO_FILTER, ToolFilter

__all__ = [
    "KINDS",
    "ConfigError",
    "GenerateConfig",
    "TargetConfig",
    "check_line_length",
    "find_pyproject",
    "header_path",
    "load_config",
    "project_root",
    "project_style",
    "relative_source",
]

Kind = Literal["client", "server"]
KINDS: tuple[Kind, ...] = ("client", "server")
_TARGET_KEYS = {
    "source": str,
    "kind": str,
    "output": str,
    "package": str,
    "strict": bool,
    "skip_invalid": bool,
    "line-length": int,
    "cli": str,
    "project": str,
    "project-name": str,
    "project-version": str,
    "include_tools": list,
    "exclude_tools": list,
}
_CLI_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")  # a console-script name (entry point names)
_REQUIRED = ("source", "kind", "output", "package")
_TOP_KEYS = ("targets", "line-length")
# black's TargetVersion names (black 26.10.1); checked so a typo is an error here, not in black
_TARGET_VERSIONS = frozenset(f"py3{minor}" for minor in range(3, 15))


class ConfigError(McpgenError):
    """`[tool.mcpgen]` is missing, malformed, or names an unknown key or kind."""


@dataclass(frozen=True)
class TargetConfig:
    """One `[[tool.mcpgen.targets]]` table, with paths resolved against the pyproject's directory."""

    index: int  # 1-based position in the file, for messages
    source: str  # relative to the pyproject.toml's directory (POSIX): the name generated headers record
    source_path: Path  # absolute
    kind: Kind
    output: Path  # absolute
    package: str
    strict: bool = False
    skip_invalid: bool = False  # tools with errors are left out (warnings) instead of failing the target
    style: Style = BLACK_DEFAULTS  # the formatter style of the output directory's project (and overrides)
    cli: str | None = None  # a client's console-script name (`cli = "weather"`)
    project: Path | None = (
        None  # absolute: an installable project around the package (`output` is PROJECT/src)
    )
    project_name: str | None = None
    project_version: str | None = None
    # `source = "FILE#NAME"`: a server of an MCP config file. `source_path` is then FILE#NAME as a
    # path (a key, never opened) and `config_file` the file itself
    server: str | None = None
    config_file: Path | None = None
    filters: ToolFilter = NO_FILTER  # `include_tools` / `exclude_tools`

    def load_name(self) -> str:
        """The source as the loaders take it: the spec file, or `FILE#NAME`."""
        if self.server is not None and self.config_file is not None:
            return f"{_display(self.config_file)}#{self.server}"
        return _display(self.source_path)

    def describe(self) -> str:
        return f"target #{self.index} ({self.kind} {self.package!r} from {self.source})"


@dataclass(frozen=True)
class GenerateConfig:
    path: Path  # the pyproject.toml read
    targets: tuple[TargetConfig, ...]


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml in `start` or its parents."""
    start = start.resolve()
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def project_root(directory: Path) -> Path:
    """The directory of the nearest pyproject.toml in or above `directory` (which need not exist
    yet), else `directory` itself: generated headers name file sources relative to it."""
    found = find_pyproject(_existing(directory))
    return found.parent if found is not None else directory.resolve()


def relative_source(source: Path, root: Path) -> str:
    """`source` as generated headers record it: relative to the project root, POSIX separators."""
    try:
        return Path(os.path.relpath(source.resolve(), root.resolve())).as_posix()
    except ValueError:  # another drive (Windows): the file name is all that is machine-independent
        return source.name


def header_path(path: Path, root: Path) -> str:
    """A config file as generated headers record it (`FILE` of `FILE#NAME`): relative to the
    project root when inside it, else `~/...` under the home directory (a user-level file such as
    ~/.cursor/mcp.json), else as `relative_source` gives it."""
    resolved = path.resolve()
    if resolved.is_relative_to(root.resolve()):
        return resolved.relative_to(root.resolve()).as_posix()
    home = Path.home().resolve()
    if resolved.is_relative_to(home):
        return "~/" + resolved.relative_to(home).as_posix()
    return relative_source(path, root)


def _existing(directory: Path) -> Path:
    directory = directory.resolve()
    while not directory.is_dir() and directory != directory.parent:
        directory = directory.parent
    return directory


def check_line_length(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value not in LINE_LENGTH_RANGE:
        raise ConfigError(
            f"{where}: line-length must be a whole number from {LINE_LENGTH_RANGE.start} to "
            f"{LINE_LENGTH_RANGE.stop - 1}, found {value!r}"
        )
    return value


def _black_table(directory: Path) -> tuple[dict[str, Any], Path | None]:
    """The `[tool.black]` table black itself would use for files in `directory`: the nearest
    directory holding .git, .hg or a pyproject.toml with a [tool.black] table is the project root
    (black's `find_project_root`), and its pyproject.toml's table counts. The user-level black
    configuration is not read: generated bytes must not depend on the machine."""
    for candidate in (directory, *directory.parents):
        pyproject = candidate / "pyproject.toml"
        is_root = (candidate / ".git").exists() or (candidate / ".hg").is_dir()
        if pyproject.is_file():
            try:
                with pyproject.open("rb") as fh:
                    doc = tomllib.load(fh)
            except (OSError, tomllib.TOMLDecodeError) as exc:
                raise ConfigError(f"cannot read the formatter settings in {pyproject}: {exc}") from exc
            tool = doc.get("tool")
            table = tool.get("black") if isinstance(tool, dict) else None
            if isinstance(table, dict):
                return table, pyproject
        if is_root:
            return {}, None
    return {}, None


def project_style(directory: Path, *, line_length: int | None = None) -> Style:
    """The formatter style for generated code written into `directory` (which need not exist yet):
    `line-length`, `target-version`, `skip-magic-trailing-comma`, `preview` and `unstable` from the
    `[tool.black]` black would read there, black's defaults for the rest; `line_length` overrides."""
    table, pyproject = _black_table(_existing(directory))
    where = f"{pyproject}: [tool.black]"
    style = Style()
    if "line-length" in table:
        style = dataclasses.replace(style, line_length=check_line_length(table["line-length"], where))
    versions = table.get("target-version", [])
    if not (
        isinstance(versions, list)
        and all(isinstance(v, str) and v.lower() in _TARGET_VERSIONS for v in versions)
    ):
        raise ConfigError(
            f"{where}: target-version must be a list of names such as 'py311', found {versions!r}"
        )
    flags = {}
    for key in ("skip-magic-trailing-comma", "preview", "unstable"):
        value = table.get(key, False)
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: {key} must be true or false, found {value!r}")
        flags[key] = value
    style = dataclasses.replace(
        style,
        target_versions=tuple(sorted({v.lower() for v in versions}, key=lambda v: int(v[3:]))),
        skip_magic_trailing_comma=flags["skip-magic-trailing-comma"],
        preview=flags["preview"],
        unstable=flags["unstable"],
    )
    if line_length is not None:
        style = dataclasses.replace(style, line_length=check_line_length(line_length, "--line-length"))
    return style


def _is_identifier(name: str) -> bool:
    return name.isascii() and name.isidentifier() and not keyword.iskeyword(name)


def _reject_unknown_keys(table: dict[str, Any], known: Iterable[str], where: str, *, expected: str) -> None:
    """Unknown keys are errors, not silently ignored (a typo must not drop a setting)."""
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; expected {expected}")


def _target(path: Path, base: Path, index: int, table: Any, line_length: int | None) -> TargetConfig:
    where = f"{path}: [[tool.mcpgen.targets]] #{index}"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table, found {type(table).__name__}")
    _reject_unknown_keys(table, _TARGET_KEYS, where, expected=", ".join(_TARGET_KEYS))
    if "project" in table:
        if "output" in table or "cli" in table or table.get("kind") != "client":
            raise ConfigError(
                f"{where}: 'project' writes a client project (the package goes to PROJECT/src, its "
                "console script is the package in kebab case): use it with kind = 'client' and without "
                "'output' or 'cli'"
            )
        table = {**table, "output": f"{table['project']}/src"}
    elif "project-name" in table or "project-version" in table:
        raise ConfigError(f"{where}: 'project-name' and 'project-version' need 'project'")
    missing = [key for key in _REQUIRED if key not in table]
    if missing:
        raise ConfigError(f"{where}: missing key(s) {', '.join(map(repr, missing))}")
    for key, typ in _TARGET_KEYS.items():
        if key in table and not isinstance(table[key], typ):
            raise ConfigError(f"{where}: {key!r} must be a {typ.__name__}, found {table[key]!r}")
    source: str = table["source"]
    kind: str = table["kind"]
    output: str = table["output"]
    package: str = table["package"]
    if kind not in KINDS:
        raise ConfigError(f"{where}: kind {kind!r} is unknown; expected 'client' or 'server'")
    if "://" in source:
        raise ConfigError(
            f"{where}: source {source!r} is a URL; targets read files so builds are reproducible. "
            f"Save the live tools first: mcpgen snapshot {source} -o specs/<name>.json"
        )
    if not source.strip() or not output.strip():
        raise ConfigError(f"{where}: 'source' and 'output' must not be empty")
    if not _is_identifier(package):
        raise ConfigError(f"{where}: package {package!r} is not a valid Python identifier")
    if "line-length" in table:
        line_length = check_line_length(table["line-length"], where)
    cli = table.get("cli")
    if cli is not None and (kind != "client" or not _CLI_NAME.match(cli)):
        raise ConfigError(
            f"{where}: cli {cli!r}: a console-script name (letters, digits, '.', '_', '-') "
            "for a client target"
        )
    globs = {}
    for key in ("include_tools", "exclude_tools"):
        value = table.get(key, [])
        if not all(isinstance(glob, str) and glob for glob in value):
            raise ConfigError(f"{where}: {key!r} must be a list of non-empty glob strings, found {value!r}")
        globs[key] = value
    in_config = split_config_source(source, base)
    server = config_file = None
    if in_config is not None:
        config_file, server = in_config[0].resolve(), in_config[1]
        source_path = Path(f"{config_file}#{server}")
        shown_source = f"{relative_source(config_file, base)}#{server}"
    else:
        source_path = (base / source).resolve()
        shown_source = relative_source(source_path, base)
    output_path = (base / output).resolve()
    project = table.get("project")
    return TargetConfig(
        index=index,
        source=shown_source,
        source_path=source_path,
        server=server,
        config_file=config_file,
        kind=kind,  # narrowed by the KINDS check above
        output=output_path,
        package=package,
        strict=bool(table.get("strict", False)),
        skip_invalid=bool(table.get("skip_invalid", False)),
        style=project_style(output_path, line_length=line_length),
        cli=cli,
        project=None if project is None else (base / project).resolve(),
        project_name=table.get("project-name"),
        project_version=table.get("project-version"),
        filters=ToolFilter.of(globs["include_tools"], globs["exclude_tools"]),
    )


def load_config(path: Path) -> GenerateConfig:
    """Read and check `[tool.mcpgen]` of the pyproject.toml at `path`."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            doc = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    tool = doc.get("tool")
    section = tool.get("mcpgen") if isinstance(tool, dict) else None
    if section is None:
        raise ConfigError(
            f"{path} has no [tool.mcpgen] section; add [[tool.mcpgen.targets]] tables "
            "with source, kind, output and package"
        )
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.mcpgen] must be a table")
    _reject_unknown_keys(section, _TOP_KEYS, f"{path}: [tool.mcpgen]", expected="'targets', 'line-length'")
    line_length = section.get("line-length")
    if line_length is not None:
        check_line_length(line_length, f"{path}: [tool.mcpgen]")
    raw = section.get("targets")
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{path}: [tool.mcpgen] needs at least one [[tool.mcpgen.targets]] table")
    base = path.resolve().parent
    targets = tuple(
        _target(path, base, index, table, line_length) for index, table in enumerate(raw, start=1)
    )
    seen: dict[Path, TargetConfig] = {}
    for target in targets:
        destination = target.output / target.package
        if destination in seen:
            raise ConfigError(
                f"{path}: {target.describe()} and {seen[destination].describe()} both write {destination}"
            )
        seen[destination] = target
    return GenerateConfig(path=path, targets=targets)
