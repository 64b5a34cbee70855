"""Fault injection (mock/faults.py) as a generated client meets it: retries, timeouts, cut
exchanges and slow bodies, the same for the same seed; in process, and through `mcpgen mock`."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from mcpgen_runtime.errors import RequestTimeoutError, ServiceUnavailableError, TransportError
from mcpgen_runtime.mock import running_mock
from mcpgen_runtime.mock.command import make_faults
from mcpgen_runtime.mock.faults import FaultInjector, Faults, parse_latency
from tests.support import ROOT, free_port, running_server, subprocess_env

if str(ROOT / "generated") not in sys.path:  # the checked-in weather_client
    sys.path.append(str(ROOT / "generated"))
from weather_client import Client

WEATHER = str(ROOT / "specs" / "weather.json")


def test_retries_carry_a_call_through_injected_errors_and_stop_at_their_count() -> None:
    # Seed 5 fails the call's first attempt and lets the retry through (seed 1 happens to fail
    # none); the counts make the retries observable. on_drift="ignore": the call is the only
    # request (the drift check's tools/list would draw from the seeded faults first).
    with running_mock(package="weather_client", seed=5, faults={"error_rate": 0.5}) as mock:
        with Client(mock.url, on_drift="ignore", retries=2) as client:
            assert client.get_weather_data("Berlin").conditions
        assert mock.injector is not None and mock.injector.injected["error"] == 1
        assert len(mock.calls) == 1  # the failed attempt never reached the tool
    failing = running_mock(package="weather_client", seed=5, faults={"error_rate": 0.5})
    with (
        failing as mock,
        Client(mock.url, on_drift="ignore", retries=0) as client,
        pytest.raises(ServiceUnavailableError),
    ):
        client.get_weather_data("Berlin")
    with running_mock(package="weather_client", seed=1, faults={"error_rate": 0.5}) as mock:
        with Client(mock.url, on_drift="ignore", retries=2) as client:
            assert client.get_weather_data("Berlin").conditions
        assert mock.injector is not None and mock.injector.injected["error"] == 0  # seed 1 draws none
    with running_mock(package="weather_client", seed=1, faults={"error_rate": 1.0}) as mock:
        with (
            Client(mock.url, on_drift="ignore", retries=2) as client,
            pytest.raises(ServiceUnavailableError) as info,
        ):
            client.get_weather_data("Berlin")
        assert info.value.retryable and info.value.http_status == 503 and info.value.code == -32603
        assert "Injected fault (--error-rate 1)" in str(info.value)
        assert mock.injector is not None and mock.injector.injected["error"] == 3  # 1 + 2 retries
        assert mock.calls == []


def test_latency_beyond_the_clients_timeout_is_a_timeout_and_below_it_a_delay() -> None:
    with running_mock(package="weather_client", faults={"latency": "400ms"}) as mock:
        with Client(mock.url, timeout=0.15) as client, pytest.raises(RequestTimeoutError):
            client.get_weather_data("Berlin")
        with Client(mock.url, timeout=5) as client:
            start = time.monotonic()
            client.get_weather_data("Berlin")
            assert time.monotonic() - start >= 0.4


def test_dropped_connections_are_retried_and_reported_when_they_persist() -> None:
    # A cut call may have run: resent only when allowed (the weather tools carry no annotations).
    with running_mock(package="weather_client", seed=3, faults={"drop_connection": 0.5}) as mock:
        with Client(mock.url, on_drift="ignore", retries=2) as client:
            assert client.with_options(retry_unsafe=True).get_weather_data("Berlin").conditions
        assert mock.injector is not None and mock.injector.injected["drop"] == 1
    with running_mock(package="weather_client", faults={"drop_connection": 1}) as mock:
        with Client(mock.url, on_drift="ignore", retries=1) as client, pytest.raises(TransportError) as info:
            client.with_options(retry_unsafe=True).get_weather_data("Berlin")
        assert info.value.retryable and "closed the connection" in str(info.value)
        assert mock.injector is not None and mock.injector.injected["drop"] == 2


def test_a_slow_stream_delivers_the_same_answer_piece_by_piece() -> None:
    with running_mock(package="weather_client", seed=2) as mock, Client(mock.url) as client:
        quick = client.get_weather_data("Berlin")
    slow_mock = running_mock(package="weather_client", seed=2, faults={"slow_stream": "10ms"})
    with slow_mock as mock, Client(mock.url) as client:
        start = time.monotonic()
        slow = client.get_weather_data("Berlin")
        elapsed = time.monotonic() - start
    assert slow == quick
    assert elapsed >= 0.1  # a response of more than 160 bytes, 16 bytes every 10 ms


def test_the_same_seed_gives_the_same_faults() -> None:
    def draws(seed: int) -> list[tuple[bool, bool, float]]:
        injector = FaultInjector(make_faults(seed, "10-90ms", 0.5, 0.3))
        out = []
        for n in range(12):
            params = {"name": "get_weather", "arguments": {"location": f"city-{n % 4}"}}
            message = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
            decision = injector.decide(message)
            out.append((decision.error, decision.drop, round(decision.delay_s, 6)))
        return out

    assert draws(1) == draws(1) and draws(1) != draws(2)
    assert any(error for error, _, _ in draws(1)) and not all(error for error, _, _ in draws(1))
    assert all(0.01 <= delay <= 0.09 for _, _, delay in draws(1))
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert not FaultInjector(Faults(error_rate=1.0)).decide(notification).error  # requests only
    assert parse_latency("50-200ms") == (50, 200) and parse_latency("1.5s") == (1500, 1500)
    for bad in ({"error_rate": 2}, {"latency": "fast"}, {"slow_stream": "-1ms"}):
        with pytest.raises(ValueError, match="--"):
            make_faults(0, **{k: str(v) for k, v in bad.items()})


def mcpgen_mock(*args: str) -> list[str]:
    return [sys.executable, "-m", "codegen.cli", "mock", *args]


@pytest.fixture
def failing_mock() -> Iterator[str]:
    port = free_port()
    args = mcpgen_mock(WEATHER, "--port", str(port), "--error-rate", "1", "--latency", "20ms", "--seed", "1")
    with running_server(args, port):
        yield f"http://127.0.0.1:{port}/mcp"


def test_mcpgen_mock_injects_faults_over_http(failing_mock: str) -> None:
    with Client(failing_mock, retries=1) as client, pytest.raises(ServiceUnavailableError) as info:
        client.get_weather_data("Berlin")
    assert "Injected fault" in str(info.value)


def test_mcpgen_mock_injects_faults_over_stdio() -> None:
    failing = mcpgen_mock(WEATHER, "--stdio", "--error-rate", "1")
    with (
        Client.stdio(failing, env=subprocess_env(), retries=1) as client,
        pytest.raises(ServiceUnavailableError) as info,
    ):
        client.get_weather_data("Berlin")
    assert info.value.retryable and "Injected fault" in str(info.value)
    slow = mcpgen_mock(WEATHER, "--stdio", "--latency", "500ms")
    with Client.stdio(slow, env=subprocess_env(), timeout=10) as client:
        client.get_weather_data("Oslo")  # started (and answered once) before the timeout is tight
        with pytest.raises(RequestTimeoutError):
            client.with_options(timeout=0.2).get_weather_data("Berlin")


def test_mcpgen_mock_refuses_a_bad_fault_option() -> None:
    done = subprocess.run(
        mcpgen_mock(WEATHER, "--error-rate", "1.5"),
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "--error-rate '1.5': expected a fraction between 0 and 1" in done.stderr


def test_over_stdio_a_drop_ends_the_process_and_a_slow_stream_trickles() -> None:
    dropping = mcpgen_mock(WEATHER, "--stdio", "--drop-connection", "1")
    with Client.stdio(dropping, env=subprocess_env()) as client, pytest.raises(TransportError) as info:
        client.get_weather_data("Berlin")
    assert "exit" in str(info.value).lower()
    quick_mock = mcpgen_mock(WEATHER, "--stdio", "--seed", "4")
    with Client.stdio(quick_mock, env=subprocess_env()) as client:
        quick = client.get_weather_data("Berlin")
    slow_mock = mcpgen_mock(WEATHER, "--stdio", "--seed", "4", "--slow-stream", "10ms")
    with Client.stdio(slow_mock, env=subprocess_env()) as client:
        client.get_current_time()  # the process has started
        start = time.monotonic()
        slow = client.get_weather_data("Berlin")
        elapsed = time.monotonic() - start
    assert slow == quick and elapsed >= 0.1
