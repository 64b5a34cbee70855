"""The command line's task commands (runtime/mcpgen_runtime/cli/tasks.py) and `TOOL --no-wait`, through
click's runner against the scripted tasks server on loopback (tests/runtime/task_peer.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from click.testing import CliRunner, Result
from pydantic import BaseModel, ConfigDict

from mcpgen_runtime.cli import CliTool, build_cli
from mcpgen_runtime.client import Client
from tests.runtime.task_peer import SECRET_PREFIX, TaskPeer

pytestmark = [pytest.mark.peer, pytest.mark.timeout(60)]  # a server on loopback


class Args(BaseModel):
    model_config = ConfigDict(extra="allow")


class Crunched(BaseModel):
    total: int


TOOLS = [CliTool("crunch", "crunch", Args, Crunched)] + [
    CliTool(name, name, Args) for name in ("ask", "fail", "tool_error", "forever", "inline")
]


@pytest.fixture
def peer() -> Iterator[TaskPeer]:
    with TaskPeer() as server:
        yield server


def cli(peer: TaskPeer, *args: str, tools: list[CliTool] = TOOLS) -> Result:
    group = build_cli(Client, tools, prog="pkg")
    return CliRunner().invoke(group, ["--url", peer.url, "--era", "modern", *args])


def start(peer: TaskPeer, tool: str) -> str:
    started = cli(peer, tool.replace("_", "-"), "--no-wait")
    assert started.exit_code == 0, started.output
    task_id = started.stdout.strip()
    assert task_id.startswith(SECRET_PREFIX)
    return task_id


def test_no_wait_prints_the_task_id_and_wait_prints_the_result(peer: TaskPeer) -> None:
    task_id = start(peer, "crunch")
    assert not peer.requests("tasks/get")  # --no-wait did not wait
    status = cli(peer, "task", "status", task_id)
    assert status.exit_code == 0 and json.loads(status.stdout)["status"] == "working"
    waited = cli(peer, "task", "wait", task_id)
    assert waited.exit_code == 0, waited.output
    assert json.loads(waited.stdout) == {"total": 6}
    assert "step 2" in waited.stderr  # the task's status messages, as progress (one line each off a terminal)


def test_wait_exits_with_the_tools_exit_codes(peer: TaskPeer) -> None:
    tool_error = cli(peer, "task", "wait", start(peer, "tool_error"))
    assert tool_error.exit_code == 1 and "bad input" in tool_error.stdout
    failed = cli(peer, "task", "wait", start(peer, "fail"))
    assert failed.exit_code == 3 and "TaskFailedError" in failed.stderr
    assert SECRET_PREFIX not in failed.stderr  # the id, echoed by the server too, is masked
    unknown = cli(peer, "task", "status", SECRET_PREFIX + "unknown")
    assert (
        unknown.exit_code == 3
        and "TaskNotFoundError" in unknown.stderr
        and SECRET_PREFIX not in unknown.stderr
    )
    refused = cli(peer, "--no-input", "task", "wait", start(peer, "ask"))
    assert refused.exit_code == 4, refused.output


def test_cancel_then_wait_is_exit_3(peer: TaskPeer) -> None:
    task_id = start(peer, "forever")
    assert cli(peer, "task", "cancel", task_id).exit_code == 0
    assert json.loads(cli(peer, "task", "status", task_id).stdout)["status"] == "cancelled"
    waited = cli(peer, "task", "wait", task_id)
    assert waited.exit_code == 3 and "cancelled" in waited.stderr
    [cancel] = peer.requests("tasks/cancel")
    assert cancel.headers["mcp-name"] == task_id


def test_no_wait_on_a_call_answered_at_once_prints_its_result(peer: TaskPeer) -> None:
    answered = cli(peer, "--format", "text", "inline", "--no-wait")
    assert answered.exit_code == 0 and answered.stdout.strip() == "inline"


def test_a_tool_named_task_keeps_its_command_and_the_task_commands_become_mcp_task(peer: TaskPeer) -> None:
    tools = [*TOOLS, CliTool("inline", "task", Args)]  # a tool whose command is `task`
    group = build_cli(Client, tools, prog="pkg")
    shown = CliRunner().invoke(group, ["--help"])
    assert "mcp-task" in shown.output
    ran = cli(peer, "--format", "text", "task", tools=tools)
    assert ran.exit_code == 0 and ran.stdout.strip() == "inline"
    task_id = start(peer, "crunch")
    waited = cli(peer, "mcp-task", "wait", task_id, tools=tools)
    assert waited.exit_code == 0 and json.loads(waited.stdout) == {"total": 6}
