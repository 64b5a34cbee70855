"""Put a GeneratedPackage on disk (`write_package`: the whole package built aside, then swapped in),
or replace one file (`write_file_atomic`: `mcpgen snapshot`). The rules are the stage's: see
`codegen.write`."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import McpgenError
from ..spec import GeneratedPackage
from .manifest import MANIFEST_NAME
from .paths import UnsafePathError, is_inside
from .plan import conflict_error, plan_package

__all__ = ["WriteError", "WriteReport", "write_file_atomic", "write_package"]


class WriteError(McpgenError):
    """The filesystem refused a write (permissions, full disk, ...); the previous output is intact."""


@dataclass(frozen=True)
class WriteReport:
    """What `write_package` did, as paths relative to `package_dir` (POSIX separators, sorted)."""

    package_dir: Path
    created: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    preserved: tuple[str, ...] = ()  # user files that already existed and were left alone
    changed: bool = False  # False: the disk was not touched at all


# Linux's sync(2) waits until every dirty page is written; elsewhere it may return before (macOS)
# or does not exist (Windows), so each file is flushed as it is written.
_SYNC_ONCE = sys.platform == "linux"


def _write_file(path: Path, data: bytes) -> None:
    """Create `path` (which must not exist) with `data`; on disk once `_flush` returns."""
    with open(path, "xb") as fh:
        fh.write(data)
        if not _SYNC_ONCE:
            fh.flush()
            os.fsync(fh.fileno())


def _flush() -> None:
    """The new package on disk before it is swapped in, so that a crash right after the swap cannot
    leave empty files in place of the old ones. On Linux one sync(2) for the whole package (and the
    files carried over into it): a fsync per file costs a journal commit each, seconds for a
    1,000-tool package with its models modules."""
    if _SYNC_ONCE:
        os.sync()


def _place(new_root: Path, rel: str, data: bytes, old: Path | None, made: set[str]) -> None:
    """Put one file at `rel` in `new_root`; `made`: the parent directories already checked (a
    package's 1,000 models modules share one). `rel` is normalised (`paths.check_rel`)."""
    parent = rel.rpartition("/")[0]
    if parent not in made:
        dest = new_root
        for part in PurePosixPath(parent).parts:  # create parents one by one, never through a link
            dest = dest / part
            if dest.is_symlink() or (os.path.lexists(dest) and not dest.is_dir()):
                raise UnsafePathError(
                    f"{rel!r}: {dest.relative_to(new_root)} is a symlink or file, not a directory"
                )
            if not dest.exists():
                dest.mkdir()
        if not is_inside(new_root / parent, new_root):
            raise UnsafePathError(f"{rel!r} would not land on a fresh path inside the package")
        made.add(parent)
    dest = new_root / rel
    if os.path.lexists(dest):
        raise UnsafePathError(f"{rel!r} would not land on a fresh path inside the package")
    if old is not None:
        shutil.copy2(old, dest)  # unchanged: same bytes, same mtime
    else:
        _write_file(dest, data)


def _carry_over(package_dir: Path, new_root: Path, skip: frozenset[str]) -> None:
    """Copy the old package minus `skip` (relative paths) into new_root; symlinks stay links."""

    def ignore(directory: str, names: list[str]) -> set[str]:
        rel_dir = Path(directory).relative_to(package_dir).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        return {name for name in names if prefix + name in skip}

    shutil.copytree(package_dir, new_root, symlinks=True, ignore=ignore, copy_function=shutil.copy2)
    # Drop directories that only held stale owned files.
    for rel in sorted(skip, key=lambda r: -r.count("/")):
        parent = (new_root / rel).parent
        while (
            parent != new_root and parent.is_dir() and not parent.is_symlink() and not any(parent.iterdir())
        ):
            parent.rmdir()
            parent = parent.parent


def _swap(new_root: Path, package_dir: Path, backup: Path) -> None:
    """Move new_root to package_dir; the old package (if any) ends up at backup."""
    if not os.path.lexists(package_dir):
        os.rename(new_root, package_dir)
        return
    os.rename(package_dir, backup)
    try:
        os.rename(new_root, package_dir)
    except BaseException:
        os.rename(backup, package_dir)
        raise


def write_package(out_dir: Path, pkg: GeneratedPackage, *, overwrite_user_files: bool = False) -> WriteReport:
    """Write `pkg` to `out_dir/pkg.package/` atomically; see the module docstring for the rules.

    Raises OutputConflictError (nothing written) when a file mcpgen does not own is in the way,
    UnsafePathError for paths outside the package, WriteError when the filesystem refuses.
    """
    out_dir = Path(os.path.abspath(out_dir))  # absolute, symlinks in the user's path left alone
    plan = plan_package(out_dir, pkg, overwrite_user_files=overwrite_user_files)
    if plan.conflicts:
        raise conflict_error(plan)
    package_dir = plan.package_dir

    def names(*actions: str, table: Mapping[str, tuple[str, bytes]]) -> tuple[str, ...]:
        return tuple(rel for rel, (action, _) in table.items() if action in actions)

    report = WriteReport(
        package_dir=package_dir,
        created=tuple(sorted(names("create", table=plan.owned) + names("create", table=plan.user))),
        updated=tuple(sorted(names("update", table=plan.owned) + names("update", table=plan.user))),
        unchanged=tuple(sorted(names("keep", table=plan.owned) + names("keep", table=plan.user))),
        removed=tuple(plan.stale),
        preserved=names("preserve", table=plan.user),
        changed=not plan.nothing_to_do,
    )
    if plan.nothing_to_do:
        return report

    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        tmp_root = Path(tempfile.mkdtemp(prefix=f".{pkg.package}.mcpgen-", dir=out_dir))
    except OSError as exc:
        raise WriteError(f"cannot create a temporary directory in {out_dir}: {exc.strerror or exc}") from exc
    new_root = tmp_root / pkg.package
    backup = tmp_root / ".previous"  # not an identifier, so never a package name
    keep_tmp = False
    try:
        skip = frozenset([*plan.owned, *plan.stale, MANIFEST_NAME]) | {
            rel for rel, (action, _) in plan.user.items() if action != "preserve"
        }
        if plan.exists:
            _carry_over(package_dir, new_root, skip)
        else:
            new_root.mkdir()
        made: set[str] = set()
        for rel, (action, data) in plan.owned.items():
            _place(new_root, rel, data, package_dir / rel if action == "keep" else None, made)
        for rel, (user_action, data) in plan.user.items():
            if user_action != "preserve":
                _place(new_root, rel, data, package_dir / rel if user_action == "keep" else None, made)
        if plan.manifest_same:
            shutil.copy2(package_dir / MANIFEST_NAME, new_root / MANIFEST_NAME)
        else:
            _write_file(new_root / MANIFEST_NAME, plan.manifest)
        _flush()
        try:
            _swap(new_root, package_dir, backup)
        except BaseException:
            keep_tmp = os.path.lexists(backup)  # the restore failed: never delete the user's old package
            if keep_tmp:
                raise WriteError(
                    f"could not move the new package into place and could not restore the old one; "
                    f"the previous package is at {backup}"
                ) from None
            raise
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise WriteError(
            f"cannot write {package_dir}{where}: {exc.strerror or exc}; the previous output is unchanged"
        ) from exc
    finally:
        if not keep_tmp:
            shutil.rmtree(tmp_root, ignore_errors=True)
    return report


def write_file_atomic(path: Path, data: bytes) -> bool:
    """Replace `path` with `data` via a temporary sibling and os.replace. Returns False (and touches
    nothing) when the file already holds exactly `data`."""
    path = Path(path)
    if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
        return False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, path.stat().st_mode & 0o7777 if path.is_file() else 0o666 & ~_umask())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return True


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
