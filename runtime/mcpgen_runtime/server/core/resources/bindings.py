"""What a generated base declares beside its tools (surfaces.json and the bindings of its
methods), and the adapters that make those methods the handlers `Surfaces` calls (surfaces.py).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from importlib import resources as _package_files
from typing import Any, Literal

from ..context import RequestContext
from .surfaces import CompletionHandler, PromptHandler, TemplateReader
from .uri_match import Variables

__all__ = [
    "CompletionBinding",
    "PromptBinding",
    "ResourceTemplateBinding",
    "completer",
    "load_package_surfaces",
    "prompt_getter",
    "template_reader",
]


@dataclass(frozen=True)
class ResourceTemplateBinding:
    """Connects a listed resource template to the method reading it (generated bases):
    `await server.<method>(ctx, **{python name: value})` for each (wire variable, python name)."""

    uri_template: str
    method: str
    params: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class PromptBinding:
    """Connects a listed prompt to its method: `await server.<method>(ctx, **{python name: value})`."""

    name: str
    method: str
    params: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CompletionBinding:
    """Connects one argument of a prompt (`ref` "prompt", `key` its name) or variable of a template
    (`ref` "resource", `key` its uriTemplate) to `await server.<method>(value, context, ctx)`."""

    ref: Literal["prompt", "resource"]
    key: str
    argument: str
    method: str


def load_package_surfaces(package: str) -> dict[str, list[dict[str, Any]]]:
    """`resources`, `resourceTemplates` and `prompts` from a generated package's surfaces.json
    (absent file: none of them)."""
    try:
        text = _package_files.files(package).joinpath("surfaces.json").read_text("utf-8")
    except FileNotFoundError:
        return {"resources": [], "resourceTemplates": [], "prompts": []}
    data = json.loads(text)
    return {key: list(data.get(key, [])) for key in ("resources", "resourceTemplates", "prompts")}


def template_reader(
    method: Callable[..., Awaitable[Any]], params: Sequence[tuple[str, str]]
) -> TemplateReader:
    names = tuple(params)

    async def read(uri: str, variables: Variables, ctx: RequestContext) -> Any:
        return await method(ctx, **{py: variables[wire] for wire, py in names if wire in variables})

    return read


def prompt_getter(method: Callable[..., Awaitable[Any]], params: Sequence[tuple[str, str]]) -> PromptHandler:
    names = tuple(params)

    async def get(arguments: dict[str, str], ctx: RequestContext) -> Any:
        return await method(ctx, **{py: arguments[wire] for wire, py in names if wire in arguments})

    return get


def completer(method: Callable[..., Awaitable[Any]]) -> CompletionHandler:
    """A generated `complete_*(value, context, ctx)` method is a CompletionHandler as it is."""
    return method
