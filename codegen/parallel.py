"""Use the second core: work done by a forked copy of this process while this one works too.

    shared_map(work, count)  `[work(i) for i in range(count)]`, this process and a copy claiming
                             job numbers from one pipe, filled before the fork (a read of one
                             number is atomic, so each job is claimed once): they finish within
                             one job of each other, so a caller lists its largest jobs first
    Beside(call)             `call()` computed by a copy while this process does something else;
                             `.result()` waits for it

A copy sends back what it computed (`marshal` for `shared_map`: texts, numbers, tuples, dicts;
`pickle` for `Beside`) and exits without any cleanup. What a copy did not answer, because it
raised or died, is computed here, so an error is raised in this process with its own traceback.

Forking is safe only while this process runs no other thread (a lock held by one would stay held
in the copy), and only where it is the platform's own default for multiprocessing (Linux);
elsewhere, or with a thread running, everything runs here, in order. Either way the results are
the same: the work depends on nothing but what existed before the fork.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import pickle
import select
import signal
import struct
import sys
import threading
from collections.abc import Callable
from typing import Generic, NoReturn, TypeVar, cast

__all__ = ["Beside", "can_fork", "shared_map"]

_R = TypeVar("_R")

_FORK = sys.platform == "linux"
_NUMBER = struct.Struct("=I")  # one job number in the pipe
_PIPE_BYTES = 65_536  # Linux's default pipe capacity: the numbers are written before the fork
_UNREADABLE = (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError)


def can_fork() -> bool:
    """Whether a copy can be forked now."""
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

        def serve() -> bytes:
            done: dict[int, object] = {}
            try:
                while (index := _claim(jobs_r)) is not None:
                    done[index] = work(index)
            except BaseException:  # the job it failed is run here again (the docstring)
                pass
            return marshal.dumps(done)

        copy = _Copy.start(serve)
        try:
            while (index := _claim(jobs_r)) is not None:
                results[index] = work(index)
            if copy is not None:
                results.update(_numbered(copy.answer(), count))
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


def _numbered(data: bytes | None, count: int) -> dict[int, object]:
    try:
        answered = marshal.loads(data) if data else {}
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(answered, dict):
        return {}
    return {i: value for i, value in answered.items() if isinstance(i, int) and 0 <= i < count}


class Beside(Generic[_R]):
    """`call()` run by a forked copy from now on; `result()` is its value (pickled across), or,
    when no copy could run it or it raised, `call()` run here."""

    _NOTHING: object = object()

    def __init__(self, call: Callable[[], _R]) -> None:
        self._call = call
        self._value: object = self._NOTHING
        self._copy = _Copy.start(self._answer) if can_fork() else None

    def _answer(self) -> bytes:
        try:
            return pickle.dumps(self._call(), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException:  # raised again here, by result()
            return b""

    def ready(self) -> bool:
        """Whether `result()` would return without computing or waiting long (never blocks)."""
        return self._value is not self._NOTHING or (self._copy is not None and self._copy.answered())

    def result(self) -> _R:
        if self._value is self._NOTHING:
            data = None
            if self._copy is not None:
                try:
                    data = self._copy.answer()
                finally:
                    self._copy.stop()
                    self._copy = None
            value = self._NOTHING
            if data:  # else computed here
                with contextlib.suppress(*_UNREADABLE):
                    value = pickle.loads(data)
            self._value = self._call() if value is self._NOTHING else value
        return cast("_R", self._value)

    def cancel(self) -> None:
        """Stop the copy (its answer is no longer wanted)."""
        if self._copy is not None:
            self._copy.stop()
            self._copy = None


class _Copy:
    """A forked copy of this process that computes some bytes, sends them and exits."""

    def __init__(self, pid: int, results: int) -> None:
        self._pid: int | None = pid
        self._results: int | None = results

    @classmethod
    def start(cls, body: Callable[[], bytes]) -> _Copy | None:
        """Fork; the copy runs `body` and exits. None when the system refuses a new process."""
        results_r, results_w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(results_r)
            os.close(results_w)
            return None
        if pid == 0:
            os.close(results_r)
            _serve(body, results_w)  # never returns
        os.close(results_w)
        return cls(pid, results_r)

    def answered(self) -> bool:
        """Whether the copy has started sending (or has exited): reading will not wait long."""
        return self._results is not None and bool(select.select([self._results], [], [], 0)[0])

    def answer(self) -> bytes | None:
        """What the copy sent, once it has exited (None when it failed)."""
        assert self._results is not None and self._pid is not None
        chunks = []
        while chunk := os.read(self._results, 1 << 20):
            chunks.append(chunk)
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        return b"".join(chunks) if status == 0 else None

    def stop(self) -> None:
        """Close the pipe; a copy still running (its answer is not wanted) is killed and reaped."""
        if self._pid is not None:
            os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
            self._pid = None
        if self._results is not None:
            os.close(self._results)
            self._results = None


def _serve(body: Callable[[], bytes], results: int) -> NoReturn:
    """The forked copy: send what `body` returns, exit without any cleanup (no atexit handlers, no
    flushing of buffers the parent holds too)."""
    status = 1
    try:
        view = memoryview(body())
        while view:
            view = view[os.write(results, view) :]
        status = 0
    finally:
        os._exit(status)
