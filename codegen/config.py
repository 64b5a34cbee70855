"""`[tool.mcpgen]` in pyproject.toml: the targets `mcpgen generate` keeps fresh.

```toml
[[tool.mcpgen.targets]]
source = "specs/weather.json"   # a spec file, relative to the pyproject.toml
kind = "client"                 # "client" or "server"
output = "generated"            # output directory, relative to the pyproject.toml
package = "weather_client"      # package (directory) name written under `output`
strict = false                  # optional: warnings become errors
```

Sources are files, never URLs: a build must be replayable offline (`mcpgen snapshot` saves a live
server's tools to a file first). Unknown keys and kinds are errors, not silently ignored.
"""

from __future__ import annotations

import keyword
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .errors import McpgenError

__all__ = ["KINDS", "ConfigError", "GenerateConfig", "TargetConfig", "find_pyproject", "load_config"]

Kind = Literal["client", "server"]
KINDS: tuple[Kind, ...] = ("client", "server")
_TARGET_KEYS = {"source": str, "kind": str, "output": str, "package": str, "strict": bool}
_REQUIRED = ("source", "kind", "output", "package")
_TOP_KEYS = ("targets",)


class ConfigError(McpgenError):
    """`[tool.mcpgen]` is missing, malformed, or names an unknown key or kind."""


@dataclass(frozen=True)
class TargetConfig:
    """One `[[tool.mcpgen.targets]]` table, with paths resolved against the pyproject's directory."""

    index: int  # 1-based position in the file, for messages
    source: str  # as written in the config (POSIX): the display name that goes into generated headers
    source_path: Path  # absolute
    kind: Kind
    output: Path  # absolute
    package: str
    strict: bool = False

    def describe(self) -> str:
        return f"target #{self.index} ({self.kind} {self.package!r} from {self.source})"


@dataclass(frozen=True)
class GenerateConfig:
    path: Path  # the pyproject.toml read
    targets: tuple[TargetConfig, ...]


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml in `start` or its parents."""
    start = start.resolve()
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _is_identifier(name: str) -> bool:
    return name.isascii() and name.isidentifier() and not keyword.iskeyword(name)


def _reject_unknown_keys(table: dict[str, Any], known: Iterable[str], where: str, *, expected: str) -> None:
    """Unknown keys are errors, not silently ignored (a typo must not drop a setting)."""
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; expected {expected}")


def _target(path: Path, base: Path, index: int, table: Any) -> TargetConfig:
    where = f"{path}: [[tool.mcpgen.targets]] #{index}"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table, found {type(table).__name__}")
    _reject_unknown_keys(table, _TARGET_KEYS, where, expected=", ".join(_TARGET_KEYS))
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
    return TargetConfig(
        index=index,
        source=Path(source).as_posix(),
        source_path=(base / source).resolve(),
        kind=kind,  # narrowed by the KINDS check above
        output=(base / output).resolve(),
        package=package,
        strict=bool(table.get("strict", False)),
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
    _reject_unknown_keys(section, _TOP_KEYS, f"{path}: [tool.mcpgen]", expected="'targets'")
    raw = section.get("targets")
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{path}: [tool.mcpgen] needs at least one [[tool.mcpgen.targets]] table")
    base = path.resolve().parent
    targets = tuple(_target(path, base, index, table) for index, table in enumerate(raw, start=1))
    seen: dict[Path, TargetConfig] = {}
    for target in targets:
        destination = target.output / target.package
        if destination in seen:
            raise ConfigError(
                f"{path}: {target.describe()} and {seen[destination].describe()} both write {destination}"
            )
        seen[destination] = target
    return GenerateConfig(path=path, targets=targets)
