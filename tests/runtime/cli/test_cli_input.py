"""Elicitation on the terminal: the mock (`mcpgen mock`'s server, its `elicit` rule) asks a form in
an input-required round; the CLI of `generated/weather_client` asks it as typed prompts on stderr,
or, with `--no-input`, ends with exit code 4 without asking.
"""

from __future__ import annotations

import importlib
import json
import shlex
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result

from mcpgen_runtime.cli import EXIT_INPUT, build_cli
from mcpgen_runtime.mock.harness import RunningMock, running_mock
from tests.interop._support import Client  # weather_client's (and generated/ on sys.path)
from tests.support import PYTHON, ROOT, subprocess_env

pytestmark = pytest.mark.timeout(90)

_MAIN = importlib.import_module("weather_client.__main__")
CLI = build_cli(Client, _MAIN._TOOLS, prog="weather", models=_MAIN._m)
FORM = {
    "type": "object",
    "properties": {
        "unit": {"type": "string", "title": "Unit", "enum": ["C", "F"], "default": "C"},
        "days": {"type": "integer", "minimum": 1, "maximum": 7, "description": "How many days"},
        "alerts": {"type": "boolean", "title": "Weather alerts"},
        "note": {"type": "string", "description": "Anything else \x1b[31mred\x1b[0m"},
    },
    "required": ["unit", "days"],
}
RESPONSES: dict[str, Any] = {
    "tools": {
        "get_weather_data": [
            {
                "match": {"location": "ask"},
                "elicit": {"message": "Which unit?\x1b[2J", "schema": FORM},
                "structured": {"temperature": 70.5, "conditions": "sunny", "humidity": 20},
            },
        ]
    }
}


@pytest.fixture(scope="module")
def mock() -> Iterator[RunningMock]:
    with running_mock(package="weather_client", responses=RESPONSES) as running:
        yield running


def ask(mock: RunningMock, *options: str, input: str | None = None) -> Result:
    mock.reset()
    return CliRunner().invoke(
        CLI,
        ["--url", str(mock.url), *options, "get-weather-data", "--location", "ask"],
        input=input,
        catch_exceptions=False,
    )


def test_form_answered_on_the_terminal(mock: RunningMock) -> None:
    """IN-06/07: accept, then each field typed by its schema; a wrong answer is asked again."""
    result = ask(
        mock, input="\nF\n9\n3\ny\n\n"
    )  # accept (default), F, 9 (out of range: again), 3, yes, no note
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"temperature": 70.5, "conditions": "sunny", "humidity": 20}
    assert mock.calls[0].elicited == {"action": "accept", "content": {"unit": "F", "days": 3, "alerts": True}}
    assert "Which unit?\\x1b[2J" in result.stderr  # the server's text, escaped
    assert "\x1b" not in result.stderr
    assert "9 is not <= 7" in result.stderr


def test_choices_are_printed_once(mock: RunningMock) -> None:
    """Issue #21 trap 7d: each prompt lists its choices once, also when it is asked again."""
    result = ask(mock, input="maybe\n\nX\nF\n3\n\n\n")
    assert result.exit_code == 0, result.output
    prompts = [line for line in result.stderr.splitlines() if line.startswith(("Answer", "Unit"))]
    assert prompts == [
        "Answer (accept, decline, cancel) [accept]: maybe",
        "Answer (accept, decline, cancel) [accept]: ",
        "Unit [C|F] [C]: X",
        "Unit [C|F] [C]: F",
    ]
    assert "(C, F)" not in result.stderr and "(C|F)" not in result.stderr


def test_defaults_are_offered(mock: RunningMock) -> None:
    result = ask(mock, input="accept\n\n2\n\n\n")
    assert result.exit_code == 0, result.output
    assert mock.calls[0].elicited == {"action": "accept", "content": {"unit": "C", "days": 2}}


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_are_answers(mock: RunningMock, action: str) -> None:
    result = ask(mock, input=f"{action}\n")
    assert mock.calls[0].elicited == {"action": action}
    assert result.exit_code == 1  # this mock answers a refused form with isError


def test_end_of_input_cancels(mock: RunningMock) -> None:
    result = ask(mock, input="")
    assert mock.calls[0].elicited == {"action": "cancel"}
    assert result.exit_code == 1


def test_no_input_fails_with_exit_4(mock: RunningMock) -> None:
    result = ask(mock, "--no-input")
    assert result.exit_code == EXIT_INPUT == 4
    assert "--no-input is set" in result.stderr and "Which unit?" in result.stderr
    assert result.stdout == ""
    assert mock.calls[0].elicited is None  # nothing was answered


def test_a_call_that_asks_nothing_runs_with_no_input(mock: RunningMock) -> None:
    result = CliRunner().invoke(
        CLI, ["--url", str(mock.url), "--no-input", "get-weather-data", "--location", "Oslo"]
    )
    assert result.exit_code == 0, result.output


def test_prompts_in_a_real_subprocess_over_stdio() -> None:
    """The package run as `python -m weather_client --stdio` against an out-of-process stdio mock,
    answers piped into stdin; and the same with --no-input."""
    with running_mock(
        package="weather_client", responses=RESPONSES, transport="stdio", in_process=False
    ) as stdio:
        assert stdio.command is not None
        command = shlex.join(stdio.command)

        def cli(*options: str, input: str | None) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [
                    PYTHON,
                    "-m",
                    "weather_client",
                    "--stdio",
                    command,
                    *options,
                    "get-weather-data",
                    "--location",
                    "ask",
                ],
                cwd=ROOT,
                env=subprocess_env(),
                input=input,
                capture_output=True,
                text=True,
                timeout=60,
            )

        done = cli(input="accept\nC\n5\nn\nhello\n")
        assert done.returncode == 0, done.stderr
        assert "Answer (accept, decline, cancel) [accept]: Unit [C|F] [C]: " in done.stderr  # choices once
        assert json.loads(done.stdout)["temperature"] == 70.5
        assert stdio.calls[-1].elicited == {
            "action": "accept",
            "content": {"unit": "C", "days": 5, "alerts": False, "note": "hello"},
        }
        done = cli("--no-input", input=None)
        assert done.returncode == 4, done.stderr


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_both_eras(mock: RunningMock, era: str) -> None:
    """A legacy session asks with a real elicitation/create request; the same prompts answer it,
    and --no-input refuses it the same way."""
    result = ask(mock, "--era", era, input="\nF\n3\n\n\n")
    assert result.exit_code == 0, result.output
    assert mock.calls[0].elicited == {"action": "accept", "content": {"unit": "F", "days": 3}}
    result = ask(mock, "--era", era, "--no-input")
    assert result.exit_code == 4, result.output
