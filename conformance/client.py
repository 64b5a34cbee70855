"""mcpgen's client program for the official conformance harness (docs/RULES.md, conformance §6-7).

    conformance client --command "python conformance/client.py" --scenario NAME --spec-version 2026-07-28

The harness starts a mock server per scenario and runs `<command> <serverUrl>` with the
scenario name in MCP_CONFORMANCE_SCENARIO (and data in MCP_CONFORMANCE_CONTEXT) and the spec
version of the run in MCP_CONFORMANCE_PROTOCOL_VERSION: at an initialize-based version
(2025-11-25, 2025-06-18, ...) the client is told to speak that legacy revision (`era="legacy"`;
the mocks of `initialize` answer any request, so detection would find nothing to fall back on). Where a
scenario's tools are fixed, this program drives them through the generated bindings in
generated/conformance_client (from specs/conformance-client-tools.json); elsewhere through the
runtime client's generic `call_tool`. It exits 0 when the scenario ran to its end, 1 (with a
traceback on stderr) when anything failed.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "generated")]

from auth_client import run as run_auth  # noqa: E402
from conformance_client import Client as GeneratedClient  # noqa: E402

from mcpgen_runtime._version import __version__  # noqa: E402
from mcpgen_runtime.client import (  # noqa: E402
    Client,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    ListRootsRequest,
    ListRootsResult,
    Root,
)
from mcpgen_runtime.content import ToolResult  # noqa: E402
from mcpgen_runtime.errors import InputRequiredError  # noqa: E402

CLIENT_INFO = {"name": "mcpgen-conformance-client", "version": __version__}
MODERN_VERSION = "2026-07-28"


def era_options() -> dict[str, Any]:
    """Client options for the run's spec version (MCP_CONFORMANCE_PROTOCOL_VERSION)."""
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", MODERN_VERSION)
    if version == MODERN_VERSION:
        return {"era": "modern"}
    return {"era": "legacy", "legacy_version": version}


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def answer_elicitation(request: ElicitRequest) -> ElicitResult:
    """Accept with a value for every requested property: its `default` when the schema gives
    one (SEP-1034), else the first enum member, else `true` / 1 / a string by type."""
    schema = request.requested_schema or {}
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    content: dict[str, Any] = {}
    for name, prop in properties.items():
        prop = prop if isinstance(prop, dict) else {}
        kind = prop.get("type")
        if "default" in prop:
            content[name] = prop["default"]
        elif isinstance(prop.get("enum"), list) and prop["enum"]:
            content[name] = prop["enum"][0]
        else:
            content[name] = (
                True if kind == "boolean" else 1 if kind in ("integer", "number") else "conformance"
            )
    return ElicitResult.accept(content)


def answer_sampling(request: CreateMessageRequest) -> CreateMessageResult:
    return CreateMessageResult.text(
        f"echo: {request.messages[-1].text if request.messages else ''}", model="mcpgen-conformance"
    )


def answer_roots(request: ListRootsRequest) -> ListRootsResult:
    return ListRootsResult([Root("file:///tmp/mcpgen-conformance", "conformance")])


def initialize(url: str) -> None:
    # The handshake (initialize, notifications/initialized) is the scenario; a listing follows.
    with Client(url, client_info=CLIENT_INFO, **era_options()) as client:
        client.discover()
        client.list_all_tools()


def elicitation_sep1034_client_defaults(url: str) -> None:
    # The mock asks on the session's GET stream, which the client opens after the handshake
    # because it has a callback; the answer fills every field from its schema default.
    with Client(url, client_info=CLIENT_INFO, on_elicit=answer_elicitation, **era_options()) as client:
        client.list_all_tools()
        client.call_tool("test_client_elicitation_defaults", {})


def sse_retry(url: str) -> None:
    # The mock closes the call's stream after a priming event: the client waits `retry`, then
    # resumes with GET + Last-Event-ID and reads the result there.
    with Client(url, client_info=CLIENT_INFO, **era_options()) as client:
        client.list_all_tools()
        client.call_tool("test_reconnection", {})


def tools_call(url: str) -> None:
    with GeneratedClient(url, client_info=CLIENT_INFO, **era_options()) as client:
        client.list_all_tools()
        result = client.add_numbers(a=2, b=3)
        expect("5" in result.text, f"add_numbers(a=2, b=3) answered {result.text!r}")


def request_metadata(url: str) -> None:
    # Every capability declared (each an object), so the harness checks them all. The mock's
    # first answer is 400/-32022 whatever the request: the client retries it (VER-02).
    with Client(
        url,
        client_info=CLIENT_INFO,
        on_elicit=answer_elicitation,
        on_sample=answer_sampling,
        on_roots=answer_roots,
    ) as client:
        discovered = client.discover()
        expect("2026-07-28" in discovered.get("supportedVersions", []), f"discover answered {discovered!r}")
        client.list_all_tools()
        client.call_tool("conformance_probe", {})


def http_standard_headers(url: str) -> None:
    with GeneratedClient(url, client_info=CLIENT_INFO) as client:
        client.discover()
        client.list_all_tools()
        client.test_headers()
        client.my_hyphenated_tool()


def http_custom_headers(url: str) -> None:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "{}"))
    calls = context.get("toolCalls")
    expect(isinstance(calls, list) and bool(calls), f"no toolCalls in MCP_CONFORMANCE_CONTEXT: {context!r}")
    with GeneratedClient(url, client_info=CLIENT_INFO) as client:
        client.list_all_tools()
        for call in calls:
            # The generated method of the tool (its parameters are the wire names here); the
            # headers come from the tool's x-mcp-header annotations.
            method: Callable[..., ToolResult] | None = getattr(client, call["name"].replace("-", "_"), None)
            arguments = call.get("arguments") or {}
            if method is not None and None not in arguments.values():
                method(**arguments)
            else:
                # A JSON null where the schema allows none (`verbose: null`, to test XHDR-19): the
                # typed method refuses it before sending; the raw call sends it as given, no header.
                client.call_tool(call["name"], arguments)


def http_invalid_tool_headers(url: str) -> None:
    with GeneratedClient(url, client_info=CLIENT_INFO) as client:
        listed = [tool["name"] for tool in client.list_all_tools()]  # invalid ones dropped (XHDR-10/11)
        expect(listed == ["valid_tool"], f"kept {listed!r}; expected only valid_tool")
        client.valid_tool("us-west1")


def sep_2322_client_request_state(url: str) -> None:
    # By hand: declare elicitation without a callback, so the call stops with InputRequiredError;
    # make an unrelated call (no state may leak into it: MRTR-20), then resume with the answer
    # and the byte-identical requestState (MRTR-16) as a new request (MRTR-19).
    with GeneratedClient(url, client_info=CLIENT_INFO, capabilities={"elicitation": {}}) as client:
        try:
            client.test_mrtr_echo_state()
        except InputRequiredError as pending:
            expect(pending.request_state is not None, "test_mrtr_echo_state sent no requestState")
            client.test_mrtr_unrelated()
            answers = {key: answer_elicitation(request) for key, request in pending.requests.items()}
            assert pending.tool is not None
            result = client.call_tool(
                pending.tool, pending.arguments, input_responses=answers, request_state=pending.request_state
            )
            expect(result.text == "echo-state-ok", f"test_mrtr_echo_state answered {result.text!r}")
        else:
            raise AssertionError("test_mrtr_echo_state completed without asking for input")
    # With a callback: the generated method runs the loop itself; no state means none is sent (MRTR-18).
    with GeneratedClient(url, client_info=CLIENT_INFO, on_elicit=answer_elicitation) as client:
        result = client.test_mrtr_no_state()
        expect(result.text == "no-state-ok", f"test_mrtr_no_state answered {result.text!r}")
        result = client.test_mrtr_no_result_type()  # no resultType: complete, never retried (BASE-11)
        expect(result.text == "no-result-type-test-ok", f"test_mrtr_no_result_type answered {result.text!r}")


def json_schema_ref_no_deref(url: str) -> None:
    # Listing only: the runtime never fetches a network $ref (SCHEMA-08); the tool is not called.
    with Client(url, client_info=CLIENT_INFO) as client:
        tools = client.list_all_tools()
        expect(any(tool["name"] == "lookup_user" for tool in tools), f"lookup_user not listed: {tools!r}")


def json_schema_2020_12_preservation(url: str) -> None:
    with GeneratedClient(url, client_info=CLIENT_INFO, **era_options()) as client:
        client.list_all_tools()
        schema = client.tools["json_schema_2020_12_tool"].definition["inputSchema"]
        client.json_schema_echo(dict(schema))  # the inputSchema exactly as the client holds it


def skills_no_prefetch(url: str) -> None:
    # Listing only: a host fetches a skill's files when it loads the skill, never before (SEP-2640).
    with Client(url, client_info=CLIENT_INFO, **era_options()) as client:
        skills = client.list_skills()
        expect([skill.name for skill in skills] == ["pdf-processing"], f"skills/list gave {skills!r}")


def skills_verify(url: str) -> None:
    # Load the listed skill (its SKILL.md is read and verified), then read a supporting file: the
    # harness serves a tampered SKILL.md, so the load must fail before the second read is made.
    from mcpgen_runtime.skills import SkillVerificationError

    with Client(url, client_info=CLIENT_INFO, **era_options()) as client:
        (skill,) = client.list_skills()
        try:
            loaded = client.load_skill(skill)
        except SkillVerificationError as exc:
            print(f"refused, as it must be: {exc}", file=sys.stderr)
            raise SystemExit(1) from None
        loaded.read("references/FORMS.md")


SCENARIOS: dict[str, Callable[[str], None]] = {
    "sep-2640-client-no-prefetch": skills_no_prefetch,
    "sep-2640-client-verify-digest": skills_verify,
    "sep-2640-client-verify-size": skills_verify,
    "sep-2640-client-verify-frontmatter": skills_verify,
    "initialize": initialize,
    "elicitation-sep1034-client-defaults": elicitation_sep1034_client_defaults,
    "sse-retry": sse_retry,
    "tools_call": tools_call,
    "request-metadata": request_metadata,
    "http-standard-headers": http_standard_headers,
    "http-custom-headers": http_custom_headers,
    "http-invalid-tool-headers": http_invalid_tool_headers,
    "sep-2322-client-request-state": sep_2322_client_request_state,
    "json-schema-ref-no-deref": json_schema_ref_no_deref,
    "json-schema-2020-12-preservation": json_schema_2020_12_preservation,
}


def main(argv: list[str]) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if len(argv) < 2:
        print("usage: client.py SERVER_URL (with MCP_CONFORMANCE_SCENARIO set)", file=sys.stderr)
        return 2
    if scenario.startswith("auth/"):  # authorization flows: auth_client.py
        run_auth(scenario, argv[-1], CLIENT_INFO)
        return 0
    run = SCENARIOS.get(scenario)
    if run is None:
        print(f"unsupported scenario {scenario!r}; supported: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 1
    run(argv[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
