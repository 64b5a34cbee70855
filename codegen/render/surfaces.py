"""RENDER a client's methods for resource templates and prompts, and its listing of static resources.

From `model/surfaces.py`'s IR, through `pysource` only (every name an identifier the model checked,
every wire text a literal, every description an escaped docstring):

    def read_project_files(self, *, path: str, rev: str | Unset = UNSET) -> ReadResourceResult:
        \"\"\"Files of the project. ... URI template: file:///{path}{?rev}\"\"\"
        return self._read_template("file:///{path}{?rev}", {"path": path, "rev": rev})

    def prompt_code_review(self, *, code: str, language: str | Unset = UNSET) -> PromptResult:
        return self._get_prompt("code_review", {"code": code, "language": language})

    class Resources:
        README: Final = "file:///README.md"

The runtime expands the template by RFC 6570 (`mcpgen_runtime.uri_template`) and leaves `UNSET`
arguments out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..model.surfaces import PromptIR, ResourceIR, SurfaceParam, SurfacesIR, TemplateIR
from .python import layout, pysource, spelling
from .python.imports import Imports
from .python.pysource import Node, PyCode

__all__ = ["SurfaceMethods", "render_resources_class", "render_surface_methods"]

_CLASS = " " * 4
_METHOD = " " * 8


@dataclass(frozen=True)
class SurfaceMethods:
    sync: list[PyCode]
    async_: list[PyCode]


def _args_section(params: Iterable[SurfaceParam]) -> str:
    entries = []
    for param in params:
        text = spelling.clean_text(param.description or "", keep_newlines=False)
        if text:
            entries.append(f"    {param.name}: {text}")
    return "\n\nArgs:\n" + "\n".join(entries) if entries else ""


def _params(params: tuple[SurfaceParam, ...], imports: Imports) -> tuple[list[Node], Node]:
    """Keyword-only `str` parameters (optional ones `str | Unset = UNSET`) and the wire mapping."""
    nodes: list[Node] = [pysource.code("self")]
    if params:
        nodes.append(pysource.code("*"))
    items: list[Node] = []
    for param in params:
        if param.required:
            nodes.append(pysource.annotated_name(param.name, pysource.code("str")))
        else:
            unset_type = pysource.ident(imports.add("mcpgen_runtime.types", "Unset"))
            unset = pysource.ident(imports.add("mcpgen_runtime.types", "UNSET"))
            nodes.append(
                pysource.annotated_name(
                    param.name, pysource.union_of([pysource.code("str"), unset_type]), unset
                )
            )
        items.append(
            pysource.seq(pysource.literal(param.wire_name), pysource.code(": "), pysource.ident(param.name))
        )
    mapping = pysource.brk("{", items, "}") if items else pysource.code("{}")
    return nodes, mapping


def _method(
    name: str, params: list[Node], returns: Node, doc: str, helper: str, args: list[Node]
) -> tuple[PyCode, PyCode]:
    docstring = pysource.docstring(doc, indent=_METHOD)

    def one(is_async: bool) -> PyCode:
        header = layout.def_header(pysource.ident(name), params, returns, indent=_CLASS, is_async=is_async)
        awaited = "await " if is_async else ""
        invoke = pysource.call(pysource.code(f"return {awaited}self.{helper}"), args)
        body = layout.statement(invoke, indent=_METHOD)
        return pysource.join([header, pysource.indent_first(docstring, _METHOD), body], "\n")

    return one(False), one(True)


def _template_doc(template: TemplateIR) -> str:
    text = spelling.clean_text(template.description or "") or spelling.clean_text(template.title or "")
    text = text or f"Read the {template.wire_name!r} resource template."
    where = spelling.clean_text(template.uri_template, keep_newlines=False)
    return f"{text}\n\nURI template: {where}" + _args_section(template.params)


def _prompt_doc(prompt: PromptIR) -> str:
    text = spelling.clean_text(prompt.description or "") or spelling.clean_text(prompt.title or "")
    text = text or f"Get the {prompt.wire_name!r} prompt."
    return text + _args_section(prompt.params)


def render_surface_methods(surfaces: SurfacesIR, imports: Imports) -> SurfaceMethods:
    """One method per resource template and per prompt, for `Client` and for `AsyncClient`."""
    sync: list[PyCode] = []
    async_: list[PyCode] = []
    kinds: tuple[tuple[tuple[TemplateIR, ...] | tuple[PromptIR, ...], str, str], ...] = (
        (surfaces.templates, "ReadResourceResult", "_read_template"),
        (surfaces.prompts, "PromptResult", "_get_prompt"),
    )
    for items, result_class, runtime_method in kinds:
        if not items:
            continue
        result = pysource.ident(imports.add("mcpgen_runtime.surfaces", result_class))
        for item in items:
            params, mapping = _params(item.params, imports)
            if isinstance(item, TemplateIR):
                doc, key = _template_doc(item), item.uri_template
            else:
                doc, key = _prompt_doc(item), item.wire_name
            one, other = _method(
                item.method_name, params, result, doc, runtime_method, [pysource.literal(key), mapping]
            )
            sync.append(one)
            async_.append(other)
    return SurfaceMethods(sync, async_)


def render_resources_class(resources: tuple[ResourceIR, ...], imports: Imports) -> PyCode | None:
    """`class Resources:` with one `Final` constant per static resource (its URI), or None."""
    if not resources:
        return None
    final = imports.add("typing", "Final")
    lines: list[PyCode] = [
        pysource.code("class Resources:"),
        pysource.indent_first(
            pysource.docstring(
                "The static resources the server listed (`resources/list`) when this package was\n"
                "generated: `client.read_resource(Resources.NAME)`. A server may list others at run time\n"
                "(`client.list_all_resources()`).",
                indent=_CLASS,
            ),
            _CLASS,
        ),
        pysource.code(""),
    ]
    for resource in resources:
        statement = pysource.seq(
            pysource.ident(resource.constant_name),
            pysource.code(f": {final} = "),
            pysource.literal(resource.uri),
        )
        lines.append(layout.statement(statement, indent=_CLASS))
    return pysource.join(lines, "\n")
