"""Write a deterministic synthetic tool list for scale tests and benchmarks.

    python specs/tools/make_synthetic.py [--tools 1000] [--seed 0] [-o FILE]

The same arguments always give the same bytes (no `random`: a sha256 counter picks every choice,
so the output does not depend on the Python version). Schemas vary the way real servers do: scalar
parameters with descriptions, defaults and bounds, string and integer enums, nullable values,
nested objects, arrays of objects, maps, unions (plain and discriminated), allOf, tuples,
recursive `$defs`, draft-07 `definitions`, and output schemas that are objects, arrays,
primitives or unions. Tool names mix separators and case the way SEP-986 allows.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import click

__all__ = ["make_tools"]

_WORDS = (
    "user",
    "repo",
    "issue",
    "file",
    "branch",
    "commit",
    "label",
    "team",
    "project",
    "task",
    "event",
    "order",
    "invoice",
    "payment",
    "account",
    "message",
    "channel",
    "thread",
    "record",
    "report",
    "metric",
    "alert",
    "device",
    "sensor",
    "region",
    "bucket",
    "object",
    "queue",
    "job",
    "workflow",
    "secret",
    "policy",
)
_VERBS = ("get", "list", "create", "update", "delete", "search", "sync", "run", "cancel", "archive")
_SENTENCE = (
    "Identifier of the {w} to use. Must be unique within the {v} scope; see the documentation for the "
    "accepted formats and limits."
)


class _Pick:
    """Deterministic choices from sha256(seed, counter)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.counter = 0

    def number(self, n: int) -> int:
        self.counter += 1
        digest = hashlib.sha256(f"{self.seed}:{self.counter}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % n

    def choice(self, items: tuple[Any, ...] | list[Any]) -> Any:
        return items[self.number(len(items))]

    def chance(self, percent: int) -> bool:
        return self.number(100) < percent


def _scalar(pick: _Pick, word: str, verb: str) -> dict[str, Any]:
    kind = pick.number(9)
    description = _SENTENCE.format(w=word, v=verb) if pick.chance(50) else f"The {word}."
    if kind == 0:
        schema: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 200}
    elif kind == 1:
        schema = {"type": "integer", "minimum": 0, "maximum": 10_000, "default": pick.number(50)}
    elif kind == 2:
        schema = {"type": "number", "exclusiveMinimum": 0}
    elif kind == 3:
        schema = {"type": "boolean", "default": pick.chance(50)}
    elif kind == 4:
        values = [f"{word}_{suffix}" for suffix in ("open", "closed", "all", "draft", "merged", "pending")]
        schema = {"type": "string", "enum": values[: 2 + pick.number(5)]}
        if pick.chance(50):
            schema["default"] = values[0]
    elif kind == 5:
        schema = {"type": "integer", "enum": [1, 2, 5, 10, 25]}
    elif kind == 6:
        schema = {"type": ["string", "null"]}
    elif kind == 7:
        schema = {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}
    else:
        schema = {"type": "string", "format": pick.choice(("date-time", "uri", "email", "uuid"))}
    schema["description"] = description
    return schema


def _object(pick: _Pick, word: str, depth: int) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for index in range(2 + pick.number(4)):
        key = pick.choice(_WORDS) + pick.choice(("", "_id", "Name", "-count", "_at"))
        if depth < 2 and pick.chance(20):
            properties[key] = _object(pick, key, depth + 1)
        elif pick.chance(15):
            properties[key] = {"type": "array", "items": {"type": "string"}, "maxItems": 50}
        else:
            properties[key] = _scalar(pick, key, "object")
        if index == 0:
            properties[key].setdefault("description", f"First field of the {word}.")
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [key for key in properties if pick.chance(40)]
    if required:
        schema["required"] = required
    if pick.chance(30):
        schema["additionalProperties"] = False
    return schema


def _complex(pick: _Pick, word: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(property name, property schema, $defs to add to the root)."""
    kind = pick.number(9)
    defs: dict[str, Any] = {}
    if kind == 0:
        schema: dict[str, Any] = {
            "type": "array",
            "items": _object(pick, word, 1),
            "description": f"{word} entries",
        }
    elif kind == 1:
        schema = {
            "type": "object",
            "additionalProperties": {"type": "integer"},
            "description": "Counts by key.",
        }
    elif kind == 2:
        schema = {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"kind": {"const": "email"}, "address": {"type": "string"}},
                    "required": ["kind", "address"],
                },
                {
                    "type": "object",
                    "properties": {"kind": {"const": "sms"}, "number": {"type": "string"}},
                    "required": ["kind", "number"],
                },
            ]
        }
    elif kind == 3:
        schema = {"anyOf": [{"type": "string"}, _object(pick, word, 2)]}
    elif kind == 4:
        defs = {
            "node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
            }
        }
        schema = {"$ref": "#/$defs/node"}
    elif kind == 5:
        schema = {
            "allOf": [
                {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
                {"type": "object", "properties": {"note": {"type": "string"}}},
            ]
        }
    elif kind == 6:
        schema = {
            "type": "array",
            "prefixItems": [{"type": "number"}, {"type": "number"}],
            "minItems": 2,
            "maxItems": 2,
            "items": False,
            "description": "A point.",
        }
    elif kind == 7:
        schema = {
            "type": ["object", "null"],
            "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
        }
    else:
        schema = {"type": "object", "patternProperties": {"^x-": {"type": "string"}}}
    return word + pick.choice(("", "_spec", "Config", "_filter")), schema, defs


def _output(pick: _Pick, word: str) -> dict[str, Any] | None:
    kind = pick.number(6)
    if kind == 0:
        return None
    if kind == 1:
        return {"type": "array", "items": _object(pick, word, 1)}
    if kind == 2:
        return pick.choice(({"type": "string"}, {"type": "integer"}, {"type": "boolean"}))
    if kind == 3:
        return {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"ok": {"const": True}, "value": {"type": "string"}},
                    "required": ["ok"],
                },
                {
                    "type": "object",
                    "properties": {"ok": {"const": False}, "error": {"type": "string"}},
                    "required": ["ok", "error"],
                },
            ]
        }
    return _object(pick, word, 0)


def make_tools(count: int = 1000, seed: int = 0) -> list[dict[str, Any]]:
    pick = _Pick(seed)
    tools: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index in range(count):
        verb, word = pick.choice(_VERBS), pick.choice(_WORDS)
        style = pick.number(5)
        base = (
            f"{verb}_{word}",
            f"{verb}-{word}",
            f"{verb}{word.title()}",
            f"{word}.{verb}",
            f"{verb}_{word}_v2",
        )[style]
        name = base if base not in seen else f"{base}_{index}"
        seen.add(name)
        properties: dict[str, Any] = {}
        root_defs: dict[str, Any] = {}
        for _ in range(pick.number(7)):
            key = pick.choice(_WORDS) + pick.choice(("", "_id", "Id", "-name", "_count"))
            properties[key] = _scalar(pick, key, verb)
        if pick.chance(60):
            key, schema, defs = _complex(pick, word)
            properties[key] = schema
            root_defs.update(defs)
        input_schema: dict[str, Any] = {"type": "object", "properties": properties}
        required = [key for key in properties if pick.chance(35)]
        if required:
            input_schema["required"] = required
        if not properties and pick.chance(50):
            input_schema["additionalProperties"] = False
        if root_defs:
            input_schema["$defs"] = root_defs
        if pick.chance(5):  # draft-07 with `definitions`
            input_schema = {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"target": {"$ref": "#/definitions/target"}},
                "definitions": {"target": _object(pick, word, 1)},
            }
        tool: dict[str, Any] = {
            "name": name,
            "description": f"{verb.title()} a {word}. " * (1 + pick.number(3)),
        }
        if pick.chance(20):
            tool["title"] = f"{verb.title()} {word}"
        tool["inputSchema"] = input_schema
        output = _output(pick, word)
        if output is not None:
            tool["outputSchema"] = output
        tools.append(tool)
    return tools


@click.command(help=__doc__.splitlines()[0])
@click.option("--tools", "count", type=int, default=1000, show_default=True, help="how many tools")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="write here, not stdout"
)
def main(count: int, seed: int, output: Path | None) -> None:
    text = json.dumps({"tools": make_tools(count, seed)}, indent=1, sort_keys=False) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, "utf-8")


if __name__ == "__main__":
    main()
