"""Black, as RENDER uses it: generated Python is written already formatted, then parsed once to prove
it is Python. Formatting is not a stage after rendering; it is how rendering writes.

The layout follows the formatter configuration of the project the code lands in (`Style`: black's
`line-length`, `target-version` and `skip-magic-trailing-comma` from the nearest pyproject.toml,
read by `cli.config.project_style`; black's defaults without one), so the user's `black .` leaves
generated files unchanged and `mcpgen generate --check` stays green after it. The style in force is
a context variable (`formatting(style)`): `layout` and `pysource` read `line_length()` while they
lay statements out.

`layout` lays every statement out the way black (pinned in pyproject.toml, explicit `Mode`) would.
The few statements whose layout it cannot be sure of are handed to black one at a time
(`black_statement`, memoised per style): that is black's own output for that statement in its block,
so the file stays what black would make of it. Running black over whole files (`format_python`)
gives the same bytes; tests/codegen prove that for every spec in specs/, the hostile corpus and a
1,000-tool synthetic spec, instead of paying for it (3 s for the 117-tool GitHub client) on every
run. A style the layout engine does not model (`skip-magic-trailing-comma`, black's preview
features: black then joins split brackets that fit) is honoured by running black over each file.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import InternalGeneratorError

if TYPE_CHECKING:
    import black

__all__ = [
    "BLACK_DEFAULTS",
    "DEFAULT_LINE_LENGTH",
    "LINE_LENGTH_RANGE",
    "Style",
    "black_mode",
    "black_statement",
    "check_python",
    "format_python",
    "formatting",
    "line_length",
    "style",
]

DEFAULT_LINE_LENGTH = 88  # black's own default
# Below this the templates' fixed statements (imports, `load_package_tools(...)`) no longer fit a
# line (they do down to 68 today): black, not `layout`, then lays out each file.
LAYOUT_MIN_LINE_LENGTH = 79
_FIRST_TRAILING_COMMA_VERSION = 6  # Python 3.6 allows `f(*args,)` and `def f(*, a,)`
LINE_LENGTH_RANGE = range(20, 1001)  # what `[tool.black]`, `[tool.mcpgen]` and --line-length accept


@dataclass(frozen=True, slots=True)
class Style:
    """The formatter settings generated code is laid out for (black's names, lower case)."""

    line_length: int = DEFAULT_LINE_LENGTH
    target_versions: tuple[str, ...] = ()  # e.g. ("py311",); () lets black infer them, as it does
    skip_magic_trailing_comma: bool = False
    preview: bool = False
    unstable: bool = False  # black's preview plus its unstable features

    @property
    def layout_exact(self) -> bool:
        """True when `layout` writes black's output itself; otherwise each file goes through black."""
        old_targets = any(int(name[3:]) < _FIRST_TRAILING_COMMA_VERSION for name in self.target_versions)
        return self.line_length >= LAYOUT_MIN_LINE_LENGTH and not (
            self.skip_magic_trailing_comma or self.preview or self.unstable or old_targets
        )

    def describe(self) -> str:
        extras = [f"target-version {','.join(self.target_versions)}"] if self.target_versions else []
        extras += ["skip-magic-trailing-comma"] * self.skip_magic_trailing_comma + ["preview"] * self.preview
        extras += ["unstable"] * self.unstable
        return ", ".join([f"line-length {self.line_length}", *extras])


BLACK_DEFAULTS = Style()
_STYLE: contextvars.ContextVar[Style] = contextvars.ContextVar("mcpgen_style", default=BLACK_DEFAULTS)


def style() -> Style:
    """The style statements are being laid out for."""
    return _STYLE.get()


def line_length() -> int:
    return _STYLE.get().line_length


@contextlib.contextmanager
def formatting(new: Style) -> Iterator[Style]:
    """Lay out generated code for `new` inside the block."""
    token = _STYLE.set(new)
    try:
        yield new
    finally:
        _STYLE.reset(token)


def black_mode(for_style: Style | None = None) -> black.Mode:
    """black's Mode for a style (the one in force by default; black is imported on first use)."""
    return _black_mode(style() if for_style is None else for_style)


@functools.cache
def _black_mode(chosen: Style, *, statement: bool = False) -> black.Mode:
    import black
    from black.mode import TargetVersion

    versions = {TargetVersion[name.upper()] for name in chosen.target_versions}
    if statement and not versions:
        # black infers a file's target versions from the features it uses; a statement alone says
        # too little. `layout` writes the trailing comma after a split `*` or `**` parameter or
        # argument, which black reads as "Python 3.6 or later": statements are formatted so.
        versions = {version for version in TargetVersion if version.value >= _FIRST_TRAILING_COMMA_VERSION}
    return black.Mode(
        target_versions=versions,
        line_length=chosen.line_length,
        string_normalization=True,
        is_pyi=False,
        magic_trailing_comma=not chosen.skip_magic_trailing_comma,
        preview=chosen.preview,
        unstable=chosen.unstable,
    )


def __getattr__(name: str) -> Any:  # `black_format.BLACK_MODE`, without importing black at import time
    if name == "BLACK_MODE":
        return black_mode(style())
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


def black_statement(text: str, depth: int, header: bool = False) -> str:
    """black's layout of one statement (`text`, on one line) at block depth 0, 1 (a class body) or 2
    (a method body) in the style in force; `header`: `text` opens a block (`def ...:`, `class ...:`).
    Indented lines, no trailing newline."""
    return _black_statement(text, depth, header, style())


@functools.lru_cache(maxsize=4096)
def _black_statement(text: str, depth: int, header: bool, for_style: Style) -> str:
    if not 0 <= depth <= len(_CONTEXT):
        raise InternalGeneratorError(f"cannot format a statement at depth {depth}")
    source = [*_CONTEXT[:depth], _INDENT * depth + text]
    if header:
        source.append(_INDENT * (depth + 1) + "pass")
    import black

    try:
        out = black.format_str("\n".join(source) + "\n", mode=_black_mode(for_style, statement=True))
    except Exception as exc:  # black raises its own error types (InvalidInput, ...)
        raise InternalGeneratorError(
            f"black could not format generated statement {text[:80]!r}: {exc}"
        ) from exc
    lines = out.rstrip("\n").split("\n")[depth:]
    while lines and not lines[0].strip():
        lines.pop(0)
    if header:
        lines.pop()
    return "\n".join(lines)


def format_python(path: str, text: str, for_style: Style | None = None) -> str:
    """`text` checked with `ast.parse` and formatted by black in the style in force (whole file:
    styles `layout` does not model, and tests proving the layout is black's)."""
    check_python(path, text)
    import black

    try:
        return black.format_str(text, mode=black_mode(for_style or style()))
    except Exception as exc:
        raise InternalGeneratorError(f"black could not format generated {path}: {exc}") from exc
