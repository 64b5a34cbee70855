"""Pinned definitions, checked live (issue 35): a client generated from tests/runtime/dynamic_server_app.py
against that server over HTTP (in-process, loopback) and stdio (a subprocess), modern and legacy. The
server changes `whoami`'s description mid-session and announces it (`listChanged`); each `on_drift` mode
does what it says; a server that lists the same tools differently spelled never drifts.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from mcpgen_runtime import pins
from mcpgen_runtime.errors import ToolDriftError, ToolDriftWarning
from tests.runtime._client_helpers import LiveServer, generated_client
from tests.runtime.dynamic_server_app import TOOLS, DynamicServer, _reordered
from tests.support import PYTHON, subprocess_env

pytestmark = pytest.mark.timeout(60)

PACKAGE = "drift_probe_client"
STDIO = [PYTHON, "-m", "tests.runtime.dynamic_server_app", "--stdio"]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with generated_client(tmp_path_factory.mktemp("drift"), PACKAGE, TOOLS) as package:
        yield package


@pytest.fixture
def live() -> Iterator[LiveServer]:
    with LiveServer(DynamicServer()) as server:
        yield server


def test_the_generator_writes_the_runtimes_pins(generated: Any) -> None:
    written = json.loads((Path(generated.__file__).parent / "tools.json").read_text("utf-8"))
    assert written["pins"] == pins.pin_all(written["tools"]) == pins.pin_all(TOOLS)


def _drift_after_redescribe(client: Any) -> list[str]:
    """Call a tool, have the server change `whoami`, wait for the announcement, call twice more:
    the drift warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert client.whoami() is not None  # the pins match: no drift yet
        assert not [w for w in caught if issubclass(w.category, ToolDriftWarning)]
        sub = client.listen(tools_list_changed=True)
        try:
            sub.open()
            client.mutate(op="redescribe")
            assert next(sub)["method"] == "notifications/tools/list_changed"
        finally:
            sub.close()
        client.whoami()  # the first call after the announcement compares again
        client.whoami()  # and the one after it does not
    drifted = [w for w in caught if issubclass(w.category, ToolDriftWarning)]
    runtime = str(Path(pins.__file__).parent)
    assert not [w.filename for w in drifted if w.filename.startswith(runtime)]  # the caller's line
    return [str(w.message) for w in drifted]


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_warn_is_the_default_and_warns_once_per_drift_http(
    generated: Any, live: LiveServer, era: str
) -> None:
    with generated.Client(live.url, era=era) as client:
        drifted = _drift_after_redescribe(client)
        assert len(drifted) == 1
        message = drifted[0]
        assert "'whoami': changed at /description" in message and "1 of 6 pinned tools" in message
        report = client.check_drift()
        assert [(d.tool, d.pointers, d.missing) for d in report.drifts] == [
            ("whoami", ("/description",), False)
        ]


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_error_raises_from_the_call_and_from_check_drift_http(
    generated: Any, live: LiveServer, era: str
) -> None:
    with generated.Client(live.url, era=era, on_drift="error") as client:
        with pytest.raises(ToolDriftError) as raised:
            _drift_after_redescribe(client)
        assert "'whoami': changed at /description" in str(raised.value)
        assert raised.value.report.tools == ("whoami",)
        with pytest.raises(ToolDriftError):  # never called while drifted
            client.whoami()
        with pytest.raises(ToolDriftError, match="whoami"):
            client.check_drift()


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_ignore_never_lists_but_check_drift_reports_http(generated: Any, live: LiveServer, era: str) -> None:
    with generated.Client(live.url, era=era, on_drift="ignore") as client:
        assert _drift_after_redescribe(client) == []
        assert live.count("tools/list") == 0
        report = client.check_drift()
        assert report.tools == ("whoami",) and live.count("tools/list") == 1


def test_first_call_lists_once_and_then_from_the_cache(generated: Any, live: LiveServer) -> None:
    with generated.Client(live.url) as client:
        client.whoami()
        client.subscribers()
        assert live.count("tools/list") == 1
        assert not client.check_drift()


def test_a_missing_tool_is_drift_and_unpinned_tools_are_ignored(generated: Any, live: LiveServer) -> None:
    with generated.Client(live.url, on_drift="error") as client:
        client.mutate(op="add")  # `extra`: the client was not generated for it
        assert not client.check_drift(refresh=True)
        live.server.remove_tool("cancelled", notify=False)  # between requests: no call is running
        with pytest.raises(ToolDriftError, match="'cancelled': no longer listed by the server"):
            client.check_drift(refresh=True)


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_error_over_stdio(generated: Any, era: str) -> None:
    client = generated.Client.stdio(STDIO, era=era, on_drift="error", env=subprocess_env())
    with client, pytest.raises(ToolDriftError, match="whoami"):
        _drift_after_redescribe(client)


def test_async_client_warns_over_stdio(generated: Any) -> None:
    async def main() -> tuple[list[str], Any]:
        async with generated.AsyncClient.stdio(STDIO, env=subprocess_env()) as client:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                await client.whoami()
                sub = client.listen(tools_list_changed=True)
                await sub.open()
                try:
                    await client.mutate(op="redescribe")
                    assert (await anext(sub))["method"] == "notifications/tools/list_changed"
                finally:
                    await sub.aclose()
                await client.whoami()
            drifted = [str(w.message) for w in caught if w.category is ToolDriftWarning]
            return drifted, await client.check_drift()

    drifted, report = asyncio.run(main())
    assert drifted == ["1 of 6 pinned tools drifted: 'whoami': changed at /description"]
    assert report.tools == ("whoami",)


# ---- an unchanged server never drifts --------------------------------------------------------


class ReorderedServer(DynamicServer):
    """The same tools, every object's keys reversed and a `_meta` added."""

    _tool_definitions_: ClassVar[list[dict[str, Any]]] = [
        {**_reordered(tool), "_meta": {"io.example/build": "2"}} for tool in TOOLS
    ]


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_an_unchanged_server_never_drifts_http(generated: Any, era: str) -> None:
    with (
        LiveServer(ReorderedServer()) as server,
        generated.Client(server.url, era=era, on_drift="error") as client,
    ):
        client.whoami()
        sub = client.listen(tools_list_changed=True)
        try:
            sub.open()
            client.mutate(op="touch")  # announced, nothing changed
            assert next(sub)["method"] == "notifications/tools/list_changed"
        finally:
            sub.close()
        client.whoami()
        assert server.count("tools/list") == 2  # the first call, and the first after the announcement
        assert not client.check_drift(refresh=True)


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_an_unchanged_server_never_drifts_stdio(generated: Any, era: str) -> None:
    env = {**subprocess_env(), "MCPGEN_TEST_REORDER": "1"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ToolDriftWarning)
        with generated.Client.stdio(STDIO, era=era, env=env) as client:
            client.whoami()
            report = client.check_drift(refresh=True)
    assert not report and report.pinned == 6


def test_a_client_without_pins_never_lists(live: LiveServer) -> None:
    from mcpgen_runtime.client import Client

    with Client(live.url, tools=TOOLS) as client:
        client.call_tool("whoami")
        assert live.count("tools/list") == 0
        assert client.check_drift().pinned == 0


def test_on_drift_is_checked(generated: Any) -> None:
    with pytest.raises(ValueError, match="on_drift must be one of 'warn', 'error', 'ignore'"):
        generated.Client("http://127.0.0.1:9/mcp", on_drift="loud")


# ---- the command line: python -m PKG check ---------------------------------------------------


def _check_cli(generated: Any, *args: str) -> subprocess.CompletedProcess[str]:
    folder = str(Path(generated.__file__).parent.parent)
    env = subprocess_env()
    env["PYTHONPATH"] = os.pathsep.join([folder, env.get("PYTHONPATH", "")])
    return subprocess.run(
        [PYTHON, "-m", PACKAGE, *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_check_command_exits_0_unchanged_then_1_on_drift(generated: Any, live: LiveServer) -> None:
    unchanged = _check_cli(generated, "--url", live.url, "check")
    assert unchanged.returncode == 0, unchanged.stderr
    assert "no drift" in unchanged.stdout and "6 pinned tools" in unchanged.stdout
    with generated.Client(live.url, on_drift="ignore") as client:
        client.mutate(op="redescribe")
    drifted = _check_cli(generated, "--url", live.url, "check")
    assert drifted.returncode == 1, drifted.stderr
    assert drifted.stdout == "drift: 'whoami': changed at /description\n"
    assert drifted.stderr == ""  # reported once, not warned as well
    called = _check_cli(generated, "--url", live.url, "--format", "text", "whoami")
    assert called.returncode == 0 and "ToolDriftWarning" in called.stderr and "/description" in called.stderr


def test_check_command_over_stdio_and_unreachable(generated: Any) -> None:
    stdio = " ".join(STDIO)
    assert _check_cli(generated, "--stdio", stdio, "check").returncode == 0
    unreachable = _check_cli(generated, "--url", "http://127.0.0.1:9/mcp", "--timeout", "2", "check")
    assert unreachable.returncode == 3 and "ConnectError" in unreachable.stderr


def test_a_tool_named_check_keeps_its_command(generated: Any, live: LiveServer) -> None:
    from mcpgen_runtime.cli import CliTool, build_cli

    tools = [CliTool("whoami", "check", "WhoamiInput")]  # a tool whose command is `check`
    group = build_cli(generated.Client, tools, prog="pkg", models=generated.models)
    shown = CliRunner().invoke(group, ["--help"])
    assert "mcp-check" in shown.output
    ran = CliRunner().invoke(group, ["--url", live.url, "--format", "text", "check"])
    assert ran.exit_code == 0 and ran.stdout.strip() == "None"
    checked = CliRunner().invoke(group, ["--url", live.url, "mcp-check"])
    assert checked.exit_code == 0 and "no drift" in checked.stdout
