"""The tasks extension on a real HTTP server (memory store): creation, polling, input, cancellation,
outcome mapping, gating and bounds, with raw JSON-RPC (wire.py)."""

from __future__ import annotations

import time

import httpx

from mcpgen_runtime.protocol.tasks import EXTENSION, MAX_TASK_ID_LENGTH
from tests.support import PYTHON, free_port, running_server

from .wire import PLAIN, call, error, get, listen_messages, result, send, wait_for


def test_a_marked_tool_becomes_a_task_that_tasks_get_resolves_at_once(http: httpx.Client, url: str) -> None:
    created = call(http, url, "sleepy", {"seconds": 0.3})
    assert created["resultType"] == "task" and created["status"] == "working"
    assert (
        len(created["taskId"]) >= 32 and created["ttlMs"] == 3_600_000 and created["pollIntervalMs"] == 1000
    )
    assert not {"result", "requestState", "ttl", "pollInterval"} & set(created)
    first = get(http, url, created["taskId"])  # durable before the CreateTaskResult
    assert first["resultType"] == "complete" and first["status"] == "working" and "result" not in first
    done = wait_for(http, url, created["taskId"], "completed")
    assert done["status"] == "completed"
    assert done["result"]["content"] == [{"type": "text", "text": "slept 0.3"}]
    assert done["statusMessage"] == "half way"  # ctx.report_progress in a task sets the status message


def test_without_the_extension_calls_run_inline_and_task_methods_are_refused(
    http: httpx.Client, url: str
) -> None:
    inline = call(http, url, "sleepy", {"seconds": 0}, caps=PLAIN)
    assert inline["resultType"] == "complete" and inline["content"][0]["text"] == "slept 0"
    status, err = error(http, url, "tools/call", {"name": "required_sleepy", "arguments": {}}, caps=PLAIN)
    assert (status, err["code"]) == (400, -32021)
    assert err["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        status, err = error(http, url, method, {"taskId": "nope", "inputResponses": {}}, caps=PLAIN)
        assert (status, err["code"]) == (400, -32021), method


def test_unknown_ids_header_mismatch_removed_methods_discover_and_listing(
    http: httpx.Client, url: str
) -> None:
    assert error(http, url, "tasks/get", {"taskId": "unknown-task"})[1]["code"] == -32602
    assert error(http, url, "tasks/cancel", {"taskId": "x" * (MAX_TASK_ID_LENGTH + 1)})[1]["code"] == -32602
    task_id = call(http, url, "sleepy", {"seconds": 5})["taskId"]
    status, err = error(http, url, "tasks/get", {"taskId": task_id}, name="another-task")
    assert (status, err["code"]) == (400, -32020)
    assert task_id not in err["message"]
    for method in ("tasks/result", "tasks/list"):
        assert error(http, url, method, {"taskId": task_id})[1]["code"] == -32601
    discover = result(http, url, "server/discover")
    assert discover["capabilities"]["extensions"] == {EXTENSION: {}}
    assert "tasks" not in discover["capabilities"]
    listed = result(http, url, "tools/list")["tools"]
    assert all("execution" not in tool for tool in listed)
    result(http, url, "tasks/cancel", {"taskId": task_id})


def test_in_task_input_uses_keys_unique_over_the_task_and_partial_or_unknown_answers_are_ignored(
    http: httpx.Client, url: str
) -> None:
    task_id = call(http, url, "asker", {"rounds": 2})["taskId"]
    asked = wait_for(http, url, task_id, "input_required")
    [first_key] = asked["inputRequests"]
    assert asked["inputRequests"][first_key]["method"] == "elicitation/create"
    ack = result(http, url, "tasks/update", {"taskId": task_id, "inputResponses": {"never-asked": {"x": 1}}})
    assert ack == {"resultType": "complete", "_meta": ack["_meta"]}
    assert get(http, url, task_id)["status"] == "input_required"
    answer = {"action": "accept", "content": {"answer": "one"}}
    result(http, url, "tasks/update", {"taskId": task_id, "inputResponses": {first_key: answer}})
    deadline = time.monotonic() + 5
    while True:  # the second round asks again, under a new key
        task = get(http, url, task_id)
        keys = set(task.get("inputRequests") or ())
        if task["status"] == "input_required" and keys and first_key not in keys:
            break
        assert time.monotonic() < deadline, task
        time.sleep(0.02)
    [second_key] = keys
    # An answer to the first key again is ignored (already answered); the second completes it.
    result(http, url, "tasks/update", {"taskId": task_id, "inputResponses": {first_key: answer}})
    again = {"action": "accept", "content": {"answer": "two"}}
    result(http, url, "tasks/update", {"taskId": task_id, "inputResponses": {second_key: again}})
    done = wait_for(http, url, task_id, "completed")
    assert done["result"]["content"][0]["text"] == "answers: one, two"


def test_cancel_ends_the_task_at_once_and_for_good(http: httpx.Client, url: str) -> None:
    task_id = call(http, url, "stubborn")["taskId"]
    ack = result(http, url, "tasks/cancel", {"taskId": task_id})
    assert set(ack) <= {"resultType", "_meta"} and ack["resultType"] == "complete"
    assert get(http, url, task_id)["status"] == "cancelled"
    time.sleep(0.1)  # the handler swallowed CancelledError and returned: the record must not change
    cancelled = get(http, url, task_id)
    assert cancelled["status"] == "cancelled" and "result" not in cancelled
    assert result(http, url, "tasks/cancel", {"taskId": task_id})["resultType"] == "complete"


def test_outcomes_tool_failures_complete_with_is_error_oversized_results_fail(
    http: httpx.Client, url: str
) -> None:
    boom = wait_for(http, url, call(http, url, "boom")["taskId"], "completed")
    assert boom["status"] == "completed" and boom["result"]["isError"] is True
    assert "secret detail" not in boom["result"]["content"][0]["text"]
    big = wait_for(http, url, call(http, url, "big")["taskId"], "failed")
    assert (
        big["status"] == "failed"
        and big["error"]["code"] == -32603
        and "too large" in big["error"]["message"]
    )
    assert "result" not in big


def test_an_unmarked_handler_asks_for_a_task_per_call(http: httpx.Client, url: str) -> None:
    inline = call(http, url, "inline_or_task", caps=PLAIN)
    assert inline["content"][0]["text"] == "task=False in_task=False"
    created = call(http, url, "inline_or_task")
    assert created["resultType"] == "task" and created["statusMessage"] == "started"
    done = wait_for(http, url, created["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "task=True in_task=True"


def test_a_task_is_gone_once_its_ttl_ends(http: httpx.Client, url: str) -> None:
    task_id = call(http, url, "asker", {"ttl_ms": 1000})["taskId"]
    assert wait_for(http, url, task_id, "input_required")["ttlMs"] == 1000
    deadline = time.monotonic() + 5
    while send(http, url, "tasks/get", {"taskId": task_id}).json().get("result") is not None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert error(http, url, "tasks/get", {"taskId": task_id})[1]["code"] == -32602


def test_update_bounds(http: httpx.Client, url: str) -> None:
    task_id = call(http, url, "asker")["taskId"]
    wait_for(http, url, task_id, "input_required")
    huge = {"k": {"action": "accept", "content": {"answer": "x" * (300 * 1024)}}}
    assert error(http, url, "tasks/update", {"taskId": task_id, "inputResponses": huge})[1]["code"] == -32602
    assert error(http, url, "tasks/update", {"taskId": task_id, "inputResponses": [1]})[1]["code"] == -32602
    result(http, url, "tasks/cancel", {"taskId": task_id})


def test_listen_streams_notifications_tasks_for_the_callers_own_tasks(http: httpx.Client, url: str) -> None:
    status, err = error(http, url, "subscriptions/listen", {"notifications": {"taskIds": ["x"]}}, caps=PLAIN)
    assert (status, err["code"]) == (400, -32021)
    task_id = call(http, url, "sleepy", {"seconds": 0.5})["taskId"]
    messages = listen_messages(http, url, [task_id, "someone-elses-or-unknown"], until="completed")
    ack, *notes = messages
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"taskIds": [task_id]}
    assert all(note["method"] == "notifications/tasks" for note in notes)
    assert notes[0]["params"]["taskId"] == task_id and notes[0]["params"]["status"] == "working"
    final = notes[-1]["params"]
    assert final["status"] == "completed" and final["result"]["content"][0]["text"] == "slept 0.5"
    assert "resultType" not in final


def test_a_task_belongs_to_the_principal_that_created_it(http: httpx.Client, url: str) -> None:
    task_id = call(http, url, "sleepy", {"seconds": 30}, token="alice-token")["taskId"]
    assert result(http, url, "tasks/get", {"taskId": task_id}, token="alice-token")["status"] == "working"
    for token in ("bob-token", None):  # another principal, and an anonymous caller: "not found" alike
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):
            params = {"taskId": task_id, "inputResponses": {}}
            assert error(http, url, method, params, token=token)[1]["code"] == -32602, (method, token)
        [ack] = listen_messages(http, url, [task_id], until=None, token=token)
        assert ack["params"]["notifications"] == {"taskIds": []}
    assert result(http, url, "tasks/get", {"taskId": task_id}, token="alice-token")["status"] == "working"
    result(http, url, "tasks/cancel", {"taskId": task_id}, token="alice-token")


def test_the_status_message_is_bounded(http: httpx.Client, url: str) -> None:
    task_id = call(http, url, "chatty")["taskId"]
    deadline = time.monotonic() + 5
    while not get(http, url, task_id).get("statusMessage"):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert len(get(http, url, task_id)["statusMessage"]) == 4096
    result(http, url, "tasks/cancel", {"taskId": task_id})


def test_past_the_in_flight_limit_calls_run_inline() -> None:
    port = free_port()
    args = [PYTHON, "-m", "tests.runtime.server.tasks.tasks_app", str(port), "-", "30", "1"]
    with running_server(args, port), httpx.Client(timeout=10) as http:
        url = f"http://127.0.0.1:{port}/mcp"
        first = call(http, url, "sleepy", {"seconds": 30})
        assert first["resultType"] == "task"
        second = call(http, url, "sleepy", {"seconds": 0.1})  # one task per principal: inline
        assert second["resultType"] == "complete" and second["content"][0]["text"] == "slept 0.1"
        result(http, url, "tasks/cancel", {"taskId": first["taskId"]})
        deadline = time.monotonic() + 5
        while call(http, url, "sleepy", {"seconds": 0.1})["resultType"] != "task":  # its slot is free again
            assert time.monotonic() < deadline
            time.sleep(0.02)
