"""A model provider's API on both sides of a tool call: a tool declared in the provider's request
shape, the model's call mapped back (its arguments parsed within bounds, each `null` that stands
for "not sent" taken out), and the reply the provider takes with the tool's answer.

Request shapes, as published (and checked against each provider's Python SDK in tests):
- "openai": the Responses API (https://platform.openai.com/docs/api-reference/responses/create):
  `{"type": "function", "name", "description", "parameters", "strict": true}`; the reply is a
  `function_call_output` input item with the call's `call_id`;
- "openai-chat": Chat Completions (https://platform.openai.com/docs/api-reference/chat/create):
  `{"type": "function", "function": {...}}`; the reply is a `tool` message with `tool_call_id`;
- "anthropic": the Messages API (https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools):
  `{"name", "description", "input_schema", "strict": true}`; the reply is a `tool_result` block;
- "gemini": `tools=[{"function_declarations": [...]}]`
  (https://ai.google.dev/gemini-api/docs/function-calling); the reply is a `function_response` part
  whose `response` holds `output` or `error`.
Pure functions over JSON values, standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from .walk import pointer

__all__ = [
    "MAX_ARGUMENTS_CHARS",
    "MAX_ARGUMENTS_DEPTH",
    "PROVIDERS",
    "ModelCallError",
    "declaration",
    "parse_arguments",
    "reply_message",
    "sent_arguments",
    "tools_parameter",
]

# provider -> the profile (providers/profiles.py) its strict function calling follows
PROVIDERS: Mapping[str, str] = {
    "openai": "openai-strict",
    "openai-chat": "openai-strict",
    "anthropic": "anthropic",
    "gemini": "gemini",
}

# A model's arguments, at most: what it (or whatever speaks for it) can make the client parse.
MAX_ARGUMENTS_CHARS = 1 << 20
MAX_ARGUMENTS_DEPTH = 64


class ModelCallError(ValueError):
    """A model's tool call that cannot be made as asked (an unknown name, arguments that are not a
    JSON object or break the tool's schema): its message goes back to the model as the tool's error."""


def declaration(provider: str, name: str, description: str | None, schema: dict[str, Any]) -> dict[str, Any]:
    """One tool as `provider` declares it (strict where the provider has a strict mode)."""
    text = {"description": description} if description else {}
    if provider == "openai":
        return {"type": "function", "name": name, **text, "parameters": schema, "strict": True}
    if provider == "openai-chat":
        return {"type": "function", "function": {"name": name, **text, "parameters": schema, "strict": True}}
    if provider == "anthropic":
        return {"name": name, **text, "input_schema": schema, "strict": True}
    if provider == "gemini":
        return {"name": name, **text, "parameters": schema}
    raise ValueError(f"unknown provider {provider!r} (one of {', '.join(PROVIDERS)})")


def tools_parameter(provider: str, declarations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request's `tools` value for these declarations."""
    if provider == "gemini":
        return [{"function_declarations": declarations}] if declarations else []
    return declarations


def reply_message(
    provider: str, name: str, call_id: str | None, output: str, *, is_error: bool, value: Any = None
) -> dict[str, Any]:
    """What `provider` takes back for a tool call: `output` (the result as text), whether it is an
    error, and for Gemini `value`, the structured result when there is one (sent as JSON, not text)."""
    if provider == "openai":
        return {"type": "function_call_output", "call_id": call_id or "", "output": output}
    if provider == "openai-chat":
        return {"role": "tool", "tool_call_id": call_id or "", "content": output}
    if provider == "anthropic":
        return {"type": "tool_result", "tool_use_id": call_id or "", "content": output, "is_error": is_error}
    if provider == "gemini":
        answer = {"error": output} if is_error else {"output": output if value is None else value}
        return {
            "function_response": {**({"id": call_id} if call_id else {}), "name": name, "response": answer}
        }
    raise ValueError(f"unknown provider {provider!r} (one of {', '.join(PROVIDERS)})")


def parse_arguments(arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """A model's arguments (OpenAI sends JSON text, Anthropic and Gemini an object) as a dict, within
    MAX_ARGUMENTS_CHARS and MAX_ARGUMENTS_DEPTH; ModelCallError when they are not a JSON object."""
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        if len(arguments) > MAX_ARGUMENTS_CHARS:
            raise ModelCallError(f"the arguments are longer than {MAX_ARGUMENTS_CHARS} characters")
        try:
            value = json.loads(arguments)
        except (ValueError, RecursionError) as exc:
            raise ModelCallError(f"the arguments are not JSON: {str(exc)[:200]}") from None
    else:
        value = arguments
    if not isinstance(value, Mapping):
        raise ModelCallError(f"the arguments must be a JSON object, not {type(value).__name__}")
    if _depth(value, MAX_ARGUMENTS_DEPTH) > MAX_ARGUMENTS_DEPTH:
        raise ModelCallError(f"the arguments nest deeper than {MAX_ARGUMENTS_DEPTH} levels")
    return dict(value)


def _depth(value: Any, limit: int) -> int:
    """How deep `value` nests (stops counting past `limit`)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if level > limit:
            break
        children = node.values() if isinstance(node, Mapping) else node if isinstance(node, list) else ()
        stack.extend((child, level + 1) for child in children if isinstance(child, (Mapping, list)))
    return deepest


def sent_arguments(
    arguments: dict[str, Any], schema: dict[str, Any], nullable_optional: Collection[str]
) -> dict[str, Any]:
    """The arguments to call the tool with: each `null` the model gave a property that was optional
    and was made required and nullable (`nullable_optional`, pointers into the lowered `schema`)
    taken out, which is what that `null` means. Nothing else changes."""
    if not nullable_optional:
        return arguments
    out = _strip(arguments, schema, "", schema, frozenset(nullable_optional))
    return out if isinstance(out, dict) else arguments


def _strip(value: Any, node: Any, where: str, root: dict[str, Any], nullable: frozenset[str]) -> Any:
    node, where = _resolved(node, where, root)
    if not isinstance(node, dict):
        return value
    if isinstance(value, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                here = where + pointer("properties", key)
                if item is None and here in nullable:
                    continue
                out[key] = _strip(item, properties[key], here, root, nullable) if key in properties else item
            value = out
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        here = where + "/items"
        value = [_strip(item, node["items"], here, root, nullable) for item in value]
    branches = node.get("anyOf")
    if isinstance(branches, Sequence) and not isinstance(branches, str):
        for index, branch in enumerate(branches):
            if _fits(value, _resolved(branch, "", root)[0]):
                return _strip(value, branch, f"{where}/anyOf/{index}", root, nullable)
    return value


def _resolved(node: Any, where: str, root: dict[str, Any]) -> tuple[Any, str]:
    """`node`, or the local definition its `$ref` names (with that definition's pointer); strict
    profiles allow nothing beside a `$ref`, and a model's value is finite, so this ends."""
    ref = node.get("$ref") if isinstance(node, dict) else None
    if not isinstance(ref, str) or not ref.startswith("#"):
        return node, where
    target: Any = root
    for token in ref[1:].split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        target = target.get(token) if isinstance(target, dict) else None
    return (target, ref[1:]) if isinstance(target, dict) else (node, where)


def _fits(value: Any, branch: Any) -> bool:
    """Whether a strict `anyOf` branch is the one `value` was made for: an object branch whose
    properties (all required, the object closed) are exactly the value's keys, or a branch of the
    value's type."""
    if not isinstance(branch, dict):
        return False
    kinds = branch.get("type")
    if isinstance(value, dict):
        properties = branch.get("properties")
        return isinstance(properties, dict) and set(properties) == set(value)
    if isinstance(value, list):
        return kinds == "array" or (isinstance(kinds, list) and "array" in kinds)
    return False
