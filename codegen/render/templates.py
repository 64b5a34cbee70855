"""The Jinja environment generated files are rendered in, and the header every file opens with.

Templates (`templates/`, `codegen/_templates` in a wheel) only place blocks and fixed text. Every value
they print is a `pysource.PySource` marker: the environment's `finalize` hook refuses anything else, and
its filters are removed so no filter can turn a plain string into output.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from ..errors import InternalGeneratorError
from ..model.ir import PackageIR
from .python import pysource
from .python.pysource import PyComment, PySource

__all__ = ["Header", "environment", "file_header", "render_template", "templates_dir"]


def templates_dir() -> Path:
    """`codegen/_templates` in an installed wheel, else `<repo>/templates` in a source checkout."""
    package = Path(__file__).resolve().parent.parent  # codegen/
    for candidate in (package / "_templates", package.parent / "templates"):
        if candidate.is_dir():
            return candidate
    raise InternalGeneratorError(f"template directory not found next to {package}")


def _finalize(value: Any) -> Any:
    # Macros return markupsafe.Markup (autoescape is on); their own output went through this hook.
    if isinstance(value, (PySource, markupsafe.Markup)):
        return value
    if isinstance(value, jinja2.Undefined):
        str(value)  # StrictUndefined raises UndefinedError naming the missing variable
    raise InternalGeneratorError(
        f"template tried to output unchecked {type(value).__name__} {value!r:.80}; "
        "build it with codegen.render.python.pysource"
    )


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=True,  # plain strings would be HTML-escaped (and finalize rejects them first)
        finalize=_finalize,
        auto_reload=False,
    )
    env.filters.clear()  # no |safe, |e, |join, |format ...: nothing can launder a str into output
    return env


@functools.cache  # models.py renders one template a thousand times
def _template(name: str) -> jinja2.Template:
    return environment().get_template(name)


def render_template(template: str, **context: Any) -> str:
    try:
        return _template(template).render(**context)
    except InternalGeneratorError as exc:
        raise InternalGeneratorError(f"{template}: {exc}") from exc
    except jinja2.TemplateError as exc:
        raise InternalGeneratorError(f"{template}: {type(exc).__name__}: {exc}") from exc


@dataclass(frozen=True)
class Header:
    """The three comments that open every generated file (templates/_macros/common.jinja)."""

    version: PyComment
    source: PyComment
    digest: PyComment


def file_header(ir: PackageIR) -> Header:
    digest = ir.digest
    if not (len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
        raise InternalGeneratorError(f"digest {digest!r:.80} is not a sha256 hex string")
    return Header(
        version=pysource.comment(ir.generator_version),
        source=pysource.comment(ir.source or "<unknown>"),
        digest=pysource.comment(digest),
    )
