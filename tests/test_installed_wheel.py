"""mcpgen as a user gets it: the wheel, installed into a fresh virtualenv, typed for the user.

Once per module: a new virtualenv installs the `mcpgen` and `mcpgen-runtime` wheels (built once
per session, tests/wheels.py; their dependencies from the pip cache or the index, nothing from
this checkout), and the installed `mcpgen` generates a weather client and server and the shapes client
from copies of `specs/` into a fresh project. Then `mypy --strict` (with the pydantic plugin and
without) and `pyright --strict` from the dev environment, pointed at the fresh interpreter, check a
small user program (`app.py`: every call right, no error allowed) and `wrong.py`, whose every
`# wrong` line each checker must report. Without `py.typed` in the installed runtime, everything
the generated code takes from it would be `Any` and the wrong calls would pass unnoticed.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.wheels import Wheels, new_venv, ok, run

BIN = Path(sys.executable).parent
pytestmark = pytest.mark.timeout(900)  # building, installing and three checkers: about a minute on two cores
PACKAGES = ("weather_client", "weather_server", "shapes_client", "everything_client")

APP = '''\
"""A user's program: every call here is right, and every checker must accept it."""

from __future__ import annotations

from everything_client import Client as EverythingClient
from everything_client import Resources
from mcpgen_runtime.errors import ToolArgumentsError
from mcpgen_runtime.server import ToolContext
from mcpgen_runtime.surfaces import BlobResourceContents, Completion, PromptRef, PromptResult
from mcpgen_runtime.types import UNSET, Unset
from shapes_client import Client as ShapesClient
from shapes_client import models as shapes
from weather_client import AsyncClient, Client, models
from weather_server import models as server_models
from weather_server.handlers import Server


def weather(client: Client) -> tuple[float, list[models.ListUsersOutputItem], str]:
    data = client.get_weather_data("Berlin")  # one required parameter: positional
    sql = client.execute_sql(region="us-west1", query="SELECT 1")  # two: keyword-only
    return data.temperature, client.list_users(), sql.text


async def weather_async(client: AsyncClient) -> str:
    result = await client.calculate_sum(a=2, b=40.5)
    return result.text


def shapes_calls(client: ShapesClient, scheme: str | Unset = UNSET) -> shapes.NamesInput:
    client.nullables(None, by_any_of=None, by_type_array=UNSET, multi_type=scheme)  # None is JSON null
    client.enums("red", level=2)
    try:
        client.tuples(point=(1, 2.5), pair=("a", 1))
    except ToolArgumentsError as exc:
        print(exc.pointer)
    return shapes.NamesInput(class_="c", first_name_3="f", from_=1)  # Python names, not wire names


def surfaces(client: EverythingClient) -> tuple[bytes, PromptResult, Completion]:
    text = client.read_dynamic_text_resource(resource_id="1").text  # a template: keyword-only str
    content = client.read_dynamic_blob_resource(resource_id="2").contents[0]
    data = content.blob if isinstance(content, BlobResourceContents) else text.encode()
    client.read_resource(Resources.ARCHITECTURE_MD)
    prompt = client.prompt_args_prompt(city="Oslo")  # the optional `state` left out
    client.prompt_args_prompt(city="Oslo", state=UNSET)
    return data, prompt, client.complete(PromptRef("completable-prompt"), "department", "E")


class MyServer(Server):
    async def get_weather_data(
        self, args: server_models.GetWeatherDataInput, ctx: ToolContext
    ) -> server_models.GetWeatherDataOutput:
        return server_models.GetWeatherDataOutput(temperature=21.5, conditions=args.location, humidity=40)
'''

WRONG = '''\
"""Every line marked `# wrong` must be reported by every checker."""

from __future__ import annotations

from everything_client import Client as EverythingClient
from shapes_client import Client as ShapesClient
from shapes_client import models as shapes
from weather_client import Client
from weather_server import models as server_models


def surface_calls(client: EverythingClient) -> None:
    client.read_dynamic_text_resource(resource_id=1)  # wrong: template variables are str
    client.read_dynamic_text_resource("1")  # wrong: template variables are keyword-only
    client.prompt_args_prompt(state="BE")  # wrong: the required argument `city` is missing
    client.prompt_args_prompt(city="Oslo", town="x")  # wrong: no such argument


def calls(client: Client, other: ShapesClient) -> None:
    client.execute_sql("us-west1", "SELECT 1")  # wrong: two required parameters are keyword-only
    client.get_weather(7)  # wrong: a str is required
    other.enums("red", level=None)  # wrong: level is not nullable
    other.enums("purple")  # wrong: not one of the enum's values
    server_models.GetWeatherDataOutput(temperature="hot", conditions="x", humidity=1)  # wrong: not a number
    shapes.NamesInput(class_="c", first_name_3=3)  # wrong: a str is required
'''

# What the installed runtime does with the same names (no network: arguments only).
RUN = """\
from mcpgen_runtime.client import ClientCore
from mcpgen_runtime.errors import ToolArgumentsError
from mcpgen_runtime.types import UNSET
from shapes_client import Client, models

names = models.NamesInput(class_="c", first_name_3="f")
assert names.model_dump(by_alias=True, exclude_unset=True) == {"class": "c", "first-name": "f"}, names
core = ClientCore(tools=Client._tool_definitions_)
nullables = {"required_nullable": None, "by_any_of": UNSET}
sent = core.checks.prepare_arguments("nullables", nullables, models.NullablesInput)
assert sent == {"required_nullable": None}, sent
try:
    core.checks.prepare_arguments("constraints", {"name": ""}, models.ConstraintsInput)
except ToolArgumentsError as exc:
    assert exc.pointer == "/name", exc
else:
    raise AssertionError("an empty name passed minLength")
print("ok")
"""


@dataclass
class Installed:
    venv_python: Path
    project: Path  # the fresh project; generated packages and the user's program in src/


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, wheels: Wheels) -> Iterator[Installed]:
    root = tmp_path_factory.mktemp("wheel")
    python = new_venv(root / "venv", wheels.generator, wheels.runtime)
    project = root / "project"
    (project / "specs").mkdir(parents=True)
    for name in ("weather.json", "shapes.json", "everything.json"):
        shutil.copy(ROOT / "specs" / name, project / "specs" / name)
    mcpgen = root / "venv" / "bin" / "mcpgen"
    for kind, spec, package in (
        ("client", "weather", "weather_client"),
        ("server", "weather", "weather_server"),
        ("client", "shapes", "shapes_client"),
        ("client", "everything", "everything_client"),
    ):
        ok(run([mcpgen, kind, f"specs/{spec}.json", "-o", "src", "--package", package], project))
    (project / "src" / "app.py").write_text(APP, "utf-8")
    (project / "src" / "wrong.py").write_text(WRONG, "utf-8")
    yield Installed(python, project)


def _wrong_lines() -> set[int]:
    return {number for number, line in enumerate(WRONG.splitlines(), 1) if "# wrong:" in line}


def test_the_wheel_ships_py_typed_and_runs_from_the_fresh_venv(installed: Installed) -> None:
    where = ok(
        run(
            [
                installed.venv_python,
                "-c",
                "import codegen, mcpgen_runtime; print(mcpgen_runtime.__file__); print(codegen.__file__)",
            ],
            installed.project,
        )
    )
    for line in where.splitlines():
        package = Path(line).parent
        assert not package.is_relative_to(ROOT), f"imported from the checkout: {package}"
        assert (package / "py.typed").is_file(), package
    assert ok(run([installed.venv_python, "-c", RUN], installed.project / "src")).strip() == "ok"


def test_the_generated_command_line_runs_from_the_fresh_venv(installed: Installed) -> None:
    """`python -m weather_client` needs nothing beyond `pip install mcpgen` (its runtime comes with
    `[cli]`)."""
    shown = ok(
        run(
            [installed.venv_python, "-m", "weather_client", "get-weather-data", "--help"],
            installed.project / "src",
        )
    )
    assert (
        "Usage: python -m weather_client get-weather-data [OPTIONS]" in shown and "--location TEXT" in shown
    )
    refused = run(
        [
            installed.venv_python,
            "-m",
            "weather_client",
            "--url",
            "http://127.0.0.1:9/mcp",
            "calculate-sum",
            "--a",
            "x",
            "--b",
            "1",
        ],
        installed.project / "src",
    )
    assert refused.returncode == 2 and "'x' is not a number" in refused.stderr


@pytest.mark.parametrize("plugin", [False, True], ids=["mypy", "mypy+pydantic"])
def test_mypy_strict(installed: Installed, plugin: bool) -> None:
    config = installed.project / f"mypy-{int(plugin)}.ini"
    config.write_text("[mypy]\nstrict = True\n" + ("plugins = pydantic.mypy\n" if plugin else ""), "utf-8")
    result = run(
        [
            BIN / "mypy",
            "--config-file",
            config,
            "--python-executable",
            installed.venv_python,
            "--cache-dir",
            installed.project / f".mypy-{int(plugin)}",
            "app.py",
            "wrong.py",
            *PACKAGES,
        ],
        installed.project / "src",
    )
    errors = re.findall(r"^(\S+?):(\d+): error: (.*)$", result.stdout, re.M)
    assert "py.typed" not in result.stdout, result.stdout[-4000:]
    elsewhere = [e for e in errors if e[0] != "wrong.py"]
    assert not elsewhere, result.stdout[-4000:]
    assert {int(line) for _, line, _ in errors} == _wrong_lines(), result.stdout[-4000:]


def test_pyright_strict(installed: Installed) -> None:
    if not (BIN / "pyright").exists() or shutil.which("node") is None:
        pytest.skip("pyright or node not available")
    src = installed.project / "src"
    (src / "pyrightconfig.json").write_text(
        json.dumps(
            {
                "typeCheckingMode": "strict",
                "pythonVersion": "3.11",
                "include": ["app.py", "wrong.py", *PACKAGES],
            }
        ),
        "utf-8",
    )
    result = run(
        [BIN / "pyright", "--pythonpath", installed.venv_python, "-p", src / "pyrightconfig.json"], src
    )
    errors = re.findall(r"^\s+(\S+?):(\d+):\d+ - error: (.*)$", result.stdout, re.M)
    elsewhere = [e for e in errors if Path(e[0]).name != "wrong.py"]
    assert not elsewhere, result.stdout[-4000:]
    assert {int(line) for _, line, _ in errors} == _wrong_lines(), result.stdout[-4000:]
