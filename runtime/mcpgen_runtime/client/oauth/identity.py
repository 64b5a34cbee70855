"""Who logs in without a person at a browser, besides a client secret or key: a workload's platform
token (workload identity federation, SEP-1933) and a person's identity provider token exchanged for
an identity assertion (enterprise-managed authorization, SEP-990).

- `workload_token(file=..., env=...)`: reads the workload's JWT when a login needs it (each login
  reads again: Kubernetes rotates projected service-account tokens, GitHub Actions and cloud metadata
  tokens expire), at most MAX_ASSERTION_CHARS. `github_actions_token(audience)` asks the GitHub
  Actions OIDC endpoint the runner names in its environment.
- `EnterpriseIdP`: the enterprise identity provider, the client's registration there, and the
  person's ID token (or what obtains it); the login exchanges it for an ID-JAG (RFC 8693) and that
  for an access token (RFC 7523).

Secrets here (tokens, the IdP client secret) never appear in a repr or a message: each token read is
remembered by `mcpgen_runtime.masking`, so nothing this process prints shows it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ...errors import AuthorizationError
from ...masking import remember

__all__ = [
    "MAX_ASSERTION_CHARS",
    "EnterpriseIdP",
    "TokenSource",
    "github_actions_token",
    "token_of",
    "workload_token",
]

MAX_ASSERTION_CHARS = 64 * 1024  # a JWT read from a file, the environment or an endpoint, at most
TokenSource = str | Callable[[], str]
"""A token as it is, or a function that returns it (called at each login)."""


def _checked(token: str, what: str) -> str:
    token = token.strip()
    if (
        not token
        or len(token) > MAX_ASSERTION_CHARS
        or not token.isascii()
        or any(c.isspace() for c in token)
    ):
        raise AuthorizationError(
            f"{what} is empty, longer than {MAX_ASSERTION_CHARS} characters or not a JWT"
        )
    remember([token])
    return token


def workload_token(
    *, file: str | os.PathLike[str] | None = None, env: str | None = None
) -> Callable[[], str]:
    """A token source reading the workload's JWT from `file` (a Kubernetes projected
    service-account token, a file a sidecar refreshes) or the environment variable `env`."""
    if (file is None) == (env is None):
        raise ValueError("workload_token takes exactly one of file= or env=")

    def read() -> str:
        if file is not None:
            try:
                with open(file, "rb") as handle:
                    data = handle.read(MAX_ASSERTION_CHARS + 1)
            except OSError as exc:
                raise AuthorizationError(
                    f"cannot read the workload token file {file}: {exc.strerror}"
                ) from None
            return _checked(data.decode("ascii", "replace"), f"the workload token file {file}")
        value = os.environ.get(str(env))
        if value is None:
            raise AuthorizationError(f"the environment variable {env} (the workload token) is not set")
        return _checked(value, f"the workload token in ${env}")

    return read


def github_actions_token(audience: str, *, timeout: float = 10.0) -> Callable[[], str]:
    """A token source asking GitHub Actions for the job's OIDC token with `audience` (the job needs
    `permissions: id-token: write`, which sets ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN)."""

    def read() -> str:
        import httpx

        url = os.environ.get("ACTIONS_ID_TOKEN_REQUEST_URL")
        bearer = os.environ.get("ACTIONS_ID_TOKEN_REQUEST_TOKEN")
        if not url or not bearer:
            raise AuthorizationError(
                "ACTIONS_ID_TOKEN_REQUEST_URL/_TOKEN are unset: give the job `permissions: id-token: write`"
            )
        if urlsplit(url).scheme != "https" and urlsplit(url).hostname not in (
            "127.0.0.1",
            "localhost",
            "::1",
        ):
            raise AuthorizationError("ACTIONS_ID_TOKEN_REQUEST_URL is not an https URL")
        try:
            response = httpx.get(
                url,
                params={"audience": audience},
                headers={"Authorization": f"Bearer {bearer}", "Accept": "application/json"},
                timeout=timeout,
                follow_redirects=False,
            )
        except httpx.HTTPError as exc:
            raise AuthorizationError(
                f"the GitHub Actions OIDC endpoint failed: {type(exc).__name__}"
            ) from None
        if response.status_code != 200 or len(response.content) > MAX_ASSERTION_CHARS:
            raise AuthorizationError(f"the GitHub Actions OIDC endpoint answered HTTP {response.status_code}")
        try:
            value = json.loads(response.content).get("value")
        except (ValueError, AttributeError):
            value = None
        if not isinstance(value, str):
            raise AuthorizationError("the GitHub Actions OIDC endpoint answered without a token")
        return _checked(value, "the GitHub Actions OIDC token")

    return read


def token_of(source: TokenSource, what: str) -> str:
    """The token a source gives now."""
    token = source() if callable(source) else source
    if not isinstance(token, str):
        raise TypeError(f"{what} must be a str or a function returning one, not {type(token).__name__}")
    return _checked(token, what)


@dataclass(frozen=True)
class EnterpriseIdP:
    """The enterprise identity provider of SEP-990: `issuer` (its token endpoint is discovered
    from its metadata unless `token_endpoint` is given), this client's registration there
    (`client_id`, `client_secret`), and the signed-in person's OpenID Connect `id_token` (or a
    function that returns a fresh one)."""

    issuer: str
    client_id: str
    id_token: TokenSource = field(repr=False)
    client_secret: str | None = field(default=None, repr=False)
    token_endpoint: str | None = None

    def __post_init__(self) -> None:
        if self.client_secret:
            remember([self.client_secret])
        for name in ("issuer", "token_endpoint"):
            value = getattr(self, name)
            if value is not None and urlsplit(value).scheme not in ("http", "https"):
                raise ValueError(f"EnterpriseIdP.{name} must be an http(s) URL")
        if not self.client_id:
            raise ValueError("EnterpriseIdP needs the client_id registered at the identity provider")
