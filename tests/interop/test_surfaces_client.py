"""Resources, resource templates, prompts and completion through generated clients (issue 22), against
real servers: the npm reference `@modelcontextprotocol/server-everything` (stdio and Streamable
HTTP), an SDK 1.x `FastMCP` server and an SDK 2.x `MCPServer` (tests/peers/surfaces_server.py).

For each: `mcpgen client` reads the live server, generates one typed method per template and per
prompt, and a program using only the generated package reads every static resource, each template
(a binary one included), gets each prompt (with arguments), asks for completions, and checks that
hostile template values travel percent-encoded (RFC 6570) instead of changing the URI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import (
    NODE,
    ROOT,
    SDK1_PYTHON,
    SERVER_EVERYTHING,
    free_port,
    needs_peer,
    running_server,
    subprocess_env,
)

PEER = str(ROOT / "tests" / "peers" / "surfaces_server.py")
pytestmark = pytest.mark.timeout(180)


def _generate(tmp_path: Path, package: str, source: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "codegen.cli", "client", *source, "-o", str(tmp_path), "--package", package],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _run(tmp_path: Path, script: str) -> dict[str, object]:
    env = subprocess_env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


EVERYTHING_SCRIPT = """
import json, inspect
from everything_client import Client, Resources
from mcpgen_runtime.surfaces import (
    BlobResourceContents, PromptRef, ResourceTemplateRef, TextResourceContents,
)
report = {}
with OPEN as c:
    statics = {name: value for name, value in vars(Resources).items() if name.isupper()}
    listed = {r.uri for r in c.list_all_resources()}
    report["statics"] = sorted(statics.values()) == sorted(u for u in listed if u in statics.values())
    report["static_texts"] = all(
        isinstance(c.read_resource(uri).contents[0], TextResourceContents) for uri in statics.values()
    )
    text = c.read_dynamic_text_resource(resource_id="3").contents[0]
    blob = c.read_dynamic_blob_resource(resource_id="3").contents[0]
    report["text"] = [type(text).__name__, text.uri, "Resource 3" in text.text]
    report["blob"] = [type(blob).__name__, blob.uri, blob.blob.startswith(b"Resource 3")]
    report["simple"] = c.prompt_simple_prompt().text
    report["args"] = c.prompt_args_prompt(city="Berlin", state="BE").text
    report["args_optional_left_out"] = c.prompt_args_prompt(city="Oslo").text
    embedded = c.prompt_resource_prompt(resource_type="Text", resource_id="2").messages
    report["embedded"] = [m.content.type for m in embedded]
    report["keyword_only"] = [
        p.kind.name for p in inspect.signature(Client.prompt_args_prompt).parameters.values()
    ][1:]
    report["complete_prompt"] = c.complete(PromptRef("completable-prompt"), "department", "E").values
    report["complete_context"] = c.complete(
        PromptRef("completable-prompt"), "name", "", context={"department": "Engineering"}
    ).values
    report["complete_template"] = c.complete(
        ResourceTemplateRef("demo://resource/dynamic/text/{resourceId}"), "resourceId", "1"
    ).values
    report["era"] = c.era
print(json.dumps(report))
"""


def _check_everything(report: dict[str, object]) -> None:
    assert report["statics"] is True and report["static_texts"] is True
    assert report["text"] == ["TextResourceContents", "demo://resource/dynamic/text/3", True]
    assert report["blob"] == ["BlobResourceContents", "demo://resource/dynamic/blob/3", True]
    assert report["simple"] == "This is a simple prompt without arguments."
    assert report["args"] == "What's weather in Berlin, BE?"
    assert report["args_optional_left_out"] == "What's weather in Oslo?"
    assert report["embedded"] == ["text", "resource"]
    assert report["keyword_only"] == ["KEYWORD_ONLY", "KEYWORD_ONLY"]
    assert report["complete_prompt"] == ["Engineering"]
    assert report["complete_context"]  # names of the engineering team
    assert report["complete_template"] == ["1"]


@pytest.fixture(scope="module")
def everything() -> tuple[Path, Path]:
    return (
        needs_peer(NODE, "Node 22 beside the conformance harness"),
        needs_peer(SERVER_EVERYTHING, "@modelcontextprotocol/server-everything"),
    )


def test_server_everything_over_stdio(tmp_path: Path, everything: tuple[Path, Path]) -> None:
    node, server = everything
    _generate(tmp_path, "everything_client", ["--stdio", f"{node} {server} stdio"])
    argv = [str(node), str(server), "stdio"]
    report = _run(tmp_path, EVERYTHING_SCRIPT.replace("OPEN", f"Client.stdio({argv!r})"))
    _check_everything(report)
    assert report["era"] == "legacy"


@pytest.fixture
def everything_http(everything: tuple[Path, Path]) -> Iterator[str]:
    node, server = everything
    port = free_port()
    with running_server([str(node), str(server), "streamableHttp"], port, env={"PORT": str(port)}):
        yield f"http://127.0.0.1:{port}/mcp"


def test_server_everything_over_streamable_http(tmp_path: Path, everything_http: str) -> None:
    _generate(tmp_path, "everything_client", [everything_http])
    report = _run(tmp_path, EVERYTHING_SCRIPT.replace("OPEN", f"Client({everything_http!r})"))
    _check_everything(report)
    assert report["era"] == "legacy"


SDK_SCRIPT = """
import json
from urllib.parse import unquote
from surfaces_client import Client, Resources
from mcpgen_runtime.errors import RemoteError
from mcpgen_runtime.surfaces import BlobResourceContents, PromptRef, ResourceTemplateRef
report = {}
with OPEN as c:
    logo = c.read_resource(Resources.LOGO).contents[0]
    report["logo"] = [type(logo).__name__, logo.blob == bytes(range(256)) + b"\\x89PNG\\r\\n\\x1a\\n"]
    report["readme"] = c.read_resource(Resources.README).text
    report["profile"] = c.read_user_profile(user_id="alice").text
    arrived = {}
    for value in ["../etc/passwd", "a#b", "q?x=1&y", "sp ace", "ünï©"]:
        try:
            text = c.read_file(name=value).text
        except RemoteError as exc:  # a server may refuse what looks like traversal once decoded
            arrived[value] = f"refused {exc.code}"
            continue
        arrived[value] = unquote(text.removeprefix("name=")) == value
    report["hostile"] = arrived
    report["greet"] = c.prompt_greet(name="Ann").text
    report["greet_lang"] = c.prompt_greet(name="Ann", language="fr").text
    report["review"] = [(m.role, m.content.text) for m in c.prompt_review().messages]
    report["complete_prompt"] = c.complete(PromptRef("greet"), "language", "py").values
    report["complete_template"] = c.complete(
        ResourceTemplateRef("users://{user_id}/profile"), "user_id", "al"
    ).values
    report["era"] = c.era
print(json.dumps(report))
"""


def _check_sdk(report: dict[str, object]) -> None:
    assert report["logo"] == ["BlobResourceContents", True]
    assert report["readme"] == "# Read me\n"
    assert report["profile"] == "profile of alice"
    hostile = report["hostile"]
    assert isinstance(hostile, dict)
    assert all(ok is True for value, ok in hostile.items() if value != "../etc/passwd"), hostile
    assert hostile["../etc/passwd"] in (True, "refused -32602"), hostile
    assert report["greet"] == "Say hello to Ann in en."
    assert report["greet_lang"] == "Say hello to Ann in fr."
    assert report["review"] == [["user", "Review this."], ["assistant", "Sure."]]
    assert report["complete_prompt"] == ["python", "pytorch", "pyside"]
    assert report["complete_template"] == ["alice", "albert"]


@pytest.mark.parametrize("sdk", ["sdk1", "sdk2"])
def test_sdk_servers_over_stdio(tmp_path: Path, sdk: str) -> None:
    python = str(needs_peer(SDK1_PYTHON, "the SDK 1.x venv")) if sdk == "sdk1" else sys.executable
    argv = [python, PEER, "--stdio"]
    # The era named: a loaded machine may start the SDK 2.x server after the discover probe's
    # deadline (the probe's auto-detection is tested elsewhere, tests/interop/test_legacy_servers.py).
    era = "legacy" if sdk == "sdk1" else "modern"
    _generate(tmp_path, "surfaces_client", ["--stdio", " ".join(argv), "--era", era])
    opened = f"Client.stdio(OPEN_ARGV, era={era!r})"
    report = _run(tmp_path, f"OPEN_ARGV = {argv!r}\n" + SDK_SCRIPT.replace("OPEN", opened))
    _check_sdk(report)
    assert report["era"] == ("legacy" if sdk == "sdk1" else "modern")


@pytest.mark.parametrize("sdk", ["sdk1", "sdk2"])
def test_sdk_servers_over_streamable_http(tmp_path: Path, sdk: str) -> None:
    python = str(needs_peer(SDK1_PYTHON, "the SDK 1.x venv")) if sdk == "sdk1" else sys.executable
    port = free_port()
    with running_server([python, PEER, "--http", "--port", str(port)], port):
        url = f"http://127.0.0.1:{port}/mcp"
        _generate(tmp_path, "surfaces_client", [url])
        _check_sdk(_run(tmp_path, SDK_SCRIPT.replace("OPEN", f"Client({url!r})")))


def test_the_command_line_lists_reads_and_gets_prompts(everything: tuple[Path, Path], tmp_path: Path) -> None:
    """generated/everything_client's `python -m`: resources, read (a template, binary to --out),
    prompts, prompt NAME --arg, complete."""
    node, server = everything
    base = [sys.executable, "-m", "everything_client", "--stdio", f"{node} {server} stdio"]

    def cli(*args: str) -> str:
        done = subprocess.run(
            [*base, *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            env=subprocess_env(),
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    listed = json.loads(cli("resources"))
    assert "demo://resource/static/document/architecture.md" in {r["uri"] for r in listed["resources"]}
    assert {t["name"] for t in listed["resourceTemplates"]} == {
        "Dynamic Text Resource",
        "Dynamic Blob Resource",
    }
    out = tmp_path / "blob.bin"
    cli("read", "--template", "demo://resource/dynamic/blob/{id}", "--arg", "id=4", "--out", str(out))
    assert out.read_bytes().startswith(b"Resource 4")
    text = cli("--format", "text", "read", "demo://resource/dynamic/text/5")
    assert text.startswith("Resource 5")
    assert "args-prompt" in {p["name"] for p in json.loads(cli("prompts"))["prompts"]}
    messages = json.loads(cli("prompt", "args-prompt", "--arg", "city=Rome"))
    assert messages[0]["content"]["text"] == "What's weather in Rome?"
    assert (
        cli("--format", "text", "complete", "--prompt", "completable-prompt", "department", "E")
        == "Engineering\n"
    )
    unknown = subprocess.run(
        [*base, "prompt", "no-such-prompt"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=subprocess_env(),
        check=False,
    )
    assert unknown.returncode == 3, unknown.stderr


def test_resource_updates_reach_listen_on_a_legacy_server(everything: tuple[Path, Path]) -> None:
    """listen(resource_subscriptions=[uri]) on a legacy server sends resources/subscribe (RES-08);
    the server's notifications/resources/updated for that URI arrive on the subscription, and the
    cached resources/read of the URI is stale from then on (CACHE-14)."""
    from mcpgen_runtime.client import Client

    node, server = everything
    uri = "demo://resource/static/document/architecture.md"
    with Client.stdio([str(node), str(server), "stdio"]) as client:
        client.read_resource(uri)
        with client.listen(tools_list_changed=False, resource_subscriptions=[uri]) as subscription:
            assert subscription.acknowledged is not None
            assert subscription.acknowledged.resource_subscriptions == (uri,)
            assert subscription.unsupported == []
            client.call_tool("toggle-subscriber-updates", {})
            note = next(iter(subscription))
        assert note["method"] == "notifications/resources/updated"
        assert note["params"]["uri"] == uri
