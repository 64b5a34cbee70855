"""nginx in front of server replicas on loopback, configured by the `deploy/nginx.conf` that
`mcpgen server` ships (codegen/render/deploy.py renders it with loopback addresses), run as a
non-daemon child with a prefix directory of its own. bench/scale.py and tests/cluster/ use it,
so the configuration measured and tested is the one users get.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from codegen.render.deploy import nginx_conf
from mcpgen_runtime._version import __version__

from . import procstat

__all__ = ["Nginx", "find_binary", "wait_for_port"]

_SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/bin", "/sbin"])
# The files a non-root, non-daemon nginx writes, under its prefix instead of the packaged paths.
_PREFIX_DIRECTIVES = [
    f"{kind}_temp_path temp/{kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
]


def find_binary(name: str) -> str | None:
    """`name` on PATH or in the sbin directories Debian installs servers into."""
    return shutil.which(name, path=_SEARCH_PATH)


def wait_for_port(port: int, proc: subprocess.Popen[bytes] | None = None, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listened on 127.0.0.1:{port} within {timeout}s")


class Nginx:
    """One nginx (master and workers) proxying `127.0.0.1:port` to `upstreams`."""

    def __init__(
        self, binary: str, upstreams: Sequence[str], *, package: str, port: int, workers: int | None = None
    ) -> None:
        self.binary = binary
        self.port = port
        self.dir = Path(tempfile.mkdtemp(prefix="mcpgen-nginx-"))
        for sub in ("logs", "temp"):
            (self.dir / sub).mkdir()
        conf = nginx_conf(
            package,
            __version__,
            upstreams=upstreams,
            listen=f"127.0.0.1:{port}",
            http_extra=[*_PREFIX_DIRECTIVES, "access_log off;"],
        )
        if workers is not None:
            conf = conf.replace("worker_processes auto;", f"worker_processes {workers};", 1)
        (self.dir / "nginx.conf").write_text(conf, encoding="utf-8")
        self.error_log = self.dir / "logs" / "error.log"
        self._args = [
            binary,
            "-p",
            f"{self.dir}/",
            "-c",
            str(self.dir / "nginx.conf"),
            "-e",
            str(self.error_log),
            "-g",
            f"daemon off; pid {self.dir / 'nginx.pid'};",
        ]
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        check = subprocess.run([*self._args, "-t"], capture_output=True, text=True, check=False)
        if check.returncode != 0:
            raise RuntimeError(f"nginx -t refused the shipped configuration:\n{check.stderr}")
        self.proc = subprocess.Popen(self._args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, self.proc)

    def pids(self) -> list[int]:
        """The master and its workers."""
        if self.proc is None:
            return []
        try:
            children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        except OSError:
            children = []
        return [self.proc.pid, *(int(pid) for pid in children)]

    def cpu_ticks(self) -> int:
        total = 0
        for pid in self.pids():
            with contextlib.suppress(OSError):  # a worker that just exited
                total += procstat.cpu_ticks(pid)
        return total

    def errors(self) -> str:
        return self.error_log.read_text(errors="replace") if self.error_log.exists() else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)  # graceful: workers finish their requests
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
