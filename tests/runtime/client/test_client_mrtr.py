"""Multi-round-trip requests (MRTR), client side: the loop the runtime drives by itself.

Three layers: the sans-I/O loop in `ClientCore` against scripted replies (every rule, exact
wire params); the user-facing types against the official SDK's own models (schema.ts
shapes); and real servers — the official SDK (mcp==2.3.0, which seals `requestState`, so an
altered echo would fail) over HTTP and stdio, sync and async, and our own generated
conformance server — answered by callbacks, by generated-method calls and by hand (resume).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import mcp_types
import pytest
from pydantic import BaseModel

from mcpgen_runtime.client import (
    AsyncClient,
    Client,
    ClientCore,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    ListRootsRequest,
    ListRootsResult,
    Root,
)
from mcpgen_runtime.client.input_responses import InputNeeded
from mcpgen_runtime.content import ImageContent
from mcpgen_runtime.errors import (
    InputRequiredError,
    InputRequiredRoundsExceededError,
    InvalidParamsError,
    ProtocolError,
)
from mcpgen_runtime.protocol.tasks import with_tasks_extension
from tests.runtime._client_drivers import driver
from tests.runtime._client_helpers import DONE, drive, elicit_request, irr
from tests.support import PYTHON, ROOT, free_port, running_server

SDK_PEER = ROOT / "tests" / "peers" / "sdk_server.py"
SDK_STDIO = [PYTHON, str(SDK_PEER), "--stdio"]

pytestmark = pytest.mark.timeout(90)


def accept_all(step: InputNeeded) -> dict[str, Any]:
    return {key: ElicitResult.accept({"name": "Ada"}) for key, _, _ in step.calls}


def core(**kwargs: Any) -> ClientCore:
    kwargs.setdefault(
        "input_callbacks", {"elicitation/create": lambda r: ElicitResult.accept({"name": "Ada"})}
    )
    kwargs.setdefault("capabilities", {"elicitation": {}})
    return ClientCore(**kwargs)


# -- the loop, without I/O --------------------------------------------------------------------


def test_every_request_answered_then_retried_as_new_request_mrtr15_mrtr19_tools06() -> None:
    requests = {
        "user_name": elicit_request(),
        "capital": {
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "Capital of France?"}}],
                "maxTokens": 20,
            },
        },
        "client_roots": {"method": "roots/list"},
    }
    seen: list[Any] = []

    def answer(step: InputNeeded) -> dict[str, Any]:
        seen.extend(request for _, _, request in step.calls)
        return {
            "user_name": ElicitResult.accept({"name": "Ada"}),
            "capital": CreateMessageResult.text("Paris", model="m"),
            "client_roots": ListRootsResult([Root("file:///w", "w")]),
        }

    callbacks = {m: (lambda r: None) for m in ("elicitation/create", "sampling/createMessage", "roots/list")}
    result, sent = drive(
        core(input_callbacks=callbacks).call_flow("t", {"x": 1}), irr(requests, "s1"), DONE, answer=answer
    )
    assert result.text == "done"
    first, retry = (o.message for o in sent)
    assert retry["id"] != first["id"]  # MRTR-19, TOOLS-06
    assert retry["params"]["name"] == "t" and retry["params"]["arguments"] == {"x": 1}
    assert retry["params"]["inputResponses"] == {
        "user_name": {"action": "accept", "content": {"name": "Ada"}},
        "capital": {
            "role": "assistant",
            "content": {"type": "text", "text": "Paris"},
            "model": "m",
            "stopReason": "endTurn",
        },
        "client_roots": {"roots": [{"uri": "file:///w", "name": "w"}]},
    }
    assert retry["params"]["requestState"] == "s1"
    assert "_meta" in retry["params"] and sent[1].headers["Mcp-Name"] == "t"
    elicit, sample, roots = seen
    assert isinstance(elicit, ElicitRequest) and elicit.key == "user_name" and elicit.origin_name == "t"
    assert isinstance(sample, CreateMessageRequest) and sample.max_tokens == 20
    assert sample.messages[0].text == "Capital of France?"
    assert isinstance(roots, ListRootsRequest) and roots.origin_method == "tools/call"


@pytest.mark.parametrize(
    "state", ["v1.AbC-_=", " padded\twith\nnewline ", '{"json": [1, 2]}', "=?base64?SGk=?=", "ünïcødé 🦜", ""]
)
def test_request_state_echoed_byte_for_byte_mrtr16_mrtr17(state: str) -> None:
    _, sent = drive(core().call_flow("t", {}), irr({"q": elicit_request()}, state), DONE, answer=accept_all)
    assert sent[1].message["params"]["requestState"] == state


def test_no_state_means_no_state_in_the_retry_mrtr18() -> None:
    _, sent = drive(core().call_flow("t", {}), irr({"q": elicit_request()}), DONE, answer=accept_all)
    assert "requestState" not in sent[1].message["params"]
    assert sent[1].message["params"]["inputResponses"] == {
        "q": {"action": "accept", "content": {"name": "Ada"}}
    }


def test_each_round_carries_only_its_own_answers_and_latest_state() -> None:
    _, sent = drive(
        core().call_flow("t", {"a": 1}),
        irr({"first": elicit_request()}, "s1"),
        irr({"second": elicit_request()}, "s2"),
        DONE,
        answer=accept_all,
    )
    assert [o.message["params"].get("requestState") for o in sent] == [None, "s1", "s2"]
    assert list(sent[2].message["params"]["inputResponses"]) == ["second"]
    assert all(o.message["params"]["arguments"] == {"a": 1} for o in sent)
    assert len({o.message["id"] for o in sent}) == 3


def test_round_cap_names_the_knob() -> None:
    with pytest.raises(InputRequiredRoundsExceededError, match="max_input_rounds") as info:
        drive(
            core(max_input_rounds=2).call_flow("t", {}),
            *[irr({"q": elicit_request()}, "s")] * 3,
            answer=accept_all,
        )
    assert info.value.max_rounds == 2
    with pytest.raises(InputRequiredRoundsExceededError):
        drive(core(max_input_rounds=0).call_flow("t", {}), irr({"q": elicit_request()}))


def test_state_only_round_retries_after_a_growing_pause() -> None:
    delays: list[float] = []

    def answer(step: InputNeeded) -> dict[str, Any]:
        assert not step.calls
        delays.append(step.delay)
        return {}

    _, sent = drive(
        core().call_flow("t", {}),
        irr(state="a"),
        irr(state="b"),
        irr(state="c"),
        irr(state="d"),
        DONE,
        answer=answer,
    )
    assert delays == [0.05, 0.1, 0.2, 0.25]
    assert [o.message["params"].get("requestState") for o in sent] == [None, "a", "b", "c", "d"]
    assert all("inputResponses" not in o.message["params"] for o in sent)


def test_no_callback_raises_with_what_is_needed_to_resume() -> None:
    bare = ClientCore(capabilities={"elicitation": {}})
    raw = {"q": elicit_request("Confirm?", confirmed="boolean")}
    with pytest.raises(InputRequiredError, match="on_elicit") as info:
        drive(bare.call_flow("t", {"x": 1}), irr(raw, "opaque"))
    err = info.value
    assert (err.input_requests, err.request_state, err.tool, err.arguments) == (raw, "opaque", "t", {"x": 1})
    assert isinstance(err.requests["q"], ElicitRequest) and err.requests["q"].message == "Confirm?"
    # Resume by hand: the answers and the state ride the first request of the new call.
    _, sent = drive(
        bare.call_flow(
            err.tool,
            err.arguments,
            request_state=err.request_state,
            input_responses={"q": ElicitResult.accept({"confirmed": True})},
        ),
        DONE,
    )
    assert sent[0].message["params"] == {
        "name": "t",
        "arguments": {"x": 1},
        "inputResponses": {"q": {"action": "accept", "content": {"confirmed": True}}},
        "requestState": "opaque",
        "_meta": sent[0].message["params"]["_meta"],
    }


def test_parallel_calls_never_share_input_or_state_mrtr20() -> None:
    shared = core()
    flow_a, flow_b = shared.call_flow("a", {}), shared.call_flow("b", {})
    first_a, first_b = next(flow_a), next(flow_b)
    step_a = flow_a.send(
        ({"jsonrpc": "2.0", "id": first_a.message["id"], **irr({"qa": elicit_request()}, "A")}, 200)
    )
    assert isinstance(step_a, InputNeeded)
    assert (
        "inputResponses" not in first_b.message["params"] and "requestState" not in first_b.message["params"]
    )
    step_b = flow_b.send(
        ({"jsonrpc": "2.0", "id": first_b.message["id"], **irr({"qb": elicit_request()}, "B")}, 200)
    )
    assert isinstance(step_b, InputNeeded)
    retry_a, retry_b = flow_a.send(accept_all(step_a)), flow_b.send(accept_all(step_b))
    assert (retry_a.message["params"]["requestState"], list(retry_a.message["params"]["inputResponses"])) == (
        "A",
        ["qa"],
    )
    assert (retry_b.message["params"]["requestState"], list(retry_b.message["params"]["inputResponses"])) == (
        "B",
        ["qb"],
    )


@pytest.mark.parametrize(
    ("result", "why"),
    [
        ({"inputRequests": []}, "not an object"),
        ({"inputRequests": {"q": "elicit"}}, "not a request object"),
        ({"inputRequests": {"q": {"method": "tools/call", "params": {}}}}, "unknown input request method"),
        (
            {"inputRequests": {"q": {"method": "elicitation/create", "params": {"requestedSchema": {}}}}},
            "message",
        ),
        (
            {"inputRequests": {"q": {"method": "elicitation/create", "params": {"message": "m"}}}},
            "requestedSchema",
        ),
        (
            {"inputRequests": {"q": {"method": "sampling/createMessage", "params": {"messages": []}}}},
            "maxTokens",
        ),
        ({}, "MRTR-12"),
        ({"requestState": 7}, "not a string"),
    ],
)
def test_malformed_input_required_results_mrtr04_mrtr12(result: dict[str, Any], why: str) -> None:
    with pytest.raises(ProtocolError, match=why):
        drive(core().call_flow("t", {}), {"result": {"resultType": "input_required", **result}})


def test_elicitation_without_mode_is_form_in04() -> None:
    requests: list[ElicitRequest] = []

    def answer(step: InputNeeded) -> dict[str, Any]:
        requests.extend(request for _, _, request in step.calls)  # type: ignore[misc]
        return accept_all(step)

    drive(core().call_flow("t", {}), irr({"q": elicit_request()}), DONE, answer=answer)
    assert requests[0].mode == "form" and requests[0].requested_schema is not None


def test_url_mode_elicitation_only_when_declared_in02() -> None:
    url_request = {
        "q": {
            "method": "elicitation/create",
            "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/auth"},
        }
    }
    with pytest.raises(ProtocolError, match="IN-02"):
        drive(core(capabilities={"elicitation": {"form": {}}}).call_flow("t", {}), irr(url_request, "s"))
    seen: list[Any] = []

    def answer(step: InputNeeded) -> dict[str, Any]:
        seen.extend(step.calls)
        return {"q": ElicitResult.accept()}

    _, sent = drive(
        core(capabilities={"elicitation": {"form": {}, "url": {}}}).call_flow("t", {}),
        irr(url_request, "s"),
        DONE,
        answer=answer,
    )
    assert seen[0][2].mode == "url" and seen[0][2].url == "https://example.com/auth"
    assert sent[1].message["params"]["inputResponses"] == {"q": {"action": "accept"}}


def test_tool_enabled_sampling_only_with_sampling_tools_in16() -> None:
    request = {
        "q": {
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 5,
                "tools": [{"name": "x", "inputSchema": {"type": "object"}}],
            },
        }
    }
    callbacks = {"sampling/createMessage": lambda r: CreateMessageResult.text("ok", model="m")}
    with pytest.raises(ProtocolError, match="IN-16"):
        drive(
            ClientCore(input_callbacks=callbacks, capabilities={"sampling": {}}).call_flow("t", {}),
            irr(request),
        )
    result, _ = drive(
        ClientCore(input_callbacks=callbacks, capabilities={"sampling": {"tools": {}}}).call_flow("t", {}),
        irr(request),
        DONE,
        answer=lambda step: {"q": CreateMessageResult.text("ok", model="m")},
    )
    assert result.text == "done"


def test_form_answer_is_checked_against_requested_schema_in07() -> None:
    request = irr({"q": elicit_request(age="integer")})
    with pytest.raises(ValueError, match="requestedSchema"):
        drive(
            core().call_flow("t", {}), request, answer=lambda step: {"q": ElicitResult.accept({"age": "old"})}
        )
    # A decline carries no content and needs none.
    drive(core().call_flow("t", {}), request, DONE, answer=lambda step: {"q": ElicitResult.decline()})


def test_wrong_answer_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="expected ElicitResult"):
        drive(
            core().call_flow("t", {}),
            irr({"q": elicit_request()}),
            answer=lambda step: {"q": CreateMessageResult.text("x", model="m")},
        )


# -- the user-facing types: schema.ts shapes, checked against the official SDK's models ----------


@pytest.mark.parametrize(
    ("value", "model", "wire"),
    [
        (
            ElicitResult.accept({"name": "Ada", "n": 3, "ok": True, "tags": ["a"]}),
            mcp_types.ElicitResult,
            {"action": "accept", "content": {"name": "Ada", "n": 3, "ok": True, "tags": ["a"]}},
        ),
        (ElicitResult.decline(), mcp_types.ElicitResult, {"action": "decline"}),
        (ElicitResult.cancel(), mcp_types.ElicitResult, {"action": "cancel"}),
        (
            CreateMessageResult.text("Paris", model="m"),
            mcp_types.CreateMessageResult,
            {
                "role": "assistant",
                "content": {"type": "text", "text": "Paris"},
                "model": "m",
                "stopReason": "endTurn",
            },
        ),
        (
            CreateMessageResult(
                [ImageContent(data="AAAA", mimeType="image/png")], model="m", stop_reason=None
            ),
            # the SDK's name for the block-list form of schema.ts's type
            mcp_types.CreateMessageResultWithTools,
            {
                "role": "assistant",
                "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
                "model": "m",
            },
        ),
        (
            ListRootsResult([Root("file:///a", "A"), Root("file:///b")]),
            mcp_types.ListRootsResult,
            {"roots": [{"uri": "file:///a", "name": "A"}, {"uri": "file:///b"}]},
        ),
    ],
)
def test_result_wire_shapes(value: Any, model: type[BaseModel], wire: dict[str, Any]) -> None:
    assert value.wire() == wire
    parsed = model.model_validate(wire)
    assert parsed.model_dump(by_alias=True, exclude_none=True, mode="json") == wire


def test_roots_are_file_uris_in23() -> None:
    with pytest.raises(ValueError, match="IN-23"):
        Root("https://example.com/repo")


# -- capabilities (IN-01, IN-16, IN-22) --------------------------------------------------------


def _capabilities_sent(client: Client) -> Any:
    sent: list[Any] = []

    class Recorder:
        sends_headers = True

        def request(self, message: dict[str, Any], headers: Any, **_: Any) -> Any:
            sent.append(message)
            return {"jsonrpc": "2.0", "id": message["id"], "result": {"content": []}}, 200

        def notify(self, *a: Any) -> None: ...

        def close(self) -> None: ...

    client._transport = Recorder()
    client.call_tool("t")
    return sent[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]


def _elicit(request: ElicitRequest) -> ElicitResult:
    return ElicitResult.decline()


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, {}),
        ({"on_elicit": _elicit}, {"elicitation": {"form": {}}}),
        (
            {"on_elicit": _elicit, "elicitation_modes": ("form", "url")},
            {"elicitation": {"form": {}, "url": {}}},
        ),
        ({"on_sample": lambda r: None}, {"sampling": {}}),
        ({"on_sample": lambda r: None, "sampling_tools": True}, {"sampling": {"tools": {}}}),
        ({"on_roots": lambda r: None}, {"roots": {}}),
        ({"capabilities": {"elicitation": {}}}, {"elicitation": {}}),
        (
            {"on_elicit": _elicit, "capabilities": {"experimental": {"x": {}}}},
            {"elicitation": {"form": {}}, "experimental": {"x": {}}},
        ),
    ],
)
def test_callbacks_declare_their_capabilities_in01_in16_in22(kwargs: dict[str, Any], expected: Any) -> None:
    client = Client("http://127.0.0.1:9/mcp", **kwargs)
    assert client.capabilities == expected
    # a tools/call also lists the tasks extension (a server may answer it with a task)
    assert _capabilities_sent(client) == with_tasks_extension(expected)


def test_bad_callback_configuration() -> None:
    async def coroutine(request: Any) -> Any: ...

    with pytest.raises(TypeError, match="coroutine"):
        Client("http://127.0.0.1:9/mcp", on_elicit=coroutine)
    with pytest.raises(ValueError, match="elicitation_modes"):
        Client("http://127.0.0.1:9/mcp", on_elicit=_elicit, elicitation_modes=())
    AsyncClient("http://127.0.0.1:9/mcp", on_elicit=coroutine)  # fine for the async twin


# -- real servers: the official SDK over HTTP and stdio, sync and async ------------------------


@pytest.fixture(scope="module")
def sdk_url() -> Iterator[str]:
    port = free_port()
    with running_server([PYTHON, str(SDK_PEER), "--http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


class Peer:
    def __init__(self, mode: str, kind: str, url: str) -> None:
        self.mode, self.kind, self.url = mode, kind, url

    def client(self, **kwargs: Any) -> Any:
        def make_sync() -> Client:
            return Client(self.url, **kwargs) if self.kind == "http" else Client.stdio(SDK_STDIO, **kwargs)

        def make_async() -> AsyncClient:
            return (
                AsyncClient(self.url, **kwargs)
                if self.kind == "http"
                else AsyncClient.stdio(SDK_STDIO, **kwargs)
            )

        return driver(self.mode, make_sync, make_async)


@pytest.fixture(params=["sync", "async"])
def peer(request: pytest.FixtureRequest, sdk_url: str) -> Peer:
    """The SDK over HTTP; stdio (a slow-starting process) has one combined test below."""
    return Peer(request.param, "http", sdk_url)


def on_elicit_everything(request: ElicitRequest) -> ElicitResult:
    properties = (request.requested_schema or {}).get("properties", {})
    if "confirm" in properties:
        return ElicitResult.accept({"confirm": True})
    return ElicitResult.accept({"name": "Ada"} if "name" in properties else {"color": "blue"})


EVERYTHING: dict[str, Any] = {
    "on_elicit": on_elicit_everything,
    "on_sample": lambda request: CreateMessageResult.text(f"Paris ({request.max_tokens})", model="peer-test"),
    "on_roots": lambda request: ListRootsResult([Root("file:///work", "work")]),
}


def test_sdk_elicitation_answered_by_callback(peer: Peer) -> None:
    """The SDK seals `requestState`; a completed call proves the byte-exact echo (MRTR-16)."""
    asked: list[ElicitRequest] = []

    def on_elicit(request: ElicitRequest) -> ElicitResult:
        asked.append(request)
        return ElicitResult.accept({"confirm": True})

    with peer.client(on_elicit=on_elicit) as drv:
        assert (
            drv("call_tool", "confirm_delete", {"path": "reports/old.txt"}).text == "Deleted reports/old.txt"
        )
    assert asked[0].message == "Really delete reports/old.txt?" and asked[0].key == "confirm"
    with peer.client(on_elicit=lambda request: ElicitResult.decline()) as drv:
        assert drv("call_tool", "confirm_delete", {"path": "a"}).text == "Kept a"


def test_sdk_three_kinds_in_one_round_and_two_rounds(peer: Peer) -> None:
    with peer.client(**EVERYTHING) as drv:
        assert drv("call_tool", "ask_everything").text == "Ada|Paris (20)|file:///work"
        assert drv("call_tool", "ask_twice").text == "Ada likes blue"


class ConfirmDeleteInput(BaseModel):
    path: str


def test_sdk_generated_method_path_drives_the_loop(peer: Peer) -> None:
    """`_call` (what generated methods use) runs the same loop."""
    with peer.client(on_elicit=lambda request: ElicitResult.accept({"confirm": True})) as drv:
        result = drv("_call", "confirm_delete", {"path": "x.txt"}, ConfirmDeleteInput)
        assert result.text == "Deleted x.txt"


def test_sdk_without_callback_resume_by_hand(peer: Peer) -> None:
    """Declared but unanswered: InputRequiredError, an unrelated call in between, then the resume
    with the sealed state as received (MRTR-16, MRTR-20)."""
    with peer.client(capabilities={"elicitation": {}}) as drv:
        with pytest.raises(InputRequiredError) as info:
            drv("call_tool", "confirm_delete", {"path": "b.txt"})
        pending = info.value
        assert pending.request_state is not None and pending.request_state.startswith("v1.")
        assert drv("call_tool", "get_weather", {"location": "Oslo"}).text == "Weather in Oslo: sunny, 22C"
        result = drv(
            "call_tool",
            pending.tool,
            pending.arguments,
            request_state=pending.request_state,
            input_responses={"confirm": ElicitResult.accept({"confirm": True})},
        )
        assert result.text == "Deleted b.txt"
        tampered = pending.request_state[:-2] + ("AA" if not pending.request_state.endswith("AA") else "BB")
        with pytest.raises(InvalidParamsError, match="requestState"):
            drv(
                "call_tool",
                pending.tool,
                pending.arguments,
                request_state=tampered,
                input_responses={"confirm": ElicitResult.accept({"confirm": True})},
            )


def test_sdk_round_cap(peer: Peer) -> None:
    with (
        peer.client(on_elicit=lambda r: ElicitResult.accept({"name": "x"}), max_input_rounds=3) as drv,
        pytest.raises(InputRequiredRoundsExceededError, match="max_input_rounds"),
    ):
        drv("call_tool", "always_ask")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_sdk_stdio_every_path(mode: str) -> None:
    """Over stdio: callbacks (three kinds, two rounds), the generated-method path, the round
    cap, and a hand-made resume with the sealed state, on one server process."""
    with driver(
        mode,
        lambda: Client.stdio(SDK_STDIO, **EVERYTHING),
        lambda: AsyncClient.stdio(SDK_STDIO, **EVERYTHING),
    ) as drv:
        assert drv("call_tool", "confirm_delete", {"path": "a"}).text == "Deleted a"
        assert drv("call_tool", "ask_everything").text == "Ada|Paris (20)|file:///work"
        assert drv("call_tool", "ask_twice").text == "Ada likes blue"
        assert drv("_call", "confirm_delete", {"path": "b"}, ConfirmDeleteInput).text == "Deleted b"
        drv.client._core.max_input_rounds = 2
        with pytest.raises(InputRequiredRoundsExceededError):
            drv("call_tool", "always_ask")
        drv.client._core.input_callbacks.clear()  # declared, now unanswered: stop and resume by hand
        with pytest.raises(InputRequiredError) as info:
            drv("call_tool", "confirm_delete", {"path": "c"})
        pending = info.value
        assert drv("call_tool", "get_weather", {"location": "Oslo"}).text == "Weather in Oslo: sunny, 22C"
        assert (
            drv(
                "call_tool",
                "confirm_delete",
                pending.arguments,
                request_state=pending.request_state,
                input_responses={"confirm": {"action": "accept", "content": {"confirm": True}}},
            ).text
            == "Deleted c"
        )


def test_sdk_async_callbacks_and_parallel_calls_mrtr20(sdk_url: str) -> None:
    """Coroutine callbacks; many calls in flight at once, each with its own rounds and state."""

    async def on_elicit(request: ElicitRequest) -> ElicitResult:
        await asyncio.sleep(0.01)
        properties = (request.requested_schema or {}).get("properties", {})
        if "confirm" in properties:
            return ElicitResult.accept({"confirm": "keep" not in request.message})
        return ElicitResult.accept({"name": "Ada"} if "name" in properties else {"color": "red"})

    async def main(client: AsyncClient) -> list[str]:
        calls = [
            client.call_tool("confirm_delete", {"path": f"{'keep' if i % 2 else 'drop'}-{i}"})
            for i in range(6)
        ]
        calls += [client.call_tool("ask_twice") for _ in range(3)]
        return [result.text for result in await asyncio.gather(*calls)]

    makers = (
        lambda: AsyncClient(sdk_url, on_elicit=on_elicit),
        lambda: AsyncClient.stdio(SDK_STDIO, on_elicit=on_elicit),
    )
    for make in makers:
        with driver("async", lambda: Client(sdk_url), make) as drv:
            assert drv.run(main) == [
                "Deleted drop-0",
                "Kept keep-1",
                "Deleted drop-2",
                "Kept keep-3",
                "Deleted drop-4",
                "Kept keep-5",
                "Ada likes red",
                "Ada likes red",
                "Ada likes red",
            ]


# -- our own generated conformance server -------------------------------------------------------


@pytest.fixture(scope="module")
def our_url() -> Iterator[str]:
    port = free_port()
    with running_server([PYTHON, "-m", "conformance_server", "--http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_our_server_every_input_kind_and_multi_round(our_url: str, mode: str) -> None:
    def on_elicit(request: ElicitRequest) -> ElicitResult:
        properties = (request.requested_schema or {}).get("properties", {})
        return ElicitResult.accept(
            {
                name: {"boolean": True, "string": "Alice" if name == "name" else "blue"}.get(
                    prop.get("type"), 1
                )
                for name, prop in properties.items()
            }
        )

    kwargs: dict[str, Any] = {
        "on_elicit": on_elicit,
        "on_sample": lambda request: CreateMessageResult.text("Paris", model="m"),
        "on_roots": lambda request: ListRootsResult([Root("file:///test/root", "Test Root")]),
    }
    with driver(mode, lambda: Client(our_url, **kwargs), lambda: AsyncClient(our_url, **kwargs)) as drv:
        texts = {
            name: drv("call_tool", f"test_input_required_result_{name}", {}).text
            for name in (
                "elicitation",
                "sampling",
                "list_roots",
                "request_state",
                "multiple_inputs",
                "multi_round",
            )
        }
    assert "Alice" in texts["elicitation"]
    assert "Paris" in texts["sampling"]
    assert "file:///test/root" in texts["list_roots"]
    assert "state-ok" in texts["request_state"]
    assert "Alice" in texts["multiple_inputs"] and "Paris" in texts["multiple_inputs"]
    assert "Alice" in texts["multi_round"] and "blue" in texts["multi_round"]
