"""`mcpgen mock --record` and `--replay` with real peers on both sides.

Recorded: the npm reference server `@modelcontextprotocol/server-everything` over stdio (legacy
era), the official SDK 1.30.0 server over Streamable HTTP (legacy sessions: `Mcp-Session-Id`,
elicitation, sampling, roots, progress) and mcpgen's generated weather server (modern, with an
`x-mcp-header` parameter). Replayed to a generated client and to the official SDK 2.3.0 client
(tests/peers/sdk_client.py), over stdio and HTTP, which must see what they saw through the
recording proxy. A request the cassette lacks fails naming it; a canary token never reaches the file.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpgen_runtime.client import Client, CreateMessageResult, ElicitResult, ListRootsResult, Root
from mcpgen_runtime.errors import RemoteError, ServiceUnavailableError
from mcpgen_runtime.mock import running_mock
from mcpgen_runtime.mock.cassette import load_cassette
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

pytestmark = pytest.mark.timeout(300)

SDK_CLIENT = str(ROOT / "tests" / "peers" / "sdk_client.py")
SDK1_SERVER = str(ROOT / "tests" / "peers" / "sdk1_server.py")
CANARY = "canary-5e1d0c7a9b3f42"
GITHUB_CANARY = "ghp_" + "Zq8" * 12  # shaped like a GitHub token


def mcpgen_mock(*args: str) -> list[str]:
    return [sys.executable, "-m", "codegen.cli", "mock", *args]


def sdk_client(*args: str) -> dict[str, Any]:
    """The official SDK client's report (json) of a session with the target after `--`/the URL."""
    done = subprocess.run(
        [sys.executable, SDK_CLIENT, *args],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@contextlib.contextmanager
def serving(args: list[str]) -> Iterator[str]:
    """`args` + `--port P` (an HTTP mock, proxy or replay) running; yields its URL."""
    port = free_port()
    with running_server([*args, "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


# ---- npm server-everything over stdio: a generated client and the SDK client -------------------

EVERYTHING_CALLS = ["--call", "echo", '{"message": "hello"}', "--call", "get-sum", '{"a": 2, "b": 40}']
EVERYTHING_CALLS += ["--call", "get-structured-content", '{"location": "New York"}']


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """The npm server's command; its generated client package `everything_client` importable."""
    node = needs_peer(NODE, "Node 22 beside the conformance harness")
    server = needs_peer(SERVER_EVERYTHING, "@modelcontextprotocol/server-everything")
    command = [str(node), str(server), "stdio"]
    out = tmp_path_factory.mktemp("everything")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen.cli",
            "client",
            "--stdio",
            shlex.join(command),
            "-o",
            str(out),
            "--package",
            "everything_client",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr

    def forget() -> None:  # ours, or generated/'s that an earlier test in this process imported
        for name in [m for m in sys.modules if m.partition(".")[0] == "everything_client"]:
            del sys.modules[name]

    forget()
    sys.path.insert(0, str(out))
    try:
        yield command
    finally:
        sys.path.remove(str(out))
        forget()


def generated_results(client: Any) -> list[Any]:
    return [
        client.echo("hello").text,
        client.get_sum(a=2, b=40).text,
        client.get_structured_content("New York").model_dump(),
        client.era,
    ]


def test_server_everything_recorded_over_stdio_replays_to_both_clients(
    everything: list[str], tmp_path: Path
) -> None:
    client_class = importlib.import_module("everything_client").Client
    cassette = tmp_path / "everything.yaml"
    live_sdk = sdk_client(*EVERYTHING_CALLS, "--", *everything)
    record = mcpgen_mock(
        "--record", "--upstream-stdio", shlex.join(everything), "-o", str(cassette), "--stdio"
    )
    assert sdk_client(*EVERYTHING_CALLS, "--", *record) == live_sdk  # the proxy changes nothing
    again = tmp_path / "again.yaml"
    record_again = mcpgen_mock(
        "--record", "--upstream-stdio", shlex.join(everything), "-o", str(again), "--stdio"
    )
    assert sdk_client(*EVERYTHING_CALLS, "--", *record_again) == live_sdk
    assert again.read_bytes() == cassette.read_bytes()  # the same traffic, the same file
    with client_class.stdio(everything) as client:
        live = generated_results(client)
    assert live[:2] == ["Echo: hello", "The sum of 2 and 40 is 42."] and live[3] == "legacy"

    # Replayed: over stdio and HTTP, to the SDK client and to the generated client.
    replay = mcpgen_mock("--replay", str(cassette))
    assert sdk_client(*EVERYTHING_CALLS, "--", *replay, "--stdio") == live_sdk
    with client_class.stdio([*replay, "--stdio"], env=subprocess_env()) as client:
        assert generated_results(client) == live
        with pytest.raises(RemoteError) as info:
            client.echo("not recorded")
    assert info.value.code == -32603
    assert 'no recorded answer for tools/call \'echo\' with arguments {"message":"not recorded"}' in str(
        info.value
    )
    with serving(replay) as url:
        assert sdk_client(*EVERYTHING_CALLS, url) == live_sdk
        with client_class(url) as client:
            assert generated_results(client) == live
    faulty = client_class.stdio([*replay, "--stdio", "--error-rate", "1"], env=subprocess_env())
    with faulty as client, pytest.raises(ServiceUnavailableError, match="Injected fault"):
        client.echo("hello")

    # An HTTP proxy in front of the stdio server: the same answers for HTTP clients. (Over HTTP the
    # generated client sends its first call as a modern request, which this server answers without
    # an `initialize`, so the client stays modern; over stdio it probes with server/discover first.)
    http_cassette = tmp_path / "over-http.yaml"
    record_http = mcpgen_mock(
        "--record", "--upstream-stdio", shlex.join(everything), "-o", str(http_cassette)
    )
    with serving(record_http) as url:
        with client_class(url) as client:
            over_http = generated_results(client)
        assert over_http[:3] == live[:3]
        assert sdk_client(*EVERYTHING_CALLS, url) == live_sdk
    with serving(mcpgen_mock("--replay", str(http_cassette))) as url:
        with client_class(url) as client:
            assert generated_results(client) == over_http
        assert sdk_client(*EVERYTHING_CALLS, url) == live_sdk

    # The cassette as a person reads it: the exchanges in order, JSON-RPC objects as sent.
    loaded = load_cassette(cassette)
    methods = [entry["request"]["method"] for entry in loaded.exchanges]
    assert methods[:2] == ["server/discover", "initialize"] and methods.count("tools/call") == 3
    assert {"notification": {"jsonrpc": "2.0", "method": "notifications/initialized"}} in loaded.interactions
    assert loaded.upstream == "stdio: node"


def test_passthrough_sends_what_the_cassette_lacks_to_the_real_server(
    everything: list[str], tmp_path: Path
) -> None:
    client_class = importlib.import_module("everything_client").Client
    cassette = tmp_path / "everything.yaml"
    record = mcpgen_mock(
        "--record", "--upstream-stdio", shlex.join(everything), "-o", str(cassette), "--stdio"
    )
    with client_class.stdio(record, env=subprocess_env()) as client:
        assert client.echo("recorded").text == "Echo: recorded"
    recorded = cassette.read_bytes()
    replay = mcpgen_mock(
        "--replay", str(cassette), "--passthrough", "--upstream-stdio", shlex.join(everything)
    )
    with client_class.stdio([*replay, "--stdio"], env=subprocess_env()) as client:
        assert client.echo("recorded").text == "Echo: recorded"
        assert client.echo("live only").text == "Echo: live only"  # the npm server answered it
        assert client.get_sum(a=1, b=2).text == "The sum of 1 and 2 is 3."
    with serving(replay) as url, client_class(url) as client:
        assert client.echo("over http").text == "Echo: over http"
    assert cassette.read_bytes() == recorded  # passthrough answers are not recorded


def test_record_and_replay_usage_errors(tmp_path: Path) -> None:
    cassette = tmp_path / "c.yaml"
    cassette.write_text("cassette: 1\ninteractions: []\n")
    spec = str(ROOT / "specs" / "weather.json")
    cases = [
        (["--record", "http://127.0.0.1:9/mcp"], "--record needs -o CASSETTE"),
        (["--record", spec, "-o", str(tmp_path / "x.yaml")], "is not a server URL"),
        (["--replay", str(cassette), spec], "a server goes with --passthrough"),
        (["--replay", str(cassette), "--passthrough"], "--passthrough: name the real server"),
        (["--record", "--replay", str(cassette), "http://127.0.0.1:9/mcp"], "choose one"),
        (["-o", str(tmp_path / "x.yaml"), spec], "-o CASSETTE goes with --record"),
        (["--latency", "soon", spec], "--latency 'soon': expected a duration"),
    ]
    for args, message in cases:
        done = subprocess.run(
            mcpgen_mock(*args), capture_output=True, text=True, env=subprocess_env(), timeout=60, check=False
        )
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)
    cassette.write_text("interactions: []\n")
    bad = subprocess.run(
        mcpgen_mock("--replay", str(cassette), "--stdio"),
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
        check=False,
    )
    assert bad.returncode == 1 and "c.yaml: not an mcpgen cassette" in bad.stderr


def test_the_fixture_serves_a_cassette(everything: list[str], tmp_path: Path, mcp_mock_factory: Any) -> None:
    cassette = tmp_path / "everything.yaml"
    record = mcpgen_mock(
        "--record", "--upstream-stdio", shlex.join(everything), "-o", str(cassette), "--stdio"
    )
    live = sdk_client(*EVERYTHING_CALLS, "--", *record)
    for options in ({}, {"transport": "stdio"}):
        mock = mcp_mock_factory(cassette=cassette, package="everything_client", **options)
        assert mock.client.echo("hello").text == "Echo: hello"
        assert mock.client.get_sum(a=2, b=40).text == live["calls"][1]["content"][0]["text"]
        with pytest.raises(RemoteError, match="tools/call 'get-sum' with arguments"):
            mock.client.get_sum(a=1, b=1)
    assert mock.tools and {tool["name"] for tool in mock.tools} >= {"echo", "get-sum"}
    in_process = mcp_mock_factory(cassette=cassette, package="everything_client")
    with pytest.raises(RemoteError):
        in_process.client.echo("missing")
    assert in_process.misses == ['tools/call \'echo\' with arguments {"message":"missing"}']


# ---- the official SDK 1.x server over HTTP: legacy sessions, server requests, progress --------


class Answers:
    def __init__(self) -> None:
        self.progress: list[float] = []
        self.asked: list[str] = []
        self.sampled: list[str] = []

    def sample(self, request: Any) -> CreateMessageResult:
        self.sampled.append(request.messages[0].text)
        return CreateMessageResult.text("forty-two", model="test-model")

    def options(self) -> dict[str, Any]:
        def elicit(request: Any) -> ElicitResult:
            self.asked.append(request.message)
            return ElicitResult.accept({"confirm": True, "reason": "tests"})

        return {
            "on_elicit": elicit,
            "on_sample": self.sample,
            "on_roots": lambda request: ListRootsResult([Root("file:///srv/project", "project")]),
            "on_progress": lambda done, total, message: self.progress.append(done),
        }


def legacy_session(url: str | None, command: list[str] | None = None, **options: Any) -> list[Any]:
    answers = Answers()
    opened = (
        Client(url, timeout=30, **answers.options(), **options)
        if url is not None
        else Client.stdio(command or [], timeout=30, env=subprocess_env(), **answers.options(), **options)
    )
    with opened as client:
        return [
            client.discover()["supportedVersions"],
            client.era,
            [tool["name"] for tool in client.list_all_tools()],
            client.call_tool("add", {"a": 2, "b": 3}).text,
            client.call_tool("get_weather", {"city": "Oslo"}).structured_content,
            client.call_tool("confirm_delete", {"path": "/tmp/x"}).text,
            client.call_tool("ask_model", {"question": "meaning?"}).text,
            client.call_tool("count_progress", {"steps": 3}).text,
            answers.progress,
            answers.asked,
            answers.sampled,  # asked on the session's GET stream by this server
        ]


SDK1_CALLS = ["--call", "add", '{"a": 2, "b": 3}', "--call", "get_weather", '{"city": "Oslo"}']
SDK1_CALLS += ["--call", "confirm_delete", '{"path": "/tmp/y"}', "--call", "count_progress", '{"steps": 2}']
SDK1_CALLS += ["--elicit-accept", '{"confirm": true, "reason": "sdk"}', "--progress"]


def test_an_sdk1_server_recorded_over_http_replays_its_sessions(tmp_path: Path) -> None:
    needs_peer(SDK1_PYTHON, "the official SDK 1.30.0 venv")
    cassette = tmp_path / "sdk1.yaml"
    port = free_port()
    with running_server([str(SDK1_PYTHON), SDK1_SERVER, "--http", "--port", str(port)], port):
        server_url = f"http://127.0.0.1:{port}/mcp"
        live = legacy_session(server_url)
        live_sdk = sdk_client(*SDK1_CALLS, server_url)
        record = mcpgen_mock(
            "--record", server_url, "-o", str(cassette), "--header", f"X-Upstream-Key: {CANARY}"
        )
        record += ["--scrub-header", "X-Tenant"]
        with serving(record) as proxy:
            headers = {"Authorization": f"Bearer {CANARY}", "X-Tenant": f"tenant-{CANARY}"}
            through = legacy_session(proxy, headers=headers)
            through_sdk = sdk_client(*SDK1_CALLS, proxy)
            with Client(proxy) as client:  # a token in the arguments, echoed back in the result
                echoed = client.call_tool("get_weather", {"city": GITHUB_CANARY}).structured_content
                assert echoed is not None and echoed["city"] == GITHUB_CANARY
        # A stdio client in front of the HTTP server: the proxy holds the session and its GET stream
        # (where this server sends its sampling and roots requests).
        stdio_cassette = tmp_path / "sdk1-stdio.yaml"
        stdio_proxy = mcpgen_mock("--record", server_url, "-o", str(stdio_cassette), "--stdio")
        assert legacy_session(None, stdio_proxy) == live
    assert through == live and through_sdk == live_sdk
    assert legacy_session(None, [*mcpgen_mock("--replay", str(stdio_cassette)), "--stdio"]) == live
    assert live[1] == "legacy" and live[5:8] == ["deleted /tmp/x", "forty-two | roots: file:///srv/project",
                                                 "counted 3"]  # fmt: skip
    assert [call["progress"] for call in live_sdk["calls"]][3] != []
    assert live[8:] == [[1, 2, 3], ["Delete /tmp/x?"], ["meaning?"]]  # progress, elicitation, sampling

    text = cassette.read_text()
    assert CANARY not in text and "authorization: '[scrubbed]'" in text and "x-tenant: '[scrubbed]'" in text
    assert GITHUB_CANARY not in text and "city: '[scrubbed]'" in text
    assert "mcp-session-id: '[session]'" in text and "session: true" in text
    loaded = load_cassette(cassette)
    elicit = [m for e in loaded.exchanges for m in e["messages"] if m.get("method") == "elicitation/create"]
    assert len(elicit) == 2  # the server's own requests, recorded inside the call they belong to

    # The SDK 1.x server is gone: the cassette alone answers both clients, over HTTP and stdio.
    replay = mcpgen_mock("--replay", str(cassette))
    with serving(replay) as url:
        assert legacy_session(url) == live
        assert sdk_client(*SDK1_CALLS, url) == live_sdk
    assert sdk_client(*SDK1_CALLS, "--", *replay, "--stdio") == live_sdk


# ---- a modern server (2026-07-28): mcpgen's generated weather server -------------------------


def weather_session(client: Any) -> list[Any]:
    return [
        client.get_weather_data("Berlin").model_dump(),
        [user.model_dump() for user in client.list_users()],
        client.execute_sql(region="eu-west1", query="SELECT 1").text,  # Mcp-Param-Region
        client.calculate_sum(a=2, b=40.5).text,
    ]


def test_a_modern_server_recorded_over_http_and_stdio_replays(tmp_path: Path) -> None:
    sys.path.append(str(ROOT / "generated"))
    try:
        from weather_client import Client as WeatherClient
    finally:
        sys.path.remove(str(ROOT / "generated"))
    port = free_port()
    server = [sys.executable, "-m", "weather_server", "--http", "--port", str(port)]
    http_cassette, stdio_cassette = tmp_path / "http.yaml", tmp_path / "stdio.yaml"
    with running_server(server, port, cwd=ROOT / "generated"):
        server_url = f"http://127.0.0.1:{port}/mcp"
        with WeatherClient(server_url) as client:
            live = weather_session(client)
            assert client.era == "modern"
        recording = serving(mcpgen_mock("--record", server_url, "-o", str(http_cassette)))
        with recording as proxy, WeatherClient(proxy) as client:
            assert weather_session(client) == live
        failing = serving(
            mcpgen_mock("--record", server_url, "-o", str(tmp_path / "x.yaml"), "--error-rate", "1")
        )
        with failing as proxy, WeatherClient(proxy) as client, pytest.raises(ServiceUnavailableError):
            client.get_weather_data("Berlin")
        stdio_proxy = mcpgen_mock("--record", server_url, "-o", str(stdio_cassette), "--stdio")
        with WeatherClient.stdio(stdio_proxy, env=subprocess_env()) as client:
            assert weather_session(client) == live
    for cassette in (http_cassette, stdio_cassette):
        loaded = load_cassette(cassette)
        first = loaded.exchanges[0]["request"]
        # tools/list: a generated client's drift check lists the tools before its first call
        assert first["method"] in ("server/discover", "tools/list", "tools/call")
        assert "initialize" not in [e["request"]["method"] for e in loaded.exchanges]  # stateless
        with running_mock(cassette=cassette, package="weather_client") as mock:
            with WeatherClient(mock.url) as client:
                assert weather_session(client) == live
            assert mock.misses == []
        with running_mock(cassette=cassette, faults={"error_rate": 0.5}, seed=5) as mock:
            with WeatherClient(mock.url, retries=3) as client:
                assert weather_session(client) == live  # replay and faults together
            assert mock.injector is not None and mock.injector.injected["error"] >= 1


def test_the_schema_driven_mock_reads_its_tools_from_a_stdio_server(everything: list[str]) -> None:
    mock = mcpgen_mock("--upstream-stdio", shlex.join(everything), "--stdio", "--seed", "3")
    with Client.stdio(mock, env=subprocess_env()) as client:
        assert {"echo", "get-sum"} <= {tool["name"] for tool in client.list_all_tools()}
        made_up = client.call_tool("get-sum", {"a": 1, "b": 2}).text
    assert made_up.startswith("mcpgen mock: get-sum called with")  # the mock's answer, not the server's


def test_a_modern_multi_round_trip_call_replays(tmp_path: Path) -> None:
    """MRTR (2026-07-28): the input_required result, the client's retry with its answer and the
    server's requestState, and the final result, recorded from mcpgen's own server (the mock with an
    elicitation rule) and replayed: the retry matches because it carries the recorded requestState."""
    schema = {"type": "object", "properties": {"unit": {"type": "string", "enum": ["C", "F"]}}}
    rules = [{"match": {"location": "ask"}, "elicit": {"message": "Unit?", "schema": schema}, "text": "in C"}]

    def session(url: str) -> list[Any]:
        asked: list[str] = []

        def elicit(request: Any) -> ElicitResult:
            asked.append(request.message)
            return ElicitResult.accept({"unit": "C"})

        with Client(url, on_elicit=elicit) as client:
            return [client.call_tool("get_weather", {"location": "ask"}).text, asked, client.era]

    cassette = tmp_path / "mrtr.yaml"
    spec = ROOT / "specs" / "weather.json"
    with running_mock(spec=spec, responses={"tools": {"get_weather": rules}}) as upstream:
        live = session(upstream.url)  # type: ignore[arg-type]
        with serving(mcpgen_mock("--record", str(upstream.url), "-o", str(cassette))) as proxy:
            assert session(proxy) == live == ["in C", ["Unit?"], "modern"]
    results = [
        e["response"]["result"] for e in load_cassette(cassette).exchanges if "result" in e["response"]
    ]
    assert [r.get("resultType") for r in results[-2:]] == ["input_required", "complete"]
    with running_mock(cassette=cassette) as replay:
        assert session(replay.url) == live  # type: ignore[arg-type]
        assert replay.misses == []


def test_a_config_files_server_is_recorded_without_the_secrets_it_is_given(
    everything: list[str], tmp_path: Path
) -> None:
    """`--record --config FILE --server NAME`: the server starts with the file's command and env;
    the env's secret reaches it (its get-env tool shows it) and never the cassette."""
    config = tmp_path / ".mcp.json"
    entry = {"command": everything[0], "args": everything[1:], "env": {"EVERYTHING_CANARY": CANARY}}
    config.write_text(json.dumps({"mcpServers": {"everything": entry}}))
    cassette = tmp_path / "configured.yaml"
    record = mcpgen_mock(
        "--record", "--config", str(config), "--server", "everything", "-o", str(cassette), "--stdio"
    )
    seen = sdk_client("--call", "get-env", "{}", "--", *record)
    assert CANARY in json.dumps(seen["calls"][0]["content"])  # the server was given the secret
    text = cassette.read_text()
    assert CANARY not in text and "EVERYTHING_CANARY" in text and "upstream: " + str(config) in text
