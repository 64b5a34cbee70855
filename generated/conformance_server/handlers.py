# Created by mcpgen 0.1.0 from specs/conformance.json (sha256 7c0af2a0a9c8623b10e69954c3b7841cbb944a375074a32afa31467c601bb72e).
# This file is yours: mcpgen writes it once and never overwrites it. Regenerating updates base.py only.
"""The fixture server of the official MCP conformance suite (docs/RULES.md conformance §5), on mcpgen.

`python -m conformance_server --http --port 8000` (then `conformance server --url
http://localhost:8000/mcp --spec-version 2026-07-28 …`) or `--stdio`.

The same handlers serve the initialize-based revisions (`--spec-version 2025-11-25`,
`2025-06-18`, `2025-03-26`): there `ctx.elicit` and `ctx.sample` are real requests to the client,
`ctx.log` sends `notifications/message`, and `ctx.close_sse_stream` lets the client resume the
call's stream later (test_reconnection).

Every tool does what its description in specs/conformance.json says. Beyond tools the suite
needs resources, a resource template, prompts and completion (the resources-*, prompts-*,
completion-complete and sep-2164 scenarios, caching, server-stateless, the MRTR non-tool request);
they are served through the runtime's `add_resource`, `add_resource_template`, `add_prompt` and
`add_completion`, which declare the matching capabilities (server-stateless and caching check
discover against what is served).
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import wave
from typing import Any, ClassVar

from mcpgen_runtime._version import __version__
from mcpgen_runtime.content import AudioContent, EmbeddedResource, ImageContent, ResourceContents, TextContent
from mcpgen_runtime.protocol.jsonrpc import INTERNAL_ERROR
from mcpgen_runtime.server import (
    Elicit,
    ListRoots,
    Pending,
    RequestContext,
    ResourceNotFound,
    RpcError,
    Sample,
    ServerConfig,
    ToolContext,
    ToolExecutionError,
    ToolReturn,
)

from . import models as _m
from .base import ServerBase

# A real 1x1 PNG (one opaque red pixel).
PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def _wav_base64() -> str:
    """A real WAV file: 10 ms of 8 kHz mono 16-bit silence."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * 80)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


WAV_BASE64 = _wav_base64()

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
COLOR_SCHEMA = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean", "title": "Confirm", "description": "Continue?"}},
    "required": ["ok"],
}
DELETE_SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
PARTIAL_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}}}
CONTEXT_SCHEMA = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}
USER_SCHEMA = {
    "type": "object",
    "properties": {"username": {"type": "string"}, "email": {"type": "string"}},
    "required": ["username", "email"],
}
# SEP-1034: every primitive type with a default.
DEFAULTS_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
}
# SEP-1330: the enum forms, single and multiple choice, with and without titles.
ENUMS_SCHEMA = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "oneOf": [
            {"const": "value1", "title": "First option"},
            {"const": "value2", "title": "Second option"},
            {"const": "value3", "title": "Third option"},
        ]},
        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                       "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "items": {"anyOf": [
            {"const": "value1", "title": "First choice"},
            {"const": "value2", "title": "Second choice"},
            {"const": "value3", "title": "Third choice"},
        ]}},
    },
}

README = {
    "uri": "test://conformance/readme",
    "name": "readme",
    "title": "About this server",
    "mimeType": "text/plain",
}
README_TEXT = "The mcpgen conformance fixture server: tools from specs/conformance.json, prompts, resources."
STATIC_TEXT = {
    "uri": "test://static-text",
    "name": "static-text",
    "description": "A static text resource (resources-read-text).",
    "mimeType": "text/plain",
}
STATIC_BINARY = {
    "uri": "test://static-binary",
    "name": "static-binary",
    "description": "A static binary resource: a 1x1 PNG (resources-read-binary).",
    "mimeType": "image/png",
}
WATCHED = {
    "uri": "test://watched-resource",
    "name": "watched-resource",
    "description": "A resource to subscribe to (resources-subscribe, resources-unsubscribe).",
    "mimeType": "text/plain",
}
DATA_TEMPLATE = {
    "uriTemplate": "test://template/{id}/data",
    "name": "template-data",
    "description": "JSON data for an id (resources-templates-read).",
    "mimeType": "application/json",
}
SIMPLE_PROMPT = {"name": "test_simple_prompt", "description": "A simple prompt without arguments."}
ARGS_PROMPT = {
    "name": "test_prompt_with_arguments",
    "description": "A prompt with two required arguments.",
    "arguments": [
        {"name": "arg1", "description": "First test argument", "required": True},
        {"name": "arg2", "description": "Second test argument", "required": True},
    ],
}
EMBEDDED_PROMPT = {
    "name": "test_prompt_with_embedded_resource",
    "description": "A prompt embedding the resource it is given.",
    "arguments": [{"name": "resourceUri", "description": "URI of the resource to embed", "required": True}],
}
IMAGE_PROMPT = {"name": "test_prompt_with_image", "description": "A prompt with an image."}
MRTR_PROMPT = {
    "name": "test_input_required_result_prompt",
    "description": "Asks the user for context (elicitation, multi round-trip), then returns a prompt using it.",
}
ARG1_VALUES = ("test", "testing", "tested", "value1", "value2")


class Server(ServerBase):
    """The conformance fixtures."""

    _server_config_: ClassVar[ServerConfig | None] = ServerConfig(
        name="mcpgen-conformance-server",
        version=__version__,
        title="mcpgen conformance fixture server",
    )
    # Its requestState is accepted once, on whichever replica redeems it first (MRTR-11; the store).
    _single_use_state_: ClassVar[frozenset[str]] = frozenset({"test_input_required_result_request_state"})
    # The sep-2640-skills-* scenarios (the skills extension): the skills in ./skills, served with their
    # digests, directories and SKILL.md resources.
    _skills_: ClassVar[str | None] = "skills"

    def __init__(self, config: ServerConfig | None = None) -> None:
        super().__init__(config)
        for resource, read in (
            (README, self.read_readme),
            (STATIC_TEXT, self.read_static_text),
            (STATIC_BINARY, self.read_static_binary),
            (WATCHED, self.read_watched),
        ):
            self.add_resource(resource, read, notify=False)
        self.add_resource_template(DATA_TEMPLATE, self.read_template_data, notify=False)
        for prompt, get in (
            (SIMPLE_PROMPT, self.simple_prompt),
            (ARGS_PROMPT, self.prompt_with_arguments),
            (EMBEDDED_PROMPT, self.prompt_with_embedded_resource),
            (IMAGE_PROMPT, self.prompt_with_image),
            (MRTR_PROMPT, self.mrtr_prompt),
        ):
            self.add_prompt(prompt, get, notify=False)
        self.add_completion("prompt", ARGS_PROMPT["name"], "arg1", self.complete_arg1)
        self.add_completion("resource", DATA_TEMPLATE["uriTemplate"], "id", self.complete_id)

    # ---- resources ---------------------------------------------------------------------------------

    async def read_readme(self, uri: str, ctx: RequestContext) -> str:
        return README_TEXT

    async def read_static_text(self, uri: str, ctx: RequestContext) -> str:
        return "This is the content of the static text resource."

    async def read_static_binary(self, uri: str, ctx: RequestContext) -> bytes:
        return base64.b64decode(PNG_1X1)

    async def read_watched(self, uri: str, ctx: RequestContext) -> str:
        return "A resource clients may subscribe to."

    async def read_template_data(self, uri: str, variables: dict[str, Any], ctx: RequestContext) -> str:
        id_ = variables["id"]
        if not id_:
            raise ResourceNotFound(uri)
        return json.dumps({"id": id_, "templateTest": True, "data": f"Data for ID: {id_}"})

    # ---- prompts and completion --------------------------------------------------------------------

    async def simple_prompt(self, arguments: dict[str, str], ctx: RequestContext) -> str:
        return "This is a simple prompt for testing."

    async def prompt_with_arguments(self, arguments: dict[str, str], ctx: RequestContext) -> str:
        return f"Prompt with arguments: arg1='{arguments['arg1']}', arg2='{arguments['arg2']}'"

    async def prompt_with_embedded_resource(self, arguments: dict[str, str], ctx: RequestContext) -> list[Any]:
        resource = ResourceContents(
            uri=arguments["resourceUri"], mime_type="text/plain", text="Embedded resource content for testing."
        )
        return [EmbeddedResource(resource=resource), "Please process the embedded resource above."]

    async def prompt_with_image(self, arguments: dict[str, str], ctx: RequestContext) -> list[Any]:
        return [ImageContent(data=PNG_1X1, mime_type="image/png"), "Please analyze the image above."]

    async def mrtr_prompt(self, arguments: dict[str, str], ctx: RequestContext) -> dict[str, Any]:
        answer = await ctx.elicit("What context should the prompt use?", CONTEXT_SCHEMA, key="user_context")
        context = str(answer.get("context", "")) if answer.accepted else "(none given)"
        return {"messages": [{"role": "user", "content": {"type": "text", "text": f"Use this context: {context}"}}]}

    async def complete_arg1(self, value: str, context: dict[str, str], ctx: RequestContext) -> list[str]:
        return [v for v in ARG1_VALUES if v.startswith(value)]

    async def complete_id(self, value: str, context: dict[str, str], ctx: RequestContext) -> list[str]:
        return [v for v in ("1", "123", "42") if v.startswith(value)]

    # ---- content ---------------------------------------------------------------------------------

    async def test_simple_text(self, args: _m.TestSimpleTextInput, ctx: ToolContext) -> ToolReturn:
        return "This is a simple text response for testing."

    async def test_image_content(self, args: _m.TestImageContentInput, ctx: ToolContext) -> ToolReturn:
        return ImageContent(data=PNG_1X1, mime_type="image/png")

    async def test_audio_content(self, args: _m.TestAudioContentInput, ctx: ToolContext) -> ToolReturn:
        return AudioContent(data=WAV_BASE64, mime_type="audio/wav")

    async def test_embedded_resource(self, args: _m.TestEmbeddedResourceInput, ctx: ToolContext) -> ToolReturn:
        return EmbeddedResource(resource=ResourceContents(
            uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."))

    async def test_multiple_content_types(
        self, args: _m.TestMultipleContentTypesInput, ctx: ToolContext
    ) -> ToolReturn:
        return [
            TextContent(text="Multiple content types test:"),
            ImageContent(data=PNG_1X1, mime_type="image/png"),
            EmbeddedResource(resource=ResourceContents(
                uri="test://mixed-content-resource", mime_type="application/json", text='{"test":"data","value":123}')),
        ]

    async def test_tool_with_progress(self, args: _m.TestToolWithProgressInput, ctx: ToolContext) -> ToolReturn:
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100, f"{step}% done")
            if step < 100:
                await asyncio.sleep(0.05)
        return "Progress test completed (0, 50, 100 of 100)."

    async def test_error_handling(self, args: _m.TestErrorHandlingInput, ctx: ToolContext) -> ToolReturn:
        raise ToolExecutionError("This tool intentionally returns an error for testing")

    async def json_schema_2020_12_tool(
        self, args: _m.JsonSchema202012ToolInput, ctx: ToolContext
    ) -> ToolReturn:
        received = args.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return f"Received arguments: {json.dumps(received, sort_keys=True)}"

    # ---- protocol behaviour ----------------------------------------------------------------------

    async def test_missing_capability(self, args: _m.TestMissingCapabilityInput, ctx: ToolContext) -> ToolReturn:
        ctx.require_capability("sampling")  # -32021, HTTP 400 without it (BASE-35/36)
        return "The sampling capability was declared."

    async def test_streaming_elicitation(
        self, args: _m.TestStreamingElicitationInput, ctx: ToolContext
    ) -> ToolReturn:
        ctx.require_capability("elicitation")
        await ctx.open_stream()  # answer on text/event-stream; the stream carries no JSON-RPC request (HTTP-15)
        answer = await ctx.elicit("Please confirm to continue.", CONFIRM_SCHEMA, key="confirmation")
        return f"Streaming elicitation finished: {answer.action}."

    async def test_logging_tool(self, args: _m.TestLoggingToolInput, ctx: ToolContext) -> ToolReturn:
        # Logging is deprecated (LOG-01) and this server does not declare it: no notifications/message ever.
        return "Logging test completed."

    async def test_trigger_tool_change(self, args: _m.TestTriggerToolChangeInput, ctx: ToolContext) -> ToolReturn:
        # The set stays the same (tools-list expects a stable listing); listeners are told anyway.
        count = self.notify_list_changed("tools")
        return f"notifications/tools/list_changed sent to {count} subscription(s)."

    async def test_trigger_prompt_change(
        self, args: _m.TestTriggerPromptChangeInput, ctx: ToolContext
    ) -> ToolReturn:
        count = self.notify_list_changed("prompts")
        return f"notifications/prompts/list_changed sent to {count} subscription(s)."

    # ---- multi round-trip requests ---------------------------------------------------------------

    async def test_input_required_result_elicitation(
        self, args: _m.TestInputRequiredResultElicitationInput, ctx: ToolContext
    ) -> ToolReturn:
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        if not answer.accepted:
            return f"No name given ({answer.action})."
        return f"Hello, {answer.get('name')}!"

    async def test_input_required_result_sampling(
        self, args: _m.TestInputRequiredResultSamplingInput, ctx: ToolContext
    ) -> ToolReturn:
        sampled = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
        return f"The client's model ({sampled.model}) answered: {sampled.text}"

    async def test_input_required_result_list_roots(
        self, args: _m.TestInputRequiredResultListRootsInput, ctx: ToolContext
    ) -> ToolReturn:
        roots = await ctx.list_roots(key="client_roots")
        return f"Received {len(roots)} root(s): " + ", ".join(root.uri for root in roots)

    async def test_input_required_result_request_state(
        self, args: _m.TestInputRequiredResultRequestStateInput, ctx: ToolContext
    ) -> ToolReturn:
        ctx.state["stage"] = "confirm"  # carried in the signed requestState
        answer = await ctx.elicit("Confirm to continue", CONFIRM_SCHEMA, key="confirm")
        verified = ctx.request_state is not None and ctx.state.get("stage") == "confirm"
        return f"{'state-ok' if verified else 'state-missing'}: confirmed={answer.get('ok')}"

    async def test_input_required_result_multiple_inputs(
        self, args: _m.TestInputRequiredResultMultipleInputsInput, ctx: ToolContext
    ) -> ToolReturn:
        name = ctx.need(Elicit("What is your name?", NAME_SCHEMA, key="user_name"))
        greeting = ctx.need(Sample("Generate a greeting", max_tokens=50, key="greeting"))
        roots = ctx.need(ListRoots(key="client_roots"))
        await ctx.ask()  # one round asking for all three
        return (f"{greeting.value.text} {name.value.get('name')}; "
                f"{len(roots.value.roots)} root(s) received.")

    async def test_input_required_result_multi_round(
        self, args: _m.TestInputRequiredResultMultiRoundInput, ctx: ToolContext
    ) -> ToolReturn:
        name = await ctx.elicit("Step 1: What is your name?", NAME_SCHEMA, key="step1")
        color = await ctx.elicit("Step 2: What is your favorite color?", COLOR_SCHEMA, key="step2")
        return f"Hello, {name.get('name')}; your favorite color is {color.get('color')}."

    async def test_input_required_result_tampered_state(
        self, args: _m.TestInputRequiredResultTamperedStateInput, ctx: ToolContext
    ) -> ToolReturn:
        answer = await ctx.elicit("Confirm to continue", CONFIRM_SCHEMA, key="confirm")
        return f"State verified; confirmed={answer.get('ok')}"

    async def test_input_required_result_capabilities(
        self, args: _m.TestInputRequiredResultCapabilitiesInput, ctx: ToolContext
    ) -> ToolReturn:
        # MRTR-13: ask only through what this request's clientCapabilities declare.
        asked: list[Pending[Any]] = []
        if ctx.can_elicit():
            asked.append(ctx.need(Elicit("What is your name?", NAME_SCHEMA, key="user_name")))
        if ctx.can_sample():
            asked.append(ctx.need(Sample("Say hello", max_tokens=20, key="greeting")))
        if ctx.can_list_roots():
            asked.append(ctx.need(ListRoots(key="client_roots")))
        if not asked:
            return "The client declared no capability this tool could ask through."
        await ctx.ask()
        return "Received: " + ", ".join(pending.key for pending in asked)

    async def test_custom_header_echo(self, args: _m.TestCustomHeaderEchoInput, ctx: ToolContext) -> ToolReturn:
        # The runtime already checked Mcp-Param-Region against arguments.region (XHDR-22..24).
        return f"Region: {args.region}"

    # ---- initialize-based revisions: server-to-client requests, logging, SSE polling ----------------

    async def test_tool_with_logging(self, args: _m.TestToolWithLoggingInput, ctx: ToolContext) -> ToolReturn:
        for step, text in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
            if step:
                await asyncio.sleep(0.05)
            await ctx.log("info", text, logger="conformance")
        return "Logging test completed."

    async def test_sampling(self, args: _m.TestSamplingInput, ctx: ToolContext) -> ToolReturn:
        sampled = await ctx.sample(args.prompt, max_tokens=100, key="sampling")
        return f"LLM response: {sampled.text}"

    async def test_elicitation(self, args: _m.TestElicitationInput, ctx: ToolContext) -> ToolReturn:
        answer = await ctx.elicit(args.message, USER_SCHEMA, key="user_info")
        return f"User response: action={answer.action}, content={json.dumps(answer.content, sort_keys=True)}"

    async def test_elicitation_sep1034_defaults(
        self, args: _m.TestElicitationSep1034DefaultsInput, ctx: ToolContext
    ) -> ToolReturn:
        answer = await ctx.elicit("Please review and update the form fields with defaults", DEFAULTS_SCHEMA,
                                  key="defaults")
        return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content, sort_keys=True)}"

    async def test_elicitation_sep1330_enums(
        self, args: _m.TestElicitationSep1330EnumsInput, ctx: ToolContext
    ) -> ToolReturn:
        answer = await ctx.elicit("Please choose from the enum options", ENUMS_SCHEMA, key="enums")
        return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content, sort_keys=True)}"

    async def test_reconnection(self, args: _m.TestReconnectionInput, ctx: ToolContext) -> ToolReturn:
        # 2025-11-25 over HTTP: priming event + retry, then the connection closes; the result waits
        # for the client's GET with Last-Event-ID. Elsewhere close_sse_stream does nothing.
        await ctx.close_sse_stream()
        await asyncio.sleep(0.1)
        return "Reconnection test completed: the result was delivered on the resumed stream."

    # ---- tasks (io.modelcontextprotocol/tasks; the tasks-* scenarios) ------------------------------
    # slow_compute, failing_job, protocol_error_job and test_tool_with_task are marked in the spec
    # (execution.taskSupport): for a client that declared the extension each becomes a task when its
    # handler first waits. confirm_delete and multi_input become tasks explicitly, before asking.

    async def greet(self, args: _m.GreetInput, ctx: ToolContext) -> ToolReturn:
        return f"Hello, {args.name}!"

    async def slow_compute(self, args: _m.SlowComputeInput, ctx: ToolContext) -> ToolReturn:
        label = args.label or "job"
        await ctx.set_status(f"computing {label}")
        await asyncio.sleep(args.seconds)  # a tasks/cancel cancels it here: the task says cancelled
        return f"Computed {label} in {args.seconds:g} s."

    async def failing_job(self, args: _m.FailingJobInput, ctx: ToolContext) -> ToolReturn:
        await asyncio.sleep(1.0)
        raise ToolExecutionError("failing_job failed on purpose (a tool execution error)")

    async def protocol_error_job(self, args: _m.ProtocolErrorJobInput, ctx: ToolContext) -> ToolReturn:
        await asyncio.sleep(0.2)
        raise RpcError(INTERNAL_ERROR, "protocol_error_job failed on purpose (a protocol error)")

    async def confirm_delete(self, args: _m.ConfirmDeleteInput, ctx: ToolContext) -> ToolReturn:
        await ctx.run_as_task(status_message=f"waiting for confirmation to delete {args.filename}")
        answer = await ctx.elicit(f"Delete {args.filename}?", DELETE_SCHEMA)
        if answer.accepted and answer.get("confirm") is True:
            return f"Deleted {args.filename}."
        return f"Kept {args.filename} ({answer.action})."

    async def multi_input(self, args: _m.MultiInputInput, ctx: ToolContext) -> ToolReturn:
        await ctx.run_as_task()
        first = ctx.need(Elicit("First input?", PARTIAL_SCHEMA))
        second = ctx.need(Elicit("Second input?", PARTIAL_SCHEMA))
        await ctx.ask()  # both pending at once; each answered on its own
        return f"Got {first.value.get('name')!s} and {second.value.get('name')!s}."

    async def test_tool_with_task(self, args: _m.TestToolWithTaskInput, ctx: ToolContext) -> ToolReturn:
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")  # an MRTR round
        name = answer.get("name") if answer.accepted else "stranger"
        await ctx.run_as_task()
        await asyncio.sleep(0.1)
        return f"Hello, {name}! (from a task)"
