"""What writing a package would do, decided before anything is written: each owned and user file's
action (create, update, keep, preserve), the stale files to drop, the conflicts that refuse the write.
`write_package` carries a plan out; `check_package` reports it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from ..errors import InternalGeneratorError, OutputConflictError
from ..spec import GeneratedPackage
from .manifest import MANIFEST_NAME, has_marker, keep_release, manifest_bytes, read_manifest, same_manifest
from .paths import UnsafePathError, check_package_name, check_rel, normalise

__all__ = ["Action", "Plan", "conflict_error", "plan_package"]

Action = Literal["create", "update", "keep"]


@dataclass
class Plan:
    package_dir: Path
    exists: bool
    old_manifest: frozenset[str]
    manifest: bytes
    manifest_same: bool  # byte for byte (write_package rewrites it otherwise)
    manifest_content_same: bool  # apart from the input key (check_package reports it otherwise)
    owned: dict[str, tuple[Action, bytes]] = field(default_factory=dict)
    user: dict[str, tuple[Action | Literal["preserve"], bytes]] = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)  # (path, why)

    @property
    def nothing_to_do(self) -> bool:
        return (
            self.exists
            and self.manifest_same
            and not self.stale
            and all(action == "keep" for action, _ in self.owned.values())
            and all(action in ("keep", "preserve") for action, _ in self.user.values())
        )


def _check_layout(paths: Iterable[str]) -> None:
    """No generated path may be a directory prefix of another (paths as `check_rel` accepts them:
    relative, '/'-separated, normalised, so a parent is the text before the last '/')."""
    files = set(paths)
    for rel in files:
        parent = rel.rpartition("/")[0]
        while parent:
            if parent in files:
                raise InternalGeneratorError(f"generated path {rel!r} lies under generated file {parent!r}")
            parent = parent.rpartition("/")[0]


def _blocked_parent(package_dir: Path, rel: str, removable: frozenset[str]) -> str | None:
    """A parent of `rel` that exists in the old tree as something other than a real directory."""
    parent = PurePosixPath(rel).parent
    chain: list[PurePosixPath] = []
    while str(parent) != ".":
        chain.append(parent)
        parent = parent.parent
    for prefix in reversed(chain):
        path = package_dir / prefix
        if not os.path.lexists(path):
            return None
        if path.is_symlink() or not path.is_dir():
            return None if str(prefix) in removable else str(prefix)
    return None


def plan_package(out_dir: Path, pkg: GeneratedPackage, *, overwrite_user_files: bool) -> Plan:
    check_package_name(pkg.package)
    owned_new = {check_rel(rel): normalise(data, rel) for rel, data in pkg.files.items()}
    user_new = {
        check_rel(rel, what="user file"): normalise(data, rel) for rel, data in pkg.user_files.items()
    }
    for rel in (*owned_new, *user_new):
        if rel == MANIFEST_NAME:
            raise InternalGeneratorError(f"{MANIFEST_NAME} is reserved for the writer's manifest")
    both = sorted(owned_new.keys() & user_new.keys())
    if both:
        raise InternalGeneratorError(f"paths are both generator-owned and user files: {both}")
    _check_layout([*owned_new, *user_new])

    if os.path.lexists(out_dir) and not out_dir.is_dir():
        raise OutputConflictError(f"output directory {out_dir} exists and is not a directory")
    package_dir = out_dir / pkg.package
    if package_dir.is_symlink():
        raise UnsafePathError(
            f"{package_dir} is a symlink; mcpgen only writes into real directories inside the output "
            "directory. Point -o at the link's target instead"
        )
    exists = os.path.lexists(package_dir)
    if exists and not package_dir.is_dir():
        raise OutputConflictError(
            f"{package_dir} exists and is not a directory; move it away or choose another --package"
        )
    old_manifest, oldmanifest_bytes = read_manifest(package_dir) if exists else (frozenset(), None)
    stale: list[str] = []
    if exists:
        # A stale entry is dropped only when it is still a file (or link) reached through real
        # directories; a directory the user put there in the meantime is theirs.
        for rel in sorted(old_manifest - owned_new.keys() - user_new.keys()):
            path = package_dir / rel
            if _blocked_parent(package_dir, rel, frozenset()) is None and (
                path.is_symlink() or path.is_file()
            ):
                stale.append(rel)
    removable = frozenset(stale)
    blocked_in: dict[str, str | None] = {}  # directory -> _blocked_parent (1,000 models share one)

    def blocked_parent(rel: str) -> str | None:
        directory = rel.rpartition("/")[0]
        if directory not in blocked_in:
            blocked_in[directory] = _blocked_parent(package_dir, rel, removable)
        return blocked_in[directory]

    owned: dict[str, tuple[Action, bytes]] = {}
    conflicts: list[tuple[str, str]] = []
    for rel, data in sorted(owned_new.items()):
        path = package_dir / rel
        action: Action = "create"
        blocked = blocked_parent(rel) if exists else None
        if blocked is not None:
            conflicts.append((rel, f"{package_dir / blocked} is in the way (not a directory)"))
        elif exists and os.path.lexists(path):
            if path.is_symlink():
                if rel in old_manifest:
                    action = "update"  # replace the link itself with a regular file
                else:
                    conflicts.append((rel, "it is a symlink mcpgen did not create"))
            elif not path.is_file():
                conflicts.append((rel, "it is a directory or special file"))
            else:
                old = path.read_bytes()
                data = owned_new[rel] = keep_release(old, data)
                if old == data:
                    action = "keep"
                elif rel in old_manifest or has_marker(old):
                    action = "update"
                else:
                    conflicts.append((rel, "it lacks the '# Generated by mcpgen' header, so it may be yours"))
        owned[rel] = (action, data)

    manifest = manifest_bytes(pkg.package, owned_new, pkg.input_key, user_new, pkg.filters)
    plan = Plan(
        package_dir=package_dir,
        exists=exists,
        old_manifest=old_manifest,
        manifest=manifest,
        # without an input key (mcpgen client/server) an unchanged manifest keeps its cache fields
        manifest_same=oldmanifest_bytes == manifest
        or (pkg.input_key is None and same_manifest(oldmanifest_bytes, manifest)),
        manifest_content_same=same_manifest(oldmanifest_bytes, manifest),
        owned=owned,
        stale=stale,
        conflicts=conflicts,
    )

    for rel, data in sorted(user_new.items()):
        path = package_dir / rel
        blocked = blocked_parent(rel) if exists else None
        if blocked is not None:
            plan.conflicts.append((rel, f"{package_dir / blocked} is in the way (not a directory)"))
            continue
        if not (exists and os.path.lexists(path)):
            plan.user[rel] = ("create", data)
        elif not overwrite_user_files:
            plan.user[rel] = ("preserve", data)
        elif path.is_symlink() or not path.is_file():
            plan.conflicts.append((rel, "it is a symlink, directory or special file"))
        else:
            plan.user[rel] = ("keep" if path.read_bytes() == data else "update", data)
    return plan


def conflict_error(plan: Plan) -> OutputConflictError:
    lines = [f"refusing to overwrite files in {plan.package_dir} that mcpgen does not own:"]
    lines += [f"  {plan.package_dir / rel}: {why}" for rel, why in plan.conflicts]
    lines.append(
        "Nothing was written. Move or rename these files (or choose another -o/--package), then run again."
    )
    return OutputConflictError("\n".join(lines))
