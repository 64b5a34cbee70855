"""A spec file as committed at a git revision (`mcpgen diff --against REV`): `git show REV:path`,
run in the repository that holds the file. Nothing is checked out or written."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

from ..errors import SpecLoadError
from ..spec import LoadedSpec
from .document import MAX_FILE_BYTES, load_bytes

__all__ = ["Committed", "load_at_revision"]


@dataclasses.dataclass(frozen=True)
class Committed:
    """What REV holds for one file: its tools, or `spec is None` and `why` (the file did not exist
    there, or the repository has no commit yet): then every tool in it is new."""

    source: str  # `REV:path` (path relative to the repository's top)
    spec: LoadedSpec | None
    why: str = ""


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    git = shutil.which("git")
    if git is None:
        raise SpecLoadError("--against needs git, which is not on PATH")
    return subprocess.run(
        [git, *args], cwd=cwd, capture_output=True, check=False, timeout=60, stdin=subprocess.DEVNULL
    )


def load_at_revision(path: Path, rev: str, shown: str) -> Committed:
    """`path` (shown in messages as `shown`) as committed at `rev` in the git repository holding it."""
    if not rev or rev.startswith("-") or any(ch in rev for ch in "\x00\r\n"):
        raise SpecLoadError(f"--against {rev!r}: not a git revision (a commit, branch or tag, e.g. HEAD)")
    resolved = path.resolve()
    where = resolved.parent if resolved.parent.is_dir() else Path.cwd()
    top = _git(where, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise SpecLoadError(
            f"{shown}: not in a git repository, so --against {rev} has nothing to read; "
            "compare two files instead (mcpgen diff OLD NEW)"
        )
    root = Path(top.stdout.decode("utf-8", "surrogateescape").strip())
    try:
        relative = resolved.relative_to(root.resolve()).as_posix()
    except ValueError as exc:
        raise SpecLoadError(f"{shown}: not inside the git repository at {root}") from exc
    commit = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    if commit.returncode != 0:
        if _git(root, "rev-parse", "--verify", "--quiet", "HEAD").returncode != 0:
            return Committed(f"{rev}:{relative}", None, f"the repository at {root} has no commit yet")
        raise SpecLoadError(
            f"--against {rev}: unknown revision in the git repository at {root} "
            "(name a commit, branch or tag: HEAD, main, v1.2.0, a commit id)"
        )
    sha = commit.stdout.decode("ascii").strip()
    source = f"{rev}:{relative}"
    if _git(root, "cat-file", "-e", f"{sha}:{relative}").returncode != 0:
        return Committed(source, None, f"{relative} did not exist at {rev}")
    shown_blob = _git(root, "show", f"{sha}:{relative}")
    if shown_blob.returncode != 0:
        message = shown_blob.stderr.decode("utf-8", "replace").strip()
        raise SpecLoadError(f"{source}: git show failed: {message[:300]}")
    if len(shown_blob.stdout) > MAX_FILE_BYTES:
        raise SpecLoadError(f"{source}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    return Committed(source, load_bytes(shown_blob.stdout, source))
