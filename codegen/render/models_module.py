"""models.py of a generated package: one pydantic class per `ModelDef`, one alias per `AliasDef`.

The same text for a client and a server built from one IR (computed once per IR and style).
"""

from __future__ import annotations

import functools

from ..model.ir import FieldDef, ModelDef, ModelsIR, PackageIR, class_refs
from . import black_format, layout, pysource
from .imports import Imports, type_names
from .pysource import Node, PyCode, PySource
from .templates import file_header, render_template
from .typenodes import TypeNames, type_node

__all__ = ["render_models"]

_CLASS = " " * 4


def _field_statement(f: FieldDef, names: TypeNames) -> PyCode:
    """`name: T`, `name: T = default` or `name: T = Field(default=..., ...)`. Written so pyright and
    mypy (with the pydantic plugin or without) read the constructor as pydantic does: a default
    only as `default=` (a positional one reads as required), and a wire name as
    `validation_alias`/`serialization_alias` (`alias` would make it the only keyword a checker
    accepts; `populate_by_name` lets the Python name in at run time too)."""
    annotation = type_node(f.type, names)
    default: Node | None = None
    if not f.required:
        default = pysource.literal_node(f.default if f.has_default else None)
    keywords: list[Node] = []
    if f.name != f.wire_name:
        wire = pysource.literal(f.wire_name)
        keywords += [
            pysource.keyword_arg("validation_alias", wire),
            pysource.keyword_arg("serialization_alias", wire),
        ]
    if f.description is not None:
        keywords.append(pysource.keyword_arg("description", pysource.literal(f.description)))
    for keyword, value in f.constraints:
        keywords.append(pysource.keyword_arg(keyword, pysource.literal(value)))
    mutable = f.has_default and isinstance(f.default, (list, dict))
    if not keywords and not mutable:
        simple = pysource.annotated_name(f.name, annotation, default)
        if f.required or layout.width(_CLASS + pysource.flat(simple)) <= layout.line_length():
            return layout.statement(simple, indent=_CLASS)
        # too long: `= Field(` with the default on its own line, when that line fits; else black's
        # split of the annotation, keeping `= None` on the closing line
        head = _CLASS + pysource.flat(pysource.annotated_name(f.name, annotation, pysource.code("Field(")))
        if layout.width(head) > layout.line_length():
            return layout.statement(simple, indent=_CLASS)
    if default is not None:
        keywords.insert(0, pysource.keyword_arg("default", default))
    field_call = pysource.call(pysource.ident(names.use("Field")), keywords)
    return layout.statement(pysource.annotated_name(f.name, annotation, field_call), indent=_CLASS)


def _model_block(model: ModelDef, names: TypeNames, defined: set[str], imports: Imports) -> PyCode:
    name = pysource.ident(model.name)
    if model.root is not None:
        root = type_node(model.root, names)
        forward = any(ref not in defined for ref in class_refs(model.root))
        argument: Node = pysource.literal(pysource.flat(root)) if forward else root
        base = pysource.seq(
            pysource.ident(imports.add("pydantic", "RootModel")),
            pysource.brk("[", [argument], "]", magic=False),
        )
        lines = [
            layout.class_header(name, [base]),
            _config(imports),
            layout.statement(pysource.annotated_name("root", root), indent=_CLASS),
        ]
        return pysource.join(lines, "\n")
    lines = [layout.class_header(name, [pysource.ident(imports.add("pydantic", "BaseModel"))])]
    renamed = any(f.name != f.wire_name for f in model.fields)
    lines.append(_config(imports, extra=model.extra, populate_by_name=renamed))
    lines += [_field_statement(f, names) for f in model.fields]
    return pysource.join(lines, "\n")


def _config(imports: Imports, *, extra: str | None = None, populate_by_name: bool = False) -> PyCode:
    """`model_config = ConfigDict(defer_build=True, strict=True, ...)`: pydantic builds a model's
    validator when it is first used, not at import (a 1,000-tool client imports in about half the
    time), and forward references are resolved then, so no `model_rebuild()` calls are needed.
    Strict: a constructor refuses what its annotations refuse (`"10"` for an `int`), which is also
    what makes the pydantic mypy plugin check constructor argument types; the runtime parses JSON
    it receives with `strict=False` after the schema check (arrays become tuples)."""
    config_dict = imports.add("pydantic", "ConfigDict")
    return _config_statement(config_dict, extra, populate_by_name, black_format.style())


@functools.lru_cache(maxsize=64)  # one of a few statements, repeated in every class of models.py
def _config_statement(
    config_dict: str, extra: str | None, populate_by_name: bool, _style: black_format.Style
) -> PyCode:
    config = [
        pysource.keyword_arg("defer_build", pysource.literal(True)),
        pysource.keyword_arg("strict", pysource.literal(True)),
    ]
    if extra is not None:
        config.append(pysource.keyword_arg("extra", pysource.literal(extra)))
    if populate_by_name:
        config.append(pysource.keyword_arg("populate_by_name", pysource.literal(True)))
    config_call = pysource.call(pysource.ident(config_dict), config)
    return layout.statement(pysource.seq(pysource.code("model_config = "), config_call), indent=_CLASS)


def _models_body(models: ModelsIR, imports: Imports) -> tuple[PyCode, PyCode]:
    """(the Literal aliases, the classes)."""
    names = type_names(imports, prefix=None)
    aliases = [
        layout.statement(
            pysource.seq(pysource.code(f"{pysource.ident(a.name)} = "), type_node(a.value, names)), indent=""
        )
        for a in models.aliases
    ]
    blocks: list[PySource] = []
    defined: set[str] = set()
    for model in models.models:
        blocks.append(_model_block(model, names, defined, imports))
        defined.add(model.name)
    return pysource.join(aliases, "\n"), pysource.join(blocks, "\n\n\n")


_MODELS_TEXT: dict[int, tuple[ModelsIR, tuple[str, str, str, black_format.Style], str]] = {}


def render_models(ir: PackageIR) -> str:
    """models.py (the same text for a client and a server built from one IR: computed once)."""
    key = (ir.source, ir.digest, ir.generator_version, black_format.style())
    hit = _MODELS_TEXT.get(id(ir.models))
    if hit is not None and hit[0] is ir.models and hit[1] == key:
        return hit[2]
    imports = Imports(future=True)
    aliases, body = _models_body(ir.models, imports)
    text = render_template(
        "models.py.jinja", header=file_header(ir), imports=imports.block(), aliases=aliases, body=body
    )
    _MODELS_TEXT.clear()
    _MODELS_TEXT[id(ir.models)] = (ir.models, key, text)
    return text
