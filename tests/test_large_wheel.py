"""The 1,000-tool client as a published wheel: typed for the user like a 6-tool one (issue #20).

Once per module: the generator (this checkout) writes a client project (`--project`) from the
1,000-tool synthetic spec (specs/tools/make_synthetic.py), `pip wheel` builds it, and a fresh
virtualenv installs that wheel beside only the `mcpgen-runtime` wheel (tests/wheels.py). Then
`mypy --strict` and `pyright --strict` (the dev environment's, pointed at the fresh interpreter;
both at once, one run each over both files) check a user program: `app.py` calls the first and a
late tool and builds a model (no error allowed), `wrong.py`, whose every `# wrong` line each
checker must report. The lazy layout (`models.py` naming each class of `_models/` for type
checkers only) must not hide a class or a method from either.

Measured on the 2-core development machine: mypy, cold cache, about 35 s (13 s of CPU) for the
1,000 models modules; pyright about 13 s.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.wheels import Wheels, new_venv, ok, run

BIN = Path(sys.executable).parent
TOOLS = 1000
pytestmark = pytest.mark.timeout(1200)

# make_synthetic is deterministic: tool 1 is `run_order_v2`, tool 999 `deleteProject_998`.
APP = """\
from mcpgen_runtime.content import ToolResult
from synthetic_client import AsyncClient, Client, models


def first(client: Client) -> list[models.RunOrderV2OutputItem]:
    return client.run_order_v2(job_id=3, payment=True)


def late(client: Client, spec: models.NodeDef) -> ToolResult:
    return client.delete_project_998(spec, policy_count=False)


async def first_async(client: AsyncClient) -> list[models.RunOrderV2OutputItem]:
    return await client.run_order_v2(job_id=3)


def model() -> models.RunOrderV2Input:
    return models.RunOrderV2Input(job_id=3, payment=True)
"""

WRONG = """\
from synthetic_client import Client, models


def calls(client: Client, spec: models.NodeDef) -> None:
    client.run_order_v2(job_id="3")  # wrong: an int is required
    client.delete_project_998(spec, policy_count="yes")  # wrong: a bool is required
    client.delete_project_998(policy_count=True)  # wrong: project_spec is required
    client.run_order_v3()  # wrong: no such tool
    models.RunOrderV2Input(job_id="3")  # wrong: an int is required
"""


@dataclass
class Published:
    python: Path  # the fresh venv's interpreter
    work: Path  # where the user's program lives


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory, wheels: Wheels) -> Iterator[Published]:
    root = tmp_path_factory.mktemp("large")
    sys.path.insert(0, str(ROOT / "specs" / "tools"))
    try:
        from make_synthetic import make_tools
    finally:
        sys.path.remove(str(ROOT / "specs" / "tools"))
    spec = root / "synthetic.json"
    spec.write_text(json.dumps({"tools": make_tools(TOOLS)}), "utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "runtime")])}
    generated = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen.cli",
            "client",
            spec,
            "--project",
            root / "project",
            "--package",
            "synthetic_client",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    ok(generated)
    dist = root / "dist"
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", dist, root / "project"]
    ok(run(pip_wheel, root))
    [wheel] = dist.glob("synthetic_client-*.whl")
    python = new_venv(root / "venv", f"{wheels.runtime}[cli]", wheel)
    work = root / "work"
    work.mkdir()
    (work / "app.py").write_text(APP, "utf-8")
    (work / "wrong.py").write_text(WRONG, "utf-8")
    yield Published(python, work)


def _wrong_lines() -> set[int]:
    return {number for number, line in enumerate(WRONG.splitlines(), 1) if "# wrong:" in line}


def test_the_installed_package_is_the_whole_catalog(published: Published) -> None:
    counted = ok(
        run(
            [
                published.python,
                "-c",
                "import synthetic_client, pathlib; from synthetic_client import Client, models;"
                "d = pathlib.Path(synthetic_client.__file__).parent;"
                "print(len(list((d / '_models').glob('t*.py'))) == len(set(models._MODULES.values())),"
                " (d / 'py.typed').is_file(), callable(Client.delete_project_998),"
                " len(models.__all__) > 1000, len(set(models._MODULES.values())) < 300)",
            ],
            published.work,
        )
    )
    assert counted.split() == ["True"] * 5, counted  # every models module shipped; ~200, not 1,000


def test_mypy_and_pyright_strict_from_the_fresh_venv(published: Published) -> None:
    work = published.work
    (work / "mypy.ini").write_text("[mypy]\nstrict = True\n", "utf-8")
    mypy = subprocess.Popen(
        [
            BIN / "mypy",
            "--config-file",
            "mypy.ini",
            "--python-executable",
            published.python,
            "--cache-dir",
            ".mypy",
            "app.py",
            "wrong.py",
        ],
        cwd=work,
        env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH", "VIRTUAL_ENV")},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        pyright_out = None
        if (BIN / "pyright").exists() and shutil.which("node") is not None:
            (work / "pyrightconfig.json").write_text(
                json.dumps(
                    {"typeCheckingMode": "strict", "pythonVersion": "3.11", "include": ["app.py", "wrong.py"]}
                ),
                "utf-8",
            )
            pyright = run(
                [BIN / "pyright", "--pythonpath", published.python, "-p", "pyrightconfig.json"], work
            )
            pyright_out = pyright.stdout
        mypy_out, _ = mypy.communicate(timeout=900)
    finally:
        if mypy.poll() is None:
            mypy.kill()
            mypy.wait()
    errors = re.findall(r"^(\S+?):(\d+): error: (.*)$", mypy_out, re.M)
    assert "py.typed" not in mypy_out and "import-untyped" not in mypy_out, mypy_out[-4000:]
    assert not [e for e in errors if e[0] != "wrong.py"], mypy_out[-4000:]
    assert {int(line) for _, line, _ in errors} == _wrong_lines(), mypy_out[-4000:]
    if pyright_out is None:
        pytest.skip("mypy checked; pyright or node not available")
    found = re.findall(r"^\s+(\S+?):(\d+):\d+ - error: (.*)$", pyright_out, re.M)
    assert not [e for e in found if Path(e[0]).name != "wrong.py"], pyright_out[-4000:]
    assert {int(line) for _, line, _ in found} == _wrong_lines(), pyright_out[-4000:]
