"""naming: one identifier function, reserved words, deterministic collision rules."""

from __future__ import annotations

import keyword
import random

import pytest

from codegen.model import naming


@pytest.mark.parametrize(
    ("wire", "snake", "pascal"),
    [
        ("get_weather", "get_weather", "GetWeather"),
        ("get-weather.v2", "get_weather_v2", "GetWeatherV2"),
        ("getUser", "get_user", "GetUser"),
        ("HTTPServerStatus", "http_server_status", "HttpServerStatus"),
        ("json_schema_2020_12_tool", "json_schema_2020_12_tool", "JsonSchema202012Tool"),
        ("oauth2Token", "oauth2_token", "Oauth2Token"),
        ("list users", "list_users", "ListUsers"),
        ("über-tool", "uber_tool", "UberTool"),  # NFKD, then ASCII only
        ("天气", "tool", "Tool"),  # nothing ASCII survives: prefix
        ("", "tool", "Tool"),
        ("---", "tool", "Tool"),
        ("1st.tool", "tool_1st_tool", "Tool1stTool"),
        ("42", "tool_42", "Tool42"),
        ("__init__", "init", "Init"),
        ("a\nb\u202ec", "a_bc", "ABc"),  # bidi controls vanish, newlines separate
        ("x'); import os #", "x_import_os", "XImportOs"),
    ],
)
def test_identifier_table(wire: str, snake: str, pascal: str) -> None:
    assert naming.identifier(wire, style="snake") == snake
    assert naming.identifier(wire, style="pascal") == pascal


@pytest.mark.parametrize("word", sorted(keyword.kwlist))
def test_keywords_get_trailing_underscore(word: str) -> None:
    name = naming.identifier(word, style="snake")
    assert name.isidentifier() and not keyword.iskeyword(name)
    assert name.rstrip("_") == word.lower() or word in ("True", "False", "None")


@pytest.mark.parametrize("word", ["match", "case", "type", "_"])
def test_soft_keywords_are_reserved(word: str) -> None:
    name = naming.identifier(word, style="snake")
    assert name not in keyword.softkwlist and name.isidentifier()
    if word != "_":
        assert name == word + "_"


@pytest.mark.parametrize("word", ["list", "dict", "id", "print", "type", "open", "str"])
def test_builtins_are_reserved_for_methods(word: str) -> None:
    names = naming.method_names([word])
    assert names[word] == word + "_"


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ("close", "close_"),
        ("aclose", "aclose_"),
        ("call_tool", "call_tool_"),
        ("list_tools", "list_tools_"),
        ("list_all_tools", "list_all_tools_"),
        ("discover", "discover_"),
        ("stdio", "stdio_"),
        ("self", "self_"),
        ("cls", "cls_"),
        ("_meta", "meta_"),  # `meta` is a parameter name of call_tool: reserved too
        ("model_config", "model_config"),  # a pydantic attribute, not one of the client's
        ("handle_message", "handle_message_"),
        ("run_http", "run_http_"),
        ("load_package_tools", "load_package_tools_"),  # a module-level name of generated files
        ("models", "models_"),
    ],
)
def test_runtime_member_names_are_reserved(wire: str, expected: str) -> None:
    assert naming.method_names([wire])[wire] == expected


def test_runtime_classes_are_consulted() -> None:
    members = naming.runtime_member_names()
    assert {
        "close",
        "call_tool",
        "list_tools",
        "discover",
        "_call",
        "_call_structured",
        "__init__",
    } <= members
    assert {"handle_message", "asgi_app", "run_stdio"} <= members


def test_case_and_separator_collisions_are_suffixed_in_sorted_order() -> None:
    wires = ["getUser", "get_user", "get-user", "GET_USER"]
    names = naming.method_names(wires)
    # the wire name that *is* the identifier keeps it; the rest follow in sorted wire-name order
    assert names == {
        "get_user": "get_user",
        "GET_USER": "get_user_2",
        "get-user": "get_user_3",
        "getUser": "get_user_4",
    }
    assert len(set(names.values())) == len(wires)


def test_collision_suffix_skips_taken_names() -> None:
    names = naming.method_names(["get_user", "get-user", "get_user_2"])
    assert names == {"get_user": "get_user", "get_user_2": "get_user_2", "get-user": "get_user_3"}


def test_assignment_is_independent_of_input_order() -> None:
    wires = ["a-b", "a_b", "aB", "A.B", "ab", "a b", "class", "class_", "1x", "x1", "tool", "Tool", ""]
    expected = naming.method_names(wires)
    rng = random.Random(7)
    for _ in range(20):
        shuffled = wires[:]
        rng.shuffle(shuffled)
        assert naming.method_names(shuffled) == expected
    assert len(set(expected.values())) == len(set(wires))
    assert all(name.isidentifier() and not keyword.iskeyword(name) for name in expected.values())


def test_class_stems_collide_like_methods() -> None:
    stems = naming.class_bases(["get-user", "getUser", "get_user", "GetUser"])
    assert stems["GetUser"] == "GetUser"
    assert sorted(stems.values()) == ["GetUser", "GetUser2", "GetUser3", "GetUser4"]


def test_words() -> None:
    assert naming.words("getHTTPResponse_v2.final") == ["get", "HTTP", "Response", "v2", "final"]
    assert naming.words("\u202eevil") == ["evil"]


# ------------------------------------------------------------------------------------------- fields


@pytest.mark.parametrize(
    ("wire", "field"),
    [
        ("name", "name"),
        ("firstName", "first_name"),
        ("first-name", "first_name"),
        ("class", "class_"),  # keyword
        ("None", "none"),
        ("match", "match"),  # soft keywords are valid attribute names
        ("type", "type"),
        ("id", "id"),  # a builtin, but never used in annotations
        ("list", "list_"),  # builtins used in annotations would be shadowed in the class body
        ("str", "str_"),
        ("model_config", "model_config_"),  # BaseModel members
        ("json", "json_"),
        ("schema", "schema_"),
        ("model_dump_json", "field_model_dump_json"),  # pydantic's protected namespaces
        ("model_validate_me", "field_model_validate_me"),
        ("model_name", "model_name"),
        ("root", "root_"),
        ("_meta", "meta"),  # a leading underscore would make a private attribute
        ("__class__", "class_"),
        ("2fa", "field_2fa"),
        ("über", "uber"),
        ("天气", "field"),
        ("", "field"),
        ("x'); import os #", "x_import_os"),
    ],
)
def test_field_names(wire: str, field: str) -> None:
    assert naming.field_names([wire])[wire] == field


def test_field_names_collide_deterministically() -> None:
    wires = ["first_name", "first-name", "firstName", "first name", "first.name", "FirstName", "Name", "name"]
    names = naming.field_names(wires)
    assert names["first_name"] == "first_name" and names["name"] == "name"
    assert len(set(names.values())) == len(wires)
    rng = random.Random(1)
    for _ in range(10):
        shuffled = wires[:]
        rng.shuffle(shuffled)
        assert naming.field_names(shuffled) == names
    assert all(name.isidentifier() and not keyword.iskeyword(name) for name in names.values())


def test_field_names_avoid_every_basemodel_member() -> None:
    from pydantic import BaseModel

    members = [name for name in dir(BaseModel) if not name.startswith("_")]
    names = naming.field_names(members)
    assert not set(names.values()) & set(dir(BaseModel))


def test_long_names_are_cut_with_a_digest() -> None:
    long = "x" * 500
    name = naming.identifier(long)
    assert len(name) == naming.MAX_IDENTIFIER and name != naming.identifier("x" * 499)
    assert naming.identifier("y" * 80) == "y" * 80
    pascal = naming.identifier(long, style="pascal")
    assert len(pascal) == naming.MAX_IDENTIFIER and pascal.isidentifier()


def test_class_stems_are_numbered_like_methods() -> None:
    wires = ["get-user", "getUser", "get_user"]
    methods = naming.method_names(wires)
    stems = naming.class_bases(wires)
    assert methods == {"get_user": "get_user", "get-user": "get_user_2", "getUser": "get_user_3"}
    assert stems == {"get_user": "GetUser", "get-user": "GetUser2", "getUser": "GetUser3"}
