"""A small YAML file cannot stand for an enormous value (issue 31, item 5).

Nine levels of nine aliases make a 533-byte cassette stand for 9^9 (387 million) strings: before
the fix, `python -m mcpgen_runtime.mock --replay` under a 1 GiB address-space limit died of
SIGSEGV after 6 s with 560 MiB resident. Cassettes and `--responses` files now refuse the first
alias, naming the file and the line, before anything is built from them.
"""

from __future__ import annotations

import itertools
import resource
import time
import tracemalloc
from pathlib import Path

import pytest

from mcpgen_runtime.mock.cassette import CassetteError, dump_cassette, load_cassette
from mcpgen_runtime.mock.responses import ResponsesError, load_responses
from tests.support import PYTHON, run_measured, subprocess_env

pytestmark = pytest.mark.timeout(120)

LEVELS = "abcdefghi"
ADDRESS_SPACE = 1024 * 2**20  # the subprocess's RLIMIT_AS
RUN_SECONDS = 30.0  # the refusal takes 2 s, most of it importing the mock, on a quiet machine
MAX_RSS_KIB = 200 * 1024  # measured: 51 MiB
LOAD_SECONDS = 1.0  # in process: measured 8 ms, 107 KiB traced
LOAD_PEAK_BYTES = 4 * 2**20  # traced


def _bomb(head: str, use: str) -> str:
    """`head`, nine anchored lists each nine times the one before, then `use` (which names *i)."""
    lines = [head, f"{LEVELS[0]}: &{LEVELS[0]} [{', '.join(['lol'] * 9)}]"]
    for before, level in itertools.pairwise(LEVELS):
        lines.append(f"{level}: &{level} [{', '.join([f'*{before}'] * 9)}]")
    return "\n".join([*lines, use]) + "\n"


CASSETTE = _bomb(
    "cassette: 1\nupstream: http://127.0.0.1:1/mcp",
    "interactions:\n- request: {jsonrpc: '2.0', id: 1, method: tools/list}\n"
    "  response: {jsonrpc: '2.0', id: 1, result: {tools: [], _meta: {x: *i}}}",
)
RESPONSES = _bomb("# canned answers\nx-note: 1", "echo:\n  result: {content: *i}")


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def test_replaying_an_alias_bomb_cassette_is_refused_quickly_and_small(tmp_path: Path) -> None:
    cassette = tmp_path / "bomb.yaml"
    cassette.write_text(CASSETTE, encoding="utf-8")
    assert len(CASSETTE) < 1024
    done = run_measured(
        [PYTHON, "-m", "mcpgen_runtime.mock", "--replay", str(cassette), "--stdio"],
        env=subprocess_env(),
        preexec_fn=_limit_address_space,
        timeout=RUN_SECONDS * 2,
    )
    err = done.stderr.decode()
    assert done.returncode == 1, (done.returncode, err)  # an error, not a signal
    assert f"{cassette}: " in err and "alias *a refused" in err and "line 4" in err, err
    assert done.seconds < RUN_SECONDS, done.seconds
    assert done.peak_rss_kib < MAX_RSS_KIB, done.peak_rss_kib


def test_mcpgen_mock_refuses_a_bomb_before_announcing_the_server(tmp_path: Path) -> None:
    cassette = tmp_path / "bomb.yaml"
    cassette.write_text(CASSETTE, encoding="utf-8")
    done = run_measured(
        [PYTHON, "-m", "codegen.cli", "mock", "--replay", str(cassette), "--stdio"],
        env=subprocess_env(),
        preexec_fn=_limit_address_space,
        timeout=RUN_SECONDS * 2,
    )
    err = done.stderr.decode()
    assert done.returncode == 1 and "alias *a refused" in err, (done.returncode, err)
    assert "replaying" not in err, err  # nothing announced a server that never started
    assert done.peak_rss_kib < MAX_RSS_KIB, done.peak_rss_kib


@pytest.mark.parametrize("kind", ["cassette", "responses"])
def test_loading_an_alias_bomb_is_refused_in_well_under_a_second(tmp_path: Path, kind: str) -> None:
    path = tmp_path / f"bomb.{'yaml' if kind == 'cassette' else 'yml'}"
    path.write_text(CASSETTE if kind == "cassette" else RESPONSES, encoding="utf-8")
    # the loader's modules imported first, so that only loading the bomb is traced
    plain = tmp_path / f"plain{path.suffix}"
    if kind == "cassette":
        plain.write_bytes(dump_cassette([], "http://127.0.0.1:1/mcp"))
        load_cassette(plain)
    else:
        plain.write_text("defaults: {latency_ms: 0}\n", encoding="utf-8")
        load_responses(plain, {})
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(CassetteError if kind == "cassette" else ResponsesError) as refused:
            load_cassette(path) if kind == "cassette" else load_responses(path, {})
        took = time.monotonic() - started
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(path) in str(refused.value) and "alias *a refused" in str(refused.value)
    assert f'in "{path}", line 4, column 8' in str(refused.value)
    assert took < LOAD_SECONDS, took
    assert peak < LOAD_PEAK_BYTES, peak


def test_anchors_alone_and_written_cassettes_still_load(tmp_path: Path) -> None:
    """An anchor that nothing refers to repeats nothing; `dump_cassette` writes none."""
    interactions = [
        {
            "request": {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            "response": {"jsonrpc": "2.0", "id": 1, "result": {}},
        }
    ] * 2  # the same object twice: written out twice, not as an alias
    path = tmp_path / "written.yaml"
    path.write_bytes(dump_cassette(interactions, "http://127.0.0.1:1/mcp"))
    assert len(load_cassette(path).exchanges) == 2
    path.write_text(
        "cassette: 1\nupstream: x\ninteractions: &all\n- request: {jsonrpc: '2.0', id: 1, method: ping}\n",
        encoding="utf-8",
    )
    assert len(load_cassette(path).interactions) == 1
