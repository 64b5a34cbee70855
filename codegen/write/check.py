"""`--check`: compare a GeneratedPackage with what is on disk, without writing anything."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..spec import GeneratedPackage
from .manifest import GENERATED_MARKER, MANIFEST_NAME
from .plan import plan_package

__all__ = ["DIFF_LINE_CAP", "FileDiff", "check_package"]

DIFF_LINE_CAP = 40  # lines of unified diff shown per file by check_package

# "header": the file differs only in its first-line header (the spec's sha256 changed), shown as one line
FileStatus = Literal["missing", "extra", "differs", "header", "conflict"]


@dataclass(frozen=True)
class FileDiff:
    """One difference between a generated package and what is on disk."""

    package_dir: Path
    path: str  # relative to package_dir, POSIX separators
    status: FileStatus
    detail: str = ""  # capped unified diff for "differs"; a sentence for the others (or nothing)

    @property
    def file(self) -> Path:
        return self.package_dir / self.path

    def __str__(self) -> str:
        head = f"{self.status}: {self.file}"
        return f"{head}\n{self.detail}" if self.detail else head


def _same_header(old: bytes, new: bytes) -> bytes:
    """`old` with `new`'s first line when both open with the generated header: a changed header
    (sha256 of the spec) is said once per target, not diffed in every file."""
    if old.startswith(GENERATED_MARKER) and new.startswith(GENERATED_MARKER):
        return new.partition(b"\n")[0] + b"\n" + old.partition(b"\n")[2]
    return old


def _diff(old: bytes, new: bytes, label: str) -> str:
    old_lines = old.decode("utf-8", errors="replace").splitlines(keepends=True)
    new_lines = new.decode("utf-8", errors="replace").splitlines(keepends=True)
    lines = [
        line if line.endswith("\n") else line + "\n"
        for line in difflib.unified_diff(old_lines, new_lines, f"a/{label}", f"b/{label}", n=2)
    ]
    if len(lines) > DIFF_LINE_CAP:
        lines = [*lines[:DIFF_LINE_CAP], f"... ({len(lines) - DIFF_LINE_CAP} more diff lines)\n"]
    return "".join(lines).rstrip("\n")


def check_package(out_dir: Path, pkg: GeneratedPackage) -> list[FileDiff]:
    """Compare `pkg` with `out_dir/pkg.package/` without writing; an empty list means up to date.

    Reports owned files that are missing or differ (with a unified diff capped at DIFF_LINE_CAP
    lines, leaving out a changed first-line header; "header" when nothing else changed), owned
    files of an earlier run that are no longer generated (extra), files `write_package` would
    refuse to overwrite (conflict), and missing user files. Existing user files are not compared.
    The manifest is compared too, so an empty result means `write_package` would touch nothing.
    """
    out_dir = Path(os.path.abspath(out_dir))
    plan = plan_package(out_dir, pkg, overwrite_user_files=False)
    pdir = plan.package_dir
    label = pkg.package
    diffs = [FileDiff(pdir, rel, "conflict", f"write would refuse: {why}") for rel, why in plan.conflicts]
    conflicted = {rel for rel, _ in plan.conflicts}
    for rel, (action, data) in plan.owned.items():
        if rel in conflicted or action == "keep":
            continue
        if action == "create":
            diffs.append(FileDiff(pdir, rel, "missing"))
            continue
        old = b"" if (pdir / rel).is_symlink() else (pdir / rel).read_bytes()
        old = _same_header(old, data)
        if old == data:
            diffs.append(FileDiff(pdir, rel, "header"))
            continue
        diffs.append(FileDiff(pdir, rel, "differs", _diff(old, data, f"{label}/{rel}")))
    diffs += [FileDiff(pdir, rel, "extra", "no longer generated; writing deletes it") for rel in plan.stale]
    for rel, (user_action, _) in plan.user.items():
        if user_action == "create":
            diffs.append(
                FileDiff(pdir, rel, "missing", "user file; generating creates it once, then it is yours")
            )
    if not plan.manifest_content_same:
        old_manifest = pdir / MANIFEST_NAME
        if old_manifest.is_file():
            old = old_manifest.read_bytes()
            diffs.append(
                FileDiff(
                    pdir, MANIFEST_NAME, "differs", _diff(old, plan.manifest, f"{label}/{MANIFEST_NAME}")
                )
            )
        else:
            diffs.append(FileDiff(pdir, MANIFEST_NAME, "missing"))
    # the manifest is bookkeeping: list it after the files it describes
    return sorted(diffs, key=lambda d: (d.path == MANIFEST_NAME, d.path, d.status))
