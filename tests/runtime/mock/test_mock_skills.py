"""`mcpgen mock SPEC --skills DIR` and `python -m mcpgen_runtime.mock SPEC --skills DIR`: the mock serves
the skills beside the spec's tools (over stdio, a real process), and a bad skill stops it at start."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.server_helpers import request
from tests.support import PYTHON, ROOT, subprocess_env

pytestmark = pytest.mark.peer

WEATHER = str(ROOT / "specs" / "weather.json")
COMMANDS = {
    "mcpgen mock": ["-m", "codegen.cli", "mock"],
    "python -m mcpgen_runtime.mock": ["-m", "mcpgen_runtime.mock"],
}


def exchange(command: list[str], messages: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]], str]:
    """Run the mock over stdio with `messages` on stdin (it ends when stdin closes)."""
    lines = "".join(json.dumps(m) + "\n" for m in messages)
    proc = subprocess.run(
        [PYTHON, *command],
        cwd=ROOT,
        env=subprocess_env(),
        input=lines,
        capture_output=True,
        text=True,
        timeout=60,
    )
    replies = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return proc.returncode, sorted(replies, key=lambda r: r["id"]), proc.stderr


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    folder = tmp_path / "skills" / "forecast"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: forecast\ndescription: Read a forecast aloud.\n---\n# Forecast\n"
    )
    (folder / "VOICE.md").write_text("Speak slowly.\n")
    return tmp_path / "skills"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_mock_serves_a_folder_of_skills_beside_the_spec(name: str, skills: Path) -> None:
    command = [*COMMANDS[name], WEATHER, "--stdio", "--skills", str(skills)]
    code, replies, err = exchange(
        command,
        [
            request(1, "skills/list"),
            request(2, "resources/read", {"uri": "skill://forecast/VOICE.md"}),
            request(3, "tools/list"),
        ],
    )
    assert code == 0, err
    (entry,) = replies[0]["result"]["skills"]
    assert entry["frontmatter"] == {"name": "forecast", "description": "Read a forecast aloud."}
    assert [r["uri"] for r in entry["resources"]] == [
        "skill://forecast/SKILL.md",
        "skill://forecast/VOICE.md",
    ]
    assert replies[1]["result"]["contents"][0]["text"] == "Speak slowly.\n"
    assert replies[2]["result"]["tools"]  # the spec's tools as before


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_bad_skill_stops_the_mock_naming_it(name: str, skills: Path) -> None:
    (skills / "forecast" / "SKILL.md").write_text("---\nname: weather\ndescription: d\n---\n")
    code, replies, err = exchange([*COMMANDS[name], WEATHER, "--stdio", "--skills", str(skills)], [])
    assert code == 1 and replies == []
    assert "error: skill " in err and "differs from its folder's name 'forecast'" in err


def test_skills_go_with_a_mocked_spec_not_a_recording(skills: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from codegen.cli import main

    result = CliRunner().invoke(
        main,
        [
            "mock",
            "--record",
            "http://127.0.0.1:9/mcp",
            "-o",
            str(tmp_path / "c.yaml"),
            "--skills",
            str(skills),
        ],
    )
    assert result.exit_code == 2 and "--skills goes with a mocked SOURCE" in result.output
