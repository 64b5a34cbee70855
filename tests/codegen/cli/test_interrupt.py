"""Ctrl-C while generating a 1,000-tool package, sent to a real `mcpgen client` process: exit 130
(as shells report SIGINT), one line on stderr and no traceback, and the package is either the
previous one or the new one, whole (no temporary directory left behind)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from tests.support import ROOT, interruptible


def _spec(path: Path, description: str) -> None:
    sys.path.insert(0, str(ROOT / "specs" / "tools"))
    try:
        from make_synthetic import make_tools
    finally:
        sys.path.pop(0)
    tools = make_tools(1000)
    tools[0]["description"] = description
    path.write_text(json.dumps({"tools": tools}), "utf-8")


def _mcpgen(cwd: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "runtime")])}
    return subprocess.Popen(
        [sys.executable, "-m", "codegen.cli", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )


def _whole(package: Path) -> set[str]:
    """The sha256 every generated header of the package names (one when the package is whole)."""
    manifest = json.loads((package / ".mcpgen-manifest.json").read_text("utf-8"))
    digests = set()
    for rel in manifest["files"]:
        head = (package / rel).read_text("utf-8").partition("\n")[0]
        found = re.search(r"\(sha256 ([0-9a-f]{64})\)", head)
        if found:
            digests.add(found.group(1))
    return digests


def test_ctrl_c_while_generating_exits_130_and_leaves_no_half_package(tmp_path: Path) -> None:
    spec = tmp_path / "synthetic.json"
    _spec(spec, "first")
    first = _mcpgen(tmp_path, "client", "synthetic.json", "-o", "out")
    _out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    package = tmp_path / "out" / "synthetic_client"
    before = _whole(package)
    assert len(before) == 1

    _spec(spec, "second")
    for out_dir in ("out", "fresh"):
        running = _mcpgen(tmp_path, "client", "synthetic.json", "-o", out_dir)
        assert running.stderr is not None
        running.stderr.readline()  # the first rename warning: validated, now building (seconds)
        running.send_signal(signal.SIGINT)
        _out, err = running.communicate(timeout=300)
        assert running.returncode == 130, err
        assert err.splitlines()[-1] == "mcpgen: interrupted; every package is written whole or left as it was"
        assert "Traceback" not in err and "Aborted!" not in err
        leftovers = [p.name for p in (tmp_path / out_dir).glob(".*")] if (tmp_path / out_dir).exists() else []
        assert leftovers == []
    assert _whole(package) == before  # the previous package, untouched
    assert not (tmp_path / "fresh" / "synthetic_client").exists()
