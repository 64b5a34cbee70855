"""A package rendered as a list of jobs, run on two cores.

    Render = () -> {relative path: text}       one job: one or more files of a package
    run(jobs, finish) -> {path: finished}      every job once, `finish` applied to each file

`render_client`, `render_server` and `render_models` return jobs, the largest first (client.py,
base.py), then one per models module. `run` hands them to `parallel.shared_map`, so this process
and a forked copy render and finish them side by side; what a job returned is kept while the job
object lives, so the models jobs a client and a server share run once.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from typing import TypeVar

from ..parallel import shared_map

__all__ = ["Render", "run"]

Render = Callable[[], dict[str, str]]

_T = TypeVar("_T")

# what each live job returned, finished; a job that is gone takes its entry with it
_DONE: weakref.WeakKeyDictionary[Render, Mapping[str, object]] = weakref.WeakKeyDictionary()


def run(jobs: list[Render], finish: Callable[[str, str], _T]) -> dict[str, _T]:
    """{path: finish(path, text)} over every file the jobs render. `finish` runs in the process that
    rendered the file (for the syntax check: see pipeline.py) and returns what `marshal` can send."""
    pending = [job for job in jobs if job not in _DONE]

    def work(index: int) -> dict[str, _T]:
        return {path: finish(path, text) for path, text in pending[index]().items()}

    for job, done in zip(pending, shared_map(work, len(pending)), strict=True):
        _DONE[job] = done
    out: dict[str, _T] = {}
    for job in jobs:
        out.update(_DONE[job])  # type: ignore[arg-type]  # finished by this `finish`
    return out
