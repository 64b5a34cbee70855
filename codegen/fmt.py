"""FORMAT: generated Python is written already formatted, then parsed once to prove it is Python.

`layout` lays every statement out the way black (pinned in pyproject.toml, explicit `Mode`, so no
user configuration can change the bytes) would. The few statements whose layout it cannot be sure
of are handed to black one at a time (`black_statement`, memoised): that is black's own output for
that statement in its block, so the file stays what black would make of it. Running black over
whole files (`format_python`) gives the same bytes; tests/codegen prove that for every spec in
specs/, the hostile corpus and a 1,000-tool synthetic spec, instead of paying for it (3 s for
the 117-tool GitHub client) on every run.
"""

from __future__ import annotations

import ast
import functools
import types
from typing import TYPE_CHECKING, Any

from .errors import InternalGeneratorError

if TYPE_CHECKING:
    import black

__all__ = ["LINE_LENGTH", "black_mode", "black_statement", "check_python", "compile_python",
           "format_python"]

LINE_LENGTH = 110


@functools.cache
def black_mode() -> black.Mode:
    """The one black Mode generated code is formatted with (black is imported on first use)."""
    import black
    from black.mode import TargetVersion

    return black.Mode(
        target_versions={TargetVersion.PY311},
        line_length=LINE_LENGTH,
        string_normalization=True,
        is_pyi=False,
        magic_trailing_comma=True,
        preview=False,
    )


def __getattr__(name: str) -> Any:  # `fmt.BLACK_MODE`, without importing black at import time
    if name == "BLACK_MODE":
        return black_mode()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_INDENT = "    "
_CONTEXT = ("class _:", _INDENT + "def _(self):")


def check_python(path: str, text: str) -> None:
    """`ast.parse` the module; a failure is a bug in mcpgen and names the file."""
    try:
        ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise InternalGeneratorError(
            f"generated {path} is not valid Python (line {exc.lineno}: {exc.msg}); this is a bug in mcpgen"
        ) from exc


_COMPILED: dict[str, tuple[str, types.CodeType]] = {}


def compile_python(path: str, text: str) -> types.CodeType:
    """Compile the module (cheaper than building an AST, and stricter: `return` outside a function,
    duplicate arguments, ... are errors too); a failure is a bug in mcpgen and names the file.
    The last result per path is kept (a client and a server share models.py)."""
    hit = _COMPILED.get(path)
    if hit is not None and hit[0] == text:
        return hit[1]
    try:
        code = compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise InternalGeneratorError(
            f"generated {path} is not valid Python (line {exc.lineno}: {exc.msg}); this is a bug in mcpgen"
        ) from exc
    _COMPILED[path] = (text, code)
    return code


@functools.lru_cache(maxsize=4096)
def black_statement(text: str, depth: int, header: bool = False) -> str:
    """black's layout of one statement (`text`, on one line) at block depth 0, 1 (a class body) or 2
    (a method body); `header`: `text` opens a block (`def ...:`, `class ...:`). Indented lines, no
    trailing newline."""
    if not 0 <= depth <= len(_CONTEXT):
        raise InternalGeneratorError(f"cannot format a statement at depth {depth}")
    source = [*_CONTEXT[:depth], _INDENT * depth + text]
    if header:
        source.append(_INDENT * (depth + 1) + "pass")
    import black

    try:
        out = black.format_str("\n".join(source) + "\n", mode=black_mode())
    except Exception as exc:  # black raises its own error types (InvalidInput, ...)
        raise InternalGeneratorError(f"black could not format generated statement {text[:80]!r}: {exc}") from exc
    lines = out.rstrip("\n").split("\n")[depth:]
    while lines and not lines[0].strip():
        lines.pop(0)
    if header:
        lines.pop()
    return "\n".join(lines)


def format_python(path: str, text: str) -> str:
    """`text` checked with `ast.parse` and formatted by black (whole file; used to prove stability)."""
    check_python(path, text)
    import black

    try:
        return black.format_str(text, mode=black_mode())
    except Exception as exc:
        raise InternalGeneratorError(f"black could not format generated {path}: {exc}") from exc
