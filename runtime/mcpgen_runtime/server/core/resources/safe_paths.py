"""`safe_join`: a file path from URI template values that cannot leave its base directory (RES-06).

Values of path-like expressions (`{+path}`, `{/segments*}`) keep their `/` and `..`
(`file:///{+path}` reads `../../etc/passwd` as it is), so a reader that opens files joins them
through this: `safe_join(base, variables["path"])` or `safe_join(base, variables["segments"])`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path, PurePath

__all__ = ["PathEscapeError", "safe_join"]

_SEPARATORS = re.compile(r"[/\\]")


class PathEscapeError(ValueError):
    """The joined path would leave the base directory (or holds NUL)."""


def safe_join(base: str | os.PathLike[str], *parts: str | Sequence[str]) -> Path:
    """`base` (resolved) joined with `parts`, each a string or a list of segments (an exploded
    variable); `/` and `\\` separate segments, `.` and empty ones are dropped, `..` goes up but never
    above `base`. The result is resolved (symbolic links followed) and must still lie in `base`;
    otherwise, or for NUL or an absolute part, `PathEscapeError`. The path need not exist."""
    root = Path(base).resolve()
    kept: list[str] = []
    for part in parts:
        items = [part] if isinstance(part, str) else list(part)
        for item in items:
            if not isinstance(item, str):
                raise TypeError(f"path parts are strings, not {type(item).__name__}")
            if "\x00" in item:
                raise PathEscapeError("a path part holds NUL")
            for segment in _SEPARATORS.split(item):
                if segment in ("", "."):
                    continue
                if segment == "..":
                    if not kept:
                        raise PathEscapeError(f"{item[:200]!r} leaves the base directory")
                    kept.pop()
                elif PurePath(segment).anchor:  # a drive ("C:") where paths have them
                    raise PathEscapeError(f"{segment[:200]!r} is an absolute path")
                else:
                    kept.append(segment)
    joined = root.joinpath(*kept).resolve()
    if joined != root and root not in joined.parents:
        raise PathEscapeError("the path leads out of the base directory (a symbolic link)")
    return joined
