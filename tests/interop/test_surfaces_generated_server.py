"""A server generated from a spec with resources, resource templates and prompts (`mcpgen server`),
implemented in its handlers.py, read by the official SDK clients (1.x; 2.x in both eras) over stdio
and Streamable HTTP (issue 22); then the spec grows a prompt and `--add-stubs` appends its methods
without touching what the user wrote.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import (
    PYTHON,
    ROOT,
    SDK1_PYTHON,
    free_port,
    needs_peer,
    run_mcpgen,
    running_server,
    subprocess_env,
)

pytestmark = pytest.mark.timeout(120)

PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
SPEC: dict[str, Any] = {
    "tools": [
        {
            "name": "touch",
            "description": "announce a change",
            "inputSchema": {"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]},
        }
    ],
    "resources": [
        {"uri": "note://readme", "name": "readme", "mimeType": "text/markdown"},
        {"uri": "note://logo", "name": "logo", "mimeType": "image/png"},
    ],
    "resourceTemplates": [
        {
            "uriTemplate": "note://notes/{name}",
            "name": "note",
            "mimeType": "text/plain",
            "description": "One note",
        }
    ],
    "prompts": [
        {
            "name": "greet",
            "description": "Greets someone",
            "arguments": [{"name": "name", "required": True, "description": "who"}, {"name": "style"}],
        }
    ],
}
HANDLERS = f'''\
from __future__ import annotations

import base64
from collections.abc import Mapping

from mcpgen_runtime.server import (
    CompletionReturn,
    PromptReturn,
    RequestContext,
    ResourceNotFound,
    ResourceReturn,
    ToolContext,
    ToolReturn,
)

from . import models as _m
from .base import ServerBase


class Server(ServerBase):
    """Notes."""

    async def touch(self, args: _m.TouchInput, ctx: ToolContext) -> ToolReturn:
        return f"sent to {{self.notify_resource_updated(args.uri)}}"

    async def read_static_resource(self, uri: str, ctx: RequestContext) -> ResourceReturn:
        if uri == "note://logo":
            return base64.b64decode("{PNG_B64}")
        return "# Notes"

    async def read_note(self, ctx: RequestContext, *, name: str) -> ResourceReturn:
        if name == "missing":
            raise ResourceNotFound(f"note://notes/{{name}}")
        return f"Note {{name}}"

    async def prompt_greet(self, ctx: RequestContext, *, name: str, style: str | None = None) -> PromptReturn:
        return f"Hello, {{name}} ({{style or 'plain'}})!"

    async def complete_prompt_greet_name(
        self, value: str, context: Mapping[str, str], ctx: RequestContext
    ) -> CompletionReturn:
        return [n for n in ("ada", "alan", "grace") if n.startswith(value)]
'''
ARGS = [
    *("--read", "note://readme"),
    *("--read", "note://logo"),
    *("--read", "note://notes/a%2Fb%20c"),
    *("--read", "note://notes/a%2Cb%20c"),
    *("--read", "note://notes/missing"),
    *("--prompt", "greet", '{"name": "Ada"}'),
    *("--prompt", "greet", "{}"),
    *("--complete", "prompt", "greet", "name", "a"),
    *("--complete", "resource", "note://notes/{name}", "name", "x"),
    *("--watch", "note://readme"),
]


def _mcpgen(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_mcpgen(cwd, *args)


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("notes")
    (root / "notes.json").write_text(json.dumps(SPEC))
    done = _mcpgen("server", "notes.json", "-o", "out", "--package", "notes_server", cwd=root)
    assert done.returncode == 0, done.stderr
    (root / "out" / "notes_server" / "handlers.py").write_text(HANDLERS)
    return root


def _env(root: Path) -> dict[str, str]:
    env = subprocess_env()
    env["PYTHONPATH"] = os.pathsep.join([str(root / "out"), env["PYTHONPATH"]])
    return env


@pytest.fixture(scope="module")
def http_url(package: Path) -> Iterator[str]:
    port = free_port()
    command = [PYTHON, "-m", "notes_server", "--http", "--port", str(port)]
    with running_server(command, port, env=_env(package)):
        yield f"http://127.0.0.1:{port}/mcp"


def _peer(peer: str, target: list[str], root: Path) -> dict[str, Any]:
    if peer == "sdk1":
        args = [
            str(needs_peer(SDK1_PYTHON, "the official SDK 1.x")),
            str(ROOT / "tests" / "peers" / "sdk1_surfaces.py"),
        ]
    else:
        mode = "legacy" if peer == "sdk2-legacy" else "auto"
        args = [PYTHON, str(ROOT / "tests" / "peers" / "sdk_surfaces.py"), "--mode", mode]
    done = subprocess.run([*args, *ARGS, *target], cwd=ROOT, env=_env(root), capture_output=True, timeout=90)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return report


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("peer", ["sdk1", "sdk2", "sdk2-legacy"])
def test_sdk_clients_read_a_generated_server(peer: str, transport: str, package: Path, http_url: str) -> None:
    target = [http_url] if transport == "http" else ["--", PYTHON, "-m", "notes_server", "--stdio"]
    report = _peer(peer, target, package)
    assert report["resources"] == ["note://readme", "note://logo"]
    assert report["templates"] == ["note://notes/{name}"]
    assert report["prompts"] == ["greet"]
    reads = {r["uri"]: r for r in report["reads"]}
    assert reads["note://readme"]["contents"] == [
        {"uri": "note://readme", "mimeType": "text/markdown", "text": "# Notes"}
    ]
    assert reads["note://logo"]["contents"] == [
        {"uri": "note://logo", "mimeType": "image/png", "blob": PNG_B64}
    ]
    assert reads["note://notes/a%2Cb%20c"]["contents"][0]["text"] == "Note a,b c"
    not_found = -32602 if peer == "sdk2" else -32002
    assert reads["note://notes/missing"]["error"]["code"] == not_found
    assert reads["note://notes/a%2Fb%20c"]["error"]["code"] == not_found  # "a/b c" would name a path
    greet, missing = report["gets"]
    assert greet["description"] == "Greets someone"
    assert greet["messages"] == [{"role": "user", "content": {"type": "text", "text": "Hello, Ada (plain)!"}}]
    assert missing["error"]["code"] == -32602
    names, unimplemented = report["completions"]
    assert names["values"] == ["ada", "alan"]
    assert unimplemented["values"] == []  # the generated stub: no suggestions
    assert set(report["updated"]) == {"note://readme"}


def test_a_new_prompt_gets_a_stub_and_the_users_code_stays(package: Path, tmp_path: Path) -> None:
    root = tmp_path / "grown"
    root.mkdir()
    (root / "out" / "notes_server").mkdir(parents=True)
    (root / "out" / "notes_server" / "handlers.py").write_text(HANDLERS)
    grown = {
        **SPEC,
        "prompts": [
            *SPEC["prompts"],
            {"name": "summarize", "arguments": [{"name": "text", "required": True}]},
        ],
    }
    (root / "notes.json").write_text(json.dumps(grown))
    warned = _mcpgen("server", "notes.json", "-o", "out", "--package", "notes_server", cwd=root)
    assert warned.returncode == 0, warned.stderr
    assert "prompt_summarize" in warned.stderr  # the stub to paste, shown
    assert (root / "out" / "notes_server" / "handlers.py").read_text() == HANDLERS
    stubbed = _mcpgen(
        "server", "notes.json", "-o", "out", "--package", "notes_server", "--add-stubs", cwd=root
    )
    assert stubbed.returncode == 0, stubbed.stderr
    updated = (root / "out" / "notes_server" / "handlers.py").read_text()
    matcher = difflib.SequenceMatcher(a=HANDLERS.splitlines(), b=updated.splitlines(), autojunk=False)
    assert {op for op, *_ in matcher.get_opcodes()} <= {"equal", "insert"}
    assert "async def prompt_summarize(" in updated and "async def complete_prompt_summarize_text(" in updated
    served = subprocess.run(
        [PYTHON, "-m", "notes_server", "--stdio"],
        input="",
        env=_env(root),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert served.returncode == 0, served.stderr
