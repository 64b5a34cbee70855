"""Checks lowered tool specs with the providers' own Python SDKs (run by the providers venv,
tests/peers/.venv-providers, never imported by mcpgen; no network). Reads a JSON list of
{"profile", "name", "schema"} on stdin; prints a JSON list of {"name", "profile", "error"}.

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


def main() -> None:
    failures = []
    for item in json.load(sys.stdin):
        try:
            check(item["profile"], item["name"], item["schema"])
        except Exception as exc:  # every failure is reported, with the tool it belongs to
            failures.append(
                {
                    "name": item["name"],
                    "profile": item["profile"],
                    "error": f"{type(exc).__name__}: {exc}"[:600],
                }
            )
    json.dump(failures, sys.stdout)


if __name__ == "__main__":
    main()
