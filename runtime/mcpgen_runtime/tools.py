"""Tool definitions as the runtime uses them: parsed once, then looked up by wire name.

Generated packages ship the definitions they were built from as `tools.json` (data, never
code); clients need them for x-mcp-header mirroring, servers for listing and validation.
A generated client reads its tools.json on first use (`PackageTools`) and parses a tool's
definition when that tool is first used (`ToolTable`): importing a 1,000-tool package and
making a client cost nothing per tool, and calling one tool parses that tool's definition only
(`PackageTools.find`: its slice of tools.json, located without parsing the rest).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from json.encoder import encode_basestring_ascii
from typing import Any, overload

from . import _json
from .protocol import xheader


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    definition: Mapping[str, Any]  # the tool object exactly as listed on the wire
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    header_params: tuple[xheader.HeaderParam, ...]
    required: frozenset[str] = field(default_factory=frozenset)

    @staticmethod
    def from_definition(definition: Mapping[str, Any]) -> ToolSpec:
        input_schema = definition.get("inputSchema")
        if not isinstance(input_schema, Mapping):
            raise ValueError(f"tool {definition.get('name')!r}: inputSchema must be an object")
        output_schema = definition.get("outputSchema")
        params, violations = xheader.analyze(input_schema)
        if violations:
            first = violations[0]
            raise ValueError(
                f"tool {definition.get('name')!r} at {first.pointer}: {first.rule}: {first.message}"
            )
        required = input_schema.get("required", ())
        return ToolSpec(
            name=str(definition["name"]),
            definition=definition,
            input_schema=input_schema,
            output_schema=output_schema if isinstance(output_schema, Mapping) else None,
            header_params=tuple(params),
            required=frozenset(r for r in required if isinstance(r, str))
            if isinstance(required, list)
            else frozenset(),
        )


def tool_table(definitions: Iterable[Mapping[str, Any]]) -> dict[str, ToolSpec]:
    """Wire name -> ToolSpec, in listing order."""
    table: dict[str, ToolSpec] = {}
    for definition in definitions:
        spec = ToolSpec.from_definition(definition)
        if spec.name in table:
            raise ValueError(f"duplicate tool name {spec.name!r}")
        table[spec.name] = spec
    return table


def load_package_tools(package: str, resource: str = "tools.json") -> list[dict[str, Any]]:
    """The tool definitions a generated package was built from."""
    return _load_package(package, resource)[0]


def _load_package(package: str, resource: str) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """tools.json's definitions and its `pins` (tool name -> `pins.digest`; none before pins were
    written, or in a server package)."""
    document = _json.loads(resources.files(package).joinpath(resource).read_bytes())
    tools = document["tools"]
    if not isinstance(tools, list):
        raise ValueError(f"{package}/{resource}: 'tools' is not a list")
    pins = document.get("pins")
    return tools, pins if isinstance(pins, dict) else {}


class PackageTools(Sequence[dict[str, Any]]):
    """A generated package's tools.json, read and parsed the first time it is used."""

    __slots__ = ("_pins", "_tools", "package", "resource")

    def __init__(self, package: str, resource: str = "tools.json") -> None:
        self.package = package
        self.resource = resource
        self._tools: list[dict[str, Any]] | None = None
        self._pins: dict[str, str] | None = None  # read on first use

    @property
    def loaded(self) -> bool:
        return self._tools is not None

    def _load(self) -> list[dict[str, Any]]:
        if self._tools is None:
            self._tools, self._pins = _load_package(self.package, self.resource)
        return self._tools

    @property
    def pins(self) -> Mapping[str, str]:
        """Tool name -> the pin of its definition (`mcpgen_runtime.pins.digest`), as generated.
        Before the whole file has been parsed, only its `pins` slice is (`_pins_slice`)."""
        if self._pins is None:
            try:
                data = resources.files(self.package).joinpath(self.resource).read_bytes()
            except OSError:
                data = b""
            self._pins = _pins_slice(data)
            if self._pins is None:  # not to be told from a slice: the whole file
                self._load()
        return self._pins or {}

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        return self._load()[index]

    def __len__(self) -> int:
        return len(self._load())

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._load())

    def __repr__(self) -> str:
        return f"PackageTools({self.package!r}, {self.resource!r})"

    def find(self, name: str) -> dict[str, Any] | None:
        """The definition of the tool named `name` (None: no such tool). Before the whole file has
        been parsed, only that tool's slice of it is (`sliced`); when the slice cannot be told
        for certain, the whole file is."""
        found = self.sliced(name)
        if found is not None:
            return found
        return next((d for d in self._load() if isinstance(d, dict) and d.get("name") == name), None)

    def sliced(self, name: str) -> dict[str, Any] | None:
        """`name`'s definition from its own slice of the file, while the file has not been parsed
        whole (`_one_tool`); None when it cannot be told that way (then parse it whole)."""
        if self._tools is not None:
            return None
        try:
            data = resources.files(self.package).joinpath(self.resource).read_bytes()
        except OSError:
            return None
        return _one_tool(data, name)


# tools.json as mcpgen writes it (`json.dumps(..., indent=2)` layout: codegen/render/toolsjson.py):
# `{"tools": [...]}` with each tool an object at depth 2, so its first line is exactly 4 spaces and
# `{`, its last 4 spaces and `}`, and its own keys (and only they) sit at 6 spaces. A JSON string
# holds no raw newline, so these lines cannot occur inside a value.
_TOOL_START = b"\n    {\n"
_TOOL_END = b"\n    }"


def _one_tool(data: bytes, name: str) -> dict[str, Any] | None:
    """The definition of `name` parsed from its slice of tools.json `data`; None when the layout is
    not the one above, the name is not found exactly once, or the slice is not that tool."""
    key = b'\n      "name": ' + encode_basestring_ascii(name).encode("ascii")
    at = data.find(key)
    if at < 0 or data.find(key, at + 1) >= 0 or data[at + len(key) : at + len(key) + 1] not in (b",", b"\n"):
        return None
    start = data.rfind(_TOOL_START, 0, at + 1)  # the two share the newline before the key
    end = data.find(_TOOL_END, at)
    if start < 0 or end < 0:
        return None
    try:
        definition = _json.loads(data[start + 1 : end + len(_TOOL_END)])
    except _json.JSONDecodeError:
        return None
    if not isinstance(definition, dict) or definition.get("name") != name:
        return None
    return definition


# A client's tools.json ends with its `pins`, the only member besides `tools` (at 2 spaces: no line of
# a tool can start so), written last: `\n  "pins": {...}\n}\n`.
_PINS_START = b'\n  "pins": '


def _pins_slice(data: bytes) -> dict[str, str] | None:
    """tools.json's `pins` parsed from their own slice of `data`; None when the layout is not the one
    above (then parse it whole); {} when there are none."""
    at = data.rfind(_PINS_START)
    end = data.rfind(b"\n}")
    if at < 0:
        return {} if data.endswith(b"\n  ]\n}\n") else None  # a tools list and nothing after it
    try:
        pins = _json.loads(data[at + len(_PINS_START) : end])
    except _json.JSONDecodeError:
        return None
    return pins if isinstance(pins, dict) else None


class ToolTable(Mapping[str, ToolSpec]):
    """Wire name -> ToolSpec like `tool_table`, for definitions already validated (a generated
    package's): the names are indexed on first use, each ToolSpec parsed when its tool is first
    looked up (a bad definition raises ValueError then)."""

    __slots__ = ("_index", "_source", "_specs")

    def __init__(self, definitions: Iterable[Mapping[str, Any]]) -> None:
        self._source = definitions
        self._index: dict[str, Mapping[str, Any]] | None = None
        self._specs: dict[str, ToolSpec] = {}

    def _definitions(self) -> dict[str, Mapping[str, Any]]:
        if self._index is None:
            index: dict[str, Mapping[str, Any]] = {}
            for definition in self._source:
                name = str(definition.get("name"))
                if name in index:
                    raise ValueError(f"duplicate tool name {name!r}")
                index[name] = definition
            self._index = index
        return self._index

    def __getitem__(self, name: str) -> ToolSpec:
        spec = self._specs.get(name)
        if spec is None:
            definition: Mapping[str, Any] | None = None
            if self._index is None and isinstance(self._source, PackageTools):
                definition = self._source.sliced(name)  # that tool's definition only
            if definition is None:  # not to be told from a slice: the whole file, as before
                definition = self._definitions()[name]
            spec = self._specs[name] = ToolSpec.from_definition(definition)
        return spec

    def __contains__(self, name: object) -> bool:
        if name in self._specs:
            return True
        source = self._source
        if isinstance(name, str) and self._index is None and isinstance(source, PackageTools):
            return source.sliced(name) is not None or name in self._definitions()
        return name in self._definitions()

    def __iter__(self) -> Iterator[str]:
        return iter(self._definitions())

    def __len__(self) -> int:
        return len(self._definitions())

    @property
    def parsed(self) -> frozenset[str]:
        """The tools whose definition has been parsed so far."""
        return frozenset(self._specs)
