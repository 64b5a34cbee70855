"""Liveness and readiness probes for load balancers and orchestrators (`GET /healthz`, `GET /readyz`).

- Liveness (`ServerConfig.health_path`, default `/healthz`): 200 while the process serves HTTP at
  all. It runs nothing, so a slow dependency never gets a healthy replica restarted.
- Readiness (`ServerConfig.ready_path`, default `/readyz`): 200 when every readiness check passes,
  else 503 naming the failing checks; 503 `draining` once shutdown began, so a balancer that polls
  it stops sending new work before the listener closes. Checks are the config's
  `readiness_checks` plus those added with `Dispatcher.add_readiness_check` (a shared store adds
  its ping there); they run concurrently, each bounded by `ready_timeout_s`.

Probes answer GET and HEAD only, on their exact path, before the Host check and authentication
(orchestrators probe by pod address and carry no token); the Origin check still applies. They
reveal nothing beyond the check names: a failure's details go to the log, not the body.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

from ... import _json

__all__ = ["Probes", "ReadinessCheck"]

_LOG = logging.getLogger("mcpgen.server")

# Raises (any exception, or returns False) when the replica should not get traffic now.
ReadinessCheck = Callable[[], Awaitable[bool | None]]

_ALIVE: Final = _json.dumps({"status": "ok"})
_HEADERS: Final = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]


class Probes:
    """The probe paths of one server and the readiness checks they run."""

    __slots__ = ("_checks", "draining", "health_path", "ready_path", "timeout_s")

    def __init__(
        self,
        health_path: str | None,
        ready_path: str | None,
        checks: Sequence[tuple[str, ReadinessCheck]],
        timeout_s: float,
    ) -> None:
        self.health_path = health_path
        self.ready_path = ready_path
        self.timeout_s = timeout_s
        self._checks: dict[str, ReadinessCheck] = dict(checks)
        self.draining = False  # set when shutdown begins: readiness answers 503

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(p for p in (self.health_path, self.ready_path) if p is not None)

    def add(self, name: str, check: ReadinessCheck) -> None:
        if name in self._checks:
            raise ValueError(f"a readiness check named {name!r} is already registered")
        self._checks[name] = check

    async def answer(self, path: str) -> tuple[int, bytes]:
        """(status, JSON body) for a GET of `path` (one of `paths`)."""
        if path == self.health_path:
            return 200, _ALIVE
        if self.draining:
            return 503, _json.dumps({"status": "draining"})
        failed = await self._failing()
        if failed:
            return 503, _json.dumps({"status": "unready", "failed": failed})
        return 200, _json.dumps({"status": "ready", "checks": list(self._checks)})

    async def _failing(self) -> list[str]:
        if not self._checks:
            return []
        names = list(self._checks)
        results = await asyncio.gather(*(self._run(name, self._checks[name]) for name in names))
        return [name for name, ok in zip(names, results, strict=True) if not ok]

    async def _run(self, name: str, check: ReadinessCheck) -> bool:
        try:
            ok = await asyncio.wait_for(check(), self.timeout_s)
        except TimeoutError:
            _LOG.warning("readiness check %r took longer than %.1fs", name, self.timeout_s)
            return False
        except Exception as exc:  # any failure means "not ready"; the log says which
            _LOG.warning("readiness check %r failed: %s: %s", name, type(exc).__name__, exc)
            return False
        return ok is not False

    @staticmethod
    def headers() -> list[tuple[bytes, bytes]]:
        return list(_HEADERS)
