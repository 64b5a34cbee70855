"""The CLI of a client package generated from specs/conformance.json against the conformance server
(`python -m conformance_server --http`, real uvicorn): its multi-round-trip tools ask for
elicitation (prompted), sampling and roots (which a terminal cannot give: exit 4), and its content
tools return images, resources and progress.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result

from codegen.pipeline import build_client
from mcpgen_runtime.cli import EXIT_INPUT, build_cli
from tests.codegen.pipeline.test_generate import load_spec, write_package
from tests.support import PYTHON, ROOT, free_port, running_server

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("conformance_cli")
    write_package(
        root, build_client(load_spec(ROOT / "specs" / "conformance.json"), package="conformance_cli")
    )
    sys.path.insert(0, str(root))
    try:
        package = importlib.import_module("conformance_cli")
        main = importlib.import_module("conformance_cli.__main__")
        yield build_cli(package.Client, main._TOOLS, prog="conf", models=main._m)
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.startswith("conformance_cli")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    with running_server([PYTHON, "-m", "conformance_server", "--http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


def run(cli: Any, url: str, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--url", url, *args], input=input, catch_exceptions=False)


def test_elicitation_prompt_and_no_input(cli: Any, url: str) -> None:
    result = run(cli, url, "--format", "text", "test-input-required-result-elicitation", input="\nAda\n")
    assert (result.exit_code, result.stdout) == (0, "Hello, Ada!\n"), result.output
    assert "What is your name?" in result.stderr
    result = run(cli, url, "--no-input", "test-input-required-result-elicitation")
    assert result.exit_code == EXIT_INPUT and "--no-input is set" in result.stderr


@pytest.mark.parametrize(
    "tool", ["test-input-required-result-sampling", "test-input-required-result-list-roots"]
)
def test_sampling_and_roots_exit_4(cli: Any, url: str, tool: str) -> None:
    result = run(cli, url, tool)
    assert result.exit_code == EXIT_INPUT, result.output
    assert "cannot give" in result.stderr and result.stdout == ""


def test_content_blocks_as_text(cli: Any, url: str) -> None:
    image = run(cli, url, "--format", "text", "test-image-content")
    assert image.exit_code == 0
    assert image.stdout.startswith("[image image/png, ") and image.stdout.endswith(" base64 characters]\n")
    mixed = run(cli, url, "test-multiple-content-types")
    assert mixed.exit_code == 0 and '"type": "image"' in mixed.stdout
    assert run(cli, url, "test-tool-with-progress").exit_code == 0
    error = run(cli, url, "--format", "text", "test-error-handling")
    assert error.exit_code == 1 and error.stdout.strip()


def test_stdio_server(cli: Any) -> None:
    server = f"{PYTHON} -m conformance_server --stdio"
    result = CliRunner().invoke(
        cli,
        ["--stdio", server, "--format", "text", "test-simple-text"],
        env={"PYTHONPATH": f"{ROOT / 'runtime'}:{ROOT}:{ROOT / 'generated'}"},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.strip()
