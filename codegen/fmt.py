"""FORMAT: every generated Python file is parsed, then formatted once, in-process, by black.

The black `Mode` is explicit (target Python 3.11, fixed line length), so no user configuration
(pyproject.toml, environment) can change the output bytes. black is pinned in pyproject.toml.
"""

from __future__ import annotations

import ast
import functools

import black
from black.mode import TargetVersion

from .errors import InternalGeneratorError

__all__ = ["BLACK_MODE", "LINE_LENGTH", "format_python"]

LINE_LENGTH = 110
BLACK_MODE = black.Mode(
    target_versions={TargetVersion.PY311},
    line_length=LINE_LENGTH,
    string_normalization=True,
    is_pyi=False,
    magic_trailing_comma=True,
    preview=False,
)


@functools.lru_cache(maxsize=8)
def format_python(path: str, text: str) -> str:
    """`text` checked with `ast.parse` and formatted by black; errors name the file (a generator bug).

    Results are memoised by (path, text): a client and a server built from one spec share models.py.
    """
    try:
        ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise InternalGeneratorError(
            f"generated {path} is not valid Python (line {exc.lineno}: {exc.msg}); this is a bug in mcpgen"
        ) from exc
    try:
        formatted = black.format_str(text, mode=BLACK_MODE)
    except Exception as exc:  # black raises its own error types (InvalidInput, ...)
        raise InternalGeneratorError(f"black could not format generated {path}: {exc}") from exc
    return formatted
