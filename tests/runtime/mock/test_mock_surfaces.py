"""The mock serves a spec's resources, resource templates and prompts with made-up contents
(mock/surfaces.py): deterministic per seed, text vs binary by mimeType, template variables and
prompt arguments echoed as data, completions that start with what was typed; and
`python -m mcpgen_runtime.mock` serves them to the official SDK client from a spec file."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mcpgen_runtime.mock import MockServer
from mcpgen_runtime.mock.surfaces import PNG_1X1, load_spec_surfaces, serve_surfaces
from tests.runtime.server_helpers import request
from tests.support import PYTHON, ROOT, subprocess_env

SPEC: dict[str, Any] = {
    "tools": [{"name": "ping_tool", "description": "p", "inputSchema": {"type": "object"}}],
    "resources": [
        {"uri": "file:///README.md", "name": "README", "mimeType": "text/markdown"},
        {"uri": "img://logo", "name": "logo", "mimeType": "image/png"},
        {"uri": "bin://blob", "name": "blob", "mimeType": "application/octet-stream"},
    ],
    "resourceTemplates": [
        {"uriTemplate": "db://{table}/rows{?limit}", "name": "rows", "mimeType": "application/json"}
    ],
    "prompts": [{"name": "greet", "arguments": [{"name": "who", "required": True}]}],
}


def mock(seed: int) -> MockServer:
    server = MockServer(SPEC["tools"], seed=seed)
    serve_surfaces(
        server,
        resources=SPEC["resources"],
        resource_templates=SPEC["resourceTemplates"],
        prompts=SPEC["prompts"],
        seed=seed,
    )
    return server


def ask(server: MockServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
    response = asyncio.run(server.handle_message(request(1, method, params))).response
    assert response is not None and "result" in response, response
    result: dict[str, Any] = response["result"]
    return result


def test_contents_are_deterministic_and_typed_by_mime_type() -> None:
    a, b, other = mock(1), mock(1), mock(2)
    readme = ask(a, "resources/read", {"uri": "file:///README.md"})["contents"][0]
    assert readme["mimeType"] == "text/markdown" and readme["text"].startswith(
        "Mock contents of file:///README.md"
    )
    assert ask(b, "resources/read", {"uri": "file:///README.md"})["contents"][0] == readme
    assert ask(other, "resources/read", {"uri": "file:///README.md"})["contents"][0] != readme
    logo = ask(a, "resources/read", {"uri": "img://logo"})["contents"][0]
    assert base64.b64decode(logo["blob"]) == PNG_1X1 and "text" not in logo
    blob = ask(a, "resources/read", {"uri": "bin://blob"})["contents"][0]
    assert len(base64.b64decode(blob["blob"])) == 32
    rows = ask(a, "resources/read", {"uri": "db://us%22ers/rows?limit=5"})["contents"][0]
    assert json.loads(rows["text"])["variables"] == {"table": 'us"ers', "limit": "5"}


def test_prompts_and_completions() -> None:
    server = mock(0)
    got = ask(server, "prompts/get", {"name": "greet", "arguments": {"who": "Ada"}})
    assert got["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Mock prompt 'greet' with who='Ada'."}}
    ]
    done = ask(
        server,
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "A"}},
    )
    values = done["completion"]["values"]
    assert len(values) == 3 and all(v.startswith("A") for v in values)
    ref = {"type": "ref/resource", "uri": "db://{table}/rows{?limit}"}
    done = ask(server, "completion/complete", {"ref": ref, "argument": {"name": "limit", "value": "1"}})
    assert all(v.startswith("1") for v in done["completion"]["values"])


def test_load_spec_surfaces_reads_a_spec_or_the_surfaces_json_beside_tools_json(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    assert load_spec_surfaces(spec)["prompts"] == SPEC["prompts"]
    (tmp_path / "tools.json").write_text(json.dumps({"tools": SPEC["tools"]}))
    assert load_spec_surfaces(tmp_path / "tools.json")["resources"] == []
    (tmp_path / "surfaces.json").write_text(json.dumps({"resources": SPEC["resources"]}))
    assert load_spec_surfaces(tmp_path / "tools.json")["resources"] == SPEC["resources"]


@pytest.mark.parametrize("command", ["mcpgen_runtime.mock", "codegen.cli mock"])
def test_the_mock_command_serves_them_to_the_sdk_client(command: str, tmp_path: Path) -> None:
    """`python -m mcpgen_runtime.mock SPEC` and `mcpgen mock SPEC` (the generator's loader)."""
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    args = [
        PYTHON,
        str(ROOT / "tests" / "peers" / "sdk_surfaces.py"),
        "--read",
        "img://logo",
        "--prompt",
        "greet",
        '{"who": "Ada"}',
        "--",
        PYTHON,
        "-m",
        *command.split(),
        "--stdio",
        str(spec),
    ]
    done = subprocess.run(args, cwd=ROOT, env=subprocess_env(), capture_output=True, timeout=90)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["resources"] == ["file:///README.md", "img://logo", "bin://blob"]
    assert report["templates"] == ["db://{table}/rows{?limit}"]
    assert report["reads"][0]["contents"][0]["mimeType"] == "image/png"
    assert report["gets"][0]["messages"][0]["content"]["text"] == "Mock prompt 'greet' with who='Ada'."


@pytest.mark.parametrize(("transport", "in_process"), [("http", True), ("http", False), ("stdio", False)])
def test_the_pytest_harness_serves_a_specs_surfaces_too(
    transport: str, in_process: bool, tmp_path: Path
) -> None:
    """`mcp_mock(spec=...)` (running_mock) serves the spec's resources, templates and prompts as
    `mcpgen mock SPEC` does, in process and out of it."""
    from mcpgen_runtime.client import Client
    from mcpgen_runtime.mock.harness import running_mock

    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    with running_mock(spec=spec, seed=3, transport=transport, in_process=in_process) as running:  # type: ignore[arg-type]
        client = Client(running.url) if running.url else Client.stdio(running.command or [])
        with client:
            assert [r.uri for r in client.list_all_resources()] == [r["uri"] for r in SPEC["resources"]]
            assert "file:///README.md" in client.read_resource("file:///README.md").text
            assert client.get_prompt("greet", {"who": "ada"}).messages
