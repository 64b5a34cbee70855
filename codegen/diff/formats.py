"""`mcpgen diff` output: a table for a terminal, JSON for machines, Markdown for a pull request.

Text from the specs (tool names, reasons quoting enum values, ...) is shown, never run; in
Markdown, names and pointers are code spans and reasons keep their `name` code spans, and all
other text is escaped, so a hostile name cannot break out of its table cell or become a link or HTML.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Final, Literal

from .compare import SEVERITY_ORDER, Change, DiffReport, Severity

__all__ = ["Format", "render", "summary_line"]

# Repeats in shape only (duplicates): a Literal and a Final table, as other modules declare theirs.
Format = Literal["table", "json", "markdown"]
_COLOURS: Final[dict[Severity, str]] = {
    "breaking": "red",
    "possibly-breaking": "yellow",
    "compatible": "green",
    "cosmetic": "bright_black",
}
_LIMIT: Final = 300  # characters of any one cell


def _cell(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _LIMIT else flat[: _LIMIT - 1] + "…"


def _ordered(report: DiffReport) -> list[Change]:
    rank = {severity: index for index, severity in enumerate(SEVERITY_ORDER)}
    return sorted(report.changes, key=lambda c: (min(rank[c.client], rank[c.server]), c.tool, c.pointer))


def summary_line(report: DiffReport) -> str:
    """One line: how many changes break whom."""
    if not report.changes:
        return f"no changes between {report.old_source} and {report.new_source}"
    parts = []
    for side in ("client", "server"):
        counts = [
            f"{n} {severity}"
            for severity in SEVERITY_ORDER
            if (n := sum(1 for c in report.changes if getattr(c, side) == severity))
        ]
        parts.append(f"{side}s: {', '.join(counts)}")
    return f"{len(report.changes)} change(s) from {report.old_source} to {report.new_source}; " + "; ".join(
        parts
    )


def render(
    report: DiffReport, fmt: Format, style: Callable[[str, str], str] = lambda text, _colour: text
) -> str:
    """The report as text; `style(text, colour)` colours table cells (identity when not a terminal)."""
    if fmt == "json":
        return json.dumps(report.wire(), indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return _markdown(report)
    return _table(report, style)


def _table(report: DiffReport, style: Callable[[str, str], str]) -> str:
    if not report.changes:
        return summary_line(report) + "\n"
    rows = [
        (c.client, c.server, _cell(c.tool), _cell(c.pointer or "/"), _cell(c.reason))
        for c in _ordered(report)
    ]
    heads = ("client", "server", "tool", "where", "change")
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(heads[:4])]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads[:4], widths, strict=True)) + "  " + heads[4]]
    for client, server, tool, where, reason in rows:
        cells = [
            style(client.ljust(widths[0]), _COLOURS[client]),
            style(server.ljust(widths[1]), _COLOURS[server]),
            tool.ljust(widths[2]),
            where.ljust(widths[3]),
        ]
        lines.append("  ".join(cells) + "  " + reason)
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


# Markdown's inline syntax outside code spans: emphasis, links, images, HTML, entities, strikethrough,
# and the table's cell separator. Each is shown as itself (a backslash escape, or an entity for HTML).
_MD_SPECIAL: Final = re.compile(r"([\\`*_\[\]|~!])")
# The code spans compare.py writes around names and keywords: opened at the start or after a space,
# closed before the end, a space, ":" or "," (so a name holding backticks stays one span). Whatever a
# hostile name does to this split, each piece is still either escaped text or a whole code span.
_SPANS: Final = re.compile(r"(?:^|(?<= ))`(.+?)`(?=$|[ :,])")


def _md_text(text: str) -> str:
    """Plain text: every character Markdown would read shown as itself."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", escaped)


def _code(text: str) -> str:
    """A code span holding `text` verbatim (its fence longer than any backtick run inside; `|`
    escaped for the table, which GFM undoes inside code spans too)."""
    if not text.strip():
        return _md_text(text)
    body = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", body)), default=0) + 1)
    pad = " " if body[0] in "` " or body[-1] in "` " else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def _md(text: str) -> str:
    """A reason (or any text): its `name` code spans kept as code spans, the rest escaped."""
    flat, out, end = _cell(text), [], 0
    for span in _SPANS.finditer(flat):
        out += [_md_text(flat[end : span.start()]), _code(span.group(1))]
        end = span.end()
    return "".join([*out, _md_text(flat[end:])])


def _markdown(report: DiffReport) -> str:
    lines = [
        f"### mcpgen diff: {_md_text(_cell(report.old_source))} → {_md_text(_cell(report.new_source))}",
        "",
        _md_text(summary_line(report)),
        "",
    ]
    if report.changes:
        lines += ["| client | server | tool | where | change |", "|---|---|---|---|---|"]
        lines += [
            f"| {c.client} | {c.server} | {_code(_cell(c.tool))} | {_code(_cell(c.pointer or '/'))} "
            f"| {_md(c.reason)} |"
            for c in _ordered(report)
        ]
    return "\n".join(lines) + "\n"
