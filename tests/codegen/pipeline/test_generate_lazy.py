"""Lazy bindings: importing a generated package, making a client or a server, and listing the
command line's tools build no model and parse no tool; calling one tool imports that tool's
models only (issue #20). Each check runs in a fresh interpreter, so `sys.modules` is its own.

Timings are bench/import_bench.py's (`make bench`); here only what is imported and built.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from codegen.load.document import load_file
from codegen.pipeline import build_client, build_server
from codegen.validate.checks import validate
from tests.codegen.pipeline.test_generate import write_package
from tests.support import ROOT, subprocess_env

sys.path.insert(0, str(ROOT / "specs" / "tools"))
try:
    from make_synthetic import make_tools
finally:
    sys.path.remove(str(ROOT / "specs" / "tools"))

pytestmark = pytest.mark.timeout(300)
TOOLS = 120


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("lazy")
    spec_path = root / "spec.json"
    spec_path.write_text(json.dumps({"tools": make_tools(TOOLS)}), "utf-8")
    spec = validate(load_file(spec_path))
    write_package(root, build_client(spec, package="lazy_client"))
    write_package(root, build_server(spec, package="lazy_server"))
    yield root


_HELPERS = """
import json, sys
from pydantic import BaseModel

def loaded(package):
    return sorted(m.rpartition(".")[2] for m in sys.modules if m.startswith(package + "._models."))

def models_of(package, tool):
    '''The _models modules holding a tool's input and output classes.'''
    import importlib
    main = importlib.import_module("lazy_client.__main__")
    (entry,) = [t for t in main._TOOLS if t.name == tool]
    facade = importlib.import_module(package + ".models")
    return sorted({facade._MODULES[n] for n in (entry.input_model, entry.output_model) if n})
"""


def _run(root: Path, script: str) -> str:
    env = subprocess_env()
    env["PYTHONPATH"] = f"{root}:{env['PYTHONPATH']}"
    done = subprocess.run(
        [sys.executable, "-c", _HELPERS + textwrap.dedent(script)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def test_import_and_client_build_nothing_and_one_call_builds_its_tool(packages: Path) -> None:
    out = _run(
        packages,
        """
        import lazy_client
        from mcpgen_runtime.mock.harness import running_mock
        from mcpgen_runtime.tools import ToolTable

        client = lazy_client.Client("http://127.0.0.1:9/mcp")
        assert loaded("lazy_client") == [], loaded("lazy_client")
        assert not lazy_client.Client._tool_definitions_.loaded  # tools.json not even read
        assert isinstance(client.tools, ToolTable)
        client.close()
        # no class of the package exists yet: pydantic has created none
        assert not [c for c in BaseModel.__subclasses__() if c.__module__.startswith("lazy_client")]

        wire = "run_order_v2"
        with running_mock(package="lazy_client") as mock, lazy_client.Client(mock.url) as client:
            result = client.run_order_v2()
            assert result is not None
            assert client.tools.parsed == {wire}, client.tools.parsed  # one definition parsed
            # ... from its own slice of tools.json: the file was never parsed whole
            assert not lazy_client.Client._tool_definitions_.loaded
        expected = models_of("lazy_client", wire)
        assert loaded("lazy_client") == expected, (loaded("lazy_client"), expected)
        print(json.dumps(expected))
        """,
    )
    assert json.loads(out.strip().splitlines()[-1]) == ["t0001"]


def test_models_resolve_by_attribute_and_from_import(packages: Path) -> None:
    _run(
        packages,
        """
        import lazy_client
        from lazy_client import models
        facade_names = sorted(models._MODULES)
        assert sorted(models.__all__) == facade_names and set(dir(models)) >= set(facade_names)
        name = facade_names[-1]
        home = models._MODULES[name]
        cls = getattr(models, name)
        assert cls.__module__ == f"lazy_client._models.{home}"
        from lazy_client.models import RunOrderV2Input
        assert RunOrderV2Input is models.RunOrderV2Input
        assert home in loaded("lazy_client")
        try:
            models.NoSuchModel
        except AttributeError as exc:
            assert "NoSuchModel" in str(exc)
        else:
            raise AssertionError("unknown names must raise AttributeError")
        # every module imports on its own (a shared class comes from an earlier tool's module)
        for module in sorted(set(models._MODULES.values())):
            __import__(f"lazy_client._models.{module}")
        for name in facade_names:
            getattr(models, name)
        """,
    )


def test_command_line_help_imports_no_model_and_a_call_only_its_own(packages: Path) -> None:
    _run(
        packages,
        """
        from click.testing import CliRunner
        from mcpgen_runtime.cli import build_cli
        from mcpgen_runtime.mock.harness import running_mock
        import lazy_client.__main__ as main

        cli = build_cli(main.Client, main._TOOLS, prog="lazy", models=main._m)
        with running_mock(package="lazy_client") as mock:
            result = CliRunner().invoke(cli, ["--url", mock.url, "run-order-v2"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        expected = models_of("lazy_client", "run_order_v2")
        assert loaded("lazy_client") == expected, loaded("lazy_client")
        # the call read its own tool's slice of tools.json, never the whole file
        assert not main.Client._tool_definitions_.loaded
        listing = CliRunner().invoke(cli, ["--help"], catch_exceptions=False)
        assert listing.exit_code == 0 and "run-order-v2" in listing.stdout, listing.output
        assert loaded("lazy_client") == expected, loaded("lazy_client")  # `--help` imports no model
        """,
    )


def test_server_starts_without_models_and_builds_a_tools_on_its_first_call(packages: Path) -> None:
    _run(
        packages,
        """
        import lazy_client, lazy_server
        from mcpgen_runtime.errors import ToolError
        from mcpgen_runtime.mock import harness

        server = lazy_server.Server()
        assert loaded("lazy_server") == [], loaded("lazy_server")
        assert len(server.tools) == TOOLS
        with harness._serving(server.asgi_app()) as url, lazy_client.Client(url) as client:
            try:
                client.run_order_v2()
            except ToolError as exc:  # the generated handler is not implemented
                assert "not implemented" in str(exc), exc
            else:
                raise AssertionError("the handler should not be implemented")
        assert loaded("lazy_server") == models_of("lazy_server", "run_order_v2"), loaded("lazy_server")
        """.replace("TOOLS", str(TOOLS)),
    )
