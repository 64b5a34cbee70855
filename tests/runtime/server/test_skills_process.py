"""`python -m PKG --skills DIR` as a real process: the skills served over stdio and named in the startup
line, path escapes refused over HTTP on loopback, and a skill that cannot be served stopping the server
at start (exit 2, its path and the rule on stderr, nothing served)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import httpx
import pytest

from mcpgen_runtime.protocol.headers import encode_value
from tests.runtime.server_helpers import StdioPeer, mcp_headers, request
from tests.support import PYTHON, ROOT, free_port, running_server, subprocess_env

pytestmark = pytest.mark.peer

SERVER = "tests.runtime.weather_server_app"


def make_skill(root: Path, name: str, frontmatter_name: str | None = None) -> Path:
    folder = root / name
    (folder / "scripts").mkdir(parents=True)
    skill_md = folder / "SKILL.md"
    skill_md.write_text(f"---\nname: {frontmatter_name or name}\ndescription: Tests things.\n---\n# {name}\n")
    (folder / "scripts" / "run.py").write_text("print('hi')\n")
    return skill_md


def test_a_server_started_with_skills_serves_them_over_stdio(tmp_path: Path) -> None:
    make_skill(tmp_path, "testing")
    peer = StdioPeer("--skills", str(tmp_path), module=SERVER)
    try:
        peer.send(request(1, "server/discover"))
        discover = peer.recv()["result"]
        assert discover["capabilities"]["extensions"]["io.modelcontextprotocol/skills"] == {
            "directoryRead": True
        }
        peer.send(request(2, "skills/list"))
        (entry,) = peer.recv()["result"]["skills"]
        files = {r["uri"]: r for r in entry["resources"]}
        peer.send(request(3, "resources/read", {"uri": "skill://testing/scripts/run.py"}))
        (contents,) = peer.recv()["result"]["contents"]
        data = contents["text"].encode()
        assert files["skill://testing/scripts/run.py"] == {
            "uri": "skill://testing/scripts/run.py",
            "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
            "size": len(data),
        }
        peer.send(request(4, "resources/directory/read", {"uri": "skill://testing/../.."}))
        assert peer.recv()["error"]["code"] == -32602
    finally:
        assert peer.close() == 0
    assert b"1 skill on stdio" in peer.stderr


def test_a_bad_skill_stops_the_server_at_start_with_its_path_and_the_rule(tmp_path: Path) -> None:
    skill_md = make_skill(tmp_path, "testing", frontmatter_name="Testing")
    proc = subprocess.run(
        [PYTHON, "-m", SERVER, "--stdio", "--skills", str(tmp_path)],
        cwd=ROOT,
        env=subprocess_env(),
        input=b"",
        capture_output=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert proc.stdout == b""
    err = proc.stderr.decode()
    assert f"cannot start: skill {skill_md.resolve()}: `name` 'Testing' must be lowercase letters" in err
    assert "Traceback" not in err


ESCAPES = [
    "skill://testing/../../etc/passwd",
    "skill://testing/%2e%2e/%2e%2e/etc/passwd",
    "skill://testing/..%2F..%2Fetc%2Fpasswd",
    "skill://testing/scripts/%2e%2e/SKILL.md",
]


def test_path_escapes_over_http_are_refused_with_invalid_params(tmp_path: Path) -> None:
    """Over Streamable HTTP on loopback: `..`, encoded separators and a symbolic link swapped in after
    start that leads out of the folder all answer -32602 (nothing outside the folder is read)."""
    skills = tmp_path / "skills"
    make_skill(skills, "testing")
    outside = tmp_path / "outside.py"
    outside.write_text("print('hi')\n")  # the same bytes as the file it replaces
    port = free_port()
    with running_server([PYTHON, "-m", SERVER, "--http", "--port", str(port), "--skills", str(skills)], port):
        url = f"http://127.0.0.1:{port}/mcp"

        def send(method: str, uri: str) -> dict[str, object]:
            message = request(1, method, {"uri": uri})
            headers = {**mcp_headers(message), "Mcp-Name": encode_value(uri)}
            reply = httpx.post(url, json=message, headers=headers, timeout=10)
            body: dict[str, object] = reply.json()
            return body

        ok = send("resources/read", "skill://testing/scripts/run.py")
        assert "result" in ok, ok
        for uri in ESCAPES:
            for method in ("resources/read", "resources/directory/read", "skills/get"):
                assert send(method, uri)["error"]["code"] == -32602, (method, uri)  # type: ignore[index]
        run_py = skills / "testing" / "scripts" / "run.py"
        run_py.unlink()
        run_py.symlink_to(outside)
        refused = send("resources/read", "skill://testing/scripts/run.py")
        assert refused["error"]["code"] == -32602, refused  # type: ignore[index]


def test_a_2025_11_25_session_over_stdio_gets_no_skills_extension(tmp_path: Path) -> None:
    make_skill(tmp_path, "testing")
    peer = StdioPeer("--skills", str(tmp_path), module=SERVER)
    try:
        client = {"name": "legacy", "version": "0"}
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        capabilities = peer.recv()["result"]["capabilities"]
        assert "extensions" not in capabilities and "experimental" not in capabilities
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        peer.send({"jsonrpc": "2.0", "id": 2, "method": "skills/list", "params": {}})
        assert peer.recv()["error"]["code"] == -32601
        peer.send({"jsonrpc": "2.0", "id": 3, "method": "resources/list", "params": {}})
        assert [r["uri"] for r in peer.recv()["result"]["resources"]] == ["skill://testing/SKILL.md"]
    finally:
        assert peer.close() == 0
