"""Every Python example of the README and of the documentation site (docs/) is executed here, unless it
is marked as an excerpt on purpose (docs/how-to/develop.md, "Examples in the documentation").

- A fence opened with `python` is a whole program: it runs, with this checkout's runtime and the
  checked-in bindings of generated/ importable. An example that talks to the weather server at
  http://127.0.0.1:8000/mcp runs against the generated weather server started on a free port (the
  test puts that port into the URL); one that starts `npx @modelcontextprotocol/server-everything`
  runs it from conformance/node_modules; one that uses the `mcp_mock` marker runs under pytest in a
  fresh process, beside the responses file its page shows; a server's `handlers.py` that relies on
  "the scaffold's imports" becomes the handlers.py of a server generated from a spec with those
  resources and prompts, which a client then reads over stdio.
- A fence opened with `{.python .excerpt}` is part of a larger file (a method body to paste, an
  interface sketch) or needs what a test cannot have (a remote server, credentials, a collector):
  it is rendered but not run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from pytest_examples import CodeExample, EvalExample, find_examples

from tests.support import NODE, ROOT, SERVER_EVERYTHING, free_port, running_server

DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
EXAMPLES = list(find_examples(*DOC_FILES))
GENERATED = ROOT / "generated"
WEATHER_URL = "http://127.0.0.1:8000/mcp"
NPX_EVERYTHING = '["npx", "@modelcontextprotocol/server-everything", "stdio"]'
SCAFFOLD = "# the scaffold imports the rest"
KINDS = ("excerpt", "pytest", "weather", "everything", "handlers", "plain")


def kind(example: CodeExample) -> str:
    if "excerpt" in example.prefix_tags():
        return "excerpt"
    if "@pytest.mark.mcp_mock" in example.source:
        return "pytest"
    if WEATHER_URL in example.source:
        return "weather"
    if NPX_EVERYTHING in example.source:
        return "everything"
    if SCAFFOLD in example.source:
        return "handlers"
    return "plain"


def where(example: CodeExample) -> str:
    return f"{example.path.relative_to(ROOT)}:{example.start_line}"


def of_kind(name: str) -> list[object]:
    return [pytest.param(ex, id=where(ex)) for ex in EXAMPLES if kind(ex) == name]


def test_every_example_is_run_or_marked_as_an_excerpt() -> None:
    fences = re.compile(r"^ *```(.*)$", re.M)
    for path in DOC_FILES:
        for opening in fences.findall(path.read_text("utf-8")):
            if opening.strip().lower().startswith(("py", "{.py")):
                assert opening.strip() in ("python", "{.python .excerpt}"), (
                    f"{path.relative_to(ROOT)}: a Python fence is ```python (run) or "
                    f"```{{.python .excerpt}} (not run), not ```{opening}"
                )
    counts = {name: len(of_kind(name)) for name in KINDS}
    assert sum(n for name, n in counts.items() if name != "excerpt") >= 5, (
        counts
    )  # a floor: the collector found the examples


@pytest.fixture(autouse=True)
def _forget_generated_packages() -> Iterator[None]:
    """Examples import packages from generated/ (`everything_client`, `weather_client`, ...); drop
    those an example imported first, so a later test in this process that generates its own package
    of the same name imports that one. Packages imported before (by test modules, at collection) stay:
    a second copy of a module would give its classes a second identity."""
    before = set(sys.modules)
    yield
    packages = {path.name for path in GENERATED.iterdir() if path.is_dir()}
    for name in [name for name in sys.modules if name not in before and name.partition(".")[0] in packages]:
        del sys.modules[name]


@pytest.mark.parametrize("example", of_kind("plain"))
def test_example_runs(
    example: CodeExample, eval_example: EvalExample, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(GENERATED))
    eval_example.run(example)


@pytest.fixture(scope="module")
def weather_url() -> Iterator[str]:
    port = free_port()
    with running_server([sys.executable, "-m", "weather_server", "--http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.mark.peer
@pytest.mark.parametrize("example", of_kind("weather"))
def test_example_against_the_weather_server(
    example: CodeExample, weather_url: str, eval_example: EvalExample, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(GENERATED))
    eval_example.run(replace(example, source=example.source.replace(WEATHER_URL, weather_url)))


@pytest.mark.peer
@pytest.mark.parametrize("example", of_kind("everything"))
def test_example_against_server_everything(
    example: CodeExample, eval_example: EvalExample, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not (NODE.exists() and SERVER_EVERYTHING.exists()):
        pytest.skip("needs conformance/node_modules (make conformance-deps)")
    monkeypatch.syspath_prepend(str(GENERATED))
    command = repr([str(NODE), str(SERVER_EVERYTHING), "stdio"])
    eval_example.run(replace(example, source=example.source.replace(NPX_EVERYTHING, command)))


def yaml_blocks(path: Path) -> list[str]:
    return re.findall(r"^```yaml\n(.*?)^```", path.read_text("utf-8"), re.M | re.S)


@pytest.mark.peer
@pytest.mark.parametrize("example", of_kind("pytest"))
def test_pytest_example_passes(example: CodeExample, tmp_path: Path) -> None:
    # The responses file the example names is the page's own responses example.
    [responses] = [block for block in yaml_blocks(example.path) if block.startswith(("defaults:", "tools:"))]
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "responses.yaml").write_text(responses, "utf-8")
    (tmp_path / "tests" / "test_example.py").write_text(example.source, "utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (GENERATED, ROOT / "runtime", ROOT)))}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "tests"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0 and "1 passed" in result.stdout, (
        result.stdout[-3000:] + result.stderr[-2000:]
    )


# The resources, template and prompt the handlers example of docs/reference/resources-prompts.md serves.
NOTES_SPEC = {
    "tools": [{"name": "touch", "inputSchema": {"type": "object", "properties": {}}}],
    "resources": [{"uri": "note://readme", "name": "readme", "mimeType": "text/markdown"}],
    "resourceTemplates": [{"uriTemplate": "note://notes/{name}", "name": "note", "mimeType": "text/plain"}],
    "prompts": [{"name": "greet", "arguments": [{"name": "name", "required": True}, {"name": "style"}]}],
}


@pytest.mark.peer
@pytest.mark.parametrize("example", of_kind("handlers"))
def test_handlers_example_serves(example: CodeExample, tmp_path: Path) -> None:
    from mcpgen_runtime.client import Client
    from mcpgen_runtime.errors import RemoteError
    from mcpgen_runtime.surfaces import PromptRef

    (tmp_path / "notes.json").write_text(json.dumps(NOTES_SPEC), "utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (tmp_path / "out", ROOT / "runtime", ROOT)))}
    generate = [
        sys.executable,
        "-m",
        "codegen.cli",
        "server",
        "notes.json",
        "-o",
        "out",
        "--package",
        "notes",
    ]
    done = subprocess.run(generate, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    handlers = tmp_path / "out" / "notes" / "handlers.py"
    scaffold = handlers.read_text("utf-8")
    handlers.write_text(scaffold[: scaffold.index("\nclass Server(")] + "\n\n" + example.source, "utf-8")
    with Client.stdio([sys.executable, "-m", "notes", "--stdio"], env=env, cwd=tmp_path) as client:
        assert client.read_resource("note://readme").text == "# Notes"
        assert client.read_resource("note://notes/ada").text == "Note ada"
        with pytest.raises(RemoteError):
            client.read_resource("note://notes/missing")
        prompt = client.get_prompt("greet", {"name": "Ada"})
        assert "Hello, Ada!" in str(prompt.messages[0].content)
        assert client.complete(PromptRef("greet"), "name", "a").values == ["ada", "alan"]
