"""Run a list of independent jobs on two cores: `shared_map(work, count)` is `[work(i) for i in
range(count)]`, with a forked copy of this process taking jobs beside it.

Both processes claim job numbers from one pipe, filled before the fork (a read of one number is
atomic, so each job is claimed once), so they finish within one job of each other whatever the
jobs cost: a caller lists its largest jobs first. The copy sends back what it computed
(`marshal`: texts, numbers, tuples, dicts) and exits; a job it did not answer, because it failed or
died, is run here, so an error is raised in this process with its own traceback.

Forking is safe only while this process runs no other thread (a lock held by one would stay held
in the copy), and only where it is the platform's own default for multiprocessing (Linux); elsewhere,
with a thread running, or for fewer than two jobs, the jobs run here in order. Either way the
results are the same: the caller's jobs depend on nothing but what existed before the fork.
"""

from __future__ import annotations

import marshal
import os
import signal
import struct
import sys
import threading
from collections.abc import Callable
from typing import NoReturn, TypeVar, cast

__all__ = ["shared_map"]

_R = TypeVar("_R")

_FORK = sys.platform == "linux"
_NUMBER = struct.Struct("=I")  # one job number in the pipe
_PIPE_BYTES = 65_536  # Linux's default pipe capacity: the numbers are written before the fork


def can_fork() -> bool:
    """Whether `shared_map` would fork now."""
    return _FORK and threading.active_count() == 1


def shared_map(work: Callable[[int], _R], count: int) -> list[_R]:
    """`[work(i) for i in range(count)]`, computed by this process and a forked copy together;
    every result must be something `marshal` can send."""
    if count < 2 or count * _NUMBER.size > _PIPE_BYTES or not can_fork():
        return [work(i) for i in range(count)]
    jobs_r, jobs_w = os.pipe()
    try:
        os.write(jobs_w, b"".join(_NUMBER.pack(i) for i in range(count)))
        os.close(jobs_w)
        results: dict[int, object] = {}
        copy = _Copy.start(work, jobs_r)
        try:
            while (index := _claim(jobs_r)) is not None:
                results[index] = work(index)
            if copy is not None:
                results.update(copy.answers(count))
        finally:
            if copy is not None:
                copy.stop()
    finally:
        os.close(jobs_r)
    return [cast("_R", results[i]) if i in results else work(i) for i in range(count)]


def _claim(jobs: int) -> int | None:
    """The next unclaimed job number, or None when every job is claimed."""
    data = os.read(jobs, _NUMBER.size)
    return int(_NUMBER.unpack(data)[0]) if len(data) == _NUMBER.size else None


class _Copy:
    """The forked copy of this process, seen from here."""

    def __init__(self, pid: int, results: int) -> None:
        self._pid: int | None = pid
        self._results: int | None = results

    @classmethod
    def start(cls, work: Callable[[int], object], jobs: int) -> _Copy | None:
        """Fork; the copy serves jobs and exits. None when the system refuses a new process."""
        results_r, results_w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(results_r)
            os.close(results_w)
            return None
        if pid == 0:
            os.close(results_r)
            _serve(work, jobs, results_w)  # never returns
        os.close(results_w)
        return cls(pid, results_r)

    def answers(self, count: int) -> dict[int, object]:
        """The copy's results ({} when it failed or sent something unreadable), once it has exited."""
        assert self._results is not None and self._pid is not None
        chunks = []
        while chunk := os.read(self._results, 1 << 20):
            chunks.append(chunk)
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        try:
            answered = marshal.loads(b"".join(chunks)) if status == 0 else {}
        except (EOFError, ValueError, TypeError):
            answered = {}
        if not isinstance(answered, dict):
            return {}
        return {i: value for i, value in answered.items() if isinstance(i, int) and 0 <= i < count}

    def stop(self) -> None:
        """Close the pipe; a copy still running (this process failed first) is killed and reaped."""
        if self._pid is not None:
            os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
            self._pid = None
        if self._results is not None:
            os.close(self._results)
            self._results = None


def _serve(work: Callable[[int], object], jobs: int, results: int) -> NoReturn:
    """The forked copy: run the jobs it claims, send {number: result}, exit without any cleanup
    (no atexit handlers, no flushing of buffers the parent holds too). A job that raises is left
    unanswered: the parent runs it again and raises."""
    status = 1
    try:
        done: dict[int, object] = {}
        try:
            while (index := _claim(jobs)) is not None:
                done[index] = work(index)
        except BaseException:  # answered by the parent, see above
            pass
        view = memoryview(marshal.dumps(done))
        while view:
            view = view[os.write(results, view) :]
        status = 0
    finally:
        os._exit(status)
