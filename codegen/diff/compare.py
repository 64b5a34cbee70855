"""`mcpgen diff`: what changed between two tool lists, and whom it breaks.

Every change is judged twice: for a **client** of the tools (it sends arguments and reads
results) and for a **server** implementing them (it accepts arguments and produces results).
A schema change is first classified by what it does to the set of valid values (narrowed,
widened, changed, cosmetic: diff/schemas.py).

Then by position: narrowing an *input* breaks clients (they may send what is now refused) and
is compatible for servers; widening an input breaks servers (they must now accept more).
Outputs are the mirror image: widening an output breaks clients (they may receive what they
cannot read), narrowing it breaks servers (they must now produce less). A removed tool breaks
clients; an added tool breaks servers (it has to be implemented). `$ref`s are followed on both
sides. Nothing here recurses without a bound or evaluates a pattern: hostile schemas can only
make the answer "possibly breaking".

The classification of one schema change is diff/schemas.py's (one recursive judgement over pairs
of subschemas); this module judges it by position and compares the tools themselves (removed,
added, renamed, headers, annotations). The report formats are diff/formats.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from ..refs import escape_token, unescape_token
from .schemas import Direction, SchemaComparison, renames, short

__all__ = ["Change", "DiffReport", "Severity", "diff_tools", "handled_added_tools"]

Severity = Literal["breaking", "possibly-breaking", "compatible", "cosmetic"]
SEVERITY_ORDER: Final[tuple[Severity, ...]] = ("breaking", "possibly-breaking", "compatible", "cosmetic")


_ANNOTATIONS: Final = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
_ANNOTATION_DEFAULTS: Final = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}


@dataclass(frozen=True, slots=True)
class Change:
    """One difference: where (the tool and a JSON pointer inside its definition), what, and whom it breaks."""

    tool: str
    pointer: str
    kind: str  # e.g. "tool-removed", "input-narrowed", "output-widened", "annotation-changed"
    client: Severity
    server: Severity
    reason: str

    def wire(self) -> dict[str, str]:
        return {
            "tool": self.tool,
            "pointer": self.pointer,
            "kind": self.kind,
            "client": self.client,
            "server": self.server,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class DiffReport:
    old_source: str
    new_source: str
    changes: tuple[Change, ...] = field(default=())

    def worst(self, side: Literal["client", "server", "both"] = "both") -> Severity | None:
        """The most severe judgement for `side` (None when nothing changed)."""
        found = {
            getattr(change, s)
            for change in self.changes
            for s in (("client", "server") if side == "both" else (side,))
        }
        return next((severity for severity in SEVERITY_ORDER if severity in found), None)

    def wire(self) -> dict[str, Any]:
        """The `--format json` document (stable: documented in docs/how-to/diff.md)."""
        counts = {
            side: {
                severity: sum(1 for c in self.changes if getattr(c, side) == severity)
                for severity in SEVERITY_ORDER
            }
            for side in ("client", "server")
        }
        return {
            "old": self.old_source,
            "new": self.new_source,
            "summary": counts,
            "changes": [change.wire() for change in self.changes],
        }


# -- tools -----------------------------------------------------------------------------------------

# (position, direction) -> (client, server)
_JUDGEMENT: Final[Mapping[tuple[str, Direction], tuple[Severity, Severity]]] = {
    ("input", "narrowed"): ("breaking", "compatible"),
    ("input", "widened"): ("compatible", "breaking"),
    ("output", "narrowed"): ("compatible", "breaking"),
    ("output", "widened"): ("breaking", "compatible"),
    ("input", "changed"): ("possibly-breaking", "possibly-breaking"),
    ("output", "changed"): ("possibly-breaking", "possibly-breaking"),
    ("input", "cosmetic"): ("cosmetic", "cosmetic"),
    ("output", "cosmetic"): ("cosmetic", "cosmetic"),
    # A property a client sends or reads is gone; a server just stops reading or producing it.
    ("input", "removed"): ("breaking", "compatible"),
    ("output", "removed"): ("breaking", "compatible"),
    ("input", "renamed"): ("breaking", "breaking"),
    ("output", "renamed"): ("breaking", "breaking"),
    # A new optional argument: clients may ignore it, a server must accept it. A new optional
    # output field: clients may ignore it, a server need not produce it.
    ("input", "described"): ("compatible", "breaking"),
    ("output", "described"): ("compatible", "compatible"),
}


def _by_name(tools: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {
        tool["name"]: tool
        for tool in tools
        if isinstance(tool, Mapping) and isinstance(tool.get("name"), str)
    }


def diff_tools(
    old: Iterable[Mapping[str, Any]],
    new: Iterable[Mapping[str, Any]],
    *,
    old_source: str = "old",
    new_source: str = "new",
) -> DiffReport:
    """Every change from `old` to `new`, tool by tool in name order, judged for clients and servers."""
    before, after = _by_name(old), _by_name(new)
    changes: list[Change] = []
    removed, added = sorted(set(before) - set(after)), sorted(set(after) - set(before))
    for old_name, new_name in _tool_renames(before, after, removed, added):
        removed.remove(old_name)
        added.remove(new_name)
        changes.append(
            Change(
                old_name,
                "",
                "tool-renamed",
                "breaking",
                "breaking",
                f"tool `{old_name}` renamed to `{new_name}` (same input schema)",
            )
        )
    changes += [
        Change(name, "", "tool-removed", "breaking", "compatible", f"tool `{name}` removed")
        for name in removed
    ]
    changes += [
        Change(
            name,
            "",
            "tool-added",
            "compatible",
            "breaking",
            f"tool `{name}` added: a server must implement it",
        )
        for name in added
    ]
    for name in sorted(set(before) & set(after)):
        changes.extend(_tool_changes(name, before[name], after[name]))
    return DiffReport(old_source, new_source, tuple(changes))


def handled_added_tools(report: DiffReport, handlers: Mapping[str, str]) -> DiffReport:
    """`report` with each added tool that `handlers` names (tool -> where its handler is, e.g.
    `src/pkg/handlers.py:42`) judged compatible for servers: the server that must implement it
    already does. Added tools without a handler stay breaking, with how to add one."""

    def judged(change: Change) -> Change:
        if change.kind != "tool-added":
            return change
        where = handlers.get(change.tool)
        if where is None:
            return replace(
                change,
                reason=f"{change.reason} (no handler for it yet: `mcpgen generate --add-stubs` adds a stub)",
            )
        return replace(change, server="compatible", reason=f"tool `{change.tool}` added, handled at {where}")

    return replace(report, changes=tuple(judged(change) for change in report.changes))


def _tool_renames(
    before: Mapping[str, Mapping[str, Any]],
    after: Mapping[str, Mapping[str, Any]],
    removed: list[str],
    added: list[str],
) -> list[tuple[str, str]]:
    return renames(
        {n: t.get("inputSchema") for n, t in before.items()},
        {n: t.get("inputSchema") for n, t in after.items()},
        list(removed),
        list(added),
    )


def _tool_changes(name: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[Change]:
    yield from _schema_changes(
        name, "input", "/inputSchema", old.get("inputSchema", {}), new.get("inputSchema", {})
    )
    if "outputSchema" in old and "outputSchema" not in new:
        yield Change(
            name,
            "/outputSchema",
            "output-schema-removed",
            "breaking",
            "compatible",
            "outputSchema removed: results are no longer typed",
        )
    elif "outputSchema" in new and "outputSchema" not in old:
        yield Change(
            name,
            "/outputSchema",
            "output-schema-added",
            "compatible",
            "breaking",
            "outputSchema added: a server must now return structured content",
        )
    elif "outputSchema" in new:
        yield from _schema_changes(name, "output", "/outputSchema", old["outputSchema"], new["outputSchema"])
    yield from _header_changes(name, old.get("inputSchema"), new.get("inputSchema"))
    yield from _annotation_changes(name, old.get("annotations"), new.get("annotations"))
    yield from _execution_changes(name, old.get("execution"), new.get("execution"))
    for word in ("description", "title"):
        if old.get(word) != new.get(word):
            yield Change(name, "/" + word, f"{word}-changed", "cosmetic", "cosmetic", f"tool {word} changed")
    for word in sorted(set(old) | set(new)):
        if word not in {
            "name",
            "inputSchema",
            "outputSchema",
            "annotations",
            "execution",
            "description",
            "title",
        } and old.get(word) != new.get(word):
            yield Change(
                name,
                "/" + escape_token(word),
                f"{word}-changed",
                "cosmetic",
                "cosmetic",
                f"tool `{word}` changed",
            )


def _schema_changes(name: str, position: str, prefix: str, old: Any, new: Any) -> Iterator[Change]:
    for found in SchemaComparison(old, new).run():
        client, server = _JUDGEMENT[(position, found.direction)]
        kind = "input" if position == "input" else "output"
        yield Change(name, prefix + found.pointer, f"{kind}-{found.direction}", client, server, found.reason)


def _headers(schema: Any) -> dict[str, str]:
    """x-mcp-header annotations of top-level properties: {header name: property}."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return {}
    return {
        prop["x-mcp-header"]: name
        for name, prop in properties.items()
        if isinstance(prop, Mapping) and isinstance(prop.get("x-mcp-header"), str)
    }


def _header_changes(name: str, old: Any, new: Any) -> Iterator[Change]:
    before, after = _headers(old), _headers(new)
    by_property_before = {prop: header for header, prop in before.items()}
    by_property_after = {prop: header for header, prop in after.items()}
    for prop in sorted(set(by_property_before) | set(by_property_after)):
        a, b = by_property_before.get(prop), by_property_after.get(prop)
        if a == b:
            continue
        where = f"/inputSchema/properties/{escape_token(prop)}/x-mcp-header"
        what = (
            f"x-mcp-header `{b}` added"
            if a is None
            else f"x-mcp-header `{a}` removed"
            if b is None
            else f"x-mcp-header renamed from `{a}` to `{b}`"
        )
        yield Change(
            name,
            where,
            "header-changed",
            "breaking",
            "breaking",
            f"{what} on `{unescape_token(escape_token(prop))}`: the Mcp-Param headers on the wire change",
        )


def _annotation_changes(name: str, old: Any, new: Any) -> Iterator[Change]:
    before = old if isinstance(old, Mapping) else {}
    after = new if isinstance(new, Mapping) else {}
    for hint in _ANNOTATIONS:
        a = before.get(hint, _ANNOTATION_DEFAULTS[hint])
        b = after.get(hint, _ANNOTATION_DEFAULTS[hint])
        if a != b:
            yield Change(
                name,
                f"/annotations/{hint}",
                "annotation-changed",
                "possibly-breaking",
                "compatible",
                f"`{hint}` changed from {short(a)} to {short(b)}: hosts may treat the tool differently",
            )
    yield from _cosmetic_members(name, "annotations", "annotation", before, after, set(_ANNOTATIONS))


def _cosmetic_members(
    name: str, member: str, word: str, before: Mapping[str, Any], after: Mapping[str, Any], judged: set[str]
) -> Iterator[Change]:
    """Each changed key of the tool's object `member` that is not `judged` elsewhere: cosmetic."""
    for key in sorted((set(before) | set(after)) - judged):
        if before.get(key) != after.get(key):
            yield Change(
                name,
                f"/{member}/{escape_token(key)}",
                f"{word}-changed",
                "cosmetic",
                "cosmetic",
                f"{word} `{key}` changed",
            )


# What a change of `execution.taskSupport` does (absent counts as "forbidden"): (old, new) ->
# (client, server, why). Clients that do not declare the tasks extension can no longer call a tool
# that becomes "required"; a "forbidden" tool refuses a 2025-11-25 client that asks for a task. A
# server's handlers stay as they are either way: its runtime reads taskSupport from tools.json.
_TASK_SUPPORT_JUDGEMENT: Final[Mapping[tuple[str, str], tuple[Severity, Severity, str]]] = {
    ("forbidden", "optional"): ("compatible", "compatible", "calls may now run as tasks"),
    ("forbidden", "required"): (
        "breaking",
        "compatible",
        "clients that do not declare the tasks extension can no longer call it",
    ),
    ("optional", "required"): (
        "breaking",
        "compatible",
        "clients that do not declare the tasks extension can no longer call it",
    ),
    ("optional", "forbidden"): (
        "possibly-breaking",
        "compatible",
        "it no longer runs as a task (a 2025-11-25 server refuses a call that asks for one)",
    ),
    ("required", "optional"): ("compatible", "compatible", "it may now also run without a task"),
    ("required", "forbidden"): (
        "possibly-breaking",
        "compatible",
        "it no longer runs as a task (a 2025-11-25 server refuses a call that asks for one)",
    ),
}


def _task_support(execution: Any) -> tuple[Any, str]:
    """(the value, absent meaning "forbidden"; how a message shows it)."""
    if not isinstance(execution, Mapping) or "taskSupport" not in execution:
        return "forbidden", "absent"
    return execution["taskSupport"], short(execution["taskSupport"])


def _execution_changes(name: str, old: Any, new: Any) -> Iterator[Change]:
    """`execution.taskSupport` judged (`_TASK_SUPPORT_JUDGEMENT`; a value outside the three: possibly
    breaking); any other `execution` member is cosmetic."""
    (a, a_shown), (b, b_shown) = _task_support(old), _task_support(new)
    if a != b:
        known = isinstance(a, str) and isinstance(b, str)
        client, server, why = (_TASK_SUPPORT_JUDGEMENT.get((a, b)) if known else None) or (
            "possibly-breaking",
            "possibly-breaking",
            "not a taskSupport value mcpgen knows",
        )
        yield Change(
            name,
            "/execution/taskSupport",
            "task-support-changed",
            client,
            server,
            f"`taskSupport` changed from {a_shown} to {b_shown}: {why}",
        )
    before = old if isinstance(old, Mapping) else {}
    after = new if isinstance(new, Mapping) else {}
    yield from _cosmetic_members(name, "execution", "execution", before, after, {"taskSupport"})
