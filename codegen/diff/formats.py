"""`mcpgen diff` output: a table for a terminal, JSON for machines, Markdown for a pull request.

Text from the specs (tool names, reasons quoting enum values, ...) is shown, never run; in
Markdown it is escaped so a hostile name cannot break out of its table cell.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final, Literal

from .compare import SEVERITY_ORDER, Change, DiffReport, Severity

__all__ = ["Format", "render", "summary_line"]

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


def _md(text: str) -> str:
    escaped = _cell(text).replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")
    return escaped.replace("<", "&lt;").replace(">", "&gt;")


def _markdown(report: DiffReport) -> str:
    lines = [
        f"### mcpgen diff: {_md(report.old_source)} → {_md(report.new_source)}",
        "",
        summary_line(report),
        "",
    ]
    if report.changes:
        lines += ["| client | server | tool | where | change |", "|---|---|---|---|---|"]
        lines += [
            f"| {c.client} | {c.server} | {_md(c.tool)} | {_md(c.pointer or '/')} | {_md(c.reason)} |"
            for c in _ordered(report)
        ]
    return "\n".join(lines) + "\n"
