"""Flows beyond tools (issue 22): resources, resource templates, prompts and completions.

Each is a `ClientCore` flow (core.py) and so works in both eras and over every transport:

- `resources/list`, `resources/templates/list`, `prompts/list`: one page or every page (PAGE-04..07),
  each page cached for its `ttlMs` (CACHE-01/15) and a rejected cursor from a cached page starting
  over once (CACHE-17);
- `resources/read` (cached per URI, CACHE-03) and `prompts/get`: `Mcp-Name` is the URI / the name
  (HDR-08), and an `input_required` result is answered by the client's callbacks and retried
  with a new id as a tool call is (MRTR-15..20); nothing of a retry is cached (CACHE-04);
- `completion/complete` for a prompt argument or a template variable.

A notification that a list changed, or that a read resource was updated, makes the cached entries
stale (CACHE-14: `ClientCore.observe`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, Final, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import PaginationError, ProtocolError, RemoteError
from ..protocol import jsonrpc
from ..protocol.input_messages import InputResult
from ..skills import Skill
from ..surfaces import (
    CompleteResult,
    Completion,
    Page,
    Prompt,
    PromptRef,
    PromptResult,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceTemplateRef,
)
from .core import ClientCore
from .input_responses import STATE_ONLY_DELAY, input_round_flow, resume_params
from .steps import Flow

__all__ = [
    "LISTS",
    "InvalidEntryWarning",
    "complete_flow",
    "get_prompt_flow",
    "list_all_flow",
    "list_page_flow",
    "read_resource_flow",
]

M = TypeVar("M", bound=BaseModel)

# method -> (result member, item model)
LISTS: Final[dict[str, tuple[str, type[BaseModel]]]] = {
    "resources/list": ("resources", Resource),
    "resources/templates/list": ("resourceTemplates", ResourceTemplate),
    "prompts/list": ("prompts", Prompt),
    "skills/list": ("skills", Skill),  # the skills extension's (skill_flows.py checks it is declared)
}


class InvalidEntryWarning(UserWarning):
    """A listed resource, resource template or prompt was dropped: it lacks a field the protocol
    requires (a `uri`, `uriTemplate` or `name` string, say)."""


def list_page_flow(
    core: ClientCore, method: str, cursor: str | None, *, partition: str | None, refresh: bool = False
) -> Flow[Page[Any]]:
    member, model = LISTS[method]
    params = {} if cursor is None else {"cursor": cursor}
    result, cached = yield from core.cached_flow(method, params, partition=partition, refresh=refresh)
    items = result.get(member)
    if not isinstance(items, list):
        raise ProtocolError(f"{method} result has no `{member}` array")
    next_cursor = result.get("nextCursor")
    if next_cursor is not None and not isinstance(next_cursor, str):
        raise ProtocolError(f"{method} nextCursor is not a string: {next_cursor!r:.100}")
    parsed: list[Any] = []
    for item in items:
        try:
            parsed.append(model.model_validate(item, strict=False))
        except ValidationError as exc:
            warnings.warn(
                f"{method}: dropping malformed entry {item!r:.120}: {_first(exc)}",
                InvalidEntryWarning,
                stacklevel=3,
            )
    ttl = result.get("ttlMs")
    scope = result.get("cacheScope")
    return Page(
        items=parsed,
        next_cursor=next_cursor,
        ttl_ms=ttl if type(ttl) is int and ttl > 0 else 0,
        cache_scope=scope if isinstance(scope, str) else None,
        cached=cached,
        listed=tuple(items),
    )


def list_all_flow(
    core: ClientCore, method: str, max_pages: int = 1000, *, partition: str | None, refresh: bool = False
) -> Flow[list[Any]]:
    """Every page; only a missing cursor ends the listing (PAGE-04/07)."""
    restarted = False
    while True:
        items: list[Any] = []
        seen: set[str] = set()
        cursor: str | None = None
        from_cache = False
        try:
            for _ in range(max_pages):
                page = yield from list_page_flow(core, method, cursor, partition=partition, refresh=refresh)
                from_cache |= page.cached
                items.extend(page.items)
                cursor = page.next_cursor
                if cursor is None:
                    return items
                if cursor in seen:
                    raise PaginationError(f"{method} returned cursor {cursor!r:.100} twice")
                seen.add(cursor)
            raise PaginationError(f"{method} did not end within {max_pages} pages")
        except RemoteError:
            if cursor is None or not from_cache or restarted or core.cache is None:
                raise
            core.cache.invalidate(method)  # CACHE-17
            restarted = refresh = True


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = "/".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


def _answered_flow(
    core: ClientCore,
    method: str,
    model: type[M],
    base: dict[str, Any],
    params: dict[str, Any],
    *,
    name: str,
    meta: Mapping[str, Any] | None,
    timeout: float | None,
    first: dict[str, Any] | None = None,
) -> Flow[M]:
    """The request's result (`first` when the caller has it already: a cached read) parsed as
    `model`, once the input it asks for is answered: each round by the callbacks
    (`input_round_flow`) and retried as a new request (MRTR-19), until a complete
    result or `max_input_rounds`."""
    result = first
    if result is None:
        result = yield from core.request_flow(method, params, name=name, meta=meta, timeout=timeout)
    rounds = 0
    delay = STATE_ONLY_DELAY
    while result.get("resultType") == jsonrpc.RESULT_INPUT_REQUIRED:
        rounds += 1
        params, delay = yield from input_round_flow(
            core, result, base, method=method, name=name, rounds=rounds, delay=delay
        )
        result = yield from core.request_flow(method, params, name=name, meta=meta, timeout=timeout)
    return _parse(method, model, result)


def _parse(method: str, model: type[M], result: dict[str, Any]) -> M:
    try:
        return model.model_validate(result, strict=False)
    except ValidationError as exc:
        raise ProtocolError(f"{method}: malformed result: {_first(exc)}") from exc


def read_resource_flow(
    core: ClientCore,
    uri: str,
    *,
    partition: str | None,
    refresh: bool = False,
    meta: Mapping[str, Any] | None = None,
    timeout: float | None = None,
    input_responses: Mapping[str, InputResult | Mapping[str, Any]] | None = None,
    request_state: str | None = None,
) -> Flow[ReadResourceResult]:
    base: dict[str, Any] = {"uri": uri}
    params = resume_params(base, input_responses, request_state)
    cached = None
    if params is base and meta is None:  # a resumed read or one with `_meta` is not cached
        cached, _ = yield from core.cached_flow(
            "resources/read", base, partition=partition, refresh=refresh, name=uri, timeout=timeout
        )
    return (
        yield from _answered_flow(
            core,
            "resources/read",
            ReadResourceResult,
            base,
            params,
            name=uri,
            meta=meta,
            timeout=timeout,
            first=cached,
        )
    )


def get_prompt_flow(
    core: ClientCore,
    name: str,
    arguments: Mapping[str, str] | None,
    *,
    meta: Mapping[str, Any] | None = None,
    timeout: float | None = None,
    input_responses: Mapping[str, InputResult | Mapping[str, Any]] | None = None,
    request_state: str | None = None,
) -> Flow[PromptResult]:
    base: dict[str, Any] = {"name": name}
    if arguments:
        bad = [key for key, value in arguments.items() if not isinstance(value, str)]
        if bad:
            raise TypeError(f"prompt arguments are strings; {', '.join(map(repr, bad))} is not")
        base["arguments"] = dict(arguments)
    params = resume_params(base, input_responses, request_state)
    return (
        yield from _answered_flow(
            core, "prompts/get", PromptResult, base, params, name=name, meta=meta, timeout=timeout
        )
    )


def complete_flow(
    core: ClientCore,
    ref: PromptRef | ResourceTemplateRef | Mapping[str, Any],
    argument: str,
    value: str,
    *,
    context: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> Flow[Completion]:
    params: dict[str, Any] = {
        "ref": ref.wire() if isinstance(ref, PromptRef | ResourceTemplateRef) else dict(ref),
        "argument": {"name": argument, "value": value},
    }
    if context:
        params["context"] = {"arguments": dict(context)}
    result = yield from core.request_flow("completion/complete", params, timeout=timeout)
    return _parse("completion/complete", CompleteResult, result).completion
