"""Round trips, counted: what reaches the server for a cached `tools/list` and for multi-round-trip calls.

    python -m bench.roundtrips

Every request the client sends goes through a counting wrapper around the real HTTP transport:
  - `list_all_tools()` twice within the server's ttlMs (bench_server: 60 s, public): the second
    listing must cost no request;
  - a tool that needs one round of client input (generated conformance_server,
    `test_input_required_result_elicitation`): 2 requests; two rounds
    (`test_input_required_result_multi_round`): 3 requests, i.e. exactly one extra per round.
Anything the client cannot do yet is reported as "n/a" with the reason, not as a failure of the run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from .servers import ROOT, start_module

for _path in (ROOT, ROOT / "generated"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))


class Counting:
    """A SyncTransport that counts requests per JSON-RPC method and delegates to HttpTransport."""

    sends_headers = True

    def __init__(self, url: str) -> None:
        from mcpgen_runtime.transport import HttpTransport

        self.inner = HttpTransport(url)
        self.methods: list[str] = []

    def request(
        self,
        message: dict[str, Any],
        headers: Mapping[str, str],
        *,
        timeout: float | None,
        on_notification: Any = None,
    ) -> Any:
        self.methods.append(str(message.get("method")))
        return self.inner.request(message, headers, timeout=timeout, on_notification=on_notification)

    def notify(self, message: dict[str, Any], headers: Mapping[str, str]) -> None:
        self.inner.notify(message, headers)

    def close(self) -> None:
        self.inner.close()


def _cache_check(url: str) -> dict[str, Any]:
    from mcpgen_runtime.client import Client

    transport = Counting(url)
    with Client(transport=transport, on_drift="ignore") as client:
        client.list_all_tools()
        first = transport.methods.count("tools/list")
        client.list_all_tools()
        second = transport.methods.count("tools/list") - first
    return {"check": "tools/list again within ttlMs", "requests": second, "expected": 0, "ok": second == 0}


def _mrtr_check(url: str, tool: str, rounds: int) -> dict[str, Any]:
    from mcpgen_runtime.client import Client, ElicitResult

    def on_elicit(request: Any) -> Any:
        schema = getattr(request, "requested_schema", None) or {}
        props = schema.get("properties", {}) if isinstance(schema, dict) else {}
        answer = {
            key: ("blue" if key == "color" else True if spec.get("type") == "boolean" else "Ada")
            for key, spec in props.items()
        }
        return ElicitResult.accept(answer)

    transport = Counting(url)
    with Client(transport=transport, on_elicit=on_elicit, on_drift="ignore") as client:
        client.call_tool(tool, {})
    calls = transport.methods.count("tools/call")
    return {
        "check": f"{tool} ({rounds} input round{'s' if rounds > 1 else ''})",
        "requests": calls,
        "expected": 1 + rounds,
        "ok": calls == 1 + rounds,
    }


def run() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    server = start_module("bench_server")
    try:
        try:
            rows.append(_cache_check(f"http://127.0.0.1:{server.port}/mcp"))
        except Exception as exc:
            rows.append({"check": "tools/list again within ttlMs", "error": f"{type(exc).__name__}: {exc}"})
    finally:
        server.stop()
    try:
        server = start_module("conformance_server")
    except Exception as exc:
        rows.append({"check": "multi-round-trip calls", "error": f"conformance_server: {exc}"})
        return rows
    try:
        url = f"http://127.0.0.1:{server.port}/mcp"
        for tool, rounds in (
            ("test_input_required_result_elicitation", 1),
            ("test_input_required_result_multi_round", 2),
        ):
            try:
                rows.append(_mrtr_check(url, tool, rounds))
            except Exception as exc:
                rows.append({"check": tool, "error": f"{type(exc).__name__}: {exc}"})
    finally:
        server.stop()
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| check | requests | expected | |", "|---|---:|---:|---|"]
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['check']} | n/a | | {row['error'][:160]} |")
        else:
            lines.append(
                f"| {row['check']} | {row['requests']} | {row['expected']} | "
                f"{'PASS' if row['ok'] else 'FAIL'} |"
            )
    return "\n".join(lines)


def main() -> list[dict[str, Any]]:
    rows = run()
    print(table(rows))
    print(json.dumps(rows))
    return rows


if __name__ == "__main__":
    main()
