"""Progress on the typed command line: a client package generated from a live server whose tools
report progress (tests/runtime/progress_server_app.py), run as `python -m progress_client` with
stderr on a real pseudo-terminal (a bar, a spinner, the line erased at the end) or on a pipe (a
plain line per update); `--quiet`; `--timeout` counting silence and `--max-time` the whole call;
and a hostile server's progress messages, which must reach neither terminal nor pipe as escapes.
"""

from __future__ import annotations

import fcntl
import io
import os
import re
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from mcpgen_runtime.cli.progress import ProgressDisplay
from tests.runtime.progress_server_app import HOSTILE_MESSAGES
from tests.support import PYTHON, ROOT, free_port, running_server, subprocess_env

pytestmark = pytest.mark.timeout(180)

SERVER = [PYTHON, "-m", "tests.runtime.progress_server_app"]
CLEAR = "\r\x1b[K"  # the display's own escape: back to the line's start, erase it
# what must never reach a terminal from the server: ESC, BEL, C1 CSI, carriage return, bidi override
RAW = ("\x1b", "\x07", "\x9b", "\r", "\u202e")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment `python -m progress_client` runs in: the package generated from the server."""
    out = tmp_path_factory.mktemp("generated")
    base = subprocess_env()
    server = " ".join([*SERVER, "--stdio"])
    subprocess.run(
        [
            PYTHON,
            "-m",
            "codegen.cli",
            "client",
            "--stdio",
            server,
            "-o",
            str(out),
            "--package",
            "progress_client",
        ],
        cwd=ROOT,
        env=base,
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert (out / "progress_client" / "__main__.py").is_file()
    return {**base, "PYTHONPATH": os.pathsep.join([base["PYTHONPATH"], str(out)])}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    with running_server([*SERVER, "--http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The command with stdout and stderr on pipes."""
    return subprocess.run(
        [PYTHON, "-m", "progress_client", *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def cli_on_terminal(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """The command with stderr on a pseudo-terminal 100 columns wide (stdout on a pipe, as in
    `python -m progress_client ... | jq`): (exit code, stdout, everything the terminal received)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    received: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every holder of the terminal's other side closed it
                return
            if not data:
                return
            received.append(data)

    reader = threading.Thread(target=read, daemon=True)
    try:
        proc = subprocess.Popen(
            [PYTHON, "-m", "progress_client", *args],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
        )
        os.close(slave)
        slave = -1
        reader.start()
        stdout, _ = proc.communicate(timeout=120)
        reader.join(10)
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
    return proc.returncode, stdout.decode(), b"".join(received).decode()


def drawn(terminal: str) -> list[str]:
    """The lines the display drew (each starts with its own CLEAR), without that escape."""
    return [part for part in terminal.split(CLEAR) if part]


def test_a_terminal_shows_a_bar_then_erases_it(env: dict[str, str], url: str) -> None:
    code, stdout, terminal = cli_on_terminal(env, "--url", url, "tick", "--steps", "5", "--interval", "0.3")
    assert code == 0
    assert '"text": "ticked 5"' in stdout and CLEAR not in stdout  # stdout: the result only
    lines = drawn(terminal)
    assert "tick [#####-------------------]  20% step 1" in lines
    assert lines[-1] == "tick [########################] 100% step 5"
    assert terminal.endswith(CLEAR)  # erased: what follows on the terminal starts on a clean line
    assert len(lines) == len(set(lines))  # a bar that has not moved is not drawn again


def test_a_terminal_shows_a_spinner_for_a_call_without_progress(env: dict[str, str], url: str) -> None:
    code, stdout, terminal = cli_on_terminal(env, "--url", url, "silent", "--seconds", "2.5")
    assert code == 0 and '"text": "slept 2.5s"' in stdout
    spinning = [line for line in drawn(terminal) if re.fullmatch(r"[|/\\-] silent: waiting \(\d+s\)", line)]
    assert len(spinning) >= 3 and {line[0] for line in spinning} >= {"|", "/", "-"}  # it turns
    assert terminal.endswith(CLEAR)

    code, _, terminal = cli_on_terminal(env, "--url", url, "--quiet", "silent", "--seconds", "1.5")
    assert (code, terminal) == (0, "")  # --quiet: nothing at all


def test_a_pipe_gets_a_plain_line_per_update(env: dict[str, str], url: str) -> None:
    done = cli(env, "--url", url, "tick", "--steps", "3", "--interval", "0.2")
    assert done.returncode == 0 and '"text": "ticked 3"' in done.stdout
    assert done.stderr.splitlines() == [
        "tick: 1/3 (33%) step 1",
        "tick: 2/3 (67%) step 2",
        "tick: 3/3 (100%) step 3",
    ]
    unknown = cli(env, "--url", url, "tick", "--steps", "2", "--interval", "0.2", "--no-total")
    assert unknown.stderr.splitlines() == ["tick: 1 step 1", "tick: 2 step 2"]
    slow = cli(env, "--url", url, "silent", "--seconds", "1.5")  # no spinner off a terminal
    assert (slow.returncode, slow.stderr) == (0, "")
    quiet = cli(env, "--url", url, "--quiet", "tick", "--steps", "2", "--interval", "0")
    assert (quiet.returncode, quiet.stderr) == (0, "")


def test_progress_outlives_the_timeout_and_max_time_ends_the_call(env: dict[str, str], url: str) -> None:
    # 3 s of progress 0.3 s apart outlive a 1.5 s --timeout, which counts silence only
    done = cli(env, "--url", url, "--timeout", "1.5", "tick", "--steps", "10", "--interval", "0.3")
    assert done.returncode == 0 and '"text": "ticked 10"' in done.stdout
    assert len(done.stderr.splitlines()) == 10

    ended = cli(
        env,
        "--url",
        url,
        "--timeout",
        "1.5",
        "--max-time",
        "3",
        "tick",
        "--steps",
        "100",
        "--interval",
        "0.3",
    )
    assert ended.returncode == 3 and ended.stdout == ""
    *progress, error = ended.stderr.splitlines()
    assert 3 <= len(progress) < 100
    assert error == (
        f"Error: RequestTimeoutError: no response from {url} within the max time of 3s "
        "(see --timeout and --max-time)"
    )

    silent = cli(env, "--url", url, "--timeout", "1.5", "silent", "--seconds", "10")
    assert silent.returncode == 3
    assert silent.stderr.strip().endswith(
        f"{url} within 1.5s without progress (see --timeout and --max-time)"
    )


def _escaped(message: str) -> str:
    return message.encode("unicode_escape").decode("ascii")  # the messages hold no backslash


def test_hostile_progress_messages_cannot_emit_escapes(env: dict[str, str], url: str) -> None:
    code, _, terminal = cli_on_terminal(env, "--url", url, "hostile")
    assert code == 0
    shown = terminal.replace(CLEAR, "")
    assert not [raw for raw in RAW if raw in shown]  # only the display's own CLEAR reached the terminal
    assert "\\x1b[31mred\\x1b[0m" in shown  # the server's text is visible, as its escapes

    piped = cli(env, "--stdio", " ".join([*SERVER, "--stdio"]), "hostile")  # stdio this time
    assert piped.returncode == 0
    assert not [raw for raw in RAW if raw in piped.stderr]
    assert piped.stderr.splitlines() == [
        f"hostile: {step}/3 ({step / 3:.0%}) {_escaped(message)}"
        for step, message in enumerate(HOSTILE_MESSAGES, 1)
    ]


def test_stdout_keeps_the_result_alone(env: dict[str, str], url: str) -> None:
    done = cli(env, "--url", url, "--format", "text", "tick", "--steps", "2", "--interval", "0")
    assert (done.stdout, len(done.stderr.splitlines())) == ("ticked 2\n", 2)


# ------------------------------------------------------------------ the display itself, in process


def _eventually(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "the display did not draw within 10 s"
        time.sleep(0.02)


def test_a_form_pauses_the_terminal_line_and_long_messages_are_cut() -> None:
    stream = io.StringIO()  # no terminal size to read: 80 columns
    with ProgressDisplay(stream, "tool", terminal=True) as display:
        display(1, 4, "x" * 300)
        first = drawn(stream.getvalue())[-1]
        assert first.startswith("tool [######------------------]  25% xxx") and first.endswith("~")
        assert len(first) < 80  # one line: a wrapped line could not be redrawn in place
        with display.pause():  # a form is being asked on the same terminal
            assert stream.getvalue().endswith(CLEAR)  # the line was put away first
            paused_at = len(stream.getvalue())
            display(2, 4, "meanwhile")
            time.sleep(0.3)  # several redraw ticks
            assert len(stream.getvalue()) == paused_at  # nothing drawn over the form
        _eventually(
            lambda: drawn(stream.getvalue())[-1:] == ["tool [############------------]  50% meanwhile"]
        )
    assert stream.getvalue().endswith(CLEAR)


def test_wide_characters_are_counted_as_two_columns() -> None:
    stream = io.StringIO()  # 80 columns: the line gets at most 79
    with ProgressDisplay(stream, "tool", terminal=True) as display:
        display(1, None, "進捗" * 60)
        line = drawn(stream.getvalue())[-1]
    assert re.match(r"[|/\\-] tool: 1 進捗", line) and line.endswith("~")  # the spinner may have turned
    assert sum(2 if "\u4e00" <= char <= "\u9fff" else 1 for char in line) <= 79
