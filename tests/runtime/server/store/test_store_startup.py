"""`--store` / `MCPGEN_STORE` on a generated server's command line: a shared store without a
shared requestState secret, or one that does not answer, stops the server at start (exit 2,
one line saying what to fix)."""

from __future__ import annotations

import subprocess

import pytest

from mcpgen_runtime.server.core.request_state import StateSecretError
from mcpgen_runtime.server.store import MemoryStore
from tests.redis_server import RedisServer
from tests.support import PYTHON, ROOT, free_port, subprocess_env

from .replicas import SECRET  # also puts generated/ on sys.path


def _start(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in subprocess_env().items() if k not in ("MCPGEN_STORE", "MCPGEN_STATE_SECRET")}
    return subprocess.run(
        [PYTHON, "-m", "conformance_server", "--port", str(free_port()), *args],
        cwd=ROOT,
        env={**full, **env},
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_a_shared_store_without_a_shared_secret_refuses_to_start(redis_server: RedisServer) -> None:
    for args, env in (((f"--store={redis_server.url}",), {}), ((), {"MCPGEN_STORE": redis_server.url})):
        done = _start(*args, env=env)
        assert done.returncode == 2, done.stderr
        assert "cannot start" in done.stderr and "MCPGEN_STATE_SECRET" in done.stderr
        assert f"127.0.0.1:{redis_server.port}" in done.stderr


def test_an_unreachable_store_refuses_to_start() -> None:
    url = f"redis://:hunter2hunter2@127.0.0.1:{free_port()}/0"
    done = _start(f"--store={url}", env={"MCPGEN_STATE_SECRET": SECRET})
    assert done.returncode == 2, done.stderr
    assert "unavailable" in done.stderr and "--store" in done.stderr
    assert "hunter2" not in done.stderr  # never the password


def test_an_unknown_store_is_a_config_error() -> None:
    done = _start("--store=postgres://db/x", env={})
    assert done.returncode == 2 and "unknown store 'postgres'" in done.stderr


def test_memory_is_the_default_and_needs_no_secret(
    monkeypatch: pytest.MonkeyPatch, redis_server: RedisServer
) -> None:
    from conformance_server.handlers import Server

    monkeypatch.delenv("MCPGEN_STORE", raising=False)
    monkeypatch.delenv("MCPGEN_STATE_SECRET", raising=False)
    assert isinstance(Server().shared_store, MemoryStore)
    monkeypatch.setenv("MCPGEN_STORE", redis_server.url)
    with pytest.raises(StateSecretError, match="MCPGEN_STATE_SECRET"):
        Server()
    monkeypatch.setenv("MCPGEN_STATE_SECRET", SECRET)
    assert Server().shared_store.shared
