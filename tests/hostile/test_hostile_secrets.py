"""Secrets are used, never written or printed (issue 31, item 4), whatever the server echoes.

A config server (a real stdio process started from an MCP config file, its key in `args` as
`${env:MCP_SECRET}` and a five-character key in `env`) repeats both keys in a line on stdout that
is not JSON, on stderr, in a tool description, in a tool result and in the stderr of a crash. A
loopback HTTP server echoes every header and the query string in its error. Neither key shows in
anything `mcpgen` prints or writes: warnings, passed-through stderr, errors, generated files,
cassettes; a definition holding one stops generation naming the tool and the field. Every run
is a real subprocess, bounded in time and in memory (its peak RSS).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mcpgen_runtime.masking import MIN_SECRET_CHARS, Secrets
from mcpgen_runtime.mock.cassette import SCRUBBED, Scrubber
from tests.support import PYTHON, run_measured, subprocess_env

pytestmark = pytest.mark.timeout(300)

SECRET = "sk-cfg-4f9a7e2b1c"  # ${env:MCP_SECRET}, an argument of the server
SHORT = "Zq7xW"  # five characters: under the cassettes' old threshold (6)
# The HTTP server's: a --header value, a --token, two query values (each shorter than the query).
HEADER_VALUE, TOKEN, QUERY_ONE, QUERY_TWO = "hv-91c2e7", "tk-5d8e0a", "qv1x", "qv2y"
RUN_SECONDS = 90.0  # a run takes 1-3 s on a quiet machine; the unmasked paths leak at once
MAX_RSS_KIB = 600 * 1024

SERVER = r"""
import json, os, sys

secret, mode, short = sys.argv[1], sys.argv[2], os.environ["SHORT_SECRET"]
print(f"banner: starting with key {secret} and {short}", flush=True)  # not JSON-RPC
print(f"log: key {secret}, short key {short}", file=sys.stderr, flush=True)
description = f"Echo. Uses key {secret}." if mode == "definition" else "Echo a message."


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, ident = message.get("method"), message["id"]
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "echo", "version": "1.0"},
        }})
    elif method == "tools/list":
        if mode == "crash":
            print(f"fatal: the key {secret} ({short}) was refused", file=sys.stderr, flush=True)
            sys.exit(3)
        send({"jsonrpc": "2.0", "id": ident, "result": {"tools": [{
            "name": "echo",
            "description": description,
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
        }]}})
    elif method == "tools/call":
        text = f"you sent {message['params']['arguments']}; my keys are {secret} and {short}"
        send({"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": text}]}})
    else:  # server/discover too: a legacy server
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "Method not found"}})
"""


def _config(tmp_path: Path, mode: str) -> Path:
    script = tmp_path / "echo_server.py"
    script.write_text(SERVER, encoding="utf-8")
    entry = {
        "command": PYTHON,
        "args": [str(script), "${env:MCP_SECRET}", mode],
        "env": {"SHORT_SECRET": SHORT},
    }
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"srv": entry}}), encoding="utf-8")
    return config


def _run(args: list[str], cwd: Path, **env: str) -> tuple[int, str, str]:
    done = run_measured(
        args, cwd=cwd, env={**subprocess_env(), "MCP_SECRET": SECRET, **env}, timeout=RUN_SECONDS * 2
    )
    assert done.seconds < RUN_SECONDS, done.seconds
    assert done.peak_rss_kib < MAX_RSS_KIB, done.peak_rss_kib
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def _leaks(text: str, *secrets: str) -> list[str]:
    return [secret for secret in secrets if secret in text]


def _files_leaking(root: Path, *secrets: str) -> list[str]:
    return [
        str(path)
        for path in root.rglob("*")
        if path.is_file() and _leaks(path.read_bytes().decode("utf-8", "replace"), *secrets)
    ]


# ----------------------------------------------------------------------------- the generator


def test_generating_from_a_config_server_prints_and_writes_no_secret(tmp_path: Path) -> None:
    config = _config(tmp_path, "clean")
    code, out, err = _run([PYTHON, "-m", "codegen.cli", "client", f"{config}#srv", "-o", "out"], tmp_path)
    assert code == 0, err
    assert "not JSON-RPC" in err and "***" in err  # the stray line was reported, its keys masked
    assert _leaks(out + err, SECRET, SHORT) == []
    assert (tmp_path / "out").is_dir()
    assert _files_leaking(tmp_path / "out", SECRET, SHORT) == []


def test_a_secret_in_a_definition_stops_generation_naming_the_tool_and_field(tmp_path: Path) -> None:
    config = _config(tmp_path, "definition")
    for command in (
        ["client", f"{config}#srv", "-o", "out"],
        ["snapshot", f"{config}#srv", "-o", "snap.json"],
    ):
        code, out, err = _run([PYTHON, "-m", "codegen.cli", *command], tmp_path)
        assert code == 1, err
        assert "tool 'echo' at /tools/0/description holds a value mcpgen gave the server" in err
        assert _leaks(out + err, SECRET, SHORT) == []
    assert not (tmp_path / "out").exists() and not (tmp_path / "snap.json").exists()


def test_a_crash_whose_stderr_repeats_the_secret_is_reported_masked(tmp_path: Path) -> None:
    config = _config(tmp_path, "crash")
    code, out, err = _run([PYTHON, "-m", "codegen.cli", "client", f"{config}#srv", "-o", "out"], tmp_path)
    assert code == 1
    assert "exited" in err and "the key *** (***) was refused" in err, err
    assert _leaks(out + err, SECRET, SHORT) == []


# ------------------------------------------------------------------------------- the recorder


def test_recording_a_config_server_masks_its_stderr_and_stray_lines_and_scrubs_the_cassette(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path, "clean")
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "hi"}},
        },
    ]
    cassette = tmp_path / "cassette.yaml"
    started = time.monotonic()
    proxy = subprocess.Popen(
        [PYTHON, "-m", "codegen.cli", "mock", f"{config}#srv", "--record", "-o", str(cassette), "--stdio"],
        cwd=tmp_path,
        env={**subprocess_env(), "MCP_SECRET": SECRET},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proxy.stdin is not None and proxy.stdout is not None
    lines: list[str] = []
    try:
        for request in requests:
            proxy.stdin.write(json.dumps(request) + "\n")
            proxy.stdin.flush()
            while "id" in request and request["id"] not in _answers(lines):
                line = proxy.stdout.readline()
                assert line, "the proxy stopped"
                lines.append(line.rstrip("\n"))
        peak_kib = _status_kib(proxy.pid, "VmHWM")
        out, err = proxy.communicate(timeout=RUN_SECONDS)  # stdin closed: the proxy stops
    finally:
        proxy.kill()
    lines += out.splitlines()
    assert time.monotonic() - started < RUN_SECONDS
    assert peak_kib < MAX_RSS_KIB, peak_kib
    assert proxy.returncode == 0, err
    assert "log: key ***, short key ***" in err  # the server's stderr, passed through masked
    assert _leaks(err, SECRET, SHORT) == []
    assert [line for line in lines if not line.startswith("{")] == ["banner: starting with key *** and ***"]
    # JSON-RPC lines reach the client as the server sent them: the proxy alters no message
    answers = _answers(lines)
    assert SECRET in answers[3]["result"]["content"][0]["text"]
    recorded = cassette.read_text(encoding="utf-8")
    assert f"my keys are {SCRUBBED} and {SCRUBBED}" in recorded
    assert _leaks(recorded, SECRET, SHORT) == []


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def _answers(lines: list[str]) -> dict[object, dict[str, object]]:
    messages = [json.loads(line) for line in lines if line.startswith("{")]
    return {message.get("id"): message for message in messages}


# ------------------------------------------------------------------ values echoed by an HTTP server


class _Echo(BaseHTTPRequestHandler):
    """Answers every request with a JSON-RPC error that repeats its path, query and headers."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        echoed = f"refused {self.path} with {dict(self.headers.items())}"
        body = json.dumps(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": echoed}}
        ).encode()
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_DELETE = do_POST

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp?key={QUERY_ONE}&team={QUERY_TWO}"
    finally:
        server.shutdown()
        server.server_close()


def test_header_token_and_query_values_a_server_echoes_are_masked(tmp_path: Path, echo_url: str) -> None:
    code, out, err = _run(
        [
            PYTHON,
            "-m",
            "codegen.cli",
            "client",
            echo_url,
            "--header",
            f"X-Api-Key: {HEADER_VALUE}",
            "--token",
            TOKEN,
            "-o",
            "out",
        ],
        tmp_path,
    )
    assert code == 1 and "refused /mcp?*** with" in err and "'X-Api-Key': '***'" in err, err
    assert _leaks(out + err, HEADER_VALUE, TOKEN, QUERY_ONE, QUERY_TWO) == []


def test_a_generated_clients_header_and_token_are_masked_in_its_errors(tmp_path: Path, echo_url: str) -> None:
    code, out, err = _run(
        [
            PYTHON,
            "-m",
            "weather_client",
            "--url",
            echo_url,
            "--header",
            f"X-Api-Key: {HEADER_VALUE}",
            "--token-env",
            "WEATHER_TOKEN",
            "get-current-time",
        ],
        tmp_path,
        WEATHER_TOKEN=TOKEN,
    )
    assert code != 0 and "Error:" in err and "***" in err, err
    assert _leaks(out + err, HEADER_VALUE, TOKEN, QUERY_ONE, QUERY_TWO) == []


# ------------------------------------------------------------------------------- one threshold


def test_one_threshold_for_messages_and_cassettes() -> None:
    assert MIN_SECRET_CHARS == 3
    secrets = Secrets(["abc", "xy", "Bearer tok"])
    assert secrets.mask("abc xy tok") == "*** xy ***"
    scrubber = Scrubber(values=["abc", "xy"])
    assert scrubber.text("abc xy") == f"{SCRUBBED} xy"
    secrets.add_url("https://h/p?a=one&b=two")
    assert secrets.mask("a=one&b=two, b=two&a=one") == "***, b=***&a=***"  # the query, and each value
    secrets.add_arguments(["--api-key", "k3y", "--token=t0k", "serve", "/srv/data"])
    assert secrets.mask("k3y t0k serve /srv/data") == "*** *** serve /srv/data"


def test_only_credentials_stop_generation_every_secret_is_masked() -> None:
    """A config's harmless values (`LOG_LEVEL=verbose`, `?format=json`) are masked in output but
    may appear in a definition; a value named or shaped like a credential may not."""
    secrets = Secrets()
    secrets.add_named("LOG_LEVEL", "verbose")
    secrets.add_named("GITHUB_API_TOKEN", "abc123")
    secrets.add_url("https://h/mcp?format=json&access_token=zz9")
    shaped = "ghp_" + "a1" * 18
    secrets.add_named("X-Tenant", f"acme {shaped}")
    assert secrets.mask(f"verbose json acme {shaped}") == "*** *** ***"
    assert secrets.locate({"description": "verbose output as json for acme"}) is None
    assert secrets.locate({"d": ["x", "uses abc123"]}) == "/d/1"
    assert secrets.locate({"d": "token zz9"}) == "/d"
    assert secrets.locate({"d": shaped}) == "/d"
    assert secrets.credentials == {"abc123", "zz9", shaped}
