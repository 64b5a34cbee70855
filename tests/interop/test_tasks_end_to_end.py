"""Tasks end to end: a server and a client generated from one spec (`mcpgen server`, `mcpgen client`)
into a fresh project, the handler of docs/how-to/long-running.md pasted into handlers.py as the page
shows it, served over Streamable HTTP and over stdio, and called by the generated clients (sync and
async), by the page's own client examples and command lines, and in the 2025-11-25 form.

Task ids are secrets: every test checks that the ids it saw never reach the server's stderr, the
client's exceptions or the command line's stderr in full.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcpgen_runtime.client import ElicitResult
from mcpgen_runtime.errors import (
    RequestTimeoutError,
    TaskCancelledError,
    TaskFailedError,
    TaskNotFoundError,
    ToolError,
)
from mcpgen_runtime.protocol.subscriptions import SubscriptionWarning
from tests.support import PYTHON, ROOT, free_port, interruptible, run_mcpgen, wait_for_port

pytestmark = pytest.mark.timeout(90)

PAGE = ROOT / "docs" / "how-to" / "long-running.md"

SPEC: dict[str, Any] = {
    "tools": [
        {  # the page's tool, as the page writes it
            "name": "build_report",
            "description": "Render every part of a report and publish it",
            "inputSchema": {
                "type": "object",
                "properties": {"parts": {"type": "array", "items": {"type": "string"}}},
                "required": ["parts"],
            },
            "execution": {"taskSupport": "optional"},
        },
        {
            "name": "export_data",
            "description": "Export a dataset; always a task.",
            "inputSchema": {
                "type": "object",
                "properties": {"rows": {"type": "integer", "minimum": 0}},
                "required": ["rows"],
            },
            "outputSchema": {
                "type": "object",
                "properties": {"url": {"type": "string"}, "rows": {"type": "integer"}},
                "required": ["url", "rows"],
            },
            "execution": {"taskSupport": "required"},
        },
        {
            "name": "wait_forever",
            "description": "Runs until cancelled; writes `marker` when it sees the cancellation.",
            "inputSchema": {
                "type": "object",
                "properties": {"marker": {"type": "string"}},
                "required": ["marker"],
            },
            "execution": {"taskSupport": "optional"},
        },
        {
            "name": "reindex",
            "description": "Not marked for tasks: its handler asks for one per call.",
            "inputSchema": {"type": "object", "additionalProperties": False},
            "execution": {"taskSupport": "forbidden"},
        },
        {
            "name": "ping",
            "description": "Answers at once.",
            "inputSchema": {"type": "object", "additionalProperties": False},
        },
    ]
}

HANDLERS = """\
from __future__ import annotations

import asyncio
import pathlib

from mcpgen_runtime.server import (
    RpcError,
    ServerConfig,
    TaskOptions,
    ToolContext,
    ToolExecutionError,
    ToolReturn,
)

from . import models as _m
from .base import ServerBase


async def render(part: str) -> None:
    await asyncio.sleep(0.01)


class Server(ServerBase):
    # polls 20 times a second, so that the tests wait for tasks briefly
    _server_config_ = ServerConfig(name="reports_server", tasks=TaskOptions(poll_interval_ms=50))

{build_report}
    async def export_data(self, args: _m.ExportDataInput, ctx: ToolContext) -> _m.ExportDataOutput:
        await ctx.set_status("exporting")
        await asyncio.sleep(0.01)
        if args.rows == 0:
            raise ToolExecutionError("nothing to export")  # completed, with an isError result
        if args.rows == 13:
            raise RpcError(-32602, "13 rows are refused")  # failed, with this error
        return _m.ExportDataOutput(url=f"https://example.com/{{args.rows}}.csv", rows=args.rows)

    async def wait_forever(self, args: _m.WaitForeverInput, ctx: ToolContext) -> ToolReturn:
        await ctx.run_as_task(status_message="waiting")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            pathlib.Path(args.marker).write_text("cancelled")
            raise
        return "never"

    async def reindex(self, args: _m.ReindexInput, ctx: ToolContext) -> ToolReturn:
        return "a task" if await ctx.run_as_task(status_message="reindexing") else "inline"

    async def ping(self, args: _m.PingInput, ctx: ToolContext) -> ToolReturn:
        return "pong"
"""

_ID = re.compile(r"^[A-Za-z0-9_-]{32}$")


def page_blocks(opening: str) -> list[str]:
    """The fenced blocks of the page opened with `opening` (e.g. "{.python .excerpt}"), in order."""
    return re.findall(r"^```" + re.escape(opening) + r"\n(.*?)^```", PAGE.read_text(), re.S | re.M)


@dataclass
class Project:
    root: Path  # specs/reports.json and src/, as the page lays them out
    src: Path
    env: dict[str, str]  # a child process that imports the runtime and both packages

    def client_module(self) -> Any:
        return importlib.import_module("reports_client")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    root = tmp_path_factory.mktemp("reports")
    (root / "specs").mkdir()
    (root / "specs" / "reports.json").write_text(json.dumps(SPEC))
    for side in ("server", "client"):
        done = run_mcpgen(root, side, "specs/reports.json", "-o", "src", "--package", f"reports_{side}")
        assert done.returncode == 0, done.stderr
    handler = page_blocks("{.python .excerpt}")[0]
    assert handler.startswith("async def build_report(")
    src = root / "src"
    (src / "reports_server" / "handlers.py").write_text(
        HANDLERS.format(build_report=textwrap.indent(handler, "    "))
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), str(ROOT), str(src)])}
    sys.path.insert(0, str(src))
    try:
        yield Project(root, src, env)
    finally:
        sys.path.remove(str(src))
        for name in [n for n in sys.modules if n.startswith(("reports_client", "reports_server"))]:
            del sys.modules[name]


@dataclass
class Served:
    url: str
    stderr: Path

    def assert_secret(self, *task_ids: str | None) -> None:
        """None of `task_ids` is on the server's stderr in full."""
        logged = self.stderr.read_text()
        for task_id in task_ids:
            assert task_id is None or task_id not in logged


@pytest.fixture(scope="module")
def served(project: Project, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`python -m reports_server --http` with debug logs, its stderr kept in a file."""
    port = free_port()
    stderr = tmp_path_factory.mktemp("served") / "stderr.log"
    command = [PYTHON, "-m", "reports_server", "--http", "--port", str(port), "--log-level", "debug"]
    with stderr.open("wb") as sink:
        proc = subprocess.Popen(
            command, cwd=project.src, env=project.env, stdout=subprocess.DEVNULL, stderr=sink
        )
        try:
            wait_for_port(port, proc)
            yield Served(f"http://127.0.0.1:{port}/mcp", stderr)
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def publish(request: Any) -> ElicitResult:
    return ElicitResult.accept({"ok": True})


def eventually(check: Callable[[], bool], within: float = 5.0) -> None:
    until = time.monotonic() + within
    while not check():
        assert time.monotonic() < until, "the condition did not hold in time"
        time.sleep(0.02)


def text(result: Any) -> str:
    return str(result.content[0].text)


def raised(call: Callable[[], Any], kind: type[BaseException]) -> BaseException:
    with pytest.raises(kind) as caught:
        call()
    return caught.value


# -- the page's examples, as written ---------------------------------------------------------


def test_the_pages_examples_hold(project: Project, served: Served, tmp_path: Path) -> None:
    """docs/how-to/long-running.md: the plain call (progress, on_elicit), the started task answered
    by hand, and `resume` + `cancel` from a second process, each run as the page shows it."""
    plain, started = page_blocks("{.python .excerpt}")[1:3]
    here, later = started.split("# later, in another process\n")
    client_module = project.client_module()
    printed: list[Any] = []
    saved = tmp_path / "task-id"
    names = {
        "Client": client_module.Client,
        "ElicitResult": ElicitResult,
        "url": served.url,
        "print": lambda *args: printed.append(args),
        "save": saved.write_text,
    }
    exec(plain, dict(names))
    *progress, (content,) = printed
    assert content[0].text == "published"
    # the task's status messages as progress: run_as_task's, then report_progress's "step/total"
    messages = [message for _, _, message in progress]
    assert messages[0] == "queued" and set(messages) <= {"queued", "1/2", "2/2"}

    printed.clear()
    exec(here, dict(names))
    assert text(printed[-1][0]) == "published"
    task_id = saved.read_text()
    assert _ID.match(task_id)

    program = f"import pathlib\nfrom reports_client import Client\nurl = {served.url!r}\n"
    program += f"def load():\n    return pathlib.Path({str(saved)!r}).read_text()\n{later}"
    second = subprocess.run(
        [PYTHON, "-c", program], cwd=project.src, env=project.env, capture_output=True, text=True, timeout=30
    )
    assert second.returncode == 0, second.stderr
    with client_module.Client(served.url) as client:
        assert client.tasks.get(task_id).status == "completed"  # cancelling a finished task changes nothing
    served.assert_secret(task_id)


def test_the_pages_command_lines_hold(project: Project, served: Served) -> None:
    """The page's shell block, line by line: --no-wait prints the id, then status, wait, cancel."""
    (block,) = page_blocks("sh")
    lines = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert [line.split()[0:3] for line in lines] == [["python", "-m", "reports_client"]] * 4
    env = {**project.env, "URL": served.url}

    def shell(line: str, **extra: str) -> subprocess.CompletedProcess[str]:
        line = line.replace("python ", f"{PYTHON} ", 1)
        return subprocess.run(
            ["bash", "-c", line],
            cwd=project.src,
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=30,
        )

    started = shell(lines[0])
    assert started.returncode == 0, started.stderr
    task_id = started.stdout.strip()
    assert _ID.match(task_id) and not task_id.startswith("-")  # never taken for an option
    status = shell(lines[1], TASK=task_id)
    assert status.returncode == 0 and json.loads(status.stdout)["taskId"] == task_id
    waited = shell(lines[2], TASK=task_id)  # stdin is no terminal: the question is cancelled
    assert waited.returncode == 0, waited.stderr
    assert json.loads(waited.stdout) == [{"type": "text", "text": "kept as a draft"}]
    cancelled = shell(lines[3], TASK=task_id)
    assert cancelled.returncode == 0, cancelled.stderr
    for done in (started, status, waited, cancelled):
        assert task_id not in done.stderr
    served.assert_secret(task_id)


# -- the generated client over HTTP ----------------------------------------------------------


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@contextlib.contextmanager
def drive(project: Project, mode: str, **options: Any) -> Iterator[Callable[[Callable[[Any], Any]], Any]]:
    """Call a generated client of `mode` like `drv(lambda c: c.ping())` (coroutines are awaited)."""
    module = project.client_module()
    url = options.pop("url")
    if mode == "sync":
        with module.Client(url, **options) as client:
            yield lambda call: call(client)
        return
    runner = asyncio.Runner()
    client = module.AsyncClient(url, **options)

    async def awaited(value: Any) -> Any:
        return await value if asyncio.iscoroutine(value) else value

    try:
        yield lambda call: runner.run(awaited(call(client)))
    finally:
        runner.run(client.aclose())
        runner.close()


def test_plain_calls_poll_to_typed_results(project: Project, served: Served, mode: str) -> None:
    progress: list[Any] = []
    on_progress = lambda *args: progress.append(args)  # noqa: E731
    with drive(project, mode, url=served.url, on_progress=on_progress, on_elicit=publish) as drv:
        assert text(drv(lambda c: c.build_report(parts=["a", "b", "c"]))) == "published"
        assert progress[0][2] == "queued"
        exported = drv(lambda c: c.export_data(rows=3))  # `required`: a task for every call
        assert (exported.url, exported.rows) == ("https://example.com/3.csv", 3)
        assert text(drv(lambda c: c.ping())) == "pong"


def test_a_started_task_answered_by_hand(project: Project, served: Served, mode: str) -> None:
    with drive(project, mode, url=served.url, capabilities={"elicitation": {}}) as drv:
        handle = drv(lambda c: c.start.build_report(parts=["a"]))
        assert _ID.match(handle.task_id) and handle.task_id not in repr(handle)
        state = drv(lambda c: handle.wait(timeout=10))
        assert state.status == "input_required"
        ((key, request),) = state.input_requests.items()
        assert request["params"]["message"] == "Publish it?"
        drv(lambda c: handle.respond({key: ElicitResult.accept({"ok": False})}))
        assert text(drv(lambda c: handle.result())) == "kept as a draft"
        assert drv(lambda c: handle.status()).status == "completed"
        again = drv(lambda c: c.resume.build_report(handle.task_id))  # the same typed handle, by id
        assert text(drv(lambda c: again.result())) == "kept as a draft"
    served.assert_secret(handle.task_id)


def test_a_required_tool_started_gives_its_typed_output(project: Project, served: Served, mode: str) -> None:
    with drive(project, mode, url=served.url) as drv:
        handle = drv(lambda c: c.start.export_data(rows=5))
        assert handle.task_id is not None
        exported = drv(lambda c: handle.result())
        assert type(exported).__name__ == "ExportDataOutput" and exported.rows == 5
        assert drv(lambda c: handle.status()).status_message == "exporting"
    served.assert_secret(handle.task_id)


def test_cancel_ends_the_task_and_the_handler_sees_it(
    project: Project, served: Served, mode: str, tmp_path: Path
) -> None:
    marker = tmp_path / "cancelled"
    with drive(project, mode, url=served.url) as drv:
        handle = drv(lambda c: c.start.wait_forever(marker=str(marker)))
        assert drv(lambda c: handle.status()).status == "working"
        drv(lambda c: handle.cancel())
        assert drv(lambda c: handle.status()).status == "cancelled"
        eventually(marker.exists)  # the handler's `except asyncio.CancelledError` ran
        error = raised(lambda: drv(lambda c: handle.result()), TaskCancelledError)
        assert handle.task_id not in str(error) and handle.task_id[:4] in str(error)
        drv(lambda c: handle.cancel())  # idempotent on an ended task
    served.assert_secret(handle.task_id)


def test_a_tool_that_answers_at_once_gives_a_handle_without_task(
    project: Project, served: Served, mode: str
) -> None:
    with drive(project, mode, url=served.url) as drv:
        handle = drv(lambda c: c.start.ping())
        assert handle.task_id is None
        assert drv(lambda c: handle.status()).status == "completed"
        assert text(drv(lambda c: handle.result())) == "pong"
        raised(lambda: drv(lambda c: handle.respond({})), ValueError)


def test_an_unmarked_tool_whose_handler_asks_runs_as_a_task(
    project: Project, served: Served, mode: str
) -> None:
    """`forbidden` (or no `execution`): a task only when the handler calls run_as_task; the
    2025-11-25 form follows the marking, so there the same handler goes on inline."""
    with drive(project, mode, url=served.url) as drv:
        handle = drv(lambda c: c.start.reindex())
        assert handle.task_id is not None and text(drv(lambda c: handle.result())) == "a task"
        assert text(drv(lambda c: c.reindex())) == "a task"
    with project.client_module().Client(served.url, era="legacy") as legacy:
        assert legacy.start.reindex().task_id is None and text(legacy.reindex()) == "inline"


def test_execution_is_listed_to_2025_clients_only(project: Project, served: Served) -> None:
    module = project.client_module()
    for era, expected in (("modern", None), ("legacy", {"taskSupport": "required"})):
        with module.Client(served.url, era=era) as client:
            tools = {tool["name"]: tool for tool in client.list_tools().tools}
            assert tools["export_data"].get("execution") == expected


def test_listen_hears_the_tasks_updates(project: Project, served: Served, tmp_path: Path) -> None:
    other = "Zz" * 16
    with project.client_module().Client(served.url) as client:
        handle = client.start.wait_forever(marker=str(tmp_path / "cancelled"))
        with pytest.warns(SubscriptionWarning), client.tasks.listen([handle.task_id, other]) as updates:
            unsupported = updates.subscription.unsupported
            assert len(unsupported) == 1 and other not in str(unsupported)  # unknown: left out, masked
            handle.cancel()
            heard = []
            for state in updates:
                assert state.task_id == handle.task_id
                heard.append(state.status)
                if state.terminal:
                    break
        assert heard[-1] == "cancelled"
    served.assert_secret(handle.task_id, other)


def test_an_unknown_id_is_not_found_and_stays_masked(project: Project, served: Served) -> None:
    secret = "Zz" * 16
    with project.client_module().Client(served.url) as client:
        for call in (lambda: client.tasks.get(secret), lambda: client.resume.export_data(secret).result()):
            error = raised(call, TaskNotFoundError)
            assert secret not in str(error) and "Zz" in str(error)
    served.assert_secret(secret)


def test_a_task_resumed_from_a_second_process(project: Project, served: Served) -> None:
    """The id is all another process needs: it waits, answers the question and reads the result."""
    with project.client_module().Client(served.url, capabilities={"elicitation": {}}) as client:
        handle = client.start.build_report(parts=["a"])
        program = textwrap.dedent(f"""\
            from mcpgen_runtime.client import ElicitResult
            from reports_client import Client
            with Client({served.url!r}, capabilities={{"elicitation": {{}}}}) as client:
                handle = client.resume.build_report({handle.task_id!r})
                state = handle.wait(timeout=10)
                handle.respond({{key: ElicitResult.accept({{"ok": True}}) for key in state.input_requests}})
                print(handle.result().content[0].text)
            """)
        second = subprocess.run(
            [PYTHON, "-c", program],
            cwd=project.src,
            env=project.env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert second.returncode == 0, second.stderr
        assert second.stdout.strip() == "published"
        assert text(handle.result()) == "published"
    served.assert_secret(handle.task_id)


def test_a_tool_error_and_a_failed_task(project: Project, served: Served, mode: str) -> None:
    """An isError result ends the task `completed` and raises ToolError; an RpcError ends it
    `failed` and raises TaskFailedError with that error."""
    with drive(project, mode, url=served.url) as drv:
        error = raised(lambda: drv(lambda c: c.export_data(rows=0)), ToolError)
        assert "nothing to export" in str(error)
        handle = drv(lambda c: c.start.export_data(rows=13))
        failed = raised(lambda: drv(lambda c: handle.result()), TaskFailedError)
        assert isinstance(failed, TaskFailedError) and failed.code == -32602
        assert "13 rows are refused" in str(failed) and handle.task_id not in str(failed)
        assert drv(lambda c: handle.status()).status == "failed"
    served.assert_secret(handle.task_id)


def test_asking_a_client_without_elicitation_fails_the_task(
    project: Project, served: Served, mode: str
) -> None:
    """The page: without `on_elicit` (or a declared `elicitation`) the handler's ask fails the task."""
    with drive(project, mode, url=served.url) as drv:
        failed = raised(lambda: drv(lambda c: c.build_report(parts=["a"])), TaskFailedError)
        assert isinstance(failed, TaskFailedError) and failed.code == -32021


def test_a_plain_call_given_up_by_its_caller_cancels_the_task(
    project: Project, served: Served, tmp_path: Path
) -> None:
    """`max_time` (sync) and a cancelled coroutine (async) end the wait with `tasks/cancel`: the
    handler sees CancelledError."""
    module = project.client_module()
    by_max_time = tmp_path / "max-time"
    with module.Client(served.url, max_time=0.3) as client:
        error = raised(lambda: client.wait_forever(marker=str(by_max_time)), RequestTimeoutError)
        assert "max time" in str(error)
    eventually(by_max_time.exists)

    by_caller = tmp_path / "caller"

    async def main() -> None:
        async with module.AsyncClient(served.url) as client:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.wait_forever(marker=str(by_caller)), 0.3)

    asyncio.run(main())
    eventually(by_caller.exists)


def test_a_progress_callback_that_raises_at_the_first_status_cancels_the_task(
    project: Project, served: Served, tmp_path: Path
) -> None:
    """Ctrl-C while the first status message (the CreateTaskResult's own) is being shown: the call
    gives up, so the task is cancelled, as it is for an interrupt between polls."""

    def on_progress(*args: Any) -> None:
        raise KeyboardInterrupt

    marker = tmp_path / "interrupted"
    client_class = project.client_module().Client
    with client_class(served.url, on_progress=on_progress) as client, pytest.raises(KeyboardInterrupt):
        client.wait_forever(marker=str(marker))
    eventually(marker.exists)


# -- stdio: the server is the client's own process -------------------------------------------


def test_over_stdio_tasks_live_as_long_as_the_clients_server(project: Project, tmp_path: Path) -> None:
    module = project.client_module()
    command = [PYTHON, "-m", "reports_server", "--stdio"]
    stdio = {"env": {"PYTHONPATH": project.env["PYTHONPATH"]}, "cwd": project.src}
    marker = tmp_path / "cancelled"
    with module.Client.stdio(command, on_elicit=publish, **stdio) as client:
        assert text(client.build_report(parts=["a"])) == "published"
        handle = client.start.export_data(rows=2)
        assert client.resume.export_data(handle.task_id).result().rows == 2
        waiting = client.start.wait_forever(marker=str(marker))
        waiting.cancel()
        assert waiting.status().status == "cancelled"
        eventually(marker.exists)
    with module.Client.stdio(command, **stdio) as other:  # another client: another server process
        error = raised(lambda: other.resume.export_data(handle.task_id).result(), TaskNotFoundError)
        assert handle.task_id not in str(error)

    # the command line: each command is a client with a server of its own
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        line = [PYTHON, "-m", "reports_client", "--stdio", " ".join(command), *args]
        return subprocess.run(
            line, cwd=project.src, env=project.env, capture_output=True, text=True, timeout=30
        )

    task_id = cli("export-data", "--rows", "1", "--no-wait").stdout.strip()
    assert _ID.match(task_id)
    waited = cli("task", "wait", task_id)
    assert waited.returncode == 3 and "TaskNotFoundError" in waited.stderr and task_id not in waited.stderr


def test_async_over_stdio(project: Project) -> None:
    module = project.client_module()
    command = [PYTHON, "-m", "reports_server", "--stdio"]

    async def main() -> str:
        async with module.AsyncClient.stdio(
            command,
            env={"PYTHONPATH": project.env["PYTHONPATH"]},
            cwd=project.src,
            capabilities={"elicitation": {}},
        ) as client:
            handle = await client.start.build_report(parts=["a"])
            state = await handle.wait(timeout=10)
            await handle.respond({key: publish(None) for key in state.input_requests})
            return text(await handle.result())

    assert asyncio.run(main()) == "published"


# -- the generated command line --------------------------------------------------------------


def test_command_line_no_wait_and_task_commands(project: Project, served: Served, tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PYTHON, "-m", "reports_client", "--url", served.url, *args],
            cwd=project.src,
            env=project.env,
            capture_output=True,
            text=True,
            timeout=30,
        )

    started = cli("export-data", "--rows", "4", "--no-wait")
    assert started.returncode == 0, started.stderr
    done_id = started.stdout.strip()
    assert _ID.match(done_id)
    waited = cli("task", "wait", done_id)
    assert waited.returncode == 0 and json.loads(waited.stdout) == {
        "url": "https://example.com/4.csv",
        "rows": 4,
    }
    status = cli("task", "status", done_id)
    assert status.returncode == 0 and json.loads(status.stdout)["status"] == "completed"

    marker = tmp_path / "cancelled"
    running_id = cli("wait-forever", "--marker", str(marker), "--no-wait").stdout.strip()
    assert _ID.match(running_id)
    assert json.loads(cli("task", "status", running_id).stdout)["status"] == "working"
    assert cli("task", "cancel", running_id).returncode == 0
    eventually(marker.exists)
    cancelled = cli("task", "wait", running_id)
    assert cancelled.returncode == 3 and "cancelled" in cancelled.stderr

    unknown = cli("task", "status", "Zz" * 16)
    assert unknown.returncode == 3 and "not know" in unknown.stderr
    dashed = cli("task", "status", "--", "-Zz" * 10)  # another server's id may start with "-"
    assert dashed.returncode == 3 and "not know" in dashed.stderr

    at_once = cli("ping", "--no-wait")  # no task: the result itself
    assert at_once.returncode == 0 and json.loads(at_once.stdout) == [{"type": "text", "text": "pong"}]
    for done in (started, waited, status, cancelled, unknown):
        for secret in (done_id, running_id, "Zz" * 16):
            assert secret not in done.stderr
    served.assert_secret(done_id, running_id, "Zz" * 16)


def test_command_line_exit_codes_and_interrupt(project: Project, served: Served, tmp_path: Path) -> None:
    """`task wait` exits 1 for a tool error, 3 for a failed task; Ctrl-C on a plain call that became a
    task cancels it and exits 130."""

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [PYTHON, "-m", "reports_client", "--url", served.url, *args]
        return subprocess.run(
            command, cwd=project.src, env=project.env, capture_output=True, text=True, timeout=30
        )

    tool_error = cli("task", "wait", cli("export-data", "--rows", "0", "--no-wait").stdout.strip())
    assert tool_error.returncode == 1 and "nothing to export" in tool_error.stdout + tool_error.stderr
    failed_id = cli("export-data", "--rows", "13", "--no-wait").stdout.strip()
    failed = cli("task", "wait", failed_id)
    assert failed.returncode == 3 and "13 rows are refused" in failed.stderr
    assert failed_id not in failed.stderr

    marker = tmp_path / "interrupted"
    command = [PYTHON, "-m", "reports_client", "--url", served.url, "wait-forever", "--marker", str(marker)]
    proc = subprocess.Popen(
        command,
        cwd=project.src,
        env=project.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )
    assert proc.stderr is not None
    assert "waiting" in proc.stderr.readline()  # the task's first status, shown as progress: it runs
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=20)
    assert proc.returncode == 130 and "Interrupted" in rest
    eventually(marker.exists)


# -- the 2025-11-25 form: era="legacy" ---------------------------------------------------------


def test_legacy_required_tool_start_result_and_cancel(
    project: Project, served: Served, tmp_path: Path
) -> None:
    module = project.client_module()
    with module.Client(served.url, era="legacy") as client:  # its first call: the required tool, started
        handle = client.start.export_data(rows=7)
        assert handle.task_id is not None
        assert handle.result().rows == 7  # tasks/get, then tasks/result
    with module.Client(served.url, era="legacy", on_elicit=publish) as client:  # first: the required tool
        assert client.export_data(rows=1).rows == 1
        marker = tmp_path / "cancelled"
        waiting = client.start.wait_forever(marker=str(marker))
        assert waiting.task_id is not None and waiting.status().status == "working"
        waiting.cancel()
        assert waiting.status().status == "cancelled"
        eventually(marker.exists)
        error = raised(waiting.result, TaskCancelledError)
        assert waiting.task_id not in str(error)
        assert client.start.ping().task_id is None  # not marked: answered at once
        asked = client.start.build_report(parts=["a"])  # a 2025-11-25 task cannot ask for input
        assert asked.task_id is not None
        assert "2025-11-25 task" in str(raised(asked.result, ToolError))
    served.assert_secret(handle.task_id, waiting.task_id, asked.task_id)


def test_legacy_async_start_and_result(project: Project, served: Served) -> None:
    async def main() -> tuple[str | None, int]:
        async with project.client_module().AsyncClient(served.url, era="legacy") as client:
            handle = await client.start.export_data(rows=9)
            return handle.task_id, (await handle.result()).rows

    task_id, rows = asyncio.run(main())
    assert task_id is not None and rows == 9
