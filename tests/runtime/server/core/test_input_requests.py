"""Multi round-trip requests on the server (MRTR-*, IN-*, CACHE-02) through the sans-I/O core."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict

from mcpgen_runtime.server import (
    Elicit,
    IncomingRequest,
    ListRoots,
    Outcome,
    RequestContext,
    Sample,
    ServerConfig,
    ToolBinding,
    ToolContext,
    ToolServer,
)
from mcpgen_runtime.server.core.request_state import STATE_SECRET_ENV, StateCodec
from tests.runtime.server_helpers import call, mcp_headers, meta, request

ALL_CAPS: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
COLOR = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
SECRET = "mrtr-tests-secret-0123456789abcdef"


class Args(BaseModel):
    model_config = ConfigDict(extra="allow")


def _tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": name,
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
    }


NAMES = ["greet", "survey", "wizard", "portal", "toolsample", "auto", "dup", "swallow", "plain"]


class MrtrServer(ToolServer):
    _tool_definitions_: ClassVar[list[dict[str, Any]]] = [_tool(n) for n in NAMES]
    _tool_bindings_: ClassVar[tuple[ToolBinding, ...]] = tuple(ToolBinding(n, n, Args, None) for n in NAMES)
    _server_config_: ClassVar[ServerConfig | None] = ServerConfig(
        name="mrtr-test", version="1", state_secrets=(SECRET,)
    )

    async def greet(self, args: Args, ctx: ToolContext) -> str:
        answer = await ctx.elicit("What is your name?", NAME, key="user_name")
        return f"Hello, {answer.get('name')}!" if answer.accepted else f"no name ({answer.action})"

    async def survey(self, args: Args, ctx: ToolContext) -> str:
        name = ctx.need(Elicit("Name?", NAME, key="user_name"))
        greeting = ctx.need(Sample("Generate a greeting", max_tokens=50, key="greeting"))
        roots = ctx.need(ListRoots(key="client_roots"))
        await ctx.ask()
        return f"{greeting.value.text} {name.value.get('name')} ({len(roots.value.roots)} roots)"

    async def wizard(self, args: Args, ctx: ToolContext) -> str:
        ctx.state.setdefault("started_with", getattr(args, "n", None))
        name = await ctx.elicit("Step 1", NAME, key="step1")
        ctx.state["rounds"] = ctx.state.get("rounds", 0) + 1
        color = await ctx.elicit("Step 2", COLOR, key="step2")
        return f"{name.get('name')} likes {color.get('color')} (n={ctx.state['started_with']})"

    async def portal(self, args: Args, ctx: ToolContext) -> str:
        answer = await ctx.elicit_url("Connect your account", "https://example.com/connect", key="connect")
        return f"portal {answer.action}"

    async def toolsample(self, args: Args, ctx: ToolContext) -> str:
        result = await ctx.sample(
            [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            max_tokens=5,
            options={"tools": [{"name": "t", "inputSchema": {"type": "object"}}]},
        )
        return result.text

    async def auto(self, args: Args, ctx: ToolContext) -> str:
        first = ctx.need(Elicit("a", NAME))
        second = ctx.need(ListRoots())
        await ctx.ask()
        return f"{first.key} {second.key}"

    async def dup(self, args: Args, ctx: ToolContext) -> str:
        ctx.need(ListRoots(key="same"))
        ctx.need(ListRoots(key="same"))
        return "unreachable"

    async def swallow(self, args: Args, ctx: ToolContext) -> str:
        try:
            roots = await ctx.list_roots(key="roots")
        except Exception:  # a careless handler: the round must still end
            return "swallowed"
        return f"{len(roots)} roots"

    async def plain(self, args: Args, ctx: ToolContext) -> str:
        return f"state={ctx.request_state is not None}"


def run(server: ToolServer, message: Any, req: IncomingRequest | None = None) -> Outcome:
    return asyncio.run(server.handle_message(message, req))


def tool_call(
    id_: Any,
    name: str,
    *,
    caps: dict[str, Any] | None = None,
    arguments: dict[str, Any] | None = None,
    responses: Any = ...,
    state: Any = ...,
) -> dict[str, Any]:
    message = call(
        id_,
        name,
        arguments if arguments is not None else {},
        **{"io.modelcontextprotocol/clientCapabilities": ALL_CAPS if caps is None else caps},
    )
    if responses is not ...:
        message["params"]["inputResponses"] = responses
    if state is not ...:
        message["params"]["requestState"] = state
    return message


def result(outcome: Outcome) -> dict[str, Any]:
    assert outcome.status == 200 and outcome.response is not None, outcome
    assert "error" not in outcome.response, outcome.response
    return dict(outcome.response["result"])


def error(outcome: Outcome, code: int) -> dict[str, Any]:
    assert outcome.response is not None and "error" in outcome.response, outcome
    assert outcome.response["error"]["code"] == code, outcome.response
    return dict(outcome.response["error"])


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}


SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "Hi there"},
    "model": "m",
    "stopReason": "endTurn",
}
ROOTS = {"roots": [{"uri": "file:///a", "name": "A"}, {"uri": "file:///b"}]}


@pytest.fixture
def server() -> MrtrServer:
    return MrtrServer()


# ---- the basic round trip ---------------------------------------------------------------------


def test_elicitation_round_trip_mrtr01_mrtr04_mrtr12_cache02(server: MrtrServer) -> None:
    first = result(run(server, tool_call(1, "greet")))
    assert first["resultType"] == "input_required"
    assert first["inputRequests"] == {
        "user_name": {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "What is your name?", "requestedSchema": NAME},
        }
    }
    assert isinstance(first["requestState"], str) and first["requestState"]
    assert "ttlMs" not in first and "cacheScope" not in first  # CACHE-02
    assert first["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "mrtr-test", "version": "1"}
    done = result(
        run(
            server,
            tool_call(2, "greet", responses={"user_name": accept(name="Alice")}, state=first["requestState"]),
        )
    )
    assert done["resultType"] == "complete" and done["content"][0]["text"] == "Hello, Alice!"


def test_retry_without_state_and_declined_answers_in09(server: MrtrServer) -> None:
    """The answer alone suffices (no requestState needed); decline is an answer, not an error."""
    done = result(run(server, tool_call(1, "greet", responses={"user_name": accept(name="Bob")})))
    assert done["content"][0]["text"] == "Hello, Bob!"
    declined = result(run(server, tool_call(2, "greet", responses={"user_name": {"action": "decline"}})))
    assert declined["content"][0]["text"] == "no name (decline)"


def test_several_requests_in_one_round_and_partial_answers_mrtr24(server: MrtrServer) -> None:
    first = result(run(server, tool_call(1, "survey")))
    assert {k: v["method"] for k, v in first["inputRequests"].items()} == {
        "user_name": "elicitation/create",
        "greeting": "sampling/createMessage",
        "client_roots": "roots/list",
    }
    assert first["inputRequests"]["greeting"]["params"] == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Generate a greeting"}}],
        "maxTokens": 50,
    }
    assert first["inputRequests"]["client_roots"]["params"] == {}
    # Two of three answered: a fresh round asks for the missing one only, carrying the others.
    partial = result(
        run(
            server,
            tool_call(
                2,
                "survey",
                state=first["requestState"],
                responses={"user_name": accept(name="Alice"), "greeting": SAMPLED},
            ),
        )
    )
    assert partial["resultType"] == "input_required" and list(partial["inputRequests"]) == ["client_roots"]
    done = result(
        run(server, tool_call(3, "survey", state=partial["requestState"], responses={"client_roots": ROOTS}))
    )
    assert done["content"][0]["text"] == "Hi there Alice (2 roots)"


def test_multi_round_carries_answers_and_handler_state(server: MrtrServer) -> None:
    r1 = result(run(server, tool_call(1, "wizard", arguments={"n": 7})))
    assert list(r1["inputRequests"]) == ["step1"]
    r2 = result(
        run(
            server,
            tool_call(
                2,
                "wizard",
                arguments={"n": 7},
                state=r1["requestState"],
                responses={"step1": accept(name="Alice")},
            ),
        )
    )
    assert list(r2["inputRequests"]) == ["step2"] and r2["requestState"] != r1["requestState"]
    r3 = result(
        run(
            server,
            tool_call(
                3,
                "wizard",
                arguments={"n": 7},
                state=r2["requestState"],
                responses={"step2": accept(color="blue")},
            ),
        )
    )
    assert r3["content"][0]["text"] == "Alice likes blue (n=7)"


def test_unknown_and_unasked_responses_are_ignored_mrtr23(server: MrtrServer) -> None:
    done = result(
        run(
            server,
            tool_call(
                1,
                "greet",
                responses={
                    "user_name": accept(name="Alice"),
                    "extra": accept(foo="bar"),
                    "more": {"whatever": 1},
                },
            ),
        )
    )
    assert done["content"][0]["text"] == "Hello, Alice!"
    # With a state, only keys asked in the last round count: a pre-sent step2 is not taken.
    r1 = result(run(server, tool_call(1, "wizard")))
    r2 = result(
        run(
            server,
            tool_call(
                2,
                "wizard",
                state=r1["requestState"],
                responses={"step1": accept(name="Alice"), "step2": accept(color="red")},
            ),
        )
    )
    assert list(r2["inputRequests"]) == ["step2"]


def test_missing_answer_asks_again_mrtr24(server: MrtrServer) -> None:
    again = result(run(server, tool_call(1, "greet", responses={"wrong_key": accept(data="x")})))
    assert again["resultType"] == "input_required" and list(again["inputRequests"]) == ["user_name"]


def test_plain_tools_ignore_mrtr_fields_but_verify_state(server: MrtrServer) -> None:
    first = result(run(server, tool_call(1, "greet")))
    assert result(run(server, tool_call(2, "plain", responses={})))["content"][0]["text"] == "state=False"
    # A state issued for another tool is rejected even by a tool that never asks (MRTR-07/10).
    error(run(server, tool_call(3, "plain", state=first["requestState"])), -32602)


# ---- validation (MRTR-21) -----------------------------------------------------------------------


@pytest.mark.parametrize("responses", [None, [], "x", {"user_name": 12345}, {"other": None}])
def test_malformed_input_responses_are_invalid_params_mrtr21(server: MrtrServer, responses: Any) -> None:
    error(run(server, tool_call(1, "greet", responses=responses)), -32602)


@pytest.mark.parametrize(
    ("tool", "responses", "why"),
    [
        ("greet", {"user_name": {"action": "maybe"}}, "action"),
        ("greet", {"user_name": {"action": "accept", "content": "Alice"}}, "content"),
        ("greet", {"user_name": {"action": "accept", "content": {"name": {"nested": 1}}}}, "content.name"),
        ("greet", {"user_name": accept(name=5)}, "requestedSchema"),  # IN-14
        ("greet", {"user_name": accept()}, "requestedSchema"),
        ("survey", {"greeting": {"role": "assistant", "content": {"type": "text", "text": "x"}}}, "model"),
        ("survey", {"greeting": {"role": "robot", "content": {"type": "text"}, "model": "m"}}, "role"),
        ("survey", {"greeting": {"role": "user", "content": "text", "model": "m"}}, "content"),
        ("survey", {"client_roots": {"roots": "file:///a"}}, "roots"),
        ("survey", {"client_roots": {"roots": [{"name": "no uri"}]}}, "uri"),
    ],
)
def test_malformed_answers_are_invalid_params(
    server: MrtrServer, tool: str, responses: Any, why: str
) -> None:
    err = error(run(server, tool_call(1, tool, responses=responses)), -32602)
    assert why in err["message"]


def test_state_must_be_a_string(server: MrtrServer) -> None:
    error(run(server, tool_call(1, "greet", state=42)), -32602)


# ---- requestState integrity (MRTR-05..10) -----------------------------------------------------


def _first_state(server: ToolServer, name: str = "greet", **kwargs: Any) -> str:
    first = result(run(server, tool_call(1, name, **kwargs)))
    state = first["requestState"]
    assert isinstance(state, str)
    return state


def test_tampered_state_is_rejected_mrtr07(server: MrtrServer) -> None:
    state = _first_state(server)
    for bad in (
        state + "-TAMPERED",
        state[:-2] + ("AA" if not state.endswith("AA") else "BB"),
        "v1.x.y",
        "garbage",
    ):
        err = error(
            run(server, tool_call(2, "greet", state=bad, responses={"user_name": accept(name="A")})), -32602
        )
        assert "requestState" in err["message"]


def test_state_replayed_on_another_request_is_rejected_mrtr10(server: MrtrServer) -> None:
    state = _first_state(server, "wizard", arguments={"n": 1})
    answer = {"step1": accept(name="A")}
    err = error(
        run(server, tool_call(2, "wizard", arguments={"n": 2}, state=state, responses=answer)), -32602
    )
    assert "different request" in err["message"]
    error(run(server, tool_call(3, "greet", state=state, responses=answer)), -32602)
    # The same request (arguments in another key order, extra _meta) is fine.
    ok = run(server, tool_call(4, "wizard", arguments={"n": 1}, state=state, responses=answer))
    assert result(ok)["resultType"] == "input_required"


def test_state_of_another_principal_is_rejected_mrtr08(server: MrtrServer) -> None:
    alice = IncomingRequest(principal="alice")
    first = result(run(server, tool_call(1, "greet"), alice))
    retry = tool_call(2, "greet", state=first["requestState"], responses={"user_name": accept(name="A")})
    err = error(run(server, retry, IncomingRequest(principal="bob")), -32602)
    assert "different principal" in err["message"]
    error(run(server, retry), -32602)  # anonymous
    assert result(run(server, retry, alice))["resultType"] == "complete"


def test_expired_state_is_rejected_mrtr09(server: MrtrServer) -> None:
    now = [1_000_000.0]
    server._state_codec = StateCodec([SECRET], ttl_s=60, clock=lambda: now[0])
    state = _first_state(server)
    retry = tool_call(2, "greet", state=state, responses={"user_name": accept(name="A")})
    now[0] += 59
    assert result(run(server, retry))["resultType"] == "complete"
    now[0] += 2
    assert "expired" in error(run(server, retry), -32602)["message"]


def test_key_rotation_signs_with_first_verifies_with_any() -> None:
    old = MrtrServer(ServerConfig(state_secrets=("old-secret-0123456789",)))
    rotated = MrtrServer(ServerConfig(state_secrets=("new-secret-0123456789", "old-secret-0123456789")))
    other = MrtrServer(ServerConfig(state_secrets=("another-secret-0123456789",)))
    state = _first_state(old)
    retry = tool_call(2, "greet", state=state, responses={"user_name": accept(name="A")})
    assert result(run(rotated, retry))["resultType"] == "complete"
    error(run(other, retry), -32602)
    # What the rotated server signs, a server that dropped the old key still reads.
    newer = MrtrServer(ServerConfig(state_secrets=("new-secret-0123456789",)))
    retry["params"]["requestState"] = _first_state(rotated)
    assert result(run(newer, retry))["resultType"] == "complete"


def test_secret_from_environment_and_random_key_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv(STATE_SECRET_ENV, raising=False)
    with caplog.at_level(logging.WARNING, logger="mcpgen.server"):
        lonely = MrtrServer(ServerConfig())
        state = _first_state(lonely)
    assert STATE_SECRET_ENV in caplog.text
    retry = tool_call(2, "greet", state=state, responses={"user_name": accept(name="A")})
    error(run(MrtrServer(ServerConfig()), retry), -32602)  # another process: another random key
    monkeypatch.setenv(STATE_SECRET_ENV, "env-secret-0123456789, older-env-secret-0123")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="mcpgen.server"):
        state = _first_state(MrtrServer(ServerConfig()))
    assert STATE_SECRET_ENV not in caplog.text
    retry["params"]["requestState"] = state
    assert result(run(MrtrServer(ServerConfig()), retry))["resultType"] == "complete"


def test_short_secrets_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 16 bytes"):
        ServerConfig(state_secrets=("short",))


# ---- capabilities (MRTR-13, IN-02, IN-17, BASE-35/36) ------------------------------------------


@pytest.mark.parametrize(
    ("tool", "caps", "required"),
    [
        ("greet", {}, {"elicitation": {}}),
        ("greet", {"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),
        ("portal", {"elicitation": {}}, {"elicitation": {"url": {}}}),
        ("portal", {"elicitation": {"form": {}}}, {"elicitation": {"url": {}}}),
        ("toolsample", {"sampling": {}}, {"sampling": {"tools": {}}}),
        ("survey", {"elicitation": {}}, {"sampling": {}, "roots": {}}),
    ],
)
def test_undeclared_capability_is_32021_with_400(
    server: MrtrServer, tool: str, caps: dict[str, Any], required: dict[str, Any]
) -> None:
    outcome = run(server, tool_call(1, tool, caps=caps))
    assert outcome.status == 400
    assert error(outcome, -32021)["data"] == {"requiredCapabilities": required}


def test_declared_modes_are_used(server: MrtrServer) -> None:
    url = result(run(server, tool_call(1, "portal", caps={"elicitation": {"form": {}, "url": {}}})))
    assert url["inputRequests"]["connect"] == {
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "Connect your account", "url": "https://example.com/connect"},
    }
    sampled = result(run(server, tool_call(2, "toolsample", caps={"sampling": {"tools": {}}})))
    assert sampled["inputRequests"]["input_1"]["params"]["tools"][0]["name"] == "t"


def test_answers_need_no_capability(server: MrtrServer) -> None:
    """Only requests that are sent need the capability; a supplied answer is just read."""
    done = result(run(server, tool_call(1, "greet", caps={}, responses={"user_name": accept(name="A")})))
    assert done["content"][0]["text"] == "Hello, A!"


# ---- handler API details ------------------------------------------------------------------------


def test_auto_keys_follow_call_order_mrtr03(server: MrtrServer) -> None:
    first = result(run(server, tool_call(1, "auto")))
    assert list(first["inputRequests"]) == ["input_1", "input_2"]
    done = result(
        run(
            server,
            tool_call(
                2,
                "auto",
                state=first["requestState"],
                responses={"input_1": accept(name="x"), "input_2": ROOTS},
            ),
        )
    )
    assert done["content"][0]["text"] == "input_1 input_2"


def test_duplicate_keys_are_a_handler_bug(server: MrtrServer) -> None:
    failed = result(run(server, tool_call(1, "dup")))
    assert failed["isError"] is True and "internal error" in failed["content"][0]["text"]


def test_except_exception_cannot_swallow_the_round(server: MrtrServer) -> None:
    assert result(run(server, tool_call(1, "swallow")))["resultType"] == "input_required"


def test_pending_value_before_ask_is_an_error() -> None:
    ctx = ToolContext(
        tool_name="t", request_id=1, meta=meta(), protocol_version="2026-07-28", client_capabilities=ALL_CAPS
    )
    pending = ctx.need(ListRoots(key="r"))
    assert not pending.answered
    with pytest.raises(RuntimeError, match="ask"):
        _ = pending.value


# ---- other methods: prompts/get may ask, list methods may not (MRTR-02) ----------------------


class PromptServer(MrtrServer):
    def __init__(self, config: ServerConfig | None = None) -> None:
        super().__init__(config)
        self.declare_capability("prompts", {})
        self.add_method("prompts/get", self.get_prompt)
        self.add_method("prompts/list", self.list_prompts)

    async def get_prompt(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        answer = await ctx.elicit(
            "Context?", {"type": "object", "properties": {"context": {"type": "string"}}}, key="user_context"
        )
        return {
            "messages": [{"role": "user", "content": {"type": "text", "text": str(answer.get("context"))}}]
        }

    async def list_prompts(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        await ctx.list_roots()  # not allowed here: a server bug, never an InputRequiredResult
        return {"prompts": []}


def test_prompts_get_may_ask_mrtr02() -> None:
    server = PromptServer()
    message = request(
        1, "prompts/get", {"name": "p"}, **{"io.modelcontextprotocol/clientCapabilities": ALL_CAPS}
    )
    first = result(run(server, message))
    assert first["resultType"] == "input_required" and "user_context" in first["inputRequests"]
    message["params"].update(
        inputResponses={"user_context": accept(context="ctx")}, requestState=first["requestState"]
    )
    done = result(run(server, message))
    assert done["resultType"] == "complete" and done["messages"][0]["content"]["text"] == "ctx"
    assert "ttlMs" not in done  # prompts/get is not cacheable
    # The state of prompt "p" does not open prompt "q" (MRTR-10).
    message["params"]["name"] = "q"
    error(run(server, message), -32602)


def test_list_methods_never_answer_input_required_mrtr02() -> None:
    server = PromptServer()
    outcome = run(
        server, request(1, "prompts/list", **{"io.modelcontextprotocol/clientCapabilities": ALL_CAPS})
    )
    assert outcome.status == 500
    error(outcome, -32603)


def test_mcp_name_is_checked_for_prompts_get_hdr08() -> None:
    server = PromptServer()
    message = request(
        1, "prompts/get", {"name": "p"}, **{"io.modelcontextprotocol/clientCapabilities": ALL_CAPS}
    )
    headers = {k.lower(): v for k, v in mcp_headers(message).items()}
    outcome = run(server, message, IncomingRequest("http", headers))
    error(outcome, -32020)
    headers["mcp-name"] = "p"
    assert result(run(server, message, IncomingRequest("http", headers)))["resultType"] == "input_required"


class StateBugs(MrtrServer):
    async def plain(self, args: Args, ctx: ToolContext) -> str:
        ctx.state["bad"] = object() if getattr(args, "n", 0) == 1 else "x" * 100_000
        await ctx.list_roots(key="r")
        return "unreachable"


@pytest.mark.parametrize("n", [1, 2])
def test_state_that_cannot_be_sealed_is_a_handler_bug(n: int) -> None:
    failed = result(run(StateBugs(), tool_call(1, "plain", arguments={"n": n})))
    assert failed["isError"] is True and "requestState" in failed["content"][0]["text"]


class Reorder(MrtrServer):
    async def plain(self, args: Args, ctx: ToolContext) -> str:
        if not ctx.state.get("asked_both"):
            ctx.state["asked_both"] = True
            ctx.need(Elicit("a", NAME, key="a"))
            ctx.need(Elicit("b", NAME, key="b"))
            await ctx.ask()
        first = await ctx.elicit("a", NAME, key="a")
        await ctx.list_roots(key="c")  # a new question before "b" is read again
        second = await ctx.elicit("b", NAME, key="b")
        return f"{first.get('name')} {second.get('name')}"


def test_answers_to_asked_questions_are_carried_even_if_unread() -> None:
    server = Reorder()
    r1 = result(run(server, tool_call(1, "plain")))
    assert list(r1["inputRequests"]) == ["a", "b"]
    r2 = result(
        run(
            server,
            tool_call(
                2, "plain", state=r1["requestState"], responses={"a": accept(name="A"), "b": accept(name="B")}
            ),
        )
    )
    assert list(r2["inputRequests"]) == ["c"]
    done = result(run(server, tool_call(3, "plain", state=r2["requestState"], responses={"c": ROOTS})))
    assert done["content"][0]["text"] == "A B"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string"},
        {"type": "object"},
        {"type": "object", "properties": {"nested": {"type": "object", "properties": {}}}},
        {"type": "object", "properties": {"x": "string"}},
    ],
)
def test_form_schemas_must_be_flat_primitives_in03(schema: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Elicit("m", schema)
