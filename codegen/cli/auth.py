"""Logging in from the command line: the options `mcpgen validate|client|server|snapshot URL` take
to reach a protected server, and `mcpgen auth login|logout|status URL`.

A live server that answers `401` with an OAuth challenge starts the MCP authorization flow
(`mcpgen_runtime.client.oauth`): a browser opens at the authorization server's login page (or
its URL is printed: `--no-browser`), a listener on 127.0.0.1 takes the redirect, and the tokens
are kept in the user's token store (the OS keyring when `keyring` is installed and usable, else a
0600 file in the user config directory) for the next run. `--client-id` uses a client registered
beforehand; with `--client-secret` it logs in as that client, without a person (client
credentials); `--token` sends a ready bearer token and logs in to nothing. Tokens and secrets are
never printed.
"""

from __future__ import annotations

import functools
import importlib.util
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import click

from ..errors import McpgenError
from .output import say

if TYPE_CHECKING:
    from mcpgen_runtime.client.oauth import OAuth, TokenStore

__all__ = ["Login", "auth_group", "login_options"]

_F = TypeVar("_F", bound=Callable[..., Any])


class LoginError(McpgenError):
    """Logging in failed; the message says why."""


@dataclass(frozen=True)
class Login:
    """How to reach a protected live server: the command line's login options."""

    open_browser: bool = True
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    token: str | None = field(default=None, repr=False)

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """`headers` plus the bearer token of `--token`."""
        if self.token is None:
            return dict(headers)
        return {**headers, "Authorization": f"Bearer {self.token}"}

    def oauth(self) -> OAuth | None:
        """The OAuth settings for a live server, or None with `--token` (or without the auth
        extra, when there is nothing to log in with)."""
        if self.token is not None:
            return None
        if importlib.util.find_spec("authlib") is None:
            if self.client_id is not None:
                raise LoginError("--client-id needs the auth extra: pip install 'mcpgen[auth]'")
            return None
        from mcpgen_runtime.client.oauth import OAuth

        return OAuth(
            client_id=self.client_id,
            client_secret=self.client_secret,
            open_browser=self.open_browser,
            grant="client_credentials" if self.client_secret is not None else "auto",
        )


def login_options(func: _F) -> _F:
    """Adds --no-browser, --client-id, --client-secret and --token, handed over as `login`."""

    # Repeats in shape only (duplicates): one click declaration per option.
    @click.option(
        "--token",
        metavar="TOKEN",
        envvar="MCPGEN_TOKEN",
        show_envvar=True,
        help="Send this bearer token to a live server instead of logging in.",
    )
    @click.option(
        "--client-secret",
        metavar="SECRET",
        envvar="MCPGEN_CLIENT_SECRET",
        show_envvar=True,
        help="The secret of --client-id: log in as that client (OAuth client credentials).",
    )
    @click.option(
        "--client-id",
        metavar="ID",
        help="A client registered beforehand with the server's authorization server.",
    )
    @click.option(
        "--no-browser",
        is_flag=True,
        help="Print the login URL instead of opening a browser (the redirect still comes to 127.0.0.1).",
    )
    @functools.wraps(func)
    def wrapper(
        *args: Any,
        no_browser: bool,
        client_id: str | None,
        client_secret: str | None,
        token: str | None,
        **kwargs: Any,
    ) -> Any:
        if client_secret is not None and client_id is None:
            raise click.UsageError("--client-secret needs --client-id")
        if token is not None and (client_id is not None or client_secret is not None):
            raise click.UsageError("--token replaces logging in: leave out --client-id and --client-secret")
        return func(*args, login=Login(not no_browser, client_id, client_secret, token), **kwargs)

    return wrapper  # type: ignore[return-value]


def _require_http(url: str) -> str:
    if not url.lower().startswith(("http://", "https://")):
        raise click.BadParameter(f"{url!r} is not an http(s) URL", param_hint="URL")
    return url


@click.group("auth")
def auth_group() -> None:
    """Log in to protected MCP servers and manage the stored tokens."""


@auth_group.command()
@click.argument("url")
@login_options
def login(url: str, login: Login) -> None:
    """Log in to the server at URL now (its tools are listed to prove the login)."""
    from mcpgen_runtime.client import Client
    from mcpgen_runtime.errors import McpRuntimeError

    _require_http(url)
    oauth = login.oauth()
    if oauth is None:
        raise LoginError(
            "nothing to log in with: --token needs no login, and without the auth extra "
            "(pip install 'mcpgen[auth]') mcpgen cannot log in"
        )
    try:
        with Client(url, auth=oauth, tools=(), cache=False) as client:
            client.list_tools()
    except McpRuntimeError as exc:
        raise LoginError(f"{url}: {exc}") from exc
    say(f"logged in to {url}" if _records(url) else f"{url} did not ask for authorization")


@auth_group.command()
@click.argument("url")
def logout(url: str) -> None:
    """Forget the tokens stored for the server at URL."""
    keys = _records(_require_http(url))
    store = _store()
    for key in keys:
        store.delete(key)
    say(f"forgot {len(keys)} login(s) for {url}" if keys else f"no stored login for {url}")


@auth_group.command()
@click.argument("url", required=False)
def status(url: str | None) -> None:
    """Show the stored logins (all, or those of URL): issuer, client, scopes, expiry; never tokens."""
    store = _store()
    keys = (
        _records(_require_http(url))
        if url is not None
        else [k for k in store.names() if k.startswith("tokens ")]
    )
    if not keys:
        click.echo("no stored logins" + (f" for {url}" if url else ""))
        return
    for key in keys:
        record = store.load(key) or {}
        tokens = record.get("tokens") or {}
        expires = tokens.get("expires_at")
        left = (
            "no expiry"
            if not isinstance(expires, int | float)
            else ("expired" if expires < time.time() else f"expires in {int(expires - time.time())}s")
        )
        click.echo(
            f"{tokens.get('resource', key.split(' ')[1])}\n"
            f"    issuer {tokens.get('issuer')}, client {tokens.get('client_id')}\n"
            f"    scopes: {' '.join(tokens.get('scopes') or []) or '(none)'}; {left}; "
            f"{'refreshable' if tokens.get('refresh_token') else 'no refresh token'}"
        )


def _store() -> TokenStore:
    if importlib.util.find_spec("platformdirs") is None:
        raise LoginError("stored logins need the auth extra: pip install 'mcpgen[auth]'")
    from mcpgen_runtime.client.oauth import default_token_store

    return default_token_store()


def _records(url: str) -> list[str]:
    parts = urlsplit(url)
    prefix = f"tokens {parts.scheme}://{parts.netloc}{parts.path} "
    return [key for key in _store().names() if key.startswith(prefix)]
