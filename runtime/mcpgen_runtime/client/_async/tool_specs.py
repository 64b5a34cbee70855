"""`AsyncClient.tool_specs(provider)`: the client's tools in a model provider's request shape, and
`call`, which runs the model's tool call through the client (`_sync/tool_specs.py`: `ToolSpecs`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from ...content import ToolResult
from ...errors import (
    InvalidParamsError,
    TaskCancelledError,
    TaskFailedError,
    ToolArgumentsError,
    ToolOutputError,
)
from ...tools import ToolSpec
from ..tool_checks import ToolChecks
from ..tool_specs import ModelCallError, ToolReply, ToolSpecsBase

__all__ = ["AsyncToolSpecs"]

# What a model can act on: the call was not made as asked, the server refused its arguments, the
# result broke the tool's output schema, the task failed. Other errors (the connection, auth,
# drift) are the program's to handle, and raise.
_FOR_THE_MODEL = (
    ModelCallError,
    ToolArgumentsError,
    InvalidParamsError,
    ToolOutputError,
    TaskFailedError,
    TaskCancelledError,
)


class _Caller(Protocol):
    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult: ...


class AsyncToolSpecs(ToolSpecsBase):
    """`tools` goes into the provider's request; each tool call the model makes goes to `call`,
    whose reply's `message()` goes back to the model. `unsendable` lists the tools left out and why."""

    def __init__(
        self,
        provider: str,
        tools: Mapping[str, ToolSpec],
        only: Iterable[str] | None,
        *,
        checks: ToolChecks,
        client: _Caller,
    ) -> None:
        """Made by `AsyncClient.tool_specs`: its tools, their checks and the client that calls them."""
        super().__init__(provider, tools, only)
        self._checks = checks
        self._client = client

    async def call(
        self, name: str, arguments: str | Mapping[str, Any] | None, *, call_id: str | None = None
    ) -> ToolReply:
        """Run a model's tool call (the name the model used, its arguments as JSON text or an
        object, the provider's id of the call) through the client: the arguments are mapped back
        (a `null` standing for "not sent" taken out), checked against the tool's input schema and
        sent; the result (its structured content checked against the output schema) is the reply.
        A call the model got wrong is answered with the reason, so the model can try again."""
        try:
            wire, payload = self.prepare(name, arguments)
            self._checks.check_arguments(wire, payload)
            result = await self._client.call_tool(wire, payload)
            if not result.is_error:
                self._checks.check_structured(wire, result)
        except _FOR_THE_MODEL as exc:
            return self.refusal(name, call_id, str(exc))
        return self.reply(name, call_id, result)
