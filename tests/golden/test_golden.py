"""generated/ is the golden record for specs/: regenerate every [tool.mcpgen] target into a temporary
folder (the real LOAD -> VALIDATE -> build -> WRITE stages) and compare it with generated/.

Owned files must match byte for byte, but for the mcpgen release a header names (missing, extra
and differing files fail, with the start of a unified diff); user files (handlers.py) are the
user's and only need to exist. Refresh the golden record with `mcpgen generate` (the same code
path) and review the diff like code.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from pathlib import Path

import pytest

from codegen.cli.config import TargetConfig, load_config
from codegen.cli.stages import build_package
from codegen.load.document import load_file
from codegen.pipeline import input_key
from codegen.validate.checks import validate
from codegen.write.manifest import MANIFEST_NAME, keep_release
from codegen.write.package import write_package
from tests.support import ROOT

CONFIG = load_config(ROOT / "pyproject.toml")
TARGETS = {target.package: target for target in CONFIG.targets}


def _owned(package_dir: Path) -> list[str]:
    manifest = package_dir / MANIFEST_NAME
    return sorted(json.loads(manifest.read_text("utf-8"))["files"]) if manifest.is_file() else []


def _manifest(package_dir: Path) -> dict[str, object]:
    path = package_dir / MANIFEST_NAME
    doc = json.loads(path.read_text("utf-8")) if path.is_file() else {}
    for key in ("input", "sha256", "user_files"):  # bookkeeping (write.py): derived from the files
        doc.pop(key, None)
    return doc


def _diff(old: Path, new: Path, name: str) -> str:
    lines = difflib.unified_diff(
        old.read_text("utf-8", errors="replace").splitlines(keepends=True),
        new.read_text("utf-8", errors="replace").splitlines(keepends=True),
        f"generated/{name}",
        f"regenerated/{name}",
        n=2,
    )
    return "".join(list(lines)[:60])


def test_every_spec_has_a_target() -> None:
    sources = {target.source_path.resolve() for target in CONFIG.targets}
    for spec in sorted((ROOT / "specs").glob("*.json")):
        assert spec.resolve() in sources, (
            f"{spec.name} has no [[tool.mcpgen.targets]] entry (so no golden output)"
        )


@pytest.mark.parametrize("package", sorted(TARGETS))
def test_generated_matches_a_fresh_generation(package: str, tmp_path: Path) -> None:
    target: TargetConfig = TARGETS[package]
    loaded = dataclasses.replace(load_file(target.source_path), source=target.source)
    key = input_key(
        digest=loaded.digest,
        source=target.source,
        kind=target.kind,
        package=target.package,
        strict=target.strict,
        style=target.style,
    )
    validated = validate(loaded, strict=target.strict)
    built = build_package(target.kind, validated, target.package, target.style)
    pkg = dataclasses.replace(built, input_key=key)
    write_package(tmp_path, pkg)
    fresh, golden = tmp_path / package, target.output / package
    assert golden.is_dir(), f"generated/{package} is missing: run `mcpgen generate`"
    owned = _owned(fresh)
    assert owned == sorted(pkg.files)
    problems = []
    if _owned(golden) != owned:
        problems.append(f"owned files differ: {_owned(golden)} != {owned}")
    for name in owned:
        if not (golden / name).is_file():
            problems.append(f"missing: generated/{package}/{name}")
        # a header naming another mcpgen release is no difference (codegen.write.manifest.keep_release)
        elif keep_release(old := (golden / name).read_bytes(), (fresh / name).read_bytes()) != old:
            problems.append(_diff(golden / name, fresh / name, f"{package}/{name}"))
    if _manifest(golden) != _manifest(fresh):
        problems.append(_diff(golden / MANIFEST_NAME, fresh / MANIFEST_NAME, f"{package}/{MANIFEST_NAME}"))
    for name in pkg.user_files:
        assert (golden / name).is_file(), f"generated/{package}/{name} (user file) is missing"
    assert not problems, "generated/ is stale; run `mcpgen generate`:\n" + "\n".join(problems)
