"""reserved: the names of the classes generated code subclasses, and the per-user file that keeps them.

The cache must never change an answer: what it returns equals the live `dir()` of the classes, a
file for another key or a damaged file is ignored, and a fresh process (no in-memory memo) reads
the file instead of importing the runtime.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.model import reserved
from tests.support import ROOT


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "mcpgen" / "reserved-names.json"


def test_names_equal_the_live_classes() -> None:
    runtime, complete = reserved._live_runtime_members()
    assert complete
    assert reserved.runtime_member_names() == runtime
    assert reserved.basemodel_member_names() == reserved._live_basemodel_members()
    assert {"close", "call_tool", "handle_message", "_call", "__init__"} <= runtime
    assert {"model_config", "model_dump", "model_validate"} <= reserved.basemodel_member_names()


def test_cache_round_trip(cache_home: Path) -> None:
    key = reserved._cache_key()
    assert key is not None
    assert reserved._read_cache(cache_home, key) is None  # nothing yet
    names = {"runtime": sorted(reserved.runtime_member_names()), "basemodel": ["model_config"]}
    reserved._write_cache(cache_home, {"key": key, **names})
    assert reserved._read_cache(cache_home, key) == {kind: frozenset(value) for kind, value in names.items()}
    assert reserved._read_cache(cache_home, "another key") is None
    assert not [
        p for p in cache_home.parent.iterdir() if p.name != cache_home.name
    ]  # no temporary files left


@pytest.mark.parametrize(
    "text", ["", "{", "[]", '{"key": "K", "runtime": [1], "basemodel": []}', '{"key": "K", "runtime": []}']
)
def test_damaged_cache_is_ignored(cache_home: Path, text: str) -> None:
    cache_home.parent.mkdir(parents=True)
    cache_home.write_text(text, "utf-8")
    assert reserved._read_cache(cache_home, "K") is None


def test_unwritable_cache_is_skipped(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", "utf-8")
    reserved._write_cache(blocker / "mcpgen" / "reserved-names.json", {"key": "K"})  # no exception


def test_key_follows_the_runtime_sources_and_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any change to a runtime module or to the interpreter gives another key: stale names are never
    reused."""
    import mcpgen_runtime

    copy = tmp_path / "mcpgen_runtime"
    shutil.copytree(Path(mcpgen_runtime.__file__).resolve().parent, copy)
    monkeypatch.setattr(mcpgen_runtime, "__file__", str(copy / "__init__.py"))
    before = reserved._cache_key()
    assert before is not None and before == reserved._cache_key()
    server = copy / "server" / "core" / "dispatch" / "served.py"
    server.write_text(server.read_text("utf-8") + "\n# edited\n", "utf-8")
    edited = reserved._cache_key()
    assert edited != before
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    assert reserved._cache_key() not in (before, edited)


def test_a_fresh_process_reads_the_file_instead_of_importing_the_runtime(cache_home: Path) -> None:
    code = (
        "import sys; from codegen.model import reserved; names = reserved.runtime_member_names(); "
        "print(len(names), 'mcpgen_runtime.client' in sys.modules, 'pydantic' in sys.modules)"
    )
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(cache_home.parent.parent),
        "PYTHONPATH": f"{ROOT / 'runtime'}:{ROOT}",
    }
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert first.stdout.split()[1:] == ["True", "True"]  # computed from the live classes
    assert json.loads(cache_home.read_text("utf-8"))["key"] == reserved._cache_key()
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert second.stdout.split() == [first.stdout.split()[0], "False", "False"]
