"""A JSON document -> `LoadedSpec`: spec files, and the shape checks every source goes through.

Accepted inputs (each becomes a `LoadedSpec` whose pointers are real RFC 6901 pointers into
the document that was read):

    {"tools": [...], "nextCursor": ..., ...}                 tools/list result       -> /tools/N
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": [...]}}  JSON-RPC response       -> /result/tools/N
    [ {...}, {...} ]                                         bare array of tools     -> /N
    {"name": ..., "inputSchema": {...}}                      one tool object         -> "" (the document)

A file is read strictly, and what two JSON parsers could read differently is caught: a duplicate
member name refuses the file, naming the tool and pointer; a number beyond double range is dropped
where it only annotates (`default`, `examples`) or bounds nothing (`maximum: 1e400`), with a
warning naming the tool and pointer, and otherwise makes its tool unusable (the other tools stay).
A JSON-RPC envelope is accepted with a note saying where the tools were found; a result whose
`resultType` is not "complete" (an `input_required` result, or an unknown type) is refused.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import Diagnostic, SpecLoadError
from ..refs import describe, escape_token
from ..spec import LoadedSpec, server_info_of

__all__ = ["MAX_FILE_BYTES", "checked_tools", "load_bytes", "load_file", "parse_json", "spec_from_document"]

MAX_FILE_BYTES: Final = 64 * 1024 * 1024
_SHOWN_PROBLEMS: Final = 10

_STRING_OR_TOKEN = r'"(?:[^"\\]++|\\.)*+"|'


class _NonFiniteNumber(ValueError):
    def __init__(self, literal: str) -> None:
        super().__init__(literal)
        self.literal = literal


class _OutOfRange:
    """A number literal beyond double range, kept in place until `_settle_numbers` decides."""

    __slots__ = ("literal",)

    def __init__(self, literal: str) -> None:
        self.literal = literal


@dataclass
class _Oddities:
    """What a lenient parse met that a strict reader must settle: objects with duplicate member
    names (with those names) and out-of-range numbers."""

    duplicates: list[tuple[dict[str, Any], list[str]]] = field(default_factory=list)
    out_of_range: int = 0


def _reject_constant(literal: str) -> Any:
    raise _NonFiniteNumber(literal)


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _NonFiniteNumber(literal)
    return value


def _locate(text: str, literal: str) -> tuple[int, int] | None:
    """(line, column) of the first `literal` outside JSON strings, both 1-based."""
    for match in re.finditer(_STRING_OR_TOKEN + re.escape(literal), text):
        if not match.group().startswith('"'):
            pos = match.start()
            return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1
    return None


def parse_json(data: bytes, source: str, oddities: _Oddities | None = None) -> Any:
    """Strict JSON (UTF-8, no NaN/Infinity) or SpecLoadError with line:col. Without `oddities` an
    overflowing number is an error too; with it, duplicate member names and overflowing numbers
    are recorded there for the caller to settle (`load_file`)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SpecLoadError(
            f"{source}: not UTF-8 text: invalid byte {data[exc.start : exc.start + 1]!r} at line {line} "
            f"(byte offset {exc.start}); JSON documents must be encoded as UTF-8"
        ) from exc
    hooks: dict[str, Any] = {"parse_constant": _reject_constant, "parse_float": _finite_float}
    if oddities is not None:
        found = oddities

        def pairs(members: list[tuple[str, Any]]) -> dict[str, Any]:
            obj = dict(members)
            if len(obj) != len(members):
                seen: set[str] = set()
                repeated: set[str] = set()
                for key, _ in members:
                    (repeated if key in seen else seen).add(key)
                found.duplicates.append((obj, sorted(repeated)))
            return obj

        def number(literal: str) -> float | _OutOfRange:
            value = float(literal)
            if math.isfinite(value):
                return value
            found.out_of_range += 1
            return _OutOfRange(literal)

        hooks = {"parse_constant": _reject_constant, "parse_float": number, "object_pairs_hook": pairs}
    try:
        return json.loads(text, **hooks)
    except _NonFiniteNumber as exc:
        where = _locate(text, exc.literal)
        at = f" at line {where[0]}, column {where[1]}" if where else ""
        raise SpecLoadError(
            f"{source}: invalid JSON{at}: {exc.literal!r} is not a finite number "
            "(NaN and Infinity are not JSON; numbers must fit a double)"
        ) from exc
    except json.JSONDecodeError as exc:
        hint = " (the file is empty)" if not text.strip() else ""
        raise SpecLoadError(
            f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}{hint}"
        ) from exc
    except RecursionError as exc:
        raise SpecLoadError(f"{source}: invalid JSON: arrays/objects are nested too deeply to read") from exc
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise SpecLoadError(f"{source}: invalid JSON: {exc}") from exc


def _odd_places(
    document: Any, oddities: _Oddities
) -> tuple[list[tuple[str, list[str]]], list[tuple[str, Any, Any]]]:
    """Pointers of the objects with duplicate names, and (pointer, container, key) of every
    out-of-range number, found by one iterative walk."""
    wanted = {id(obj): names for obj, names in oddities.duplicates}
    duplicates: list[tuple[str, list[str]]] = []
    numbers: list[tuple[str, Any, Any]] = []
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:
        pointer, value = stack.pop()
        if isinstance(value, dict):
            if id(value) in wanted:
                duplicates.append((pointer, wanted[id(value)]))
            items: Any = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        for key, child in items:
            child_pointer = f"{pointer}/{escape_token(key)}"
            if isinstance(child, _OutOfRange):
                numbers.append((child_pointer, value, key))
            elif isinstance(child, (dict, list)):
                stack.append((child_pointer, child))
    return sorted(duplicates), sorted(numbers, key=lambda place: place[0])


def _read_capped(path: str | os.PathLike[str], source: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError as exc:
        raise SpecLoadError(
            f"{source}: file not found; pass a JSON file, an http(s):// URL or --stdio COMMAND"
        ) from exc
    except IsADirectoryError as exc:
        raise SpecLoadError(
            f"{source}: is a directory; expected a JSON file holding a tools/list result"
        ) from exc
    except PermissionError as exc:
        raise SpecLoadError(f"{source}: permission denied while opening the file") from exc
    except OSError as exc:
        raise SpecLoadError(f"{source}: cannot read the file: {exc.strerror or exc}") from exc
    if len(data) > MAX_FILE_BYTES:
        raise SpecLoadError(
            f"{source}: file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; "
            "a tools/list document this large is not supported"
        )
    return data


def _found(value: Any) -> str:
    if isinstance(value, Mapping):
        keys = list(value)
        shown = ", ".join(repr(k[:40]) for k in keys[:_SHOWN_PROBLEMS])
        more = f", ... ({len(keys)} keys)" if len(keys) > _SHOWN_PROBLEMS else ""
        return f"an object with keys {shown}{more}" if keys else "an empty object"
    return describe(value)


_EXPECTED = (
    'expected a tools/list result {"tools": [...]}, a JSON-RPC response whose result holds one, '
    "an array of tool objects, or a single tool object"
)


def checked_tools(tools: list[Any], source: str, prefix: str) -> list[dict[str, Any]]:
    return _objects_only(tools, source, prefix, "tool")


def _objects_only(items: list[Any], source: str, prefix: str, what: str) -> list[dict[str, Any]]:
    """`items` when every one is a JSON object, else an error listing the first few that are not."""
    bad = [(i, item) for i, item in enumerate(items) if not isinstance(item, dict)]
    if bad:
        lines = [
            f"  {prefix}/{i}: expected a {what} object, found {describe(item)}"
            for i, item in bad[:_SHOWN_PROBLEMS]
        ]
        if len(bad) > _SHOWN_PROBLEMS:
            lines.append(f"  ... and {len(bad) - _SHOWN_PROBLEMS} more")
        raise SpecLoadError(f"{source}: {len(bad)} {what}(s) are not JSON objects:\n" + "\n".join(lines))
    return items


# spec-file member -> LoadedSpec field, for what a server offers beside tools (issue 22)
SURFACE_MEMBERS: Final = (
    ("resources", "resources", "resource"),
    ("resourceTemplates", "resource_templates", "resource template"),
    ("prompts", "prompts", "prompt"),
    ("skills", "skills", "skill"),
)


def checked_entries(entries: Any, source: str, prefix: str, what: str) -> list[dict[str, Any]]:
    """A `resources` / `resourceTemplates` / `prompts` array: every entry a JSON object."""
    if not isinstance(entries, list):
        raise SpecLoadError(
            f"{source}: {prefix} must be an array of {what} objects; found {describe(entries)}"
        )
    return _objects_only(entries, source, prefix, what)


def _surfaces(document: Mapping[str, Any], source: str) -> dict[str, list[dict[str, Any]]]:
    return {
        field_name: checked_entries(document[member], source, f"/{member}", what)
        for member, field_name, what in SURFACE_MEMBERS
        if member in document
    }


def _check_result_type(result: Mapping[str, Any], source: str, where: str) -> None:
    """A tools/list result is complete; an input_required result or an unknown type is refused."""
    if "resultType" not in result or result["resultType"] == "complete":
        return
    kind = result["resultType"]
    if kind == "input_required":
        raise SpecLoadError(
            f"{source}: at {where}/resultType: this is an input_required result (the server asked the client "
            "for input before answering), not a tools/list result; save the final, complete result instead"
        )
    raise SpecLoadError(
        f"{source}: at {where}/resultType: unknown resultType "
        f"{repr(kind[:80]) if isinstance(kind, str) else describe(kind)}; a tools/list result is "
        '"complete" (or has no resultType)'
    )


def spec_from_document(document: Any, source: str) -> LoadedSpec:
    """Recognise the shape of a parsed document and return its tools with their real pointers."""
    if isinstance(document, list):
        return LoadedSpec(source, checked_tools(document, source, ""), pointer_prefix="")
    if not isinstance(document, dict):
        raise SpecLoadError(f"{source}: {_EXPECTED}; found {_found(document)}")
    if "tools" in document or any(member in document for member, _, _ in SURFACE_MEMBERS):
        _check_result_type(document, source, "")
        tools = document.get("tools", [])
        surfaces = _surfaces(document, source)
        if not isinstance(tools, list):
            raise SpecLoadError(f"{source}: /tools must be an array of tool objects; found {describe(tools)}")
        return LoadedSpec(
            source,
            checked_tools(tools, source, "/tools"),
            pointer_prefix="/tools",
            server_info=server_info_of(document),
            resources=surfaces.get("resources", []),
            resource_templates=surfaces.get("resource_templates", []),
            prompts=surfaces.get("prompts", []),
            skills=surfaces.get("skills", []),
        )
    if "jsonrpc" in document or ("id" in document and ("result" in document or "error" in document)):
        if "method" in document:
            raise SpecLoadError(
                f"{source}: this is a JSON-RPC request ({describe(document['method'])}), not a response; "
                "save the response to tools/list instead"
            )
        if "error" in document:
            error = document["error"]
            if isinstance(error, Mapping):
                detail = f"code {describe(error.get('code'))}, message {describe(error.get('message'), 200)}"
            else:
                detail = describe(error)
            raise SpecLoadError(
                f"{source}: the document is a JSON-RPC error response ({detail}), not a tool list"
            )
        result = document.get("result")
        if isinstance(result, dict):
            _check_result_type(result, source, "/result")
        if not isinstance(result, dict) or "tools" not in result:
            raise SpecLoadError(
                f"{source}: JSON-RPC response whose /result is not a tools/list result; "
                f"expected /result/tools, found {_found(result) if 'result' in document else 'no result'}"
            )
        tools = result["tools"]
        if not isinstance(tools, list):
            raise SpecLoadError(
                f"{source}: /result/tools must be an array of tool objects; found {describe(tools)}"
            )
        note = Diagnostic(
            source,
            None,
            "/result",
            "MCPGEN-JSON",
            "the document is a JSON-RPC response (id "
            f"{describe(document.get('id'))}), not a tools/list result; its tools were read from "
            "/result/tools",
            "warning",
        )
        tools = checked_tools(tools, source, "/result/tools")
        return LoadedSpec(
            source, tools, pointer_prefix="/result/tools", notes=(note,), server_info=server_info_of(result)
        )
    if "resultType" in document:
        _check_result_type(document, source, "")
    if "inputSchema" in document:
        return LoadedSpec(source, [document], pointer_prefix="", single_tool=True)
    raise SpecLoadError(f"{source}: {_EXPECTED}; found {_found(document)}")


def _tool_at(spec: LoadedSpec, pointer: str) -> tuple[int, str | None] | None:
    """(position, shown name) of the tool holding `pointer`, or None outside every tool."""
    if spec.single_tool:
        index = 0
    else:
        head = spec.pointer_prefix + "/"
        if not pointer.startswith(head):
            return None
        token = pointer[len(head) :].split("/", 1)[0]
        if not token.isdigit() or int(token) >= len(spec.tools):
            return None
        index = int(token)
    name = spec.tools[index].get("name")
    return index, (name[:200] if isinstance(name, str) else None)


_NOT_KEYWORD_PARENTS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_VACUOUS_BOUNDS = {"maximum": "", "exclusiveMaximum": "", "minimum": "-", "exclusiveMinimum": "-"}


def _json_note(source: str, tool: str | None, pointer: str, message: str) -> Diagnostic:
    """A warning of LOAD about JSON it had to change or leave out (MCPGEN-JSON)."""
    return Diagnostic(source, tool, pointer, "MCPGEN-JSON", message, "warning")


def _settle_numbers(spec: LoadedSpec, document: Any, numbers: list[tuple[str, Any, Any]]) -> LoadedSpec:
    """Each number beyond double range: an annotation holding it (`default`, `examples`) is dropped,
    a bound it makes vacuous (`maximum: 1e400`) is dropped, anything else makes its tool unusable;
    one warning each, naming the tool and pointer."""
    notes = list(spec.notes)
    unusable = set(spec.unusable)
    for pointer, container, key in numbers:
        literal = container[key].literal
        tokens = pointer.split("/")[1:]
        owner = _tool_at(spec, pointer)
        tool = owner[1] if owner else None
        annotation = next(
            (
                i
                for i, token in enumerate(tokens)
                if token in ("default", "examples") and (i == 0 or tokens[i - 1] not in _NOT_KEYWORD_PARENTS)
            ),
            None,
        )
        shown = f"{literal[:40]!r}"
        if annotation is not None:
            parent_pointer = "/" + "/".join(tokens[:annotation]) if annotation else ""
            parent = document
            for token in tokens[:annotation]:
                parent = (
                    parent[int(token)]
                    if isinstance(parent, list)
                    else parent[token.replace("~1", "/").replace("~0", "~")]
                )
            keyword = tokens[annotation]
            if isinstance(parent, dict) and keyword in parent:
                del parent[keyword]
                notes.append(
                    _json_note(
                        spec.source,
                        tool,
                        f"{parent_pointer}/{keyword}",
                        f"the number {shown} at {pointer} is beyond the range of a double, which "
                        f"no JSON parser here can hold; `{keyword}` is dropped",
                    )
                )
            continue
        if isinstance(container, dict) and _VACUOUS_BOUNDS.get(key) == (
            "-" if literal.startswith("-") else ""
        ):
            del container[key]
            notes.append(
                _json_note(
                    spec.source,
                    tool,
                    pointer,
                    f"the number {shown} is beyond the range of a double, so `{key}` bounds "
                    "nothing; it is dropped",
                )
            )
            continue
        container[key] = None  # JSON again (digest); the tool it sits in is not used
        if owner is not None:
            unusable.add(owner[0])
        what = "the tool is excluded" if owner is not None else "the value is ignored"
        notes.append(
            _json_note(
                spec.source,
                tool,
                pointer,
                f"the number {shown} is beyond the range of a double, which no JSON parser here "
                f"can hold; {what}",
            )
        )
    return dataclasses.replace(spec, notes=tuple(notes), unusable=frozenset(unusable))


def load_file(path: str | os.PathLike[str]) -> LoadedSpec:
    """Read a JSON file holding tools in any accepted shape (see the module docstring)."""
    source = os.fspath(path)
    return load_bytes(_read_capped(path, source), source)


def load_bytes(data: bytes, source: str) -> LoadedSpec:
    """A JSON document read elsewhere (a file as committed in git, say) → `LoadedSpec`, as `load_file`."""
    if len(data) > MAX_FILE_BYTES:
        raise SpecLoadError(
            f"{source}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; "
            "a tools/list document this large is not supported"
        )
    oddities = _Oddities()
    document = parse_json(data, source, oddities)
    spec = spec_from_document(document, source)
    if not (oddities.duplicates or oddities.out_of_range):
        return spec
    duplicates, numbers = _odd_places(document, oddities)
    if duplicates:
        lines = []
        for pointer, names in duplicates[:_SHOWN_PROBLEMS]:
            owner = _tool_at(spec, pointer)
            who = f"tool {owner[1]!r} " if owner and owner[1] is not None else ""
            shown = ", ".join(repr(name[:80]) for name in names[:5])
            lines.append(f"  {who}at {pointer or '/'}: the object has member {shown} more than once")
        if len(duplicates) > _SHOWN_PROBLEMS:
            lines.append(f"  ... and {len(duplicates) - _SHOWN_PROBLEMS} more")
        raise SpecLoadError(
            f"{source}: duplicate member names in JSON objects; parsers disagree on which value counts (the "
            "first or the last), so the file is refused:\n" + "\n".join(lines)
        )
    return _settle_numbers(spec, document, numbers)
