"""Resources, resource templates, prompts and completion of an mcpgen server, through the official
SDK clients (issue 22): SDK 2.3.0 in both eras (2026-07-28, and `mode="legacy"`) and the last 1.x
release (legacy only), over Streamable HTTP and stdio.

The server is tests/runtime/surfaces_server_app.py (runtime API: `add_resource`,
`add_resource_template`, `add_prompt`, `add_completion`). What must hold for every peer and
transport: the capabilities are declared; every resources/list page is read; text and binary
contents arrive as written (the resource's mimeType added); template variables are matched and
percent-decoded (a `..%2F` value, which would name another path, is refused: issue 31); a missing
resource is a JSON-RPC error (-32602 in 2026-07-28, -32002 in the legacy revisions), never empty
contents; prompts come back as messages (text, image, an assistant message), a missing required
argument and an unknown prompt are -32602; completions are capped at 100 with `hasMore`; and
`notifications/resources/updated` reaches a subscriber (listen in 2026-07-28, resources/subscribe
before), for the subscribed URI only.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support import PYTHON, ROOT, SDK1_PYTHON, free_port, needs_peer, running_server, subprocess_env

pytestmark = pytest.mark.timeout(90)

SDK1 = ROOT / "tests" / "peers" / "sdk1_surfaces.py"
SDK2 = ROOT / "tests" / "peers" / "sdk_surfaces.py"
APP = [PYTHON, "-m", "tests.runtime.surfaces_server_app"]
PEERS = ("sdk1", "sdk2", "sdk2-legacy")
PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
ARGS = [
    *("--read", "note://readme"),
    *("--read", "note://logo"),
    *("--read", "note://notes/..%2Fx%20y%C3%A9"),
    *("--read", "note://notes/x%20y%C3%A9%23%3F"),
    *("--read", "note://notes/missing"),
    *("--read", "file:///a/b.txt"),
    *("--read", "search://q?term=x%26y&limit=3"),
    *("--read", "nope://nothing"),
    *("--prompt", "greet", '{"name": "Ada"}'),
    *("--prompt", "plain", "{}"),
    *("--prompt", "greet", "{}"),
    *("--prompt", "nope", "{}"),
    *("--complete", "prompt", "greet", "name", "a"),
    *("--complete", "resource", "note://notes/{name}", "name", "g"),
    *("--complete", "prompt", "greet", "style", "s"),
    *("--watch", "note://readme"),
]


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = free_port()
    with running_server([*APP, "--http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


def run_peer(peer: str, target: list[str]) -> dict[str, Any]:
    if peer == "sdk1":
        args = [str(needs_peer(SDK1_PYTHON, "the official SDK 1.x")), str(SDK1)]
    else:
        args = [PYTHON, str(SDK2), "--mode", "legacy" if peer == "sdk2-legacy" else "auto"]
    done = subprocess.run(
        [*args, *ARGS, *target], cwd=ROOT, env=subprocess_env(), capture_output=True, timeout=75
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return report


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("peer", PEERS)
def test_sdk_client_lists_reads_gets_completes_and_watches(peer: str, transport: str, http_url: str) -> None:
    target = [http_url] if transport == "http" else ["--", *APP, "--stdio"]
    report = run_peer(peer, target)
    modern = peer == "sdk2"
    assert report["protocolVersion"] == ("2026-07-28" if modern else "2025-11-25")
    caps = report["capabilities"]
    assert caps["resources"]["subscribe"] is True
    assert "prompts" in caps and "completions" in caps

    assert report["resources"] == ["note://readme", "note://logo", "note://empty-name"]
    assert report["resourcePages"] == 2  # page size 2
    assert report["templates"] == ["note://notes/{name}", "file:///{+path}", "search://q{?term,limit}"]
    assert report["prompts"] == ["greet", "plain"]

    reads = {r["uri"]: r for r in report["reads"]}
    assert reads["note://readme"]["contents"] == [
        {"uri": "note://readme", "mimeType": "text/markdown", "text": "# Read me\nmcpgen serves resources."}
    ]
    assert reads["note://logo"]["contents"] == [
        {"uri": "note://logo", "mimeType": "image/png", "blob": PNG_B64}
    ]
    decoded = reads["note://notes/x%20y%C3%A9%23%3F"]["contents"][0]
    assert decoded["text"] == "Note x yé#?" and decoded["mimeType"] == "text/plain"
    assert reads["file:///a/b.txt"]["contents"][0]["text"] == "path=a/b.txt"
    assert reads["search://q?term=x%26y&limit=3"]["contents"][0]["text"] == "term=x&y limit=3"
    not_found = -32602 if modern else -32002
    assert reads["note://notes/missing"]["error"]["code"] == not_found
    assert reads["note://notes/..%2Fx%20y%C3%A9"]["error"]["code"] == not_found  # never "../x yé"
    assert reads["nope://nothing"]["error"]["code"] == not_found

    greet, plain, no_args, unknown = report["gets"]
    assert greet["description"] == "Greets someone"
    assert greet["messages"] == [
        {"role": "assistant", "content": {"type": "text", "text": "(plain)"}},
        {"role": "user", "content": {"type": "text", "text": "Hello, Ada!"}},
        {"role": "user", "content": {"type": "image", "data": PNG_B64, "mimeType": "image/png"}},
    ]
    assert plain["messages"] == [{"role": "user", "content": {"type": "text", "text": "Just text."}}]
    assert no_args["error"]["code"] == -32602 and "name" in no_args["error"]["message"]
    assert unknown["error"]["code"] == -32602

    names, notes, styles = report["completions"]
    assert names["values"] == ["ada", "alan"]
    assert notes["values"] == ["grace", "guido"]
    assert len(styles["values"]) == 100 and styles["hasMore"] is True and styles["total"] == 150

    assert report["updated"] and set(report["updated"]) == {"note://readme"}
