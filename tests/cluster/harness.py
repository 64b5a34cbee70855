"""A real cluster on loopback: redis-server, three replicas of a generated server
(`python -m conformance_server --http`), and nginx in front of them, configured by the
`deploy/nginx.conf` that `mcpgen server` ships (codegen/render/deploy.py renders both).

The replicas get `MCPGEN_STORE` (this Redis) and one shared `MCPGEN_STATE_SECRET`, as
deploy/compose.yaml gives them. redis-server is the tests' one starter (tests/redis_server.py).
Binaries come from the Debian packages `make services` installs; when one is missing the tests
skip, naming it.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.proxy import Nginx, find_binary
from tests.redis_server import RedisServer
from tests.support import PYTHON, ROOT, free_port, subprocess_env, wait_for_port

PACKAGE = "conformance_server"
STATE_SECRET = "cluster-tests-shared-state-secret-0123456789"


def binary(name: str) -> str:
    """The path of `name`, or skip the test naming what is missing."""
    found = find_binary(name)
    if found is None:
        pytest.skip(
            f"{name} is not installed (`make services` installs it from Debian packages when run as root)"
        )
    return found


def _stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 10.0) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Replica:
    """One server process on its own port; restartable."""

    def __init__(self, index: int, env: dict[str, str], log_dir: Path, module: str = PACKAGE) -> None:
        self.index = index
        self.module = module
        self.port = free_port()
        self._env = env
        self._log = log_dir / f"replica-{index}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.extra_args: tuple[str, ...] = ()  # e.g. ("--rate-limit", "1/4"): kept across restarts

    @property
    def url(self) -> str:
        return f"http://{self.address}/mcp"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        with self._log.open("ab") as log:
            self.proc = subprocess.Popen(
                [
                    PYTHON,
                    "-m",
                    self.module,
                    "--http",
                    "--port",
                    str(self.port),
                    "--shutdown-grace",
                    "10",
                    *self.extra_args,
                ],
                cwd=ROOT,
                env=self._env,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )

    def wait_ready(self) -> None:
        wait_for_port(self.port, None)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def terminate(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)

    def stop(self) -> None:
        if self.proc is not None:
            _stop(self.proc)


class Cluster:
    """redis-server + N replicas + nginx, in one temporary directory."""

    def __init__(
        self, replicas: int = 3, *, module: str = PACKAGE, env: dict[str, str] | None = None
    ) -> None:
        """`module` runs each replica (`python -m MODULE --http ...`), with `env` added to theirs."""
        self.nginx_bin = binary("nginx")
        self.redis = RedisServer()  # skips, naming redis-server, when it is missing
        self.dir = Path(tempfile.mkdtemp(prefix="mcpgen-cluster-"))
        self.port = free_port()
        env = {
            **subprocess_env(),
            "MCPGEN_STORE": self.redis.url,
            "MCPGEN_STATE_SECRET": STATE_SECRET,
            **(env or {}),
        }
        self.replicas = [Replica(i, env, self.dir, module) for i in range(replicas)]
        self._nginx: Nginx | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.redis.start(wait=False)
        for replica in self.replicas:
            replica.start()
        self.redis.wait_ready()
        for replica in self.replicas:
            replica.wait_ready()
        self._start_nginx()

    def _start_nginx(self) -> None:
        # The shipped configuration with loopback addresses (bench/proxy.py).
        self._nginx = Nginx(
            self.nginx_bin, [r.address for r in self.replicas], package=PACKAGE, port=self.port
        )
        self._nginx.start()

    def start_redis(self) -> None:
        """Start redis-server again after `stop_redis`, on the same port, empty."""
        self.redis.start()

    def stop_redis(self) -> None:
        self.redis.stop()

    def restart_replicas(self, *extra_args: str) -> None:
        """Stop (SIGTERM) and start every replica with `extra_args` (e.g. a rate limit), then wait for all."""
        for replica in self.replicas:
            replica.stop()
            replica.extra_args = extra_args
            replica.start()
        for replica in self.replicas:
            replica.wait_ready()

    def heal(self) -> None:
        """Restart redis-server and any replica a test stopped, and wait until each listens."""
        if not self.redis.running:
            self.redis.start()
        for replica in self.replicas:
            if not replica.alive:
                replica.start()
                replica.wait_ready()

    def nginx_errors(self) -> str:
        return self._nginx.errors() if self._nginx is not None else ""

    def stop(self) -> None:
        for replica in self.replicas:
            replica.stop()
        if self._nginx is not None:
            self._nginx.stop()
        self.redis.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@contextlib.contextmanager
def running_cluster(
    replicas: int = 3, *, module: str = PACKAGE, env: dict[str, str] | None = None
) -> Iterator[Cluster]:
    cluster = Cluster(replicas, module=module, env=env)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
