"""A tool's declared schemas and models, checked at the edges of a call: the arguments before they
are sent (`prepare_arguments`), `structuredContent` before it is parsed (`structured`); and what
a server hands over, parsed with care: the listed definitions a client can use (`usable_tools`),
a `tools/call` result (`tool_result`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from pydantic import BaseModel, ValidationError

from ..content import ToolResult
from ..errors import ProtocolError, ToolArgumentsError, ToolOutputError
from ..pointers import first_error
from ..protocol import xheader
from ..tools import ToolSpec
from .arguments import model_arguments, wire_arguments

if TYPE_CHECKING:
    from ..schema import Validate

M = TypeVar("M", bound=BaseModel)

__all__ = ["InvalidToolWarning", "ToolChecks", "tool_result", "usable_tools"]


class InvalidToolWarning(UserWarning):
    """A listed tool was dropped because its definition breaks a rule (e.g. XHDR-02..08)."""


class ToolChecks:
    """The checks of the tools a client was made with (`ClientCore.checks`), compiled on first use."""

    def __init__(self, declared: Mapping[str, ToolSpec]) -> None:
        self._declared = declared
        self._input_checks: dict[str, Validate | None] = {}
        self._output_checks: dict[str, Validate | None] = {}
        self._parsers: dict[type[BaseModel], Callable[..., Any]] = {}

    def prepare_arguments(
        self, name: str, arguments: Mapping[str, Any] | BaseModel, input_model: type[BaseModel]
    ) -> dict[str, Any]:
        """Generated-method arguments → the wire `arguments` object (`arguments.py`: `UNSET` left
        out, None as null, models as their fields), checked before anything is sent. The tool's own
        `inputSchema` (compiled once per tool, as the server does for SEC-01) decides: what the
        types cannot say (`minLength` inside an `anyOf`, `pattern`, ...) and what a lax model would
        coerce (`"10"` for an integer) is refused here with the JSON pointer, and what passes is
        sent exactly as given. The (strict) input model decides only when the schema cannot be
        compiled."""
        payload = wire_arguments(name, arguments)
        if not self.check_arguments(name, payload):
            return model_arguments(name, arguments, input_model, payload)
        return payload

    def check_arguments(self, name: str, payload: Mapping[str, Any]) -> bool:
        """Check a wire `arguments` object against the tool's `inputSchema`: ToolArgumentsError (with
        the JSON pointer) when it breaks it; False when the schema cannot be compiled (nothing checked)."""
        check = self._schema_check(name, "input")
        if check is None:
            return False
        issue = check(payload)
        if issue is not None:
            raise ToolArgumentsError(name, issue.message, pointer=issue.pointer)
        return True

    def structured(self, name: str, result: ToolResult, output_model: type[M]) -> M:
        """Check `structuredContent` against the tool's outputSchema (TOOLS-20), then parse it
        with the generated output model (a RootModel stays wrapped)."""
        if "structured_content" not in result.model_fields_set:
            raise ToolOutputError(name, "the result has no structuredContent")
        self._check_output(name, result.structured_content)
        try:
            return self.parse(output_model, result.structured_content)
        except ValidationError as exc:
            pointer, message = first_error(exc, result.structured_content)
            raise ToolOutputError(name, message, pointer=pointer) from exc

    def check_structured(self, name: str, result: ToolResult) -> None:
        """A result of a tool with an `outputSchema` has `structuredContent` that matches it
        (TOOLS-20), else ToolOutputError; nothing to check for a tool without one."""
        spec = self._declared.get(name)
        if spec is None or spec.output_schema is None:
            return
        if "structured_content" not in result.model_fields_set:
            raise ToolOutputError(name, "the result has no structuredContent")
        self._check_output(name, result.structured_content)

    def _check_output(self, name: str, structured: Any) -> None:
        check = self._schema_check(name, "output")
        if check is not None:
            issue = check(structured)
            if issue is not None:
                raise ToolOutputError(name, issue.message, pointer=issue.pointer)

    def parse(self, model: type[M], data: Any) -> M:
        """`model.model_validate(data, strict=False)` for JSON data a schema check has passed
        (generated models are strict for the values people construct them with; JSON arrays
        still become tuples), minus its Python wrapper once pydantic has built the validator
        (generated models defer that to import fast; the first parse builds it)."""
        direct = self._parsers.get(model)
        if direct is None:
            value = model.model_validate(data, strict=False)
            self._parsers[model] = model.__pydantic_validator__.validate_python
            return value
        return cast("M", direct(data, strict=False))

    def _schema_check(self, name: str, member: Literal["input", "output"]) -> Validate | None:
        """The tool's input or output schema as given when the client was made (for a generated
        client: the definition its models were generated from), compiled on first use. A later
        listing never replaces it: the models and the checks keep agreeing, and a hostile server
        cannot hand the client a new schema (a pathological `pattern`, say) to evaluate."""
        checks = self._input_checks if member == "input" else self._output_checks
        if name in checks:
            return checks[name]
        spec = self._declared.get(name)
        schema = None if spec is None else spec.input_schema if member == "input" else spec.output_schema
        check: Validate | None = None
        if schema is not None:
            from ..schema import SchemaCompileError, compile_schema  # jsonschema: imported on first use

            try:
                check = compile_schema(schema)
            except SchemaCompileError:
                check = None  # a schema this client cannot compile: the model still checks the shape
        checks[name] = check
        return check


def usable_tools(tools: list[Any]) -> list[tuple[dict[str, Any], ToolSpec]]:
    """Listed tools the client can use; the rest are dropped with a warning (XHDR-10/11)."""
    usable: list[tuple[dict[str, Any], ToolSpec]] = []
    for definition in tools:
        name = definition.get("name") if isinstance(definition, dict) else None
        schema = definition.get("inputSchema") if isinstance(definition, dict) else None
        if not isinstance(definition, dict) or not isinstance(name, str) or not isinstance(schema, dict):
            warnings.warn(
                f"tools/list: dropping malformed tool definition {definition!r:.120} "
                "(needs a string `name` and an object `inputSchema`)",
                InvalidToolWarning,
                stacklevel=3,
            )
            continue
        _, violations = xheader.analyze(schema)
        if violations:
            reasons = "; ".join(f"{v.rule} at {v.pointer}: {v.message}" for v in violations)
            warnings.warn(f"tools/list: dropping tool {name!r}: {reasons}", InvalidToolWarning, stacklevel=3)
            continue
        usable.append((definition, ToolSpec.from_definition(definition)))
    return usable


_parse_tool_result: Callable[[Any], ToolResult] = ToolResult.__pydantic_validator__.validate_python


def tool_result(name: str, result: dict[str, Any]) -> ToolResult:
    try:
        return _parse_tool_result(result)
    except ValidationError as exc:
        raise ProtocolError(f"tools/call {name!r}: malformed result: {exc.errors()[0]['msg']}") from exc
