"""The ECMA-262 reference for the pattern tests: Node's `RegExp` (`u` flag), run once per session.

`reference()` feeds every pattern of the corpus (tests/runtime/ecma_patterns.json, plus each
`pattern`/`patternProperties` key of the real tool lists in ../shared/realworld when present) with
its sample strings to one Node process and returns Node's verdicts; it skips the calling test
when Node 22 (conformance/node_modules, `make conformance-deps`) is not installed.
"""

from __future__ import annotations

import functools
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import NODE, SHARED

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "ecma_patterns.json"
REALWORLD_SAMPLES = ["", "a", "abc", "2024-01-02", "foo_bar", "x y", "é", "🐲", "a\n", "ABC-123"]


@dataclass(frozen=True)
class Case:
    pattern: str
    samples: tuple[str, ...]
    source: str
    enforced: bool  # False: the corpus expects the runtime to skip this valid pattern, with a reason


@dataclass(frozen=True)
class Verdict:
    valid: bool
    error: str | None
    matches: tuple[bool, ...]


def _walk(node: Any, found: list[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                found.append(value)
            if key == "patternProperties" and isinstance(value, dict):
                found.extend(value)
            _walk(value, found)
    elif isinstance(node, list):
        for value in node:
            _walk(value, found)


def realworld_patterns() -> list[str]:
    """Every `pattern` and `patternProperties` key in ../shared/realworld (empty when absent)."""
    root = SHARED / "realworld"
    found: list[str] = []
    for path in sorted(root.glob("*.json")) if root.is_dir() else []:
        _walk(json.loads(path.read_text(encoding="utf-8")), found)
    return found


@functools.cache
def corpus() -> tuple[Case, ...]:
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    pool = data["pool"]
    cases = [
        Case(c["pattern"], tuple(dict.fromkeys(c["samples"] + pool)), c["source"], c.get("enforced", True))
        for c in data["cases"]
    ]
    cases += [Case(p, tuple(REALWORLD_SAMPLES), "../shared/realworld", True) for p in realworld_patterns()]
    return tuple(cases)


@functools.cache
def _run_node() -> tuple[str, tuple[Verdict, ...]]:
    payload = json.dumps([{"pattern": c.pattern, "samples": list(c.samples)} for c in corpus()])
    done = subprocess.run(
        [str(NODE), str(HERE / "ecma_node.js")],
        input=payload.encode(),
        capture_output=True,
        timeout=300,
        check=True,
    )
    answer = json.loads(done.stdout)
    verdicts = tuple(Verdict(r["valid"], r["error"], tuple(r["matches"])) for r in answer["results"])
    return f"Node {answer['node']} (Unicode {answer['unicode']})", verdicts


def reference() -> tuple[str, dict[Case, Verdict]]:
    """Node's verdict for every case of the corpus; skips when Node 22 is not installed."""
    if not NODE.exists():
        pytest.skip(
            f"Node 22 is not installed at {NODE} (make conformance-deps): it is the ECMA-262 reference"
        )
    engine, verdicts = _run_node()
    return engine, dict(zip(corpus(), verdicts, strict=True))
