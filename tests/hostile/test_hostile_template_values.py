"""Issue 31, item 8: decoded template variables never become paths out of a server's files.

tests/hostile/uri_templates_app.py runs as a real HTTP server over a directory holding `notes/`,
`docs/` and, beside it, a secret; `notes://notes/{name}` joins `name` onto `notes/` with no check
of its own, `docs:///{+path}` and `tree://{/segments*}` go through `safe_join`, `raw://notes/{name}`
opted out (`raw_values=True`). Every traversal spelling (`..%2F`, `%2e%2e%2F`, `..%5C`, `%00`, a
symbolic link out) is answered "Resource not found" within 50 ms (best of five), in both eras; the
secret never appears in an answer; the opted-out template gets the value as decoded; legitimate
names are served. The server's peak RSS grows by less than 16 MB over the run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpgen_runtime.server import PathEscapeError, safe_join
from tests.hostile.test_hostile_uri_templates import legacy_sender, modern_sender, read, status_kib
from tests.hostile.uri_templates_app import BASE_ENV
from tests.support import PYTHON, free_port, running_server

SECRET = "TOP-SECRET-hostname"
BOUND_S = 0.050
HOSTILE = [
    "notes://notes/..%2F..%2Fsecret",
    "notes://notes/..%2Fsecret",
    "notes://notes/%2E%2E%2Fsecret",
    "notes://notes/..%5C..%5Csecret",
    "notes://notes/..",
    "notes://notes/%2e%2e",
    "notes://notes/note%00.txt",
    "notes://notes/%2Fetc%2Fhostname",
    "docs:///../secret",
    "docs:///docs/../../secret",
    "docs:///%2E%2E/secret",
    "docs:///..%2Fsecret",
    "docs:///%2Fetc%2Fhostname",
    "docs:///docs/out/secret",  # a symbolic link to the parent
    "docs:///docs/a%00b",
    "tree:///..%2Fsecret",
    "tree://" + "/.." * 40 + "/secret",
    "tree:///docs/../../secret",
]
SERVED = {
    "notes://notes/note.txt": "a note",
    "notes://notes/with%20space": "spaced",
    "docs:///docs/page.md": "a page",
    "docs:///docs/sub/../page.md": "a page",  # ".." that stays inside is fine for safe_join
    "tree:///docs/page.md": "a page",
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    root = tmp_path_factory.mktemp("values")
    base = root / "base"
    (base / "notes").mkdir(parents=True)
    (base / "docs").mkdir()
    (root / "secret").write_text(SECRET)
    (base / "notes" / "note.txt").write_text("a note")
    (base / "notes" / "with space").write_text("spaced")
    (base / "docs" / "page.md").write_text("a page")
    (base / "docs" / "out").symlink_to(root)
    port = free_port()
    args = [PYTHON, "-m", "tests.hostile.uri_templates_app", "--http", "--port", str(port)]
    with running_server(args, port, env={BASE_ENV: str(base)}) as proc:
        yield f"http://127.0.0.1:{port}/mcp", proc.pid


def timed(send: Any, uri: str) -> tuple[float, dict[str, Any]]:
    best, answer = float("inf"), {}
    for _ in range(5):
        started = time.perf_counter()
        answer = send(read(1, uri))
        best = min(best, time.perf_counter() - started)
        if best < BOUND_S:
            break
    return best, answer


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_traversal_never_reaches_a_file(served: tuple[str, int], era: str) -> None:
    url, pid = served
    with httpx.Client(base_url=url, timeout=5) as http:
        send = modern_sender(http) if era == "2026-07-28" else legacy_sender(http)
        for uri, text in SERVED.items():
            answer = send(read(1, uri))
            assert answer["result"]["contents"][0]["text"] == text, (uri, answer)
        rss_before = status_kib(pid, "VmRSS")
        for uri in HOSTILE:
            taken, answer = timed(send, uri)
            assert SECRET not in json.dumps(answer)
            assert answer["error"]["message"] == "Resource not found", (uri, answer)
            assert answer["error"]["code"] == (-32602 if era == "2026-07-28" else -32002)
            assert taken < BOUND_S, (uri, taken)
        raw = send(read(2, "raw://notes/..%2F..%2Fsecret%00"))
        assert json.loads(raw["result"]["contents"][0]["text"]) == {"name": len("../../secret\x00")}
    assert status_kib(pid, "VmHWM") - rss_before < 16 * 1024


def test_safe_join_refuses_every_escape(tmp_path: Path) -> None:
    base = tmp_path / "base"
    (base / "d").mkdir(parents=True)
    (base / "link").symlink_to(tmp_path)
    assert safe_join(base, "d/../d/x.txt") == (base / "d" / "x.txt").resolve()
    assert safe_join(base, ["d", "x.txt"]) == (base / "d" / "x.txt").resolve()
    assert safe_join(base, "") == base.resolve()
    for parts in (
        ("..",),
        ("../x",),
        ("d/../../x",),
        ("..\\x",),
        (["d", "..", ".."],),
        ("a\x00b",),
        ("link/x",),
        ("d", "../../x"),
    ):
        with pytest.raises(PathEscapeError):
            safe_join(base, *parts)
    assert safe_join(base, "/etc/passwd") == (base / "etc" / "passwd").resolve()  # a leading "/": inside
