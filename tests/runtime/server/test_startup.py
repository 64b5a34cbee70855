"""Configuration that cannot work stops a generated server at start, with a message saying what to fix.

The generated weather server is started as a user starts it (`python -m weather_server`, over HTTP
and over stdio) in a subprocess: with an unusable `MCPGEN_STATE_SECRET` it must exit with code 2
before listening, naming the variable and the fix and never echoing the secret; with a good one
it serves (a multi-round-trip call then works, as tests/runtime/server/core/test_input_requests.py shows
in process).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from mcpgen_runtime.server import ServerConfig
from mcpgen_runtime.server.core.request_state import StateSecretError, configured_keys
from tests.runtime.weather_server_app import WeatherServer
from tests.support import ROOT, free_port, running_server

_ENV = {"PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), str(ROOT), str(ROOT / "generated")])}


def _start(
    secret: str | None, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **_ENV, **(env or {})}
    env.pop("MCPGEN_STATE_SECRET", None)
    if secret is not None:
        env["MCPGEN_STATE_SECRET"] = secret
    return subprocess.run(
        [sys.executable, "-m", "weather_server", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.parametrize(
    ("secret", "says"),
    [
        ("hunter2-short", "the secret is 13 bytes long, shorter than the 16 bytes"),
        ("0123456789abcdef0123,hunter2-short", "secret 2 of 2 is 13 bytes long"),
        (" , ,", "is set but holds no secret"),
    ],
)
@pytest.mark.parametrize("transport", ["--http", "--stdio"])
def test_unusable_state_secret_stops_the_server_at_start(secret: str, says: str, transport: str) -> None:
    args = [transport, "--port", str(free_port())] if transport == "--http" else [transport]
    done = _start(secret, *args)
    assert done.returncode == 2, done.stderr
    assert "weather_server: cannot start: MCPGEN_STATE_SECRET" in done.stderr
    assert says in done.stderr and "secrets.token_urlsafe(32)" in done.stderr
    assert "hunter2" not in done.stderr and "Traceback" not in done.stderr


def test_bad_option_stops_the_server_at_start() -> None:
    done = _start(None, "--page-size", "-1")
    assert done.returncode == 2 and "weather_server: cannot start: --page-size must be >= 0" in done.stderr


@pytest.mark.parametrize(
    ("option", "says"),
    [
        (
            ("--header-timeout", "0"),
            "header_timeout_s, body_idle_timeout_s and body_timeout_s must be positive",
        ),
        (
            ("--body-timeout", "-5"),
            "header_timeout_s, body_idle_timeout_s and body_timeout_s must be positive",
        ),
        (("--max-slow-connections", "0"), "max_slow_connections must be at least 1"),
        (("--max-uri-length", "0"), "max_uri_length must be an integer >= 1"),
    ],
)
def test_unusable_http_limit_stops_the_server_at_start(option: tuple[str, str], says: str) -> None:
    done = _start(None, "--port", str(free_port()), *option)
    assert done.returncode == 2 and f"weather_server: cannot start: {says}" in done.stderr, done.stderr


@pytest.mark.parametrize("value", ["0/5", "fast/5", "1/0", "1/2.5"])
def test_unusable_rate_limit_stops_the_server_at_start(value: str) -> None:
    done = _start(None, "--port", str(free_port()), "--rate-limit", value)
    assert done.returncode == 2 and "'--rate-limit': takes RATE/BURST, e.g. 5/20" in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (("--task-lease", "0"), {}, "cannot start: --task-lease ($MCPGEN_TASK_LEASE) must be a positive"),
        (("--task-lease", "nan"), {}, "cannot start: --task-lease ($MCPGEN_TASK_LEASE) must be a positive"),
        (
            (),
            {"MCPGEN_TASK_LEASE": "-1"},
            "cannot start: --task-lease ($MCPGEN_TASK_LEASE) must be a positive",
        ),
        ((), {"MCPGEN_TASK_LEASE": "soon"}, "'soon' is not a valid float"),
    ],
)
def test_unusable_task_lease_stops_the_server_at_start(
    args: tuple[str, ...], env: dict[str, str], says: str
) -> None:
    done = _start(None, "--port", str(free_port()), *args, env=env)
    assert done.returncode == 2 and says in done.stderr, done.stderr


def test_good_secret_serves() -> None:
    port = free_port()
    env = {"MCPGEN_STATE_SECRET": "0123456789abcdef0123456789abcdef"}
    with running_server([sys.executable, "-m", "weather_server", "--port", str(port)], port, env=env) as proc:
        assert proc.poll() is None


def test_configured_keys_checks_config_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCPGEN_STATE_SECRET", raising=False)
    assert configured_keys(None) is None
    assert configured_keys([b"k" * 16]) == [b"k" * 16]
    with pytest.raises(StateSecretError, match=r"ServerConfig\.state_secrets: the secret is 3 bytes long"):
        configured_keys(["abc"])
    monkeypatch.setenv("MCPGEN_STATE_SECRET", "short")
    config = ServerConfig()  # the config itself is fine (the secret comes from the environment) ...
    with pytest.raises(StateSecretError, match="MCPGEN_STATE_SECRET: the secret is 5 bytes long"):
        WeatherServer(config)  # ... a server built with it is not


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_names_the_package_and_every_option_group(flag: str) -> None:
    done = _start(None, flag)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: python -m weather_server [OPTIONS]")
    for option in (
        "--stdio",
        "--page-size",
        "--rate-limit",
        "--oauth-issuer",
        "--tool-scope",
        "--parser",
        "--max-uri-length",
        "--task-lease",
    ):
        assert option in done.stdout
    assert "OAuth (HTTP):" in done.stdout and "Slow clients (HTTP):" in done.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--http", "--stdio"), "--http and --stdio: choose one"),
        (("--port", "eighty"), "'eighty' is not a valid integer"),
        (("--parser", "fast"), "'fast' is not one of 'auto', 'h11', 'httptools'"),
        (("--no-such-flag",), "No such option '--no-such-flag'"),
    ],
)
def test_usage_errors_exit_2_naming_the_option(args: tuple[str, ...], says: str) -> None:
    done = _start(None, *args)
    assert done.returncode == 2 and says in done.stderr, done.stderr
    assert "Usage: python -m weather_server" in done.stderr and "Traceback" not in done.stderr


def test_oauth_flags_that_do_not_go_together_exit_1() -> None:
    done = _start(None, "--oauth-issuer", "https://issuer.example")
    assert done.returncode == 1 and "--oauth-issuer and --resource go together" in done.stderr
