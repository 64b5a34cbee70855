"""The command line's commands beyond tools (issue 22), for a package generated from a server with
resources, resource templates or prompts:

    python -m PKG --url URL resources                      # resources and resource templates
    python -m PKG --url URL read URI [--out FILE]          # one resource (binary: --out, or base64 in json)
    python -m PKG --url URL read --template 'x://{id}' --arg id=7
    python -m PKG --url URL prompts                        # prompts and their arguments
    python -m PKG --url URL prompt NAME --arg key=value    # one prompt's messages
    python -m PKG --url URL complete --prompt NAME ARGUMENT PREFIX   # (or --template URI_TEMPLATE)

A tool whose command has one of these names keeps it (the tool was there first); the generic
command is then not offered. Exit codes as for tools: 2 usage, 3 protocol or transport (an unknown
resource or prompt is the server's JSON-RPC error), 4 input that cannot be given.
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Final

import click

from ..client import Client
from ..errors import InputRequiredError, McpRuntimeError
from ..masking import masked
from ..uri_template import UriTemplateError, expand
from .text import json_text, printable

__all__ = ["COMMANDS", "surface_commands"]

COMMANDS: Final = ("resources", "read", "prompts", "prompt", "complete")
EXIT_PROTOCOL: Final = 3
EXIT_INPUT: Final = 4

Connect = Callable[[click.Context], AbstractContextManager[Client]]
"""Opens the client the group's options describe (--url/--stdio, headers, timeout, era)."""


def _pairs(ctx: click.Context, values: Sequence[str]) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key:
            raise click.UsageError(f"--arg {value!r} is not KEY=VALUE", ctx)
        pairs[key] = text
    return pairs


def _echo(text: str) -> None:
    click.echo(printable(text) if sys.stdout.isatty() else text)


def _fail(message: str, code: int) -> int:
    click.echo(f"Error: {printable(masked(message))}", err=True)  # a server may echo a --header value
    return code


def _output(ctx: click.Context) -> str:
    return str(getattr(ctx.obj, "output", "json"))


def _run(ctx: click.Context, connect: Connect, action: Callable[[Client], int]) -> int:
    try:
        with connect(ctx) as client:
            return action(client)
    except InputRequiredError as exc:
        return _fail(str(exc), EXIT_INPUT)
    except McpRuntimeError as exc:
        return _fail(f"{type(exc).__name__}: {exc}", EXIT_PROTOCOL)


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def surface_commands(connect: Connect) -> dict[str, click.Command]:
    """The commands, by name."""
    help_options = {"help_option_names": ["-h", "--help"]}

    def resources() -> int:
        ctx = click.get_current_context()

        def action(client: Client) -> int:
            listed = client.list_all_resources()
            templates = client.list_all_resource_templates()
            if _output(ctx) == "json":
                click.echo(
                    json_text(
                        {
                            "resources": [_dump(r) for r in listed],
                            "resourceTemplates": [_dump(t) for t in templates],
                        }
                    )
                )
            else:
                for resource in listed:
                    _echo(f"{resource.uri}\t{resource.name}\t{resource.mime_type or ''}")
                for template in templates:
                    _echo(f"{template.uri_template}\t{template.name}\t{template.mime_type or ''}")
            return 0

        return _run(ctx, connect, action)

    def read(uri: str | None, template: str | None, args: Sequence[str], out: Path | None) -> int:
        ctx = click.get_current_context()
        if (uri is None) == (template is None):
            both = "not both" if uri is not None else "one of them"
            raise click.UsageError(
                f"give a URI or --template URI_TEMPLATE (with --arg KEY=VALUE), {both}", ctx
            )
        if template is not None:
            try:
                uri = expand(template, _pairs(ctx, args))  # RFC 6570: every value percent-encoded
            except UriTemplateError as exc:
                raise click.UsageError(f"--template: {exc}", ctx) from exc
        elif args:
            raise click.UsageError("--arg needs --template", ctx)
        assert uri is not None

        def action(client: Client) -> int:
            from ..surfaces import BlobResourceContents, TextResourceContents  # models: on first use

            result = client.read_resource(uri)
            if out is not None:
                data = b"".join(
                    c.blob if isinstance(c, BlobResourceContents) else c.text.encode("utf-8")
                    for c in result.contents
                )
                out.write_bytes(data)
                click.echo(f"wrote {len(data)} bytes to {out}", err=True)
                return 0
            if _output(ctx) == "json":
                contents = []
                for content in result.contents:
                    item = _dump(content)
                    if isinstance(content, BlobResourceContents):
                        item["blob"] = base64.b64encode(content.blob).decode("ascii")
                    contents.append(item)
                click.echo(json_text({"contents": contents}))
                return 0
            for content in result.contents:
                if isinstance(content, TextResourceContents):
                    _echo(content.text)
                else:
                    _echo(f"[binary {content.mime_type or ''}, {len(content.blob)} bytes: use --out FILE]")
            return 0

        return _run(ctx, connect, action)

    def prompts() -> int:
        ctx = click.get_current_context()

        def action(client: Client) -> int:
            listed = client.list_all_prompts()
            if _output(ctx) == "json":
                click.echo(json_text({"prompts": [_dump(p) for p in listed]}))
            else:
                for prompt in listed:
                    arguments = " ".join(
                        f"--arg {a.name}=…" if a.required else f"[--arg {a.name}=…]" for a in prompt.arguments
                    )
                    _echo(f"{prompt.name}\t{arguments}\t{prompt.description or ''}")
            return 0

        return _run(ctx, connect, action)

    def prompt(name: str, args: Sequence[str]) -> int:
        ctx = click.get_current_context()
        arguments = _pairs(ctx, args)

        def action(client: Client) -> int:
            result = client.get_prompt(name, arguments)
            if _output(ctx) == "json":
                click.echo(json_text(_dump(result)["messages"]))
            else:
                for message in result.messages:
                    text = getattr(message.content, "text", None)
                    shown = text if isinstance(text, str) else json_text(_dump(message.content))
                    _echo(f"{message.role}: {shown}")
            return 0

        return _run(ctx, connect, action)

    def complete(
        prompt_name: str | None, template: str | None, argument: str, value: str, args: Sequence[str]
    ) -> int:
        ctx = click.get_current_context()
        if (prompt_name is None) == (template is None):
            both = "not both" if prompt_name is not None else "one of them"
            raise click.UsageError(f"give --prompt NAME or --template URI_TEMPLATE, {both}", ctx)
        from ..surfaces import PromptRef, ResourceTemplateRef

        ref = PromptRef(prompt_name) if prompt_name is not None else ResourceTemplateRef(str(template))
        context = _pairs(ctx, args)

        def action(client: Client) -> int:
            completion = client.complete(ref, argument, value, context=context or None)
            if _output(ctx) == "json":
                click.echo(json_text(_dump(completion)))
            else:
                for item in completion.values:
                    _echo(item)
            return 0

        return _run(ctx, connect, action)

    arg_option = click.Option(
        ["--arg", "args"], multiple=True, metavar="KEY=VALUE", help="An argument (repeatable)."
    )

    def command(
        name: str, callback: Callable[..., int], help_text: str, *params: click.Parameter
    ) -> tuple[str, click.Command]:
        return name, click.Command(
            name, callback=callback, params=list(params), help=help_text, context_settings=help_options
        )

    return dict(
        (
            command(
                "resources", resources, "List the server's resources and resource templates (every page)."
            ),
            command(
                "read",
                read,
                "Read one resource (resources/read): text as text, binary with --out or as base64 in json.",
                click.Argument(["uri"], required=False),
                click.Option(["--template"], metavar="URI_TEMPLATE", help="Expand this RFC 6570 template."),
                click.Option(
                    ["--arg", "args"],
                    multiple=True,
                    metavar="KEY=VALUE",
                    help="A template variable (repeatable).",
                ),
                click.Option(
                    ["--out"],
                    type=click.Path(dir_okay=False, path_type=Path),
                    help="Write the contents (bytes) to this file.",
                ),
            ),
            command("prompts", prompts, "List the server's prompts (every page)."),
            command(
                "prompt",
                prompt,
                "Get one prompt's messages (prompts/get).",
                click.Argument(["name"]),
                arg_option,
            ),
            command(
                "complete",
                complete,
                "Suggestions for a prompt argument or a template variable (completion/complete).",
                click.Option(
                    ["--prompt", "prompt_name"], metavar="NAME", help="Complete an argument of this prompt."
                ),
                click.Option(
                    ["--template"], metavar="URI_TEMPLATE", help="Complete a variable of this template."
                ),
                click.Argument(["argument"]),
                click.Argument(["value"], required=False, default=""),
                click.Option(
                    ["--arg", "args"],
                    multiple=True,
                    metavar="KEY=VALUE",
                    help="An argument already chosen (context; repeatable).",
                ),
            ),
        )
    )
