"""Resources, resource templates, prompts and completion in the sans-I/O dispatcher (surfaces.py,
uri_match.py) and in legacy sessions: what each method answers, the errors of each era, pagination,
capabilities, bad definitions refused at start, template matching with hostile values, and
`notifications/resources/updated` for subscribed legacy sessions and listen streams only.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpgen_runtime.server import ResourceNotFound, ServerConfig, ToolServer
from mcpgen_runtime.server.core.config import IncomingRequest
from mcpgen_runtime.server.core.resources.surfaces import COMPLETION_LIMIT
from mcpgen_runtime.server.core.resources.uri_match import UriPattern
from mcpgen_runtime.server.legacy.session_dispatch import LegacyDispatcher
from mcpgen_runtime.server.legacy.sessions import Session
from mcpgen_runtime.uri_template import expand
from tests.runtime.server_helpers import answer, request, result, run
from tests.runtime.surfaces_server_app import SurfacesServer

# ---- uri_match ------------------------------------------------------------------------------------


HOSTILE = ["../etc/passwd", "a#b", "a?b=c", "a b", "naïve ☃", "50%", "a,b", "x&y=z", "", "/"]


@pytest.mark.parametrize("value", HOSTILE)
def test_a_simple_variable_round_trips_through_expand_and_match(value: str) -> None:
    """What the client expands (RFC 6570, percent-encoded) the server reads back as the same one value:
    no `../`, `#`, `?` or `/` in it can change which template matches or split it. By default a value
    that names another path once decoded (`/`, `..`) does not match; `raw_values=True` gives it."""
    pattern = UriPattern("note://notes/{name}/raw")
    uri = expand(pattern.template, {"name": value})
    assert pattern.match(uri) == (None if "/" in value else {"name": value})
    assert UriPattern(pattern.template, raw_values=True).match(uri) == {"name": value}


@pytest.mark.parametrize("value", ["..", "../etc", "a/b", "a\\b", "..\\x", "a\x00b", "/"])
def test_a_simple_value_that_names_another_path_is_refused(value: str) -> None:
    """Issue 31 item 8: `..%2F..%2Fetc%2Fhostname` never reaches a `{var}` reader as `../../etc/hostname`,
    nor `%00` as NUL, in single, list and exploded simple expressions."""
    for template, values in (
        ("notes://notes/{name}", {"name": value}),
        ("notes://{a,name}", {"a": "x", "name": value}),
        ("notes://{name*}", {"name": ["x", value]}),
    ):
        uri = expand(template, values)
        assert UriPattern(template).match(uri) is None, uri
        assert UriPattern(template, raw_values=True).match(uri) == values
    # values that only look alike are served
    for value in ("...", "..x", "a..b", ".", "a%b"):
        assert UriPattern("notes://notes/{name}").match(expand("notes://notes/{name}", {"name": value})) == {
            "name": value
        }


@pytest.mark.parametrize("value", HOSTILE)
def test_query_variables_round_trip(value: str) -> None:
    pattern = UriPattern("search://q{?term,limit}")
    uri = expand(pattern.template, {"term": value, "limit": "3"})
    assert pattern.match(uri) == {"term": value, "limit": "3"}


def test_match_forms() -> None:
    assert UriPattern("file:///{+path}").match("file:///a/b/c.txt") == {"path": "a/b/c.txt"}
    assert UriPattern("x://{a}{/seg*}").match("x://h/a/b%2Fc") == {"a": "h", "seg": ["a", "b/c"]}
    assert UriPattern("x://{a,b}").match("x://1,2") == {"a": "1", "b": "2"}
    assert UriPattern("x://y{#frag}").match("x://y#top") == {"frag": "top"}
    assert UriPattern("x://{a}.json").match("x://a/b.json") is None  # a simple value never spans "/"
    assert UriPattern("search://q{?term}").match("search://q") == {}  # an undefined query variable


@pytest.mark.parametrize("bad", ["x://{a", "x://{a}}", "x://{}", "x://{!a}", "x://{a}{a}", ""])
def test_malformed_templates_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        UriPattern(bad)


# ---- the dispatcher ---------------------------------------------------------------------------------


def test_capabilities_are_declared_in_discover_and_initialize() -> None:
    server = SurfacesServer()
    caps = result(server, "server/discover")["capabilities"]
    assert caps["resources"] == {"listChanged": True, "subscribe": True}
    assert caps["prompts"] == {"listChanged": True}
    assert caps["completions"] == {}
    legacy = LegacyDispatcher(server).capabilities()
    assert legacy["resources"]["subscribe"] is True and "completions" in legacy


def test_a_server_without_surfaces_declares_none_and_answers_method_not_found() -> None:
    server = ToolServer(ServerConfig(name="bare"))
    assert set(server.capabilities) == {"tools"}
    for method in ("resources/list", "resources/read", "prompts/get", "completion/complete"):
        response = answer(server, method, {"uri": "x://y", "name": "p"})
        assert response["error"]["code"] == -32601


def test_resources_are_paginated_with_caching_hints_and_cursors_checked() -> None:
    server = SurfacesServer()
    first = result(server, "resources/list")
    assert [r["uri"] for r in first["resources"]] == ["note://readme", "note://logo"]
    assert first["ttlMs"] >= 0 and first["cacheScope"] in ("public", "private")
    assert first["resultType"] == "complete"
    second = result(server, "resources/list", {"cursor": first["nextCursor"]})
    assert [r["uri"] for r in second["resources"]] == ["note://empty-name"]
    assert "nextCursor" not in second
    for bad in ("nope", "MA", first["nextCursor"] + "x"):
        assert answer(server, "resources/list", {"cursor": bad})["error"]["code"] == -32602
    # A changed listing invalidates its cursors (they name a digest of the listing).
    server.remove_resource("note://logo")
    assert answer(server, "resources/list", {"cursor": first["nextCursor"]})["error"]["code"] == -32602


def test_definitions_are_served_exactly_as_given() -> None:
    server = SurfacesServer()
    listed = result(server, "resources/templates/list")["resourceTemplates"]
    assert listed[0] == {"uriTemplate": "note://notes/{name}", "name": "note", "mimeType": "text/plain"}
    prompts = result(server, "prompts/list")["prompts"]
    assert prompts[0]["arguments"][1] == {"name": "style", "description": "how"}


def test_read_errors_per_era() -> None:
    server = SurfacesServer()
    modern = answer(server, "resources/read", {"uri": "nope://x"})
    assert modern["error"] == {"code": -32602, "message": "Resource not found", "data": {"uri": "nope://x"}}
    raised = answer(server, "resources/read", {"uri": "note://notes/missing"})
    assert raised["error"]["code"] == -32602 and raised["error"]["data"] == {"uri": "note://notes/missing"}
    assert answer(server, "resources/read", {})["error"]["code"] == -32602

    legacy = LegacyDispatcher(server)
    session = Session("s", None, "2025-11-25", {}, {})
    message = {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "nope://x"}}
    outcome = run(legacy.handle(session, message, IncomingRequest()))
    assert outcome.response is not None and outcome.response["error"]["code"] == -32002
    ok = {"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": "note://readme"}}
    got = run(legacy.handle(session, ok, IncomingRequest())).response
    assert got is not None
    assert set(got["result"]) == {"contents"}  # no resultType, ttlMs or cacheScope in a legacy result


def test_handler_failures_are_json_rpc_errors() -> None:
    server = ToolServer(ServerConfig(name="failing"))

    async def broken(uri: str, ctx: Any) -> Any:
        raise RuntimeError("secret detail")

    async def stub(uri: str, ctx: Any) -> Any:
        raise NotImplementedError

    async def empty(uri: str, ctx: Any) -> Any:
        return []

    server.add_resource({"uri": "x://broken", "name": "b"}, broken)
    server.add_resource({"uri": "x://stub", "name": "s"}, stub)
    server.add_resource({"uri": "x://empty", "name": "e"}, empty)
    error = answer(server, "resources/read", {"uri": "x://broken"})["error"]
    assert error["code"] == -32603 and "secret" not in error["message"]
    assert "not implemented" in answer(server, "resources/read", {"uri": "x://stub"})["error"]["message"]
    # Empty contents are never sent (that would read as "exists, empty"): an internal error instead.
    assert answer(server, "resources/read", {"uri": "x://empty"})["error"]["code"] == -32603


def test_prompt_arguments_are_checked() -> None:
    server = SurfacesServer()
    got = result(server, "prompts/get", {"name": "greet", "arguments": {"name": "Ada", "style": "warm"}})
    assert got["messages"][0] == {"role": "assistant", "content": {"type": "text", "text": "(warm)"}}
    assert got["description"] == "Greets someone"
    for params in (
        {"name": "greet"},  # missing required
        {"name": "greet", "arguments": {"name": 3}},  # not a string
        {"name": "greet", "arguments": {"name": "a", "extra": "x"}},  # unknown argument
        {"name": "nope"},
        {},
    ):
        assert answer(server, "prompts/get", params)["error"]["code"] == -32602, params


def test_completion() -> None:
    server = SurfacesServer()

    def complete(ref: dict[str, Any], name: str, value: str) -> dict[str, Any]:
        got = result(server, "completion/complete", {"ref": ref, "argument": {"name": name, "value": value}})
        completion: dict[str, Any] = got["completion"]
        return completion

    assert complete({"type": "ref/prompt", "name": "greet"}, "name", "g")["values"] == ["grace", "guido"]
    many = complete({"type": "ref/prompt", "name": "greet"}, "style", "")
    assert len(many["values"]) == COMPLETION_LIMIT and many["hasMore"] is True
    template = {"type": "ref/resource", "uri": "note://notes/{name}"}
    assert complete(template, "name", "a")["values"] == ["ada", "alan"]
    # The reference may be a URI the template matches rather than the template itself.
    assert complete({"type": "ref/resource", "uri": "note://notes/x"}, "name", "g")["values"] == [
        "grace",
        "guido",
    ]
    # A known argument without a handler offers nothing.
    assert complete({"type": "ref/resource", "uri": "file:///{+path}"}, "path", "a")["values"] == []
    for ref, name in (
        ({"type": "ref/prompt", "name": "nope"}, "x"),
        ({"type": "ref/prompt", "name": "greet"}, "nope"),
        ({"type": "ref/other"}, "x"),
    ):
        params = {"ref": ref, "argument": {"name": name, "value": ""}}
        assert answer(server, "completion/complete", params)["error"]["code"] == -32602


def test_bad_definitions_stop_the_server_at_start() -> None:
    async def read(uri: str, ctx: Any) -> str:
        return ""

    async def read_t(uri: str, variables: Any, ctx: Any) -> str:
        return ""

    async def get(arguments: Any, ctx: Any) -> str:
        return ""

    def sync_read(uri: str, ctx: Any) -> str:
        return ""

    server = ToolServer(ServerConfig(name="bad"))
    with pytest.raises(ValueError, match="uri"):
        server.add_resource({"name": "no uri"}, read)
    with pytest.raises(ValueError, match="name"):
        server.add_resource({"uri": "x://y"}, read)
    with pytest.raises(TypeError, match="async"):
        server.add_resource({"uri": "x://y", "name": "y"}, sync_read)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="never closed"):
        server.add_resource_template({"uriTemplate": "x://{a", "name": "t"}, read_t)
    with pytest.raises(ValueError, match="two arguments"):
        server.add_prompt({"name": "p", "arguments": [{"name": "a"}, {"name": "a"}]}, get)
    with pytest.raises(ValueError, match="required"):
        server.add_prompt({"name": "p", "arguments": [{"name": "a", "required": "yes"}]}, get)
    with pytest.raises(ValueError, match="no such argument"):
        server.add_completion("prompt", "nope", "a", get)  # type: ignore[arg-type]


# ---- updates -----------------------------------------------------------------------------------------


def test_resource_updates_reach_subscribed_legacy_sessions_only() -> None:
    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        server = SurfacesServer()
        legacy = LegacyDispatcher(server)
        watcher, other = Session("w", None, "2025-11-25", {}, {}), Session("o", None, "2025-06-18", {}, {})
        got_w: list[dict[str, Any]] = []
        got_o: list[dict[str, Any]] = []

        async def deliver_w(message: dict[str, Any]) -> None:
            got_w.append(message)

        async def deliver_o(message: dict[str, Any]) -> None:
            got_o.append(message)

        legacy.add_listener(deliver_w, watcher)
        legacy.add_listener(deliver_o, other)
        subscribe = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "resources/subscribe",
            "params": {"uri": "note://notes/a"},
        }
        outcome = await legacy.handle(watcher, subscribe, IncomingRequest())
        assert outcome.response == {"jsonrpc": "2.0", "id": 1, "result": {}}
        server.notify_resource_updated("note://notes/a")
        server.notify_resource_updated("note://notes/b")
        await asyncio.sleep(0.05)
        unsubscribe = {**subscribe, "id": 2, "method": "resources/unsubscribe"}
        await legacy.handle(watcher, unsubscribe, IncomingRequest())
        server.notify_resource_updated("note://notes/a")
        server.notify_list_changed("prompts")
        await asyncio.sleep(0.05)
        server.close_subscriptions()
        return got_w, got_o

    got_w, got_o = run(scenario())
    updated = {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "note://notes/a"},
    }
    changed = {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}
    assert got_w == [updated, changed]
    assert got_o == [changed]


def test_legacy_subscribe_needs_the_capability_and_a_uri() -> None:
    async def scenario() -> list[Any]:
        bare = LegacyDispatcher(ToolServer(ServerConfig(name="bare")))
        served = LegacyDispatcher(SurfacesServer())
        session = Session("s", None, "2025-11-25", {}, {})
        message = {"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "x://y"}}
        no_uri = {**message, "params": {}}
        return [
            (await bare.handle(session, message, IncomingRequest())).response,
            (await served.handle(session, no_uri, IncomingRequest())).response,
        ]

    unserved, no_uri = run(scenario())
    assert unserved["error"]["code"] == -32601
    assert no_uri["error"]["code"] == -32602


def test_modern_resources_subscribe_is_a_removed_method() -> None:
    response = answer(SurfacesServer(), "resources/subscribe", {"uri": "note://readme"})
    assert response["error"]["code"] == -32601


def test_prompts_added_at_run_time_are_listed_and_announced() -> None:
    async def scenario() -> tuple[int, list[str]]:
        server = SurfacesServer()
        subscription = server.hub.open("t", {"promptsListChanged": True})

        async def late(arguments: dict[str, str], ctx: Any) -> str:
            return "late"

        server.add_prompt({"name": "late"}, late)
        batch = await subscription.next_batch(1.0)
        names: list[str] = []
        params: dict[str, Any] = {}
        while True:
            outcome = await server.handle_message(request(1, "prompts/list", params))
            assert outcome.response is not None
            page = outcome.response["result"]
            names += [p["name"] for p in page["prompts"]]
            if "nextCursor" not in page:
                return len(batch or []), names
            params = {"cursor": page["nextCursor"]}

    count, names = run(scenario())
    assert count == 1
    assert names == ["greet", "plain", "late"]


def test_resource_not_found_from_a_reader_is_raisable() -> None:
    assert ResourceNotFound("x://y").uri == "x://y"


def test_resources_and_templates_changed_at_run_time_are_announced() -> None:
    async def scenario() -> tuple[int, list[str], list[str]]:
        server = SurfacesServer()
        subscription = server.hub.open("t", {"resourcesListChanged": True})

        async def read(uri: str, ctx: Any) -> str:
            return "new"

        server.add_resource({"uri": "note://new", "name": "new"}, read)
        server.remove_resource_template("search://q{?term,limit}")
        batch = await subscription.next_batch(1.0)
        outcome = await server.handle_message(request(1, "resources/templates/list"))
        assert outcome.response is not None
        templates = [t["uriTemplate"] for t in outcome.response["result"]["resourceTemplates"]]
        surfaces = server.surfaces
        assert surfaces is not None
        return len(batch or []), surfaces.keys()["resources"], templates

    count, resources, templates = run(scenario())
    assert count == 1  # two changes, one queued notification (coalesced)
    assert resources[-1] == "note://new"
    assert templates == ["note://notes/{name}", "file:///{+path}"]
