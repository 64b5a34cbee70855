"""A stdio server that prints a banner to stdout before serving (issue #21, trap 7c).

The server is a real subprocess: a small script that prints lines that are not JSON-RPC (one with a
terminal escape sequence) and then runs the generated weather server over stdio. The generated
client, over both drivers, skips each such line with one warning (naming the server, the line
escaped) and its calls succeed; past the limit of skipped lines stdout is a protocol error.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import pytest

from mcpgen_runtime.errors import ProtocolError
from mcpgen_runtime.transport.stdio_lines import STRAY_LINE_LIMIT
from tests.runtime._client_helpers import WeatherAsyncClient as AsyncClient
from tests.runtime._client_helpers import WeatherClient as Client
from tests.support import subprocess_env

SCRIPT = """\
import runpy, sys
lines = int(sys.argv[1])
sys.stdout.write("Weather server 1.0 \\x1b[2J\\x1b[31mready\\x1b[0m\\n")
for n in range(lines - 1):
    sys.stdout.write(f"log line {n}\\n")
sys.stdout.flush()
sys.argv = ["weather_server", "--stdio"]
runpy.run_module("weather_server", run_name="__main__")
"""


def _command(tmp_path: Path, lines: int) -> list[str]:
    script = tmp_path / "banner_server.py"
    script.write_text(SCRIPT, "utf-8")
    return [sys.executable, str(script), str(lines)]


def _skipped(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "not JSON-RPC" in r.getMessage()]


def test_a_banner_line_is_skipped_with_one_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "mcpgen.client")
    with Client.stdio(_command(tmp_path, 1), env=subprocess_env(), timeout=30) as client:
        assert "Current weather in Berlin" in client.get_weather("Berlin").text
        assert "Current weather in Oslo" in client.get_weather("Oslo").text  # the connection goes on
    [warning] = _skipped(caplog)
    assert sys.executable in warning and "skipped, 1 of at most 100" in warning
    assert "\x1b" not in warning and "\\x1b[31mready" in warning  # inert: the escape is shown, not sent


def test_async_driver_skips_a_banner_too(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "mcpgen.client")

    async def main() -> str:
        async with AsyncClient.stdio(_command(tmp_path, 3), env=subprocess_env(), timeout=30) as client:
            return (await client.get_weather("Paris")).text

    assert "Current weather in Paris" in asyncio.run(main())
    assert len(_skipped(caplog)) == 3


def test_past_the_limit_stdout_is_a_protocol_error(tmp_path: Path) -> None:
    command = _command(tmp_path, STRAY_LINE_LIMIT + 1)
    with (
        Client.stdio(command, env=subprocess_env(), timeout=30) as client,
        pytest.raises(ProtocolError, match=f"more than {STRAY_LINE_LIMIT} lines that are not JSON-RPC"),
    ):
        client.get_weather("Berlin")
