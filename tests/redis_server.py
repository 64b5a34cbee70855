"""The one real redis-server starter of the tests (tests/runtime/server/store and tests/cluster): own port on
loopback, own temp dir, no persistence; stoppable and restartable on the same port, empty
(store-failure tests)."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import free_port, wait_for_port

# Debian's package puts it in /usr/bin; PATH first for other installs.
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def needs_redis_server() -> str:
    if not Path(REDIS_SERVER).exists():
        pytest.skip(
            "redis-server is not installed (Debian package redis-server): the Redis store tests need it"
        )
    try:
        import redis  # noqa: F401
    except ImportError:
        pytest.skip("the redis package is not installed (pip install 'mcpgen-runtime[redis]')")
    return REDIS_SERVER


class RedisServer:
    def __init__(self) -> None:
        self.binary = needs_redis_server()
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="mcpgen-redis-")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, *, wait: bool = True) -> None:
        """Start (or, after `stop`, restart on the same port, empty); `wait=False` lets a caller
        start other processes meanwhile and `wait_ready` later."""
        self.proc = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.dir,
                "--protected-mode",
                "yes",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        wait_for_port(self.port, self.proc)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@contextlib.contextmanager
def running_redis() -> Iterator[RedisServer]:
    """A started redis-server until the block ends (the fixtures' one body)."""
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.close()
