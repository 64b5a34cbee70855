"""How many tools of the corpora this repository has each provider profile takes as they are, after a
faithful lowering, and never; writes the table into docs/explanation/provider-profiles.md between
its marker lines (`--check`: exit 1 when the page is stale; `--print`: the table on stdout).

Corpora: specs/*.json, the real tool lists in ../shared/realworld/ (when beside the checkout), and the
published servers the tests run, listed live over stdio when installed: the npm reference server
(`@modelcontextprotocol/server-everything`, beside the conformance harness), the official Python SDK's
(tests/peers/sdk_server.py) and FastMCP's (tests/peers/fastmcp_tasks_server.py, in its venv).

    PYTHONPATH=.:runtime .venv/bin/python -m bench.provider_profiles
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "explanation" / "provider-profiles.md"
BEGIN = "<!-- provider-profiles table: bench/provider_profiles.py writes this -->"
END = "<!-- end of the provider-profiles table -->"
NODE = ROOT / "conformance" / "node_modules" / "node" / "bin" / "node"
EVERYTHING = (
    ROOT
    / "conformance"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)
FASTMCP_PYTHON = ROOT / "tests" / "peers" / ".venv-fastmcp" / "bin" / "python"


def _file_tools(path: Path) -> list[dict[str, Any]]:
    document = json.loads(path.read_text(encoding="utf-8"))
    tools = document.get("tools") if isinstance(document, dict) else document
    return [tool for tool in tools or [] if isinstance(tool, dict)]


def _live_tools(command: str) -> list[dict[str, Any]]:
    from codegen.cli.stages import load_spec

    return [tool for tool in load_spec(None, command, {}).tools if isinstance(tool, dict)]


def corpora() -> list[tuple[str, list[dict[str, Any]]]]:
    """(label, tools) for every corpus present on this machine, in a fixed order."""
    found = [(f"specs/{path.name}", _file_tools(path)) for path in sorted((ROOT / "specs").glob("*.json"))]
    shared = ROOT.parent / "shared" / "realworld"
    found += [(f"shared/realworld/{path.name}", _file_tools(path)) for path in sorted(shared.glob("*.json"))]
    live = [
        (
            "server-everything (npm, stdio)",
            NODE.exists() and EVERYTHING.exists(),
            f"{NODE} {EVERYTHING} stdio",
        ),
        (
            "official Python SDK (tests/peers/sdk_server.py)",
            True,
            f"{sys.executable} {ROOT}/tests/peers/sdk_server.py --stdio",
        ),
        (
            "FastMCP (tests/peers/fastmcp_tasks_server.py)",
            FASTMCP_PYTHON.exists(),
            f"{FASTMCP_PYTHON} {ROOT}/tests/peers/fastmcp_tasks_server.py --stdio",
        ),
    ]
    for label, present, command in live:
        if present:
            try:
                found.append((label, _live_tools(command)))
            except Exception as exc:  # a peer that does not start is left out, and said so
                print(f"skipped {label}: {exc}", file=sys.stderr)
    return [(label, tools) for label, tools in found if tools]


def table(found: list[tuple[str, list[dict[str, Any]]]]) -> str:
    from mcpgen_runtime.providers import PROFILES, lint_tool

    header = (
        "| corpus | tools | " + " | ".join(f"{name}: as is / lowered / never" for name in PROFILES) + " |"
    )
    lines = [header, "|---|---:|" + "---:|" * len(PROFILES)]
    totals: dict[str, Counter[str]] = {name: Counter() for name in PROFILES}
    count = 0
    for label, tools in found:
        cells = []
        for name in PROFILES:
            statuses = Counter(lint_tool(name, tool).status for tool in tools)
            totals[name].update(statuses)
            cells.append(f"{statuses['as-is']} / {statuses['lowered']} / {statuses['never']}")
        count += len(tools)
        lines.append(f"| {label} | {len(tools)} | " + " | ".join(cells) + " |")
    cells = [f"**{c['as-is']} / {c['lowered']} / {c['never']}**" for c in totals.values()]
    lines.append(f"| **all** | **{count}** | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the page's table is stale")
    parser.add_argument("--print", action="store_true", help="print the table, write nothing")
    args = parser.parse_args(argv)
    text = table(corpora())
    if args.print:
        print(text, end="")
        return 0
    page = PAGE.read_text(encoding="utf-8")
    before, rest = page.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    updated = f"{before}{BEGIN}\n{text}{END}{after}"
    if args.check:
        return 0 if updated == page else 1
    PAGE.write_text(updated, encoding="utf-8")
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
