"""MODEL output: what the templates render, with every name resolved and every order fixed.

Built by `modelgen.build_ir` from the validated tools and the models.py that
datamodel-code-generator wrote for them. Annotations are kept as AST nodes in the namespace of
models.py; `render` re-targets them (model classes -> `_m.X`) and emits them through `pysource`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

__all__ = ["ImportIR", "ModelsIR", "PackageIR", "ParamIR", "ToolIR"]

JsonScalar = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class ImportIR:
    """One name models.py imports: `from module import name as local` (or `import module as local`)."""

    local: str  # the name models.py uses
    module: str
    name: str | None  # None for `import module`


@dataclass(frozen=True, slots=True)
class ParamIR:
    """One field of a tool's input model, as a method parameter."""

    name: str  # Python parameter name (usually the model's field name)
    field_name: str  # attribute on the input model
    wire_name: str  # JSON key sent to the server (alias, or the field name)
    annotation: ast.expr  # the field's annotation, models.py namespace
    required: bool
    has_default: bool  # True: `default` is a JSON scalar to put in the signature; False: `None`
    default: JsonScalar
    description: str | None


@dataclass(frozen=True, slots=True)
class ToolIR:
    wire_name: str
    method_name: str
    input_class: str
    output_class: str | None  # None: the tool has no outputSchema
    output_root_annotation: ast.expr | None  # set when the output model is a RootModel[...]
    params: tuple[ParamIR, ...]
    description: str | None
    title: str | None
    input_root_annotation: ast.expr | None = None  # the input model is a RootModel: one `arguments` param

    @property
    def output_is_root(self) -> bool:
        return self.output_root_annotation is not None


@dataclass(frozen=True, slots=True)
class ModelsIR:
    """models.py as text (our header, sorted imports, DCG's classes) plus what was read from it."""

    source: str  # DCG's module after its import block (class definitions), unformatted
    classes: frozenset[str]  # every class defined at module level
    imports: tuple[ImportIR, ...]  # every name it imports (except `from __future__`)


@dataclass(frozen=True, slots=True)
class PackageIR:
    package: str
    source: str  # display name of the input (untrusted text)
    digest: str  # sha256 hex of the canonical input
    generator_version: str
    runtime_api_version: int
    tools: tuple[ToolIR, ...]  # source order
    models: ModelsIR
    definitions: tuple[dict[str, Any], ...]  # the validated tool objects, source order (tools.json)
