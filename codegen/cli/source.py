"""The source a command reads tools from, gathered once from its options into one `Source` value.

The options themselves (`common.source_argument`, `stdio_option`, `mcp_config_options`,
`header_option`, `era_option`, `max_response_option`, `auth.login_options`) stay separate
decorators, so each command lists them where its help has always shown them; `gathers_source`,
the decorator nearest the function, folds whichever of them the command has into `source: Source`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import stages
from .common import config_source, require_source

if TYPE_CHECKING:
    from ..spec import LoadedSpec
    from .auth import Login

__all__ = ["Source", "gathers_source"]


@dataclasses.dataclass(frozen=True)
class Source:
    """Where the tools come from (`where`: SOURCE, or `FILE#NAME` once `resolved`) and how a live
    server is reached."""

    where: str | None
    stdio: str | None = None
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    mcp_config: Path | None = None  # --config FILE, until `resolved`
    server_name: str | None = None  # --server NAME, until `resolved`
    era: str = "auto"
    max_response_bytes: int | None = None
    login: Login | None = None

    def resolved(self) -> Source:
        """`--config FILE --server NAME` as the `FILE#NAME` source the loaders take (usage errors
        for options that do not go together)."""
        where = config_source(self.mcp_config, self.server_name, self.where, self.stdio, self.headers)
        return dataclasses.replace(self, where=where, mcp_config=None, server_name=None)

    def require(self, what: str = "SOURCE") -> None:
        """A usage error unless exactly one of `where` and `stdio` is given (and headers fit)."""
        require_source(self.where, self.stdio, self.headers, what)

    def load(self) -> LoadedSpec:
        return stages.load_spec(
            self.where, self.stdio, self.headers, self.login, self.era, self.max_response_bytes
        )


def gathers_source(
    argument: str = "source", stdio: str = "stdio"
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Pass the command's source options (the `argument` and `stdio` parameters, the rest by their
    usual names, each only when the command has it) to the function as one `source: Source`."""

    def decorate(func: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> None:
            kwargs["source"] = Source(
                where=kwargs.pop(argument),
                stdio=kwargs.pop(stdio, None),
                headers=kwargs.pop("headers", {}),
                mcp_config=kwargs.pop("mcp_config", None),
                server_name=kwargs.pop("server_name", None),
                era=kwargs.pop("era", "auto"),
                max_response_bytes=kwargs.pop("max_response_bytes", None),
                login=kwargs.pop("login", None),
            )
            func(*args, **kwargs)

        return wrapper

    return decorate
