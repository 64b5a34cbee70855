"""Logging in from the command line: the options `mcpgen validate|client|server|snapshot URL` take
to reach a protected server, and `mcpgen auth login|logout|status URL`.

A live server that answers `401` with an OAuth challenge starts the MCP authorization flow
(`mcpgen_runtime.client.oauth`): a browser opens at the authorization server's login page (or
its URL is printed: `--no-browser`), a listener on 127.0.0.1 takes the redirect, and the tokens
are kept in the user's token store (the OS keyring when `keyring` is installed and usable, else a
0600 file in the user config directory) for the next run. `--client-id` uses a client registered
beforehand; with `--client-secret` it logs in as that client, without a person (client
credentials); `--workload-token-file` / `--workload-token-env` log in as a workload with its
platform's token (workload identity, a JWT-bearer grant); `--idp-issuer` with `--idp-client-id` and
`--id-token-env` log in through the company's identity provider (enterprise-managed authorization);
`--dpop` says whether tokens are bound to a key of the login; `--token` sends a ready bearer token
and logs in to nothing. Tokens and secrets are read from files or environment variables, never
from the command line for identity-provider and workload tokens, and never printed.
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
    from mcpgen_runtime.client.oauth.config import Grant

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
    workload_token_file: str | None = None
    workload_token_env: str | None = None
    idp_issuer: str | None = None
    idp_client_id: str | None = None
    idp_client_secret: str | None = field(default=None, repr=False)
    id_token_env: str | None = None
    dpop: str = "auto"

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
            if self.client_id is not None or self.workload or self.idp_issuer is not None:
                raise LoginError("logging in needs the auth extra: pip install 'mcpgen[auth]'")
            return None
        from mcpgen_runtime.client.oauth import EnterpriseIdP, OAuth, workload_token
        from mcpgen_runtime.masking import remember

        remember(secret for secret in (self.client_secret, self.idp_client_secret) if secret)

        assertion = None
        if self.workload:
            assertion = workload_token(file=self.workload_token_file, env=self.workload_token_env)
        enterprise = None
        if self.idp_issuer is not None:
            assert self.idp_client_id is not None and self.id_token_env is not None  # login_options checks
            enterprise = EnterpriseIdP(
                issuer=self.idp_issuer,
                client_id=self.idp_client_id,
                client_secret=self.idp_client_secret,
                id_token=workload_token(env=self.id_token_env),  # read at each login, like a workload's
            )
        grant: Grant = (
            "client_credentials"
            if self.client_secret is not None and not (assertion or enterprise)
            else "auto"
        )
        return OAuth(
            client_id=self.client_id,
            client_secret=self.client_secret,
            open_browser=self.open_browser,
            grant=grant,
            assertion=assertion,
            enterprise=enterprise,
            dpop=self.dpop,  # type: ignore[arg-type]  # click.Choice keeps it to the three
        )

    @property
    def workload(self) -> bool:
        return self.workload_token_file is not None or self.workload_token_env is not None


def login_options(func: _F) -> _F:
    """Adds --no-browser, --client-id, --client-secret, the workload and identity-provider options,
    --dpop and --token, handed over as `login`."""

    # Repeats in shape only (duplicates): one click declaration per option.
    @click.option(
        "--dpop",
        type=click.Choice(["auto", "required", "off"]),
        default="auto",
        show_default=True,
        help="Bind tokens to a key of this login (DPoP): when the server and its authorization server "
        "support it, always, or never.",
    )
    @click.option(
        "--id-token-env",
        metavar="VAR",
        help="With --idp-issuer: the environment variable holding your identity provider's ID token.",
    )
    @click.option(
        "--idp-client-secret",
        metavar="SECRET",
        envvar="MCPGEN_IDP_CLIENT_SECRET",
        show_envvar=True,
        help="The secret of --idp-client-id at the identity provider.",
    )
    @click.option(
        "--idp-client-id",
        metavar="ID",
        help="With --idp-issuer: this client's id at the identity provider.",
    )
    @click.option(
        "--idp-issuer",
        metavar="URL",
        help="Log in through your company's identity provider (enterprise-managed authorization): "
        "its ID token is exchanged for an identity assertion the server's authorization server "
        "takes; needs --client-id, --client-secret, --idp-client-id and --id-token-env.",
    )
    @click.option(
        "--workload-token-env",
        metavar="VAR",
        help="Log in as a workload with the JWT held in this environment variable.",
    )
    @click.option(
        "--workload-token-file",
        metavar="PATH",
        help="Log in as a workload with the JWT in this file, read at each login (a Kubernetes "
        "service-account token, say): workload identity, a JWT-bearer grant.",
    )
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
        workload_token_file: str | None,
        workload_token_env: str | None,
        idp_issuer: str | None,
        idp_client_id: str | None,
        idp_client_secret: str | None,
        id_token_env: str | None,
        dpop: str,
        **kwargs: Any,
    ) -> Any:
        if client_secret is not None and client_id is None:
            raise click.UsageError("--client-secret needs --client-id")
        logins = [token is not None, workload_token_file is not None or workload_token_env is not None]
        logins.append(idp_issuer is not None)
        if sum(logins) > 1 or (workload_token_file is not None and workload_token_env is not None):
            raise click.UsageError(
                "pick one way in: --token, a workload token (--workload-token-file or --workload-token-env) "
                "or --idp-issuer"
            )
        if token is not None and (client_id is not None or client_secret is not None):
            raise click.UsageError("--token replaces logging in: leave out --client-id and --client-secret")
        if idp_issuer is not None and None in (client_id, idp_client_id, id_token_env):
            raise click.UsageError("--idp-issuer needs --client-id, --idp-client-id and --id-token-env")
        if idp_issuer is None and (idp_client_id or idp_client_secret or id_token_env):
            raise click.UsageError(
                "--idp-client-id, --idp-client-secret and --id-token-env go with --idp-issuer"
            )
        login = Login(
            not no_browser,
            client_id,
            client_secret,
            token,
            workload_token_file,
            workload_token_env,
            idp_issuer,
            idp_client_id,
            idp_client_secret,
            id_token_env,
            dpop,
        )
        return func(*args, login=login, **kwargs)

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
