"""RENDER: the server side of resources, resource templates and prompts (`SurfacesIR`, model/surfaces.py)
as the statements and methods of a generated server's base.py and handlers.py scaffold.

    _surface_definitions_ = load_package_surfaces(__package__ or __name__)    # surfaces.json, data
    _static_resource_method_ = "read_static_resource"
    _resource_template_bindings_ = (ResourceTemplateBinding(uri_template=..., method=..., params=...),)
    _prompt_bindings_ = (PromptBinding(name=..., method=..., params=...),)
    _completion_bindings_ = (CompletionBinding(ref=..., key=..., argument=..., method=...),)

    async def read_static_resource(self, uri: str, ctx: RequestContext) -> ResourceReturn
    async def read_<template>(self, ctx: RequestContext, *, <variable>: str, ...) -> ResourceReturn
    async def prompt_<prompt>(self, ctx: RequestContext, *, <argument>: str, ...) -> PromptReturn
    async def complete_<method>_<parameter>(self, value: str, context: Mapping[str, str],
                                            ctx: RequestContext) -> CompletionReturn

Every Python name comes from the IR (template and prompt methods, parameters) or is derived here from
IR names and checked free (the static reader, the completion methods); wire names, URIs and URI
templates appear only as literals (the repr of validated strings), descriptions only in docstrings
(`pysource.docstring` escapes them), and the definitions themselves travel as data in surfaces.json.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import InternalGeneratorError
from ..model.surfaces import PromptIR, SurfaceParam, SurfacesIR, TemplateIR
from .python import layout, pysource, spelling
from .python.imports import Imports
from .python.pysource import Node, PyCode

__all__ = ["STATIC_READER", "ServerSurfaces", "render_server_surfaces"]

STATIC_READER = "read_static_resource"
_CLASS = " " * 4
_METHOD = " " * 8
_SERVER = "mcpgen_runtime.server"


@dataclass(frozen=True)
class ServerSurfaces:
    """What base.py / handlers.py gain: class attributes (base.py only) and methods, in order."""

    attributes: PyCode | None
    methods: tuple[PyCode, ...]
    method_names: tuple[str, ...]


def _free(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _binding_key(item: TemplateIR | PromptIR) -> str:
    """What a binding is looked up by: a template's wire URI template, a prompt's wire name."""
    return item.uri_template if isinstance(item, TemplateIR) else item.wire_name


def _params_literal(params: Iterable[SurfaceParam]) -> Node:
    pairs: list[Node] = [
        pysource.brk("(", [pysource.literal(p.wire_name), pysource.literal(p.name)], ")", magic=False)
        for p in params
    ]
    return pysource.brk("(", pairs, ")", one_tuple=True) if pairs else pysource.code("()")


def _doc(text: str | None, fallback: str, params: Iterable[SurfaceParam] = ()) -> str:
    doc = spelling.clean_text(text or "") or fallback
    described = [p for p in params if p.description]
    if described:
        doc += "\n\nArgs:\n" + "\n".join(
            f"    {p.name}: {spelling.clean_text(p.description or '')}" for p in described
        )
    return doc


def _method(name: str, params: list[Node], returns: str, doc: str) -> PyCode:
    header = layout.def_header(
        pysource.ident(name), params, pysource.ident(returns), indent=_CLASS, is_async=True
    )
    docstring = pysource.docstring(doc, indent=_METHOD)
    body = layout.statement(pysource.code("raise NotImplementedError"), indent=_METHOD)
    return pysource.join([header, pysource.indent_first(docstring, _METHOD), body], "\n")


def _keyword_params(params: Iterable[SurfaceParam], ctx: str) -> list[Node]:
    params = tuple(params)
    # The runtime passes the context positionally: its parameter is `ctx` unless an argument is.
    ctx_name = _free("ctx", {p.name for p in params})
    out: list[Node] = [pysource.code("self"), pysource.annotated_name(ctx_name, pysource.ident(ctx))]
    keyword: list[Node] = []
    for param in params:
        if param.required:
            keyword.append(pysource.annotated_name(param.name, pysource.code("str")))
        else:
            keyword.append(
                pysource.annotated_name(param.name, pysource.code("str | None"), pysource.code("None"))
            )
    if keyword:
        out += [pysource.code("*"), *keyword]
    return out


def render_server_surfaces(
    surfaces: SurfacesIR, imports: Imports, *, taken: Iterable[str], base: bool
) -> ServerSurfaces:
    """The statements (base.py: `base=True`) and stub methods for `surfaces`; `taken`: every name the
    class already has (tool methods, runtime attributes), `imports` gains what they use."""
    if not surfaces:
        return ServerSurfaces(None, (), ())
    names = set(taken) | set(surfaces.method_names)
    for method in surfaces.method_names:
        if method in taken:
            raise InternalGeneratorError(f"surface method {method!r} would shadow another name")
    ctx = imports.add(_SERVER, "RequestContext")
    methods: list[PyCode] = []
    method_names: list[str] = []
    completions: list[tuple[str, str, str, str]] = []  # (ref, key, argument wire name, method)
    if surfaces.resources:
        static = _free(STATIC_READER, names)
        returns = imports.add(_SERVER, "ResourceReturn")
        params: list[Node] = [
            pysource.code("self"),
            pysource.annotated_name("uri", pysource.code("str")),
            pysource.annotated_name("ctx", pysource.ident(ctx)),
        ]
        doc = (
            "Read one of the static resources (surfaces.json lists them): return str (text), bytes\n"
            "(binary) or contents; raise ResourceNotFound(uri) for a URI you do not serve."
        )
        methods.append(_method(static, params, returns, doc))
        method_names.append(static)
    else:
        static = None
    template: TemplateIR
    for template in surfaces.templates:
        returns = imports.add(_SERVER, "ResourceReturn")
        doc = _doc(
            template.description or template.title, f"Read {template.uri_template!r}.", template.params
        )
        methods.append(_method(template.method_name, _keyword_params(template.params, ctx), returns, doc))
        method_names.append(template.method_name)
        completions += [
            ("resource", template.uri_template, p.wire_name, f"{template.method_name.rstrip('_')}_{p.name}")
            for p in template.params
        ]
    prompt: PromptIR
    for prompt in surfaces.prompts:
        returns = imports.add(_SERVER, "PromptReturn")
        doc = _doc(prompt.description or prompt.title, f"The prompt {prompt.wire_name!r}.", prompt.params)
        methods.append(_method(prompt.method_name, _keyword_params(prompt.params, ctx), returns, doc))
        method_names.append(prompt.method_name)
        completions += [
            ("prompt", prompt.wire_name, p.wire_name, f"{prompt.method_name.rstrip('_')}_{p.name}")
            for p in prompt.params
        ]
    completion_methods: list[tuple[str, str, str, str]] = []
    if completions:
        returns = imports.add(_SERVER, "CompletionReturn")
        mapping = imports.add("collections.abc", "Mapping")
        for ref, key, argument, stem in completions:
            name = _free(f"complete_{stem}", names)
            completion_methods.append((ref, key, argument, name))
            params = [
                pysource.code("self"),
                pysource.annotated_name("value", pysource.code("str")),
                pysource.annotated_name(
                    "context", pysource.seq(pysource.ident(mapping), pysource.code("[str, str]"))
                ),
                pysource.annotated_name("ctx", pysource.ident(ctx)),
            ]
            doc = (
                f"Values for {argument!r} that start like `value` (`context`: the other arguments chosen\n"
                "so far); at most 100 are sent. Not overridden: no suggestions."
            )
            methods.append(_method(name, params, returns, doc))
            method_names.append(name)
    attributes: PyCode | None = None
    if base:
        statements: list[PyCode] = []
        load = imports.add(_SERVER, "load_package_surfaces")
        statements.append(
            layout.statement(
                pysource.seq(
                    pysource.code("_surface_definitions_ = "),
                    pysource.call(pysource.ident(load), [pysource.code("__package__ or __name__")]),
                ),
                indent=_CLASS,
            )
        )
        if static is not None:
            statements.append(
                layout.statement(
                    pysource.seq(pysource.code("_static_resource_method_ = "), pysource.literal(static)),
                    indent=_CLASS,
                )
            )
        for items, binding_class, key, constant in (
            (surfaces.templates, "ResourceTemplateBinding", "uri_template", "_resource_template_bindings_"),
            (surfaces.prompts, "PromptBinding", "name", "_prompt_bindings_"),
        ):
            if not items:
                continue
            binding = imports.add(_SERVER, binding_class)
            entries = [
                pysource.call(
                    pysource.ident(binding),
                    [
                        pysource.keyword_arg(key, pysource.literal(_binding_key(item))),
                        pysource.keyword_arg("method", pysource.literal(item.method_name)),
                        pysource.keyword_arg("params", _params_literal(item.params)),
                    ],
                )
                for item in items
            ]
            statements.append(_tuple_statement(constant, entries))
        if completion_methods:
            binding = imports.add(_SERVER, "CompletionBinding")
            entries = [
                pysource.call(
                    pysource.ident(binding),
                    [
                        pysource.keyword_arg("ref", pysource.literal(ref)),
                        pysource.keyword_arg("key", pysource.literal(key)),
                        pysource.keyword_arg("argument", pysource.literal(argument)),
                        pysource.keyword_arg("method", pysource.literal(name)),
                    ],
                )
                for ref, key, argument, name in completion_methods
            ]
            statements.append(_tuple_statement("_completion_bindings_", entries))
        attributes = pysource.join(statements, "\n")
    return ServerSurfaces(attributes, tuple(methods), tuple(method_names))


def _tuple_statement(name: str, entries: Sequence[Node]) -> PyCode:
    value = pysource.brk("(", list(entries), ")", one_tuple=True)
    return layout.statement(pysource.seq(pysource.code(f"{name} = "), value), indent=_CLASS)
