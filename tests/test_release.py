"""A release as the release workflow cuts it (.github/workflows/release.yml; docs/releasing.md): tag a
clone, build the sdists and wheels of both distributions, `twine check` them, and smoke-test the
wheels in a fresh virtualenv (scripts/release_smoke.py). Both carry the tag's version, and the
generator requires exactly that runtime.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.wheels import ok, run, tagged_clone

# building four distributions and installing two into a fresh venv: minutes on a loaded 2-core machine
pytestmark = [pytest.mark.peer, pytest.mark.timeout(900)]

TAG = "v9.8.7"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("release")
    clone = tagged_clone(base, TAG)
    out = base / "dist"
    for project in (clone / "runtime", clone):  # as release.yml does; the build backend from our venv
        build = [sys.executable, "-m", "build", "--no-isolation", "--outdir", out, project]
        ok(run(build, clone, timeout=600))
    return out


def test_both_distributions_carry_the_tag_version(dist: Path) -> None:
    assert sorted(path.name for path in dist.iterdir()) == [
        "mcpgen-9.8.7-py3-none-any.whl",
        "mcpgen-9.8.7.tar.gz",
        "mcpgen_runtime-9.8.7-py3-none-any.whl",
        "mcpgen_runtime-9.8.7.tar.gz",
    ]
    with zipfile.ZipFile(dist / "mcpgen-9.8.7-py3-none-any.whl") as wheel:
        metadata = wheel.read("mcpgen-9.8.7.dist-info/METADATA").decode()
    requires = [
        line.removeprefix("Requires-Dist: ") for line in metadata.splitlines() if line.startswith("Requires")
    ]
    assert "mcpgen-runtime[cli,server]==9.8.7" in requires
    assert "mcpgen-runtime[mock]==9.8.7; extra == 'mock'" in requires
    assert not any(req.startswith("black") and "==" in req for req in requires if "extra" not in req)
    with zipfile.ZipFile(dist / "mcpgen_runtime-9.8.7-py3-none-any.whl") as wheel:
        assert "__version__ = version = '9.8.7'" in wheel.read("mcpgen_runtime/_build_version.py").decode()


def test_twine_accepts_them(dist: Path) -> None:
    ok(run([sys.executable, "-m", "twine", "check", "--strict", *sorted(dist.iterdir())], dist))


def test_the_wheels_install_generate_and_import(dist: Path) -> None:
    out = ok(run([sys.executable, ROOT / "scripts" / "release_smoke.py", dist, TAG], dist, timeout=900))
    assert "ok: mcpgen 9.8.7 and mcpgen-runtime 9.8.7" in out
