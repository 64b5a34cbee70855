"""Checks lowered tool specs with the providers' own Python SDKs (run by the providers venv,
tests/peers/.venv-providers, never imported by mcpgen; no network). Reads a JSON list of
{"profile", "name", "schema"} on stdin; prints a JSON list of {"name", "profile", "error"}. An item
{"provider", "name", "tools", "reply"} is a client's `tool_specs(provider).tools` and one
`ToolReply.message()`, checked against the SDK's request types (`check_request`).

- openai-strict: `FunctionDefinition` (the SDK's request model) takes the tool with strict=True, and
  the SDK's own strict conversion (`_ensure_strict_json_schema`) finds nothing to change;
- anthropic: `ToolParam` (the SDK's request type, validated by pydantic) takes it with strict=True,
  and the SDK's own `transform_schema` keeps every keyword (it moves `pattern` and `default`,
  which the documented subset does take, into the description, so those are left out of the comparison);
- gemini: `FunctionDeclaration` (pydantic, unknown fields forbidden) takes it.
"""

from __future__ import annotations

import copy
import json
import sys
from typing import Any


def _normal(node: Any) -> Any:
    if isinstance(node, list):
        return [_normal(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        key: _normal(value) for key, value in node.items() if key not in ("description", "pattern", "default")
    }
    if "enum" in out or "const" in out:
        out.pop("type", None)
    return out


def check(profile: str, name: str, schema: dict[str, Any]) -> None:
    if profile == "openai-strict":
        from openai.lib._pydantic import _ensure_strict_json_schema
        from openai.types.shared import FunctionDefinition

        FunctionDefinition.model_validate({"name": name, "parameters": schema, "strict": True})
        again = copy.deepcopy(schema)
        again = _ensure_strict_json_schema(again, path=(), root=again)
        if again != schema:
            raise AssertionError(f"the SDK's strict conversion changes it: {json.dumps(again)}")
    elif profile == "anthropic":
        import pydantic
        from anthropic.lib._parse._transform import transform_schema
        from anthropic.types import ToolParam

        pydantic.TypeAdapter(ToolParam).validate_python(
            {"name": name, "input_schema": schema, "strict": True}
        )
        transformed = transform_schema(copy.deepcopy(schema))
        if _normal(transformed) != _normal(schema):
            raise AssertionError(f"the SDK's transform_schema changes it: {json.dumps(transformed)}")
    elif profile == "gemini":
        from google.genai import types

        types.FunctionDeclaration.model_validate({"name": name, "description": "d", "parameters": schema})
    else:
        raise ValueError(profile)


def _typed(kind: Any, value: dict[str, Any]) -> None:
    """`value` is valid for the SDK's TypedDict `kind` (pydantic) and has no key `kind` lacks."""
    import typing

    import pydantic

    pydantic.TypeAdapter(kind).validate_python(value)
    unknown = set(value) - set(typing.get_type_hints(kind))
    if unknown:
        raise AssertionError(f"{kind.__name__} has no {sorted(unknown)}")


def check_request(provider: str, tools: list[dict[str, Any]], reply: dict[str, Any]) -> None:
    """A client's specs as the `tools` of a request, and a reply, in the SDK's own request types."""
    if provider == "openai":
        from openai.types.responses import FunctionToolParam
        from openai.types.responses.response_input_item_param import FunctionCallOutput

        for tool in tools:
            _typed(FunctionToolParam, tool)
            check("openai-strict", tool["name"], tool["parameters"])
        _typed(FunctionCallOutput, reply)
    elif provider == "openai-chat":
        from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionToolMessageParam
        from openai.types.shared_params import FunctionDefinition

        for tool in tools:
            _typed(ChatCompletionFunctionToolParam, tool)
            _typed(FunctionDefinition, tool["function"])
            check("openai-strict", tool["function"]["name"], tool["function"]["parameters"])
        _typed(ChatCompletionToolMessageParam, reply)
    elif provider == "anthropic":
        from anthropic.types import ToolParam, ToolResultBlockParam

        for tool in tools:
            _typed(ToolParam, tool)
            check("anthropic", tool["name"], tool["input_schema"])
        _typed(ToolResultBlockParam, reply)
    elif provider == "gemini":
        from google.genai import types

        for tool in tools:
            types.Tool.model_validate(tool)
            for function in tool["function_declarations"]:
                check("gemini", function["name"], function["parameters"])
        types.Part.model_validate(reply)
    else:
        raise ValueError(provider)


def main() -> None:
    failures = []
    for item in json.load(sys.stdin):
        try:
            if "provider" in item:
                check_request(item["provider"], item["tools"], item["reply"])
                continue
            check(item["profile"], item["name"], item["schema"])
        except Exception as exc:  # every failure is reported, with the tool it belongs to
            failures.append(
                {
                    "name": item["name"],
                    "profile": item.get("profile", item.get("provider")),
                    "error": f"{type(exc).__name__}: {exc}"[:600],
                }
            )
    json.dump(failures, sys.stdout)


if __name__ == "__main__":
    main()
