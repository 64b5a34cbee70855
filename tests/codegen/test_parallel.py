"""The two-process map the generator renders with (codegen/parallel.py): the same results
as a plain loop, every job run once, a job that fails in the forked copy raised here, and no fork
while another thread runs."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from codegen import parallel

pytestmark = pytest.mark.skipif(not parallel.can_fork(), reason="forks only on Linux with one thread")


def _pids(tmp_path: Path, count: int) -> tuple[list[int], list[int]]:
    """(the results, the process that ran each job), each job long enough for both to take some."""

    def work(index: int) -> int:
        (tmp_path / f"{index}.pid").write_text(str(os.getpid()))
        sum(range(200_000))
        return index * index

    results = parallel.shared_map(work, count)
    return results, [int((tmp_path / f"{i}.pid").read_text()) for i in range(count)]


def test_both_processes_run_jobs_and_every_result_comes_back_in_order(tmp_path: Path) -> None:
    results, pids = _pids(tmp_path, 64)
    assert results == [i * i for i in range(64)]
    assert os.getpid() in pids
    assert len(set(pids)) == 2  # the forked copy took jobs too


def test_a_job_that_fails_in_the_copy_is_raised_here(tmp_path: Path) -> None:
    parent = os.getpid()

    def work(index: int) -> int:
        sum(range(100_000))
        if os.getpid() != parent:
            raise ValueError(f"job {index} failed in the copy")
        return index

    # every job the copy claims fails there, so this process runs it again: the results are whole
    assert parallel.shared_map(work, 32) == list(range(32))

    def always(index: int) -> int:
        sum(range(100_000))
        if index == 20:
            raise ValueError("job 20 is broken")
        return index

    with pytest.raises(ValueError, match="job 20 is broken"):
        parallel.shared_map(always, 32)


def test_a_copy_that_dies_loses_nothing() -> None:
    parent = os.getpid()

    def work(index: int) -> int:
        sum(range(100_000))
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return -index

    assert parallel.shared_map(work, 16) == [-i for i in range(16)]


def test_no_fork_while_another_thread_runs(tmp_path: Path) -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not parallel.can_fork()
        results, pids = _pids(tmp_path, 8)
    finally:
        stop.set()
        thread.join()
    assert results == [i * i for i in range(8)] and set(pids) == {os.getpid()}


def test_beside_answers_from_the_copy_and_raises_here() -> None:
    parent = os.getpid()
    beside = parallel.Beside(lambda: {"pid": os.getpid(), "value": [1, "two"]})
    answer = beside.result()
    assert answer["value"] == [1, "two"] and answer["pid"] != parent
    assert beside.ready() and beside.result() is answer

    def failing() -> int:
        raise ValueError(f"failed in {os.getpid()}")

    with pytest.raises(ValueError, match=f"failed in {parent}"):  # run again here, raised here
        parallel.Beside(failing).result()


def test_beside_cancelled_leaves_no_process() -> None:
    beside = parallel.Beside(lambda: threading.Event().wait(60))
    copy = beside._copy
    assert copy is not None and copy._pid is not None
    pid = copy._pid
    beside.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no such child
