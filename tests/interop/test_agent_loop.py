"""examples/agent_loop.py as a user runs it (issue 35, item 4): under the providers' venv (the real
`openai` SDK), against the generated weather server, with OPENAI_BASE_URL pointing at a loopback server
that answers with a recorded tool-call turn (tests/interop/recordings/openai_weather_turn.json) and
keeps what the SDK sent. No network: what is checked is what the loop and the SDK put on the wire.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support import PYTHON, ROOT, free_port, needs_peer, running_server

pytestmark = [pytest.mark.peer, pytest.mark.timeout(120)]

PROVIDERS_PYTHON = ROOT / "tests" / "peers" / ".venv-providers" / "bin" / "python"
EXAMPLE = ROOT / "examples" / "agent_loop.py"
RECORDING = json.loads((Path(__file__).parent / "recordings" / "openai_weather_turn.json").read_text("utf-8"))


class RecordedOpenAI(ThreadingHTTPServer):
    """POST /v1/responses answered with the recording's replies in turn; each request body kept."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.replies = list(RECORDING["responses"])
        self.requests: list[dict[str, Any]] = []


class _Handler(BaseHTTPRequestHandler):
    server: RecordedOpenAI

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
        )
        if self.path != "/v1/responses" or not self.server.replies:
            self.send_error(404)
            return
        data = json.dumps(self.server.replies.pop(0)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def recorded() -> Iterator[RecordedOpenAI]:
    server = RecordedOpenAI()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_the_agent_loop_example_runs_a_recorded_turn_through_the_typed_client(
    recorded: RecordedOpenAI,
) -> None:
    python = needs_peer(PROVIDERS_PYTHON, "the providers' SDKs (make peers-deps)")
    port = free_port()
    weather_url = f"http://127.0.0.1:{port}/mcp"
    env = {
        **os.environ,
        "PYTHONPATH": str(
            ROOT / "generated"
        ),  # the checked-in weather_client; the runtime is installed there
        "WEATHER_URL": weather_url,
        "OPENAI_BASE_URL": f"http://127.0.0.1:{recorded.server_address[1]}/v1",
        "OPENAI_API_KEY": "sk-test-not-a-real-key",
    }
    with running_server([PYTHON, "-m", "weather_server", "--http", "--port", str(port)], port):
        done = subprocess.run(
            [str(python), str(EXAMPLE), "Do I need an umbrella in Oslo today?"],
            env=env,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]

        from weather_client import Client

        with Client(weather_url) as weather:
            reading = weather.get_weather_data("Oslo").model_dump()
            specs = weather.tool_specs("openai")

    assert done.stdout == "No umbrella needed in Oslo right now.\n"
    first, second = (request["body"] for request in recorded.requests)
    assert [request["auth"] for request in recorded.requests] == ["Bearer sk-test-not-a-real-key"] * 2
    # the model was offered the client's strict specs, as the SDK sent them
    assert first["tools"] == second["tools"] == specs.tools
    assert {tool["name"] for tool in first["tools"]} >= {"get_weather", "get_weather_data", "list_users"}
    assert all(tool["strict"] is True for tool in first["tools"])
    assert first["input"] == [{"role": "user", "content": "Do I need an umbrella in Oslo today?"}]
    # the second turn carries the model's call and the answer the weather server gave it
    call, output = second["input"][1:]
    assert call["type"] == "function_call" and call["call_id"] == "call_0001"
    assert output["type"] == "function_call_output" and output["call_id"] == "call_0001"
    assert json.loads(output["output"]) == reading


def test_the_example_type_checks_against_the_sdk_and_the_generated_client() -> None:
    """`mypy --strict` on the example with the providers' venv as the user's environment: the specs and
    replies pass for the SDK's own TypedDicts."""
    python = needs_peer(PROVIDERS_PYTHON, "the providers' SDKs (make peers-deps)")
    done = subprocess.run(
        [
            PYTHON,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--python-executable",
            str(python),
            str(EXAMPLE),
        ],
        env={**os.environ, "MYPYPATH": str(ROOT / "generated")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:]
