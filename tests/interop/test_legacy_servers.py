"""The client against real servers of the initialize-based era (2025-11-25 and earlier), over
HTTP and stdio, with the blocking and the asyncio driver:

- the official SDK 1.30.0 (legacy only: tests/peers/sdk1_server.py run by `SDK1_PYTHON`),
- the official SDK 2.3.0 (dual-era) with the client forced to `era="legacy"`, and left on
  `auto` (where it must stay modern),
- the npm reference server `@modelcontextprotocol/server-everything` over stdio: `mcpgen client
  --stdio` generates a package from it, and the generated client calls a plain tool and the
  tool that asks the user, answered by `on_elicit`.

The same callbacks (`on_elicit`, `on_sample`, `on_roots`, `on_progress`, `on_notification`)
that answer the modern multi-round-trip flow answer the legacy server's own requests.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpgen_runtime.client import (
    AsyncClient,
    Client,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    ListRootsResult,
    Root,
)
from tests.support import (
    NODE,
    PYTHON,
    ROOT,
    SDK1_PYTHON,
    SERVER_EVERYTHING,
    free_port,
    needs_peer,
    running_server,
)

PEER = str(ROOT / "tests" / "peers" / "sdk1_server.py")
pytestmark = pytest.mark.timeout(120)


class Recorder:
    """Callbacks that answer everything and remember what they saw."""

    def __init__(self) -> None:
        self.elicited: list[ElicitRequest] = []
        self.sampled: list[CreateMessageRequest] = []
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.notes: list[str] = []

    def elicit(self, request: ElicitRequest) -> ElicitResult:
        self.elicited.append(request)
        return ElicitResult.accept({"confirm": True, "reason": "tests"})

    def sample(self, request: CreateMessageRequest) -> CreateMessageResult:
        self.sampled.append(request)
        return CreateMessageResult.text("forty-two", model="test-model")

    def roots(self, request: Any) -> ListRootsResult:
        return ListRootsResult([Root("file:///srv/project", "project")])

    def options(self) -> dict[str, Any]:
        return {
            "on_elicit": self.elicit,
            "on_sample": self.sample,
            "on_roots": self.roots,
            "on_progress": lambda p, t, m: self.progress.append((p, t, m)),
            "on_notification": lambda note: self.notes.append(note["method"]),
        }


@pytest.fixture(scope="module")
def sdk1_url() -> Iterator[str]:
    needs_peer(SDK1_PYTHON, "the official SDK 1.30.0 venv")
    port = free_port()
    with running_server([str(SDK1_PYTHON), PEER, "--http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def sdk2_url() -> Iterator[str]:
    port = free_port()
    with running_server([PYTHON, PEER, "--http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


def exercise(client: Client, recorder: Recorder) -> None:
    """What every legacy server here must serve through the ordinary client surface."""
    info = client.discover()
    assert client.era == "legacy" and client.protocol_version == "2025-11-25"
    assert info["supportedVersions"] == ["2025-11-25"] and "tools" in info["capabilities"]
    names = [tool["name"] for tool in client.list_all_tools()]
    assert {"get_weather", "add", "confirm_delete", "count_progress", "ask_model"} <= set(names)
    assert client.call_tool("add", {"a": 2, "b": 3}).text == "5"
    weather = client.call_tool("get_weather", {"city": "Oslo"})
    assert weather.structured_content == {"city": "Oslo", "temperature_c": 21.5, "conditions": "sunny"}
    assert client.call_tool("confirm_delete", {"path": "/tmp/x"}).text == "deleted /tmp/x"
    assert recorder.elicited and recorder.elicited[-1].message == "Delete /tmp/x?"
    assert (
        client.call_tool("ask_model", {"question": "meaning?"}).text
        == "forty-two | roots: file:///srv/project"
    )
    assert recorder.sampled[-1].messages[0].text == "meaning?"
    assert client.call_tool("count_progress", {"steps": 3}).text == "counted 3"
    assert [step[0] for step in recorder.progress[-3:]] == [1, 2, 3]
    assert "notifications/message" in recorder.notes


async def exercise_async(client: AsyncClient, recorder: Recorder) -> None:
    await client.discover()
    assert client.era == "legacy"
    assert (await client.call_tool("add", {"a": 1, "b": 1})).text == "2"
    assert (await client.call_tool("confirm_delete", {"path": "/a"})).text == "deleted /a"
    assert (
        await client.call_tool("ask_model", {"question": "q"})
    ).text == "forty-two | roots: file:///srv/project"
    assert (await client.call_tool("count_progress", {"steps": 2})).text == "counted 2"
    assert recorder.elicited and recorder.progress


def test_sdk1_over_http_is_detected_and_served_in_its_session(sdk1_url: str) -> None:
    recorder = Recorder()
    with Client(sdk1_url, **recorder.options()) as client:
        exercise(client, recorder)
        session = client.transport.session_id  # type: ignore[attr-defined]
        assert session
    assert client.transport.session_id is None  # type: ignore[attr-defined]  # ended with DELETE


def test_sdk1_over_http_async(sdk1_url: str) -> None:
    recorder = Recorder()

    async def main() -> None:
        async with AsyncClient(sdk1_url, **recorder.options()) as client:
            await exercise_async(client, recorder)

    asyncio.run(main())


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_sdk1_over_stdio_falls_back_after_the_probe(driver: str) -> None:
    needs_peer(SDK1_PYTHON, "the official SDK 1.30.0 venv")
    recorder = Recorder()
    command = [str(SDK1_PYTHON), PEER, "--stdio"]
    if driver == "sync":
        started = time.monotonic()
        with Client.stdio(command, **recorder.options()) as client:
            exercise(client, recorder)
        assert time.monotonic() - started < 20  # the probe was answered (an error), not timed out
    else:

        async def main() -> None:
            async with AsyncClient.stdio(command, **recorder.options()) as client:
                await exercise_async(client, recorder)

        asyncio.run(main())


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_server_with_only_the_deprecated_http_sse_transport(driver: str) -> None:
    """POST to its URL is refused (405): the client GETs the stream, POSTs to the endpoint."""
    needs_peer(SDK1_PYTHON, "the official SDK 1.30.0 venv")
    port = free_port()
    recorder = Recorder()
    with running_server([str(SDK1_PYTHON), PEER, "--sse", "--port", str(port)], port):
        url = f"http://127.0.0.1:{port}/sse"
        if driver == "sync":
            with Client(url, **recorder.options()) as client:
                exercise(client, recorder)
        else:

            async def main() -> None:
                async with AsyncClient(url, **recorder.options()) as client:
                    await exercise_async(client, recorder)

            asyncio.run(main())


def test_an_http_sse_endpoint_must_stay_on_the_origin() -> None:
    from mcpgen_runtime.errors import ProtocolError
    from mcpgen_runtime.transport._async.http_sse import same_origin_endpoint

    base = "http://127.0.0.1:8000/sse"
    assert (
        same_origin_endpoint(base, "/messages/?session_id=1")
        == "http://127.0.0.1:8000/messages/?session_id=1"
    )
    for elsewhere in (
        "http://evil.example/messages",
        "https://127.0.0.1:8000/m",
        "http://127.0.0.1:8001/m",
        "//evil.example/m",
    ):
        with pytest.raises(ProtocolError, match="another origin"):
            same_origin_endpoint(base, elsewhere)


def test_sdk2_forced_legacy_over_http_and_stdio(sdk2_url: str) -> None:
    recorder = Recorder()
    with Client(sdk2_url, era="legacy", **recorder.options()) as client:
        exercise(client, recorder)
    with Client.stdio([PYTHON, PEER, "--stdio"], era="legacy", **recorder.options()) as client:
        exercise(client, recorder)


def test_auto_stays_modern_with_a_dual_era_server(sdk2_url: str) -> None:
    with Client(sdk2_url) as client:
        assert client.call_tool("add", {"a": 2, "b": 2}).text == "4"
        assert client.era == "modern" and client.protocol_version == "2026-07-28"
        assert client.transport.session_id is None  # type: ignore[attr-defined]


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_listen_reads_the_sessions_get_stream(sdk1_url: str, driver: str) -> None:
    if driver == "sync":
        with Client(sdk1_url) as client:
            client.discover()
            with client.listen() as subscription:
                assert client.call_tool("change_tools").text == "changed"
                note = next(iter(subscription))
    else:

        async def main() -> dict[str, Any]:
            async with AsyncClient(sdk1_url) as client:
                await client.discover()
                async with client.listen() as subscription:
                    assert (await client.call_tool("change_tools")).text == "changed"
                    return await asyncio.wait_for(anext(aiter(subscription)), 10)

        note = asyncio.run(main())
    assert note["method"] == "notifications/tools/list_changed"


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_listen_reads_unsolicited_stdio_notifications(driver: str) -> None:
    needs_peer(SDK1_PYTHON, "the official SDK 1.30.0 venv")
    command = [str(SDK1_PYTHON), PEER, "--stdio"]
    if driver == "sync":
        with Client.stdio(command) as client, client.listen() as subscription:
            assert client.call_tool("change_tools").text == "changed"
            note = next(iter(subscription))
    else:

        async def main() -> dict[str, Any]:
            async with AsyncClient.stdio(command) as client, client.listen() as subscription:
                assert (await client.call_tool("change_tools")).text == "changed"
                return await asyncio.wait_for(anext(aiter(subscription)), 10)

        note = asyncio.run(main())
    assert note["method"] == "notifications/tools/list_changed"


def test_a_timed_out_call_is_cancelled_and_the_session_goes_on(sdk1_url: str) -> None:
    from mcpgen_runtime.errors import RequestTimeoutError

    with Client(sdk1_url, era="legacy") as client:
        with pytest.raises(RequestTimeoutError):
            client.call_tool("slow_echo", {"text": "late", "seconds": 5}, timeout=0.5)
        assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"


def test_offered_revision_is_followed(sdk1_url: str) -> None:
    with Client(sdk1_url, era="legacy", legacy_version="2025-03-26") as client:
        assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"
        assert client.protocol_version == "2025-03-26"


def test_a_request_for_an_undeclared_capability_is_refused_not_hung(sdk1_url: str) -> None:
    # No on_sample: the client declared no sampling, so the server's sampling/createMessage is
    # answered -32601 at once and the tool reports the failure.
    started = time.monotonic()
    with Client(sdk1_url, era="legacy", timeout=20) as client:
        result = client.call_tool("ask_model", {"question": "q"})
    assert result.is_error and time.monotonic() - started < 10


def test_cli_snapshot_and_generated_client_on_a_legacy_http_server(sdk1_url: str, tmp_path: Path) -> None:
    spec = tmp_path / "sdk1.json"
    mcpgen = [sys.executable, "-m", "codegen.cli"]
    done = subprocess.run(
        [*mcpgen, "snapshot", sdk1_url, "-o", str(spec)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "saved 7 tool(s)" in done.stdout
    done = subprocess.run(
        [*mcpgen, "client", sdk1_url, "-o", str(tmp_path), "--package", "legacy_weather"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    script = (
        "from legacy_weather import Client\n"
        "from mcpgen_runtime.client import ElicitResult\n"
        f"with Client({sdk1_url!r}, on_elicit=lambda r: ElicitResult.accept({{'confirm': True}})) as c:\n"
        "    print(c.add(a=2, b=5).result, c.confirm_delete(path='/z').result, c.era)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["7", "deleted", "/z", "legacy"]


def test_generated_client_from_the_npm_reference_server_over_stdio(tmp_path: Path) -> None:
    node = needs_peer(NODE, "Node 22 beside the conformance harness")
    server = needs_peer(SERVER_EVERYTHING, "@modelcontextprotocol/server-everything")
    command = f"{node} {server} stdio"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen.cli",
            "client",
            "--stdio",
            command,
            "-o",
            str(tmp_path),
            "--package",
            "everything_client",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    script = (
        "import sys\n"
        "from everything_client import Client\n"
        "from mcpgen_runtime.client import ElicitResult\n"
        "asked = []\n"
        "def on_elicit(request):\n"
        "    asked.append(request.message)\n"
        "    return ElicitResult.accept({'name': 'Ada', 'check': True, 'integer': 3})\n"
        f"with Client.stdio({[str(node), str(server), 'stdio']!r}, on_elicit=on_elicit) as c:\n"
        "    print(c.echo('hello').text)\n"
        "    print(c.era)\n"
        "    answer = c.trigger_elicitation_request().text\n"
        "    print('Ada' in answer, len(asked))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["Echo: hello", "legacy", "True 1"]
