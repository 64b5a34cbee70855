"""Write tests/hostile/corpus/*.json: tool lists a malicious or broken server could send.

    python tests/hostile/make_corpus.py

Deterministic; the files are committed (with ensure_ascii, so every hostile character shows as an
escape in review). Every injection attempt carries the marker PWNED; see test_hostile.py.
"""

import json
from pathlib import Path

M = "PWNED"
OUT = str(Path(__file__).resolve().parent / "corpus") + "/"
payloads = [
    f'"""; import os; os.system("echo {M}") #',
    f"'''; __import__('os').system('{M}') #",
    f'x\\"); {M}() #',
    f"trailing backslash {M}\\",
    f"odd backslashes {M}\\\\\\",
    f"CR\r{M}\rLF\n{M}\nCRLF\r\n{M}",
    f"separators \u2028{M}\u2029{M} NEL\x85{M}",
    f"bidi \u202e{M}\u202d \u2066{M}\u2069 \u200f{M}",
    f"NUL\x00{M} BEL\x07 ESC\x1b[31m{M}\x1b[0m DEL\x7f",
    f"{{{{ {M} }}}} {{% if {M} %}}{{% endif %}} {{# {M} #}}",
    f"\\N{{BULLET}} \\x41 \\u0041 {M}",
    f"#!{M}\n# -*- coding: latin-1 -*-\n{M} = 1",
    f"def {M}():\n    return {M}\n\nclass {M}: pass",
    f"tab\t{M}\t\n\t\tindented {M}",
    f"lone surrogate \ud800 {M}",
    f'quote at the end {M}"',
    f'""" {M} """',
    f"wide 天气 {M} 😀 \u3000",
    "   " + M + "   leading and trailing whitespace   ",
    M * 2000,
]


def dump(name, tools):
    with open(OUT + name, "w") as fh:
        json.dump({"tools": tools}, fh, indent=1, ensure_ascii=True)
        fh.write("\n")


# 1. untrusted text in every place text can appear
text_tools = []
for i, p in enumerate(payloads):
    text_tools.append(
        {
            "name": f"text_{i}",
            "title": p,
            "description": p,
            "inputSchema": {
                "type": "object",
                "title": p,
                "description": p,
                "properties": {
                    "value": {"type": "string", "description": p, "title": p, "default": p, "examples": [p]},
                    "choice": {"type": "string", "enum": [p, "plain", p + "2"], "default": p},
                    "fixed": {"const": p},
                    "nested": {
                        "type": "object",
                        "description": p,
                        "properties": {"inner": {"type": "string", "description": p}},
                    },
                    "number": {"type": "integer", "description": p, "default": 3},
                },
                "required": ["fixed"],
            },
            "outputSchema": {
                "type": "object",
                "description": p,
                "properties": {"echo": {"type": "string", "description": p, "default": p}},
            },
        }
    )
dump("text.json", text_tools)

# 2. hostile names: tools, properties, $defs keys, anchors, discriminators
names = [
    f"x'); {M}() #",
    f'x"); {M}() #',
    f"__import__('os').system('{M}')",
    f"a\n{M}",
    f"{M}\u202e",
    f"{{{{{M}}}}}",
    f"{M}.__class__",
    f"0{M}",
    f"-{M}-",
    f"{M} with spaces",
    f"über{M}",
    f"天气{M}",
    f"class {M}",
    f"_{M}",
    f"__{M}__",
    f"{M}~1/slash",
    f"{M}#anchor",
    f"{M}\\",
    "\t" + M,
    f"\ud800{M}",
]
tool_names = [f"tool.{M}-v1", f"tool_{M}", f"Tool.{M}", f"tool-{M}", f"{M}"]
name_tools = []
for i, tool_name in enumerate(tool_names):
    props = {n: {"type": "string", "description": f"property {n!r}"} for n in names}
    props[f"ref_{M}"] = {"$ref": f"#/$defs/{names[i]}"}
    props["tagged"] = {
        "oneOf": [
            {
                "type": "object",
                "properties": {names[0]: {"const": f"a{M}"}, "x": {"type": "string"}},
                "required": [names[0]],
            },
            {
                "type": "object",
                "properties": {names[0]: {"const": f"b{M}"}, "y": {"type": "string"}},
                "required": [names[0]],
            },
        ],
        "discriminator": {"propertyName": names[0]},
    }
    props["anchored"] = {"$ref": "#" + f"a{M}"}
    name_tools.append(
        {
            "name": tool_name,
            "description": f"names {tool_name}",
            "inputSchema": {
                "type": "object",
                "properties": props,
                "required": names[:3],
                "$defs": {n: {"type": "object", "properties": {"k": {"type": "string"}}} for n in names}
                | {
                    "anchor": {
                        "$anchor": f"a{M}",
                        "type": "object",
                        "properties": {n: {"type": "integer"} for n in names[:4]},
                    }
                },
            },
            "outputSchema": {"type": "object", "properties": {n: {"type": "boolean"} for n in names}},
        }
    )
dump("names.json", name_tools)

# 3. names that collide with each other, with Python, and with generated members
collide = [
    "self",
    "cls",
    "close",
    "aclose",
    "call_tool",
    "list_tools",
    "list_all_tools",
    "discover",
    "stdio",
    "model_config",
    "model_fields",
    "model_dump",
    "model_validate_json",
    "_meta",
    "meta",
    "timeout",
    "cursor",
    "arguments",
    "_result",
    "_m",
    "root",
    "Client",
    "AsyncClient",
    "ServerBase",
    "ToolContext",
    "ToolReturn",
    "models",
    "load_package_tools",
    "RUNTIME_API_VERSION",
    "BaseModel",
    "Field",
    "Literal",
    "Any",
    "Annotated",
    "RootModel",
    "ConfigDict",
    "None",
    "True",
    "class",
    "def",
    "match",
    "case",
    "type",
    "_",
    "print",
    "list",
    "dict",
    "str",
    "int",
    "float",
    "bool",
    "tuple",
    "id",
    "__init__",
    "__class__",
    "get-user",
    "get_user",
    "getUser",
    "GetUser",
    "GET_USER",
    "get.user",
    "get user",
    "1st",
    "2nd",
    "",
    "a" * 128,
]
collision_tools = []
for position, n in enumerate(collide):
    properties = {m: {"type": "integer"} for m in collide} if position == 0 else {"x": {"type": "integer"}}
    collision_tools.append(
        {
            "name": n or "empty-props",
            "inputSchema": {
                "type": "object",
                "properties": properties,
                "required": ["self", "_m", "arguments"] if position == 0 else [],
            },
        }
    )
dump("collisions.json", collision_tools)

# 4. big and deep (within the validator's limits)
deep = {"type": "string", "description": f"leaf {M}"}
for level in range(25):
    deep = {
        "type": "object",
        "properties": {
            f"level{level}": deep,
            f"other{level}": {"type": "array", "items": {"type": "integer"}},
        },
    }
structure_tools = [
    {"name": "deep", "inputSchema": {"type": "object", "properties": {"root": deep}}},
    {
        "name": "huge_enum",
        "inputSchema": {
            "type": "object",
            "properties": {"e": {"type": "string", "enum": [f"value_{i}_{M}" for i in range(3000)]}},
        },
    },
    {
        "name": "many_properties",
        "inputSchema": {
            "type": "object",
            "properties": {
                f"p{i}": {"type": ["string", "integer", "null"], "description": f"{M} {i}"}
                for i in range(800)
            },
        },
    },
    {
        "name": "long_text",
        "description": (M + " ") * 10000,
        "inputSchema": {
            "type": "object",
            "properties": {
                "x": {"type": "string", "description": ("y" * 60000) + M, "default": "z" * 100000}
            },
        },
    },
    {
        "name": "recursion",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/a"}},
            "$defs": {
                "a": {
                    "type": "object",
                    "properties": {
                        "b": {"$ref": "#/$defs/b"},
                        "list": {"type": "array", "items": {"$ref": "#/$defs/a"}},
                    },
                },
                "b": {
                    "type": "array",
                    "items": {"anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}, {"type": "null"}]},
                },
            },
        },
        "outputSchema": {
            "$ref": "#/$defs/t",
            "$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}},
        },
    },
    {
        "name": "pointer_keys",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a/b": {"$ref": "#/$defs/x~1y"},
                "c~d": {"$ref": "#/$defs/x~0y"},
                "%25": {"$ref": "#/$defs/%2525"},
            },
            "$defs": {
                "x/y": {"type": "object", "properties": {"k": {"type": "string"}}},
                "x~y": {"type": "integer"},
                "%25": {"type": "boolean"},
            },
        },
    },
    {
        "name": "odd_values",
        "inputSchema": {
            "type": "object",
            "properties": {
                "big": {"type": "integer", "default": 10**30, "enum": [10**30, -(10**30), 0]},
                "tiny": {"type": "number", "default": 5e-324, "minimum": -1.7976931348623157e308},
                "neg_zero": {"type": "number", "default": -0.0},
                "nested_default": {"type": "object", "default": {"a": [{"b": [None, True, 1.5, "s" + M]}]}},
                "bool_vs_int": {"enum": [1, True, 0, False, 1.0]},
            },
        },
    },
]
dump("structure.json", structure_tools)
