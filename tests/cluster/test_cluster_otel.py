"""One trace for a multi-round-trip call whose rounds land on two replicas behind nginx.

Two replicas of the generated conformance server, each with the OpenTelemetry SDK exporting to
one shared file (tests/runtime/telemetry/traced_server_app.py), behind the shipped nginx on the
Redis store; the runtime client in this process with the in-memory exporter. nginx sends each
round, a new request (MRTR-19), to the next replica.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.trace import SpanKind

from mcpgen_runtime.client import Client, ElicitResult
from tests.cluster.harness import PACKAGE, Cluster, running_cluster
from tests.runtime.telemetry.conftest import Recorded
from tests.runtime.telemetry.conftest import otel as otel

pytestmark = pytest.mark.timeout(120)

TOOL = "test_input_required_result_elicitation"


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, Path]]:
    spans = tmp_path_factory.mktemp("spans") / "spans.jsonl"
    env = {"MCPGEN_TEST_SPANS": str(spans), "MCPGEN_TEST_SERVER_MODULE": PACKAGE}
    with running_cluster(2, module="tests.runtime.telemetry.traced_server_app", env=env) as cluster:
        yield cluster, spans


def served(path: Path, name: str, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 10
    while True:
        lines = path.read_text().splitlines() if path.exists() else []
        found = [record for record in map(json.loads, lines) if record["name"] == name]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_mrtr_rounds_on_two_replicas_are_one_trace(otel: Recorded, traced: tuple[Cluster, Path]) -> None:
    cluster, spans_file = traced
    with Client(
        cluster.url, era="modern", on_elicit=lambda request: ElicitResult.accept({"name": "Ada"}), timeout=10
    ) as client:
        for _ in range(2):
            result = client.call_tool(TOOL, {})
            assert not result.is_error
    calls = sorted(
        (s for s in otel.spans() if s.name == f"tools/call {TOOL}" and s.kind == SpanKind.CLIENT),
        key=lambda s: s.start_time or 0,
    )
    assert len(calls) == 2  # one CLIENT span per call, across its rounds
    rounds = served(spans_file, f"tools/call {TOOL}", 4)
    assert len(rounds) == 4
    replicas_seen: set[int] = set()
    for call in calls:
        assert call.context is not None
        mine = [r for r in rounds if r["trace_id"] == call.context.trace_id]
        assert len(mine) == 2, "both rounds of the call in its trace"
        assert all(r["kind"] == "SERVER" and r["parent_id"] == call.context.span_id for r in mine)
        assert len({r["attributes"]["jsonrpc.request.id"] for r in mine}) == 2
        assert len({r["pid"] for r in mine}) == 2, "nginx sent the two rounds to two replicas"
        replicas_seen |= {r["pid"] for r in mine}
    assert len(replicas_seen) == 2
