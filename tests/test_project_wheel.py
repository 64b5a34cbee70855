"""A client project (`mcpgen client --project DIR`) as a team publishes it: built, installed, typed, run.

Once per module: the generator (this checkout, with the dev interpreter) writes two projects, one
from specs/weather.json and one from the generated weather server running on loopback (so its
`serverInfo` names and versions the distribution), and `pip wheel` builds each (hatchling, from
the pip cache or the index). A fresh virtualenv installs both wheels beside only the
`mcpgen-runtime` wheel (tests/wheels.py) and its `[cli]` extra: nothing of the generator comes
along. From there `mypy --strict` and `pyright --strict` (the dev environment's, pointed at the
fresh interpreter) check a small user program against the installed packages — clean, and each
checker reports every `# wrong` line, which it could not without `py.typed` — and each project's
console script calls the live server and prints the tool's result.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from codegen import RELEASE
from tests.support import ROOT, free_port, running_server
from tests.wheels import Wheels, new_venv, ok, run

BIN = Path(sys.executable).parent
GENERATED = ROOT / "generated"
pytestmark = pytest.mark.timeout(900)

APP = """\
from weather_client import Client, models
from weather_live import Client as LiveClient


def reading(url: str) -> float:
    with Client(url) as client:
        data: models.GetWeatherDataOutput = client.get_weather_data("Berlin")
        client.execute_sql(region="us-west1", query="SELECT 1")
    with LiveClient(url) as live:
        return live.get_weather_data("Oslo").temperature + data.temperature
"""

WRONG = """\
from weather_client import Client
from weather_live import Client as LiveClient


def calls(client: Client, live: LiveClient) -> None:
    client.get_weather_data(7)  # wrong: a str is required
    client.execute_sql("us-west1", "SELECT 1")  # wrong: two required parameters are keyword-only
    live.get_weather(location=None)  # wrong: not nullable
"""


@dataclass
class Published:
    python: Path  # the fresh venv's interpreter
    work: Path  # where the user's program lives
    url: str  # the live weather server
    wheels: dict[str, Path]  # project -> its wheel


def _generate(args: list[str | Path], cwd: Path) -> str:
    """`mcpgen ARGS` from this checkout (the generator under test), with the dev interpreter."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "runtime")])}
    result = subprocess.run(
        [sys.executable, "-m", "codegen.cli", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return ok(result)


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory, wheels: Wheels) -> Iterator[Published]:
    root = tmp_path_factory.mktemp("published")
    dist = root / "dist"
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with running_server([sys.executable, "-m", "weather_server", "--http", "--port", str(port)], port):
        _generate(["client", ROOT / "specs" / "weather.json", "--project", root / "weather"], root)
        _generate(["client", url, "--package", "weather_live", "--project", root / "live"], root)
        for project in ("weather", "live"):
            ok(
                run(
                    [
                        sys.executable,
                        "-m",
                        "pip",
                        "wheel",
                        "--no-deps",
                        "--quiet",
                        "-w",
                        dist,
                        root / project,
                    ],
                    root,
                )
            )
        built = {wheel.name.split("-")[0]: wheel for wheel in dist.glob("*.whl")}
        python = new_venv(root / "venv", f"{wheels.runtime}[cli]", *built.values())
        work = root / "work"
        work.mkdir()
        (work / "app.py").write_text(APP, "utf-8")
        (work / "wrong.py").write_text(WRONG, "utf-8")
        yield Published(python, work, url, built)


def _wrong_lines() -> set[int]:
    return {number for number, line in enumerate(WRONG.splitlines(), 1) if "# wrong:" in line}


def _expected(location: str) -> dict[str, object]:
    sys.path.insert(0, str(GENERATED))
    try:
        from weather_server.handlers import _reading
    finally:
        sys.path.remove(str(GENERATED))
    return _reading(location).model_dump()


def test_the_wheels_carry_the_server_info_the_package_and_its_marker(published: Published) -> None:
    # from the spec file (no serverInfo): the package's name in kebab case, 0.1.0; from the live
    # server: its serverInfo ("weather_server", "0.0.0") made a client's name
    assert sorted(wheel.name for wheel in published.wheels.values()) == [
        "weather_client-0.1.0-py3-none-any.whl",
        "weather_server_client-0.0.0-py3-none-any.whl",
    ]
    for wheel, package in (
        (published.wheels["weather_client"], "weather_client"),
        (published.wheels["weather_server_client"], "weather_live"),
    ):
        with zipfile.ZipFile(wheel) as archive:
            names = set(archive.namelist())
            metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
            text = archive.read(metadata).decode()
            entry_points = archive.read(metadata.replace("METADATA", "entry_points.txt")).decode()
        assert {f"{package}/py.typed", f"{package}/tools.json", f"{package}/client.py"} <= names
        assert not any(name.endswith(".mcpgen-manifest.json") for name in names)
        # the generator's release line, X.Y: from >=X.Y to <X+1 (codegen.render.project.runtime_requirement)
        major, minor = (int(part) for part in (RELEASE + ".0").split(".")[:2])
        assert f"Requires-Dist: mcpgen-runtime[cli]<{major + 1},>={major}.{minor}" in text, text
        assert "Requires-Python: >=3.11" in text
        assert f"{package.replace('_', '-')} = {package}.__main__:main" in entry_points


def test_installed_beside_the_runtime_alone(published: Published) -> None:
    listed = json.loads(ok(run([published.python, "-m", "pip", "list", "--format", "json"], published.work)))
    installed = {entry["name"].lower().replace("_", "-") for entry in listed}
    assert {"mcpgen-runtime", "weather-client", "weather-server-client", "click"} <= installed
    assert not installed & {"mcpgen", "black", "jinja2", "uvicorn"}, sorted(installed)


@pytest.mark.parametrize(("script", "location"), [("weather-client", "Berlin"), ("weather-live", "Oslo")])
def test_the_console_script_calls_the_live_server(published: Published, script: str, location: str) -> None:
    argv = [
        published.python.parent / script,
        "--url",
        published.url,
        "get-weather-data",
        "--location",
        location,
    ]
    out = ok(run(argv, published.work))
    assert json.loads(out) == _expected(location)


def test_mypy_strict_from_the_fresh_venv(published: Published) -> None:
    config = published.work / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\n", "utf-8")
    result = run(
        [
            BIN / "mypy",
            "--config-file",
            config,
            "--python-executable",
            published.python,
            "--cache-dir",
            published.work / ".mypy",
            "app.py",
            "wrong.py",
        ],
        published.work,
    )
    errors = re.findall(r"^(\S+?):(\d+): error: (.*)$", result.stdout, re.M)
    assert "py.typed" not in result.stdout and "import-untyped" not in result.stdout, result.stdout[-4000:]
    assert not [e for e in errors if e[0] != "wrong.py"], result.stdout[-4000:]
    assert {int(line) for _, line, _ in errors} == _wrong_lines(), result.stdout[-4000:]


def test_pyright_strict_from_the_fresh_venv(published: Published) -> None:
    if not (BIN / "pyright").exists() or shutil.which("node") is None:
        pytest.skip("pyright or node not available")
    config = published.work / "pyrightconfig.json"
    config.write_text(
        json.dumps(
            {"typeCheckingMode": "strict", "pythonVersion": "3.11", "include": ["app.py", "wrong.py"]}
        ),
        "utf-8",
    )
    result = run([BIN / "pyright", "--pythonpath", published.python, "-p", config], published.work)
    errors = re.findall(r"^\s+(\S+?):(\d+):\d+ - error: (.*)$", result.stdout, re.M)
    assert not [e for e in errors if Path(e[0]).name != "wrong.py"], result.stdout[-4000:]
    assert {int(line) for _, line, _ in errors} == _wrong_lines(), result.stdout[-4000:]
