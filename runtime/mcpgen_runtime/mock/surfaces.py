"""The mock's resources, resource templates, prompts and completions (issue 22): served from a spec's
`resources`, `resourceTemplates` and `prompts` arrays with made-up contents.

`serve_surfaces(server, resources=..., resource_templates=..., prompts=..., seed=...)` adds them to
any `ToolServer` (the mock calls it after its tools). Every answer is a function of the seed and of
what was asked (canonical.py), so the same seed gives the same contents in every process:

- a resource or a URI matching a template reads as text unless its `mimeType` says binary
  (`image/*`, `audio/*`, `video/*`, `application/octet-stream`, `application/pdf`, ...): then
  deterministic bytes (a real 1x1 PNG for `image/png`); `application/json` reads as a JSON object
  naming the URI and the template's variables;
- a prompt answers one user text message naming the prompt and the arguments it was given;
- completion offers, for each prompt argument and template variable, three values that start with
  what was typed.

Spec text (names, URIs, descriptions) only ever travels as data in these answers.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import _json
from ..server import RequestContext, ToolServer
from .canonical import derive_seed

__all__ = ["load_spec_surfaces", "mock_contents", "serve_surfaces"]

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/yaml", "application/javascript")
_BINARY_PREFIXES = ("image/", "audio/", "video/", "font/")
_BINARY_TYPES = frozenset(
    {"application/octet-stream", "application/pdf", "application/zip", "application/gzip"}
)
_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet")
_KEYS = ("resources", "resourceTemplates", "prompts")


def _binary(mime_type: Any) -> bool:
    if not isinstance(mime_type, str):
        return False
    kind = mime_type.split(";", 1)[0].strip().lower()
    if kind.startswith(_TEXT_TYPES) or kind.endswith(("+json", "+xml")):
        return False
    return kind.startswith(_BINARY_PREFIXES) or kind in _BINARY_TYPES


def _words(seed: int, count: int) -> str:
    return " ".join(_WORDS[(seed >> (4 * i)) % len(_WORDS)] for i in range(count))


def mock_contents(uri: str, mime_type: Any, variables: Mapping[str, Any], seed: int) -> str | bytes:
    """The made-up contents of `uri` (see the module docstring)."""
    value = derive_seed(seed, "resource", uri)
    if _binary(mime_type):
        if isinstance(mime_type, str) and mime_type.lower().startswith("image/png"):
            return PNG_1X1
        return value.to_bytes(8, "big") * 4
    if isinstance(mime_type, str) and mime_type.lower().startswith("application/json"):
        return json.dumps({"uri": uri, "variables": dict(variables), "value": value % 1000}, sort_keys=True)
    shown = ", ".join(f"{k}={v!r}" for k, v in sorted(variables.items()))
    return f"Mock contents of {uri}{' (' + shown + ')' if shown else ''}: {_words(value, 6)}."


def _completions(value: str, seed: int, key: str, argument: str) -> list[str]:
    base = derive_seed(seed, "complete", key, argument)
    return [value + _WORDS[(base + i) % len(_WORDS)] for i in range(3)]


def serve_surfaces(
    server: ToolServer,
    *,
    resources: Iterable[Mapping[str, Any]] = (),
    resource_templates: Iterable[Mapping[str, Any]] = (),
    prompts: Iterable[Mapping[str, Any]] = (),
    seed: int = 0,
) -> None:
    """Serve the definitions with made-up answers and completions (ValueError for a bad one)."""
    for resource in resources:
        mime = resource.get("mimeType")

        async def read(uri: str, ctx: RequestContext, mime: Any = mime) -> str | bytes:
            return mock_contents(uri, mime, {}, seed)

        server.add_resource(resource, read, notify=False)
    for template in resource_templates:
        mime = template.get("mimeType")

        async def read_template(
            uri: str, variables: Mapping[str, Any], ctx: RequestContext, mime: Any = mime
        ) -> str | bytes:
            return mock_contents(uri, mime, variables, seed)

        server.add_resource_template(template, read_template, notify=False)
        key = str(template["uriTemplate"])
        surfaces = server.surfaces
        assert surfaces is not None
        for variable in surfaces.variables(key):
            server.add_completion("resource", key, variable, _completer(seed, key, variable))
    for prompt in prompts:
        name = str(prompt.get("name"))

        async def get(arguments: dict[str, str], ctx: RequestContext, name: str = name) -> str:
            shown = ", ".join(f"{k}={v!r}" for k, v in sorted(arguments.items()))
            return f"Mock prompt {name!r}{' with ' + shown if shown else ''}."

        server.add_prompt(prompt, get, notify=False)
        for argument in prompt.get("arguments") or ():
            server.add_completion(
                "prompt", name, str(argument["name"]), _completer(seed, name, str(argument["name"]))
            )


def _completer(seed: int, key: str, argument: str) -> Any:
    async def complete(value: str, context: dict[str, str], ctx: RequestContext) -> list[str]:
        return _completions(value, seed, key, argument)

    return complete


def load_spec_surfaces(path: str | Path) -> dict[str, list[dict[str, Any]]]:
    """`resources`, `resourceTemplates` and `prompts` of a spec file (a generated package's
    tools.json: its surfaces.json beside it); empty lists when it has none."""
    path = Path(path)
    source = path.with_name("surfaces.json") if path.name == "tools.json" else path
    empty: dict[str, list[dict[str, Any]]] = {key: [] for key in _KEYS}
    if not source.is_file():
        return empty
    try:
        document = _json.loads(source.read_bytes())
    except _json.JSONDecodeError:
        return empty
    if not isinstance(document, Mapping):
        return empty
    return {
        key: [dict(item) for item in document.get(key) or () if isinstance(item, Mapping)] for key in _KEYS
    }
