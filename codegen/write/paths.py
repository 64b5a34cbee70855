"""Paths the writer accepts: a package name that is one directory, file paths that stay inside it,
file contents that are UTF-8 with LF line endings."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from ..errors import InternalGeneratorError, OutputConflictError

__all__ = ["UnsafePathError", "check_package_name", "check_rel", "is_inside", "normalise"]


class UnsafePathError(OutputConflictError):
    """A package name or file path that would land outside the output directory."""


def check_package_name(name: str) -> None:
    if not isinstance(name, str) or not name.isidentifier() or not name.isascii():
        raise UnsafePathError(
            f"package name {name!r} is not a valid Python identifier; it must be a single directory name "
            "such as 'weather_client'"
        )


def check_rel(rel: str, *, what: str = "generated file") -> str:
    """Return `rel` if it is a safe, normalised relative POSIX path; raise UnsafePathError otherwise."""
    if not isinstance(rel, str) or not rel:
        raise UnsafePathError(f"{what} path {rel!r} is empty or not a string")
    bad = "\\" in rel or "\x00" in rel or ":" in rel
    pure = PurePosixPath(rel)
    if (
        bad
        or pure.is_absolute()
        or any(part in ("", ".", "..") for part in rel.split("/"))
        or str(pure) != rel
    ):
        raise UnsafePathError(
            f"{what} path {rel!r} is not a plain relative path inside the package "
            "(absolute paths, '..', '.', backslashes and empty components are refused)"
        )
    return rel


def is_inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def normalise(data: bytes, rel: str) -> bytes:
    """UTF-8 with LF line endings; anything else from the pipeline is a bug."""
    if not isinstance(data, bytes):
        raise InternalGeneratorError(f"content of {rel!r} is {type(data).__name__}, expected bytes")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InternalGeneratorError(f"content of {rel!r} is not valid UTF-8: {exc}") from exc
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
