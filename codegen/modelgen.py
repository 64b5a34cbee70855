"""MODEL: tool schemas -> one JSON Schema document -> datamodel-code-generator -> models.py + IR.

1. Names first (`naming`): a PascalCase stem per tool, `<Stem>Input` / `<Stem>Output` classes, and
   `<Stem><Def>Def` for each root `$defs` / `definitions` entry, hoisted so tools cannot clash.
2. One document whose `$defs` hold every schema. Every `$ref` is resolved with `refs.SchemaIndex`
   inside its own tool schema and rewritten to its place in the document; `title`, `$id`,
   `$schema`, `$anchor`, `$dynamicAnchor` are dropped, so server-supplied text never names a class
   and no base URI can point anywhere else. `model_name_map` pins each planned class name to its
   path: datamodel-code-generator either uses our names or fails (never silently renumbers).
3. datamodel-code-generator runs ONCE for the whole package (about 1 s for 117 tools).
4. Its output is read with `ast` (read-only) to learn each input field (Python name, wire name,
   annotation, required, default) and each output's shape; the import block and header are rebuilt
   from that AST (`render.models_module`), the class bodies are kept as written.
"""

from __future__ import annotations

import ast
import functools
import json
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpgen_runtime._version import RUNTIME_API_VERSION, __version__

from . import naming
from .errors import InternalGeneratorError, NameCollisionError, UnsupportedSchemaError
from .ir import ImportIR, ModelsIR, PackageIR, ParamIR, ToolIR
from .refs import (
    DRAFT_2020_12,
    PointerError,
    SchemaIndex,
    SchemaLimitError,
    dialect_of,
    escape_token,
    split_pointer,
)
from .spec import ValidatedSpec

__all__ = [
    "ClassPlan",
    "DcgOutput",
    "build_document",
    "build_ir",
    "plan_classes",
    "read_models",
    "run_datamodel_codegen",
]

_DROPPED_KEYWORDS = ("title", "$id", "$schema", "$anchor", "$dynamicAnchor")
_DEFINITION_KEYWORDS = ("$defs", "definitions")
_MAX_SUBSCHEMAS = 20_000


@dataclass(frozen=True, slots=True)
class ClassPlan:
    wire_name: str
    stem: str
    input_class: str
    output_class: str | None


# ------------------------------------------------------------------------------------------ names


def plan_classes(tools: list[dict[str, Any]], avoid: frozenset[str] = frozenset()) -> list[ClassPlan]:
    """`<Stem>Input` / `<Stem>Output` per tool; a name in `avoid` gets a numeric suffix."""
    stems = naming.class_bases(tool["name"] for tool in tools)
    names = _Names(set(avoid))
    plans = []
    for tool in tools:
        stem = stems[tool["name"]]
        input_class = names.take(f"{stem}Input")
        output_class = names.take(f"{stem}Output") if isinstance(tool.get("outputSchema"), Mapping) else None
        plans.append(ClassPlan(wire_name=tool["name"], stem=stem, input_class=input_class, output_class=output_class))
    return plans


# ---------------------------------------------------------------------------------------- document


def _copy_json(value: Any) -> Any:
    """Deep copy of parsed JSON (dicts and lists), iteratively."""
    if not isinstance(value, (dict, list, Mapping)):
        return value
    root: Any = {} if isinstance(value, Mapping) else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, Mapping) else enumerate(source)
        for key, child in items:
            if isinstance(child, Mapping):
                copy: Any = {}
                stack.append((child, copy))
            elif isinstance(child, list):
                copy = []
                stack.append((child, copy))
            else:
                copy = child
            if isinstance(target, dict):
                target[key] = copy
            else:
                target.append(copy)
    return root


def _node_at(document: Any, tokens: list[str]) -> Any:
    node = document
    for token in tokens:
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def _pointer(tokens: list[str]) -> str:
    return "".join("/" + escape_token(token) for token in tokens)


class _Names:
    """Allocates the pinned class names of one models module (numeric suffix on a clash)."""

    def __init__(self, taken: set[str]) -> None:
        self.used = set(taken)

    def take(self, wanted: str) -> str:
        name, number = wanted, 1
        while name in self.used:
            number += 1
            name = f"{wanted}{number}"
        self.used.add(name)
        return name


def _prepare_schema(
    schema: Mapping[str, Any],
    *,
    wire_name: str,
    member: str,
    root_class: str,
    stem: str,
    names: _Names,
) -> dict[str, Any]:
    """The `$defs` entries for one tool schema: its root under `root_class`, then its hoisted definitions."""
    where = f"tool {wire_name!r} {member}"
    try:
        index = SchemaIndex.build(schema, dialect_of(schema) or DRAFT_2020_12, max_subschemas=_MAX_SUBSCHEMAS)
    except SchemaLimitError as exc:
        raise UnsupportedSchemaError(f"{where}: {exc}") from exc

    # Pointer-token prefixes moved to their own `$defs` entry: root definitions, and the inline object
    # schema of a root array's `items` (so its class is `<Root>Item`, not a name derived twice).
    hoisted: dict[tuple[str, ...], str] = {}
    for keyword in _DEFINITION_KEYWORDS:
        members = schema.get(keyword)
        if isinstance(members, Mapping):
            for key, value in members.items():
                if isinstance(value, (Mapping, bool)):
                    hoisted[(keyword, key)] = names.take(f"{stem}{naming.identifier(key, style='pascal', prefix='Def')}Def")
    items = schema.get("items")
    if isinstance(items, Mapping) and (items.get("type") == "object" or "properties" in items) and "$ref" not in items:
        hoisted[("items",)] = names.take(f"{root_class}Item")

    def target_ref(target: str) -> str:
        tokens = split_pointer(target)
        for size in (2, 1):
            prefix = tuple(tokens[:size])
            if len(tokens) >= size and prefix in hoisted:
                return "#/$defs/" + escape_token(hoisted[prefix]) + _pointer(tokens[size:])
        if tokens and tokens[0] in _DEFINITION_KEYWORDS and len(tokens) < 2:
            raise UnsupportedSchemaError(f"{where}: a $ref names the whole {tokens[0]!r} map, not a schema")
        return "#/$defs/" + escape_token(root_class) + _pointer(tokens)

    rewrites: dict[str, str] = {}  # schema pointer -> its `$ref` / `$dynamicRef`, rewritten as a `$ref`
    for site in index.refs:
        resolution = index.resolve(site)
        if resolution.target is None:
            raise UnsupportedSchemaError(f"{where} at {site.pointer}: {resolution.problem}")
        rewrites[site.schema_pointer] = target_ref(resolution.target)

    copy = _copy_json(schema)
    for pointer in sorted(index.subschemas, key=lambda p: (p.count("/"), p)):
        try:
            node = _node_at(copy, split_pointer(pointer))
        except (KeyError, IndexError, ValueError, TypeError, PointerError) as exc:  # pragma: no cover
            raise InternalGeneratorError(f"{where}: cannot revisit subschema {pointer!r}") from exc
        if not isinstance(node, dict):
            continue
        for keyword in _DROPPED_KEYWORDS:
            if keyword in node and (keyword != "title" or isinstance(node[keyword], str)):
                del node[keyword]
        if pointer in rewrites:
            node.pop("$dynamicRef", None)
            node["$ref"] = rewrites[pointer]

    entries: dict[str, Any] = {root_class: copy}
    definitions = {keyword: copy.pop(keyword, None) for keyword in _DEFINITION_KEYWORDS}
    for prefix, class_name in hoisted.items():
        if prefix == ("items",):
            entries[class_name] = copy["items"]
            copy["items"] = {"$ref": "#/$defs/" + escape_token(class_name)}
        else:
            entries[class_name] = definitions[prefix[0]][prefix[1]]
    return entries


def build_document(
    tools: list[dict[str, Any]], plans: list[ClassPlan], avoid: frozenset[str] = frozenset()
) -> tuple[dict[str, Any], dict[str, str]]:
    """The JSON Schema document for datamodel-code-generator, and its `model_name_map`."""
    planned = {plan.input_class for plan in plans} | {plan.output_class for plan in plans if plan.output_class}
    names = _Names(planned | set(avoid))
    defs: dict[str, Any] = {}
    for tool, plan in zip(tools, plans, strict=True):
        members: list[tuple[str, str]] = [("inputSchema", plan.input_class)]
        if plan.output_class is not None:
            members.append(("outputSchema", plan.output_class))
        for member, root_class in members:
            schema = tool[member]
            if not isinstance(schema, Mapping):
                raise UnsupportedSchemaError(f"tool {plan.wire_name!r}: {member} is not a JSON object")
            defs.update(
                _prepare_schema(
                    schema, wire_name=plan.wire_name, member=member, root_class=root_class, stem=plan.stem, names=names
                )
            )
    document = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}
    return document, {f"#/$defs/{name}": name for name in defs}


# ----------------------------------------------------------------------- datamodel-code-generator

_MAX_RENAMES = 16


class _PinnedNameTaken(Exception):
    """datamodel-code-generator gave one of our planned class names to a nested schema first."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name



def run_datamodel_codegen(document: dict[str, Any], model_name_map: dict[str, str]) -> str:
    """models.py text from datamodel-code-generator (one call for the whole package).

    Memoised by the canonical JSON of its inputs, so building a client and a server from one spec
    runs it once.
    """
    if not document["$defs"]:
        return "from __future__ import annotations\n"
    key = json.dumps([document, model_name_map], ensure_ascii=False, allow_nan=False)
    return _run_datamodel_codegen(key)


@functools.lru_cache(maxsize=4)
def _run_datamodel_codegen(key: str) -> str:
    import datamodel_code_generator as dcg

    document, model_name_map = json.loads(key)
    options: dict[str, Any] = {  # enum options by value: validated by DCG's GenerateConfig
        "input_file_type": "jsonschema",
        "output_model_type": "pydantic_v2.BaseModel",
        "target_python_version": "3.11",
        "snake_case_field": True,
        "use_union_operator": True,
        "use_standard_collections": True,
        "enum_field_as_literal": "all",
        "field_constraints": True,
        "disable_timestamp": True,
        "allow_population_by_field_name": True,
        "use_schema_description": False,
        "use_field_description": False,
        "use_attribute_docstrings": False,
        "use_title_as_name": False,
        "formatters": [],
        "skip_root_model": True,
        "strict_refs": True,
        "allow_remote_refs": False,
        "naming_strategy": "full-path",
        "model_name_map": model_name_map,
    }
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = dcg.generate(document, **options)
    except dcg.Error as exc:
        message = str(exc)
        if "--model-name-map" in message:
            taken = sorted(name for path, name in model_name_map.items() if f"{path!r}" in message)
            if len(taken) == 1:
                raise _PinnedNameTaken(taken[0]) from exc
            raise NameCollisionError(
                "a class name planned for a tool schema is also the name datamodel-code-generator chose for a "
                f"nested schema ({message.splitlines()[0]}); rename the tool or the nested property"
            ) from exc
        raise UnsupportedSchemaError(f"datamodel-code-generator cannot model these schemas: {message}") from exc
    if not isinstance(result, str):
        raise InternalGeneratorError(f"datamodel-code-generator returned {type(result).__name__}, expected one module")
    return result


# --------------------------------------------------------------------------------- reading models


@dataclass(frozen=True, slots=True)
class DcgOutput:
    """datamodel-code-generator's module, split along its AST (nothing is re-parsed with regexes)."""

    body: str  # every line after the import block, without dropped classes
    classes: dict[str, ast.ClassDef]
    imports: tuple[ImportIR, ...]


def read_models(text: str, pinned: set[str]) -> DcgOutput:
    try:
        module = ast.parse(text)
    except SyntaxError as exc:
        raise InternalGeneratorError(f"datamodel-code-generator output does not parse: {exc}") from exc
    lines = text.splitlines(keepends=True)
    imports: list[ImportIR] = []
    body_start = 0
    statements = list(module.body)
    while statements and isinstance(statements[0], (ast.Import, ast.ImportFrom)):
        node = statements.pop(0)
        assert isinstance(node, (ast.Import, ast.ImportFrom))
        body_start = node.end_lineno or node.lineno
        if isinstance(node, ast.ImportFrom):
            if node.level or node.module is None:
                raise InternalGeneratorError("datamodel-code-generator wrote a relative import")
            if node.module == "__future__":
                continue
            for alias in node.names:
                if alias.name == "*":
                    raise InternalGeneratorError("datamodel-code-generator wrote a star import")
                imports.append(ImportIR(alias.asname or alias.name, node.module, alias.name))
        else:
            for alias in node.names:
                if alias.asname is None and "." in alias.name:
                    raise InternalGeneratorError(f"unexpected dotted import {alias.name!r} in models")
                imports.append(ImportIR(alias.asname or alias.name, alias.name, None))
    for node in statements:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            raise InternalGeneratorError("datamodel-code-generator wrote an import after its import block")

    dropped: list[tuple[int, int]] = []
    classes: dict[str, ast.ClassDef] = {}
    for node in statements:
        if isinstance(node, ast.ClassDef):
            if node.name == "Model" and "Model" not in pinned:  # the container document's own root model
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                dropped.append((start, node.end_lineno or node.lineno))
                continue
            if node.name in classes:
                raise InternalGeneratorError(f"datamodel-code-generator defined class {node.name!r} twice")
            classes[node.name] = node
    kept = [
        line
        for number, line in enumerate(lines[body_start:], start=body_start + 1)
        if not any(start <= number <= end for start, end in dropped)
    ]
    return DcgOutput(body="".join(kept), classes=classes, imports=tuple(imports))


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


_MAX_BASES_DEPTH = 64


def _model_bases(cls: ast.ClassDef, classes: Mapping[str, ast.ClassDef]) -> list[ast.ClassDef]:
    """The bases of `cls` defined in the same models module (DCG models allOf as inheritance)."""
    return [classes[base.id] for base in cls.bases if isinstance(base, ast.Name) and base.id in classes]


def _root_annotation(cls: ast.ClassDef, classes: Mapping[str, ast.ClassDef], depth: int = 0) -> ast.expr | None:
    """T for `class X(RootModel[T])` (directly or through a model base), None for a BaseModel."""
    if depth > _MAX_BASES_DEPTH:
        raise InternalGeneratorError(f"class {cls.name!r}: model inheritance too deep")
    for base in cls.bases:
        if isinstance(base, ast.Subscript) and _is_name(base.value, "RootModel"):
            return base.slice
        if _is_name(base, "RootModel"):
            raise InternalGeneratorError(f"class {cls.name!r} is an unparameterised RootModel")
    for parent in _model_bases(cls, classes):
        found = _root_annotation(parent, classes, depth + 1)
        if found is not None:
            return found
    return None


def _field_statements(
    cls: ast.ClassDef, classes: Mapping[str, ast.ClassDef], depth: int = 0
) -> dict[str, tuple[ast.AnnAssign, str]]:
    """Field name -> (statement, defining class), in pydantic's order: bases (last first), then own."""
    if depth > _MAX_BASES_DEPTH:
        raise InternalGeneratorError(f"class {cls.name!r}: model inheritance too deep")
    fields: dict[str, tuple[ast.AnnAssign, str]] = {}
    for parent in reversed(_model_bases(cls, classes)):
        fields.update(_field_statements(parent, classes, depth + 1))
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id != "model_config":
            fields[stmt.target.id] = (stmt, cls.name)
    return fields


def _json_scalar(node: ast.expr) -> tuple[bool, Any]:
    """(True, value) when `node` is a literal JSON scalar; (False, None) otherwise."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None
    if value is None or isinstance(value, (str, bool, int)):
        return True, value
    if isinstance(value, float) and math.isfinite(value):
        return True, value
    return False, None


def _read_field(stmt: ast.AnnAssign, cls_name: str) -> tuple[str, str, ast.expr, bool, bool, Any, str | None]:
    """(field name, wire name, annotation, required, has scalar default, default, description)."""
    if not isinstance(stmt.target, ast.Name):
        raise InternalGeneratorError(f"class {cls_name!r}: unexpected field target")
    name = stmt.target.id
    wire = name
    description: str | None = None
    value = stmt.value
    default: ast.expr | None = None
    required = False
    factory = False
    if value is None:
        required = True
    elif isinstance(value, ast.Call) and _is_name(value.func, "Field"):
        keywords = {kw.arg: kw.value for kw in value.keywords if kw.arg is not None}
        if value.args:
            default = value.args[0]
        elif "default" in keywords:
            default = keywords["default"]
        if "default_factory" in keywords:
            factory = True
        elif default is None or (isinstance(default, ast.Constant) and default.value is Ellipsis):
            required = True
            default = None
        alias = keywords.get("alias")
        if alias is not None:
            if not (isinstance(alias, ast.Constant) and isinstance(alias.value, str)):
                raise InternalGeneratorError(f"class {cls_name!r}: field {name!r} has a non-literal alias")
            wire = alias.value
        described = keywords.get("description")
        if isinstance(described, ast.Constant) and isinstance(described.value, str):
            description = described.value
    else:
        default = value
    if required:
        return name, wire, stmt.annotation, True, False, None, description
    if factory or default is None:
        return name, wire, stmt.annotation, False, False, None, description
    is_scalar, scalar = _json_scalar(default)
    return name, wire, stmt.annotation, False, is_scalar, scalar, description


_PARAM_RESERVED = frozenset({"self", "_m"})


def _param_name(field_name: str, used: set[str]) -> str:
    name = field_name
    if (
        not name.isascii()
        or not name.isidentifier()
        or name in naming.KEYWORDS
        or name in _PARAM_RESERVED
        or name.startswith("_")
    ):
        name = naming.identifier(field_name, style="snake", reserved=_PARAM_RESERVED, prefix="arg")
    base, number = name, 1
    while name in used:
        number += 1
        name = f"{base}_{number}"
    used.add(name)
    return name


def _read_params(cls: ast.ClassDef, classes: Mapping[str, ast.ClassDef]) -> tuple[ParamIR, ...]:
    params: list[ParamIR] = []
    used: set[str] = set()
    for stmt, owner in _field_statements(cls, classes).values():
        field_name, wire, annotation, required, has_default, default, description = _read_field(stmt, owner)
        params.append(
            ParamIR(
                name=_param_name(field_name, used),
                field_name=field_name,
                wire_name=wire,
                annotation=annotation,
                required=required,
                has_default=has_default,
                default=default,
                description=description,
            )
        )
    wires = [param.wire_name for param in params]
    if len(set(wires)) != len(wires):
        raise InternalGeneratorError(f"class {cls.name!r}: two fields share one wire name")
    return tuple(params)


def _text(tool: Mapping[str, Any], key: str) -> str | None:
    value = tool.get(key)
    return value if isinstance(value, str) and value.strip() else None


def build_ir(spec: ValidatedSpec, *, package: str) -> PackageIR:
    """Validated tools -> PackageIR (runs datamodel-code-generator once)."""
    tools = [dict(tool) for tool in spec.tools]
    wire_names = [tool["name"] for tool in tools]
    if len(set(wire_names)) != len(wire_names):
        raise NameCollisionError("duplicate tool names reached the generator (TOOLS-15)")
    # A nested schema may take a planned name first (tool `a` with an inline object `b_input` vs tool
    # `a_input_b`): plan again around that name, deterministically, a bounded number of times.
    avoid: set[str] = set()
    for _ in range(_MAX_RENAMES):
        plans = plan_classes(tools, frozenset(avoid))
        document, name_map = build_document(tools, plans, frozenset(avoid))
        try:
            text = run_datamodel_codegen(document, name_map)
        except _PinnedNameTaken as taken:
            avoid.add(taken.name)
            continue
        break
    else:
        raise NameCollisionError(f"class names of nested schemas keep colliding with tool classes: {sorted(avoid)!r}")
    output = read_models(text, set(name_map.values()))
    required = {plan.input_class for plan in plans} | {plan.output_class for plan in plans if plan.output_class}
    missing = sorted(required - set(output.classes))  # hoisted definitions may legitimately yield no class
    if missing:
        raise InternalGeneratorError(f"datamodel-code-generator did not define {missing[:5]!r}")

    reserved_extra = {imp.local for imp in output.imports} | {imp.name or imp.module for imp in output.imports}
    methods = naming.method_names(wire_names, extra_reserved=reserved_extra)

    tool_irs: list[ToolIR] = []
    for tool, plan in zip(tools, plans, strict=True):
        input_cls = output.classes[plan.input_class]
        input_root = _root_annotation(input_cls, output.classes)
        params = () if input_root is not None else _read_params(input_cls, output.classes)
        output_root = None
        if plan.output_class is not None:
            output_root = _root_annotation(output.classes[plan.output_class], output.classes)
        tool_irs.append(
            ToolIR(
                wire_name=plan.wire_name,
                method_name=methods[plan.wire_name],
                input_class=plan.input_class,
                output_class=plan.output_class,
                output_root_annotation=output_root,
                params=params,
                description=_text(tool, "description"),
                title=_text(tool, "title"),
                input_root_annotation=input_root,
            )
        )
    models = ModelsIR(source=output.body, classes=frozenset(output.classes), imports=output.imports)
    return PackageIR(
        package=package,
        source=spec.source,
        digest=spec.digest,
        generator_version=__version__,
        runtime_api_version=RUNTIME_API_VERSION,
        tools=tuple(tool_irs),
        models=models,
        definitions=tuple(tools),
    )

