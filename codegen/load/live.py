"""A live server's tool list -> `LoadedSpec`: `load_url` (Streamable HTTP) and `load_stdio` (a command line).

Both call `server/discover`, then every `tools/list` page, through the runtime's own `Client` (no
response cache, no tool table), and keep each tool exactly as the server listed it
(`ToolsPage.listed`) — validation, not loading, decides what is usable. A server of either era
is read: `era="auto"` (the default) detects a legacy (initialize-based) server as the runtime
client does, "modern" / "legacy" skip the detection. Runtime errors become `SpecLoadError` here
and nowhere else; display names never carry credentials.
"""

from __future__ import annotations

import shlex
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import urlsplit

from mcpgen_runtime.masking import MASK, Secrets, remembering

from ..errors import SpecLoadError
from ..spec import LoadedSpec, server_info_of
from .command import shown_command
from .document import checked_entries, checked_tools

if TYPE_CHECKING:
    from mcpgen_runtime.protocol.legacy.detect import EraChoice

# The runtime's client (`mcpgen_runtime.client.Client`) is imported only for live servers: reading
# a spec file must not pay for it (about a third of a second per `mcpgen` run).

__all__ = [
    "LISTING_CAPABILITIES",
    "MAX_LISTED_TOOLS",
    "MAX_PAGES",
    "display_url",
    "load_stdio",
    "load_stdio_argv",
    "load_url",
]

MAX_PAGES: Final = 1000
MAX_LISTED_TOOLS: Final = 10_000
SKILLS: Final = "io.modelcontextprotocol/skills"  # the skills extension (SEP-2640): listed when declared


class _ListedPage(Protocol):
    @property
    def listed(self) -> tuple[Any, ...]: ...  # the page's `tools` as the server sent them, invalid ones too

    @property
    def next_cursor(self) -> str | None: ...


class _ListingClient(Protocol):
    """What the loader needs from a live connection (`mcpgen_runtime.client.Client`): discovery and
    one `tools/list` page at a time, with every listed tool kept. `Client.list_tools` drops tools
    whose x-mcp-header annotations are invalid (XHDR-10, right for applications); the generator
    reads `ToolsPage.listed` instead, so validation can report them."""

    def discover(self) -> dict[str, Any]: ...

    def list_tools(self, cursor: str | None = None) -> _ListedPage: ...

    def list_resources(self, cursor: str | None = None) -> _ListedPage: ...

    def list_resource_templates(self, cursor: str | None = None) -> _ListedPage: ...

    def list_prompts(self, cursor: str | None = None) -> _ListedPage: ...

    def list_skills_page(self, cursor: str | None = None) -> _ListedPage: ...


def display_url(url: str) -> str:
    """The URL as it may be shown and recorded: no userinfo, query or fragment."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme.lower()}://{host}{parts.path}"


# What the loader declares: everything a generated client can answer with its callbacks, so a
# server that lists some tools only to clients able to answer them (the npm reference server's
# elicitation and sampling tools) lists them to the generator too.
LISTING_CAPABILITIES: Final[dict[str, Any]] = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}


def _open_http(
    url: str,
    headers: Mapping[str, str] | None,
    timeout: float,
    era: EraChoice = "auto",
    auth: Any = None,
    max_response_bytes: int | None = None,
) -> AbstractContextManager[_ListingClient]:
    from mcpgen_runtime.client import Client

    return Client(url, headers=headers, timeout=timeout, auth=auth, **_listing(era, max_response_bytes))


def _open_stdio(
    argv: list[str],
    era: EraChoice = "auto",
    max_response_bytes: int | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> AbstractContextManager[_ListingClient]:
    from mcpgen_runtime.client import Client

    return Client.stdio(argv, env=env, cwd=cwd, **_listing(era, max_response_bytes))


def _listing(era: EraChoice, max_response_bytes: int | None) -> dict[str, Any]:
    """What every listing client is, over HTTP or stdio: no tool table and no response cache (each
    tool is kept as listed), every callback capability declared, responses up to the limit given,
    else the runtime's default (64 MiB)."""
    from mcpgen_runtime.transport.limits import DEFAULT_MAX_RESPONSE_BYTES

    return {
        "tools": (),
        "cache": False,
        "era": era,
        "capabilities": LISTING_CAPABILITIES,
        "max_response_bytes": DEFAULT_MAX_RESPONSE_BYTES
        if max_response_bytes is None
        else max_response_bytes,
    }


def _runtime_message(exc: BaseException) -> str:
    from mcpgen_runtime.errors import InputRequiredError, RemoteError, ServerExitedError

    if isinstance(exc, InputRequiredError):  # no callback is set: the client cannot answer it
        return "the server asked for user input while mcpgen was listing its tools"
    if isinstance(exc, RemoteError):
        text = f"server answered with JSON-RPC error {exc.code}: {exc.message[:500]!r}"
        if exc.http_status is not None:
            text += f" (HTTP {exc.http_status})"
        return text
    if isinstance(exc, ServerExitedError):
        text = f"server process exited (code {exc.returncode})"
        if exc.stderr_tail:
            text += f"; stderr ends with {exc.stderr_tail[-1000:]!r}"
        return text
    return f"{type(exc).__name__}: {exc}"


def _list_every_tool(
    client: _ListingClient, source: str, stage: list[str], found: dict[str, Any]
) -> list[dict[str, Any]]:
    """`server/discover`, then every `tools/list` page, unfiltered, in listing order; the
    discover answer's `serverInfo` goes into `found`."""
    from mcpgen_runtime.client import InvalidToolWarning

    stage.append("server/discover")
    discovered = client.discover()
    found["server_info"] = server_info_of(discovered)
    found["capabilities"] = discovered.get("capabilities") if isinstance(discovered, dict) else None
    # the client warns about the tools it drops; validation reports them
    tools = _every_page(
        client.list_tools,
        "tools/list",
        source,
        stage,
        InvalidToolWarning,
        f"server listed more than {MAX_LISTED_TOOLS} tools",
    )
    return checked_tools(tools, source, "/tools")


def _every_page(
    page_of: Callable[[str | None], _ListedPage],
    method: str,
    source: str,
    stage: list[str],
    dropped: type[Warning],
    too_many: str,
) -> list[Any]:
    """Every page of `method` (`page_of(cursor)`), its entries as listed, in listing order: at most
    MAX_PAGES pages and MAX_LISTED_TOOLS entries (`too_many` says what went over), and a cursor
    repeated ends it. `dropped`: the client's warning about the entries it drops, silenced."""
    listed: list[Any] = []
    seen: set[str] = set()
    cursor: str | None = None
    for number in range(1, MAX_PAGES + 1):
        stage.append(f"{method} page {number}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dropped)
            page = page_of(cursor)
        listed.extend(page.listed)
        if len(listed) > MAX_LISTED_TOOLS:
            raise SpecLoadError(f"{source}: {too_many}; refusing to go on")
        cursor = page.next_cursor
        if cursor is None:
            return listed
        if cursor in seen:
            raise SpecLoadError(
                f"{source}: server repeated the {method} cursor {cursor[:100]!r}; pagination would never end"
            )
        seen.add(cursor)
    raise SpecLoadError(f"{source}: {method} still had a next page after {MAX_PAGES} pages; giving up")


# (capability, LoadedSpec field, method, the client's page method, the spec file's member)
_SURFACES: Final = (
    ("resources", "resources", "resources/list", "list_resources", "resources"),
    (
        "resources",
        "resource_templates",
        "resources/templates/list",
        "list_resource_templates",
        "resourceTemplates",
    ),
    ("prompts", "prompts", "prompts/list", "list_prompts", "prompts"),
)


def _list_surfaces(
    client: _ListingClient, source: str, stage: list[str], capabilities: Any
) -> dict[str, list[dict[str, Any]]]:
    """Every page of `resources/list`, `resources/templates/list` and `prompts/list` the server's
    capabilities announce, each entry as listed (validation decides what is usable)."""
    from mcpgen_runtime.client.surface_flows import InvalidEntryWarning

    found: dict[str, list[dict[str, Any]]] = {}
    if not isinstance(capabilities, dict):
        return found
    for capability, field_name, method, lister, member in _SURFACES:
        if not isinstance(capabilities.get(capability), dict):
            continue
        entries = _every_page(
            getattr(client, lister),
            method,
            source,
            stage,
            InvalidEntryWarning,
            f"{method} listed more than {MAX_LISTED_TOOLS} entries",
        )
        found[field_name] = checked_entries(entries, source, f"/{member}", "listed entry")
    extensions = capabilities.get("extensions")
    if isinstance(extensions, dict) and isinstance(extensions.get(SKILLS), dict):
        entries = _every_page(
            client.list_skills_page,
            "skills/list",
            source,
            stage,
            InvalidEntryWarning,
            f"skills/list listed more than {MAX_LISTED_TOOLS} entries",
        )
        found["skills"] = checked_entries(entries, source, "/skills", "listed skill")
    return found


def _load_live(
    opener: Callable[[], AbstractContextManager[_ListingClient]],
    source: str,
    secrets: Secrets,
    shown: Mapping[str, str] | None = None,
) -> LoadedSpec:
    """Run the listing; translate runtime errors (the one boundary) without leaking `secrets`
    (`shown`: text replaced before them, the full URL by its display name); refuse a listing that
    holds one of them."""
    from mcpgen_runtime.errors import McpRuntimeError

    stage = ["connecting"]
    found: dict[str, Any] = {}
    try:
        # what is logged while listing (a stray stdout line, say) is masked too
        with remembering(secrets), opener() as client:
            tools = _list_every_tool(client, source, stage, found)
            surfaces = _list_surfaces(client, source, stage, found.get("capabilities"))
    except (McpRuntimeError, OSError) as exc:
        text = f"{stage[-1]} failed: {_runtime_message(exc)}"
        for value, display in (shown or {}).items():
            text = text.replace(value, display)
        raise SpecLoadError(f"{source}: {secrets.mask(text)}") from exc
    _refuse_secrets(source, secrets, tools, surfaces, found.get("server_info"))
    # The tools are stored as a tools/list result would be: {"tools": [...]} -> /tools/N.
    return LoadedSpec(
        source,
        tools,
        pointer_prefix="/tools",
        server_info=found.get("server_info"),
        resources=surfaces.get("resources", []),
        resource_templates=surfaces.get("resource_templates", []),
        prompts=surfaces.get("prompts", []),
        skills=surfaces.get("skills", []),
    )


def _refuse_secrets(
    source: str,
    secrets: Secrets,
    tools: list[dict[str, Any]],
    surfaces: Mapping[str, list[dict[str, Any]]],
    server_info: Mapping[str, str] | None,
) -> None:
    """A definition that holds a value mcpgen gave the server (its description echoes an API key,
    say) stops loading: written out, it would leak the secret into generated files and snapshots,
    and a scrubbed copy would not be the server's definition, so could not be pinned."""
    lists = [("server", "", [{"serverInfo": dict(server_info or {})}]), ("tool", "/tools", tools)] + [
        (kind, f"/{member}", surfaces.get(field_name, []))
        for kind, field_name, member in (
            ("resource", "resources", "resources"),
            ("resource template", "resource_templates", "resourceTemplates"),
            ("prompt", "prompts", "prompts"),
            ("skill", "skills", "skills"),
        )
    ]
    for kind, prefix, entries in lists:
        for index, entry in enumerate(entries):
            pointer = secrets.locate(entry, f"{prefix}/{index}" if prefix else "")
            if pointer is None:
                continue
            name = entry.get("name", entry.get("uriTemplate", entry.get("uri", "serverInfo")))
            raise SpecLoadError(
                f"{source}: {kind} {secrets.mask(str(name))[:100]!r} at {pointer} holds a value "
                f"mcpgen gave the server (an env, header, token, query or argument value, shown as "
                f"{MASK}); refusing to generate from it: remove the value from the server's definition, "
                f"or give the server another one"
            )


def load_url(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    era: EraChoice = "auto",
    auth: Any = None,
    max_response_bytes: int | None = None,
    source: str | None = None,
    hidden: Iterable[str] = (),
) -> LoadedSpec:
    """All tools of a Streamable HTTP server, as it lists them; `auth` (an `OAuth`) logs in
    when the server asks for it; `max_response_bytes` bounds each reply (None: 64 MiB).
    `source` names the server in messages (default: the URL without credentials); each of
    `hidden` (header values from a config file, say), like `headers` values and the URL's query
    values, is shown as *** in any message, and a listing holding one is refused."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise SpecLoadError(f"{source or display_url(url)!r}: not an http(s) URL")
    source = source or display_url(url)
    secrets = Secrets(hidden)
    secrets.add_url(url)
    for name, value in (headers or {}).items():  # --header, --token: the server may echo them in an error
        secrets.add_named(name, value)
    return _load_live(
        lambda: _open_http(url, headers, timeout, era, auth, max_response_bytes),
        source,
        secrets,
        {url: source},  # the full URL becomes the display name first, then the parts left become ***
    )


def load_stdio(command: str, *, era: EraChoice = "auto", max_response_bytes: int | None = None) -> LoadedSpec:
    """All tools of a stdio server started from `command` (split like a POSIX shell, not run by one)."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise SpecLoadError(f"stdio: cannot split the command line: {exc}") from exc
    if not argv:
        raise SpecLoadError("stdio: the command is empty; pass the server's command line")
    secrets = Secrets()
    secrets.add_arguments(argv[1:])
    source = secrets.mask(shown_command(argv))  # the package or script started, never a credential
    return _load_live(lambda: _open_stdio(argv, era, max_response_bytes), source, secrets)


def load_stdio_argv(
    argv: Sequence[str],
    *,
    source: str,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    hidden: Iterable[str] = (),
    era: EraChoice = "auto",
    max_response_bytes: int | None = None,
) -> LoadedSpec:
    """All tools of a stdio server started as `argv` (no shell) with `env` added to this process's
    environment, in `cwd`; `source` names it in messages, each of `hidden` is shown as ***."""
    command = list(argv)
    if not command or not command[0]:
        raise SpecLoadError(f"{source}: the command is empty")
    return _load_live(
        lambda: _open_stdio(command, era, max_response_bytes, env, cwd), source, Secrets(hidden)
    )
