"""The generator allows any black from 24.1 on (pyproject.toml): every one of them must give the bytes in
generated/, and leave them unchanged when the user runs it over them.

`make test` installs the oldest and newest black of each year into tests/peers/.black/VERSION
(Makefile: BLACK_VERSIONS); each runs in a subprocess with its directory first on the path. The
manifests' input keys are dropped from a copy of generated/, so `mcpgen generate --check` regenerates
every target under that black instead of trusting the cache.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.write.manifest import MANIFEST_NAME
from tests.support import ROOT

pytestmark = pytest.mark.peer

BLACKS = ROOT / "tests" / "peers" / ".black"
VERSIONS = sorted(path.name for path in BLACKS.iterdir() if path.is_dir()) if BLACKS.is_dir() else []


def _run(black_dir: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(black_dir), str(ROOT), str(ROOT / "runtime")])}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def checkout_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pyproject.toml, specs/ and generated/ without the manifests' input keys."""
    copy = tmp_path_factory.mktemp("formatters")
    shutil.copy(ROOT / "pyproject.toml", copy)
    shutil.copytree(ROOT / "specs", copy / "specs")
    shutil.copytree(ROOT / "generated", copy / "generated", ignore=shutil.ignore_patterns("__pycache__"))
    for manifest in (copy / "generated").rglob(MANIFEST_NAME):
        doc = json.loads(manifest.read_text())
        doc.pop("input", None)
        manifest.write_text(json.dumps(doc, indent=2) + "\n")
    return copy


def _owned_files(root: Path) -> list[str]:
    files = []
    for manifest in sorted((root / "generated").rglob(MANIFEST_NAME)):
        package = manifest.parent
        files += [
            str(package / rel) for rel in json.loads(manifest.read_text())["files"] if rel.endswith(".py")
        ]
    return files


def test_every_allowed_black_is_installed() -> None:
    if not VERSIONS:
        pytest.skip("needs tests/peers/.black (`make test` installs it)")
    assert VERSIONS == ["24.1.0", "24.10.0", "25.1.0", "25.12.0", "26.1.0"]


@pytest.mark.parametrize("version", VERSIONS or ["none"])
def test_generated_bytes_are_the_same_under_each_black(version: str, checkout_copy: Path) -> None:
    if not VERSIONS:
        pytest.skip("needs tests/peers/.black (`make test` installs it)")
    black_dir = BLACKS / version
    probe = _run(black_dir, checkout_copy, "-c", "import black; print(black.__version__)")
    assert probe.stdout.strip() == version, probe.stderr
    result = _run(
        black_dir, checkout_copy, "-c", "from codegen.cli import main; main()", "generate", "--check"
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "0 stale" in result.stdout and "fresh:" in result.stdout
    # and the user's black of that release leaves them as they are
    formatted = _run(
        black_dir, checkout_copy, "-m", "black", "--check", "--quiet", *_owned_files(checkout_copy)
    )
    assert formatted.returncode == 0, formatted.stdout[-4000:] + formatted.stderr[-4000:]
