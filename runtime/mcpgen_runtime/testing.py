"""What the pytest plugin hands a test: `McpMock`, a running mock with connected clients.

Kept apart from pytest_plugin.py, which pytest imports in every session of an environment
with mcpgen installed: this module imports the client and the mock (about a second), and only
a test that uses a mock fixture pays for it. It sits above `client/` and `mock/`.
"""

from __future__ import annotations

import contextlib
import importlib
from typing import Any

from .client import AsyncClient, Client
from .mock.harness import RunningMock, running_mock

__all__ = ["McpMock", "start_mock"]


class McpMock(RunningMock):
    """A running mock (`url` or `command`, `calls`, `assert_called`, `assert_calls`, ...) and its clients."""

    def __init__(
        self,
        running: RunningMock,
        client_class: type[Client],
        async_client_class: type[AsyncClient],
        stack: contextlib.ExitStack,
    ) -> None:
        super().__init__(
            running.tools,
            url=running.url,
            command=running.command,
            server=running.server,
            record=running.record,
            replayer=running.replayer,
            injector=running.injector,
        )
        self.client_class = client_class
        self.async_client_class = async_client_class
        self._stack = stack
        self._client: Client | None = None

    @property
    def client(self) -> Any:
        """A connected client (the generated package's `Client` when there is one), closed with the mock."""
        if self._client is None:
            self._client = self._stack.enter_context(self.new_client())
        return self._client

    def new_client(self, **options: Any) -> Any:
        """Another client of the mock; close it (or use it as a context manager)."""
        if self.url is not None:
            return self.client_class(self.url, **options)
        assert self.command is not None
        return self.client_class.stdio(self.command, **options)

    def new_async_client(self, **options: Any) -> Any:
        """An async client of the mock (the package's `AsyncClient`); `async with` it in the test."""
        if self.url is not None:
            return self.async_client_class(self.url, **options)
        assert self.command is not None
        return self.async_client_class.stdio(self.command, **options)


def _client_classes(
    package: str | None, client_class: type[Client] | None
) -> tuple[type[Client], type[AsyncClient]]:
    sync_cls: type[Client] = Client
    async_cls: type[AsyncClient] = AsyncClient
    if package is not None:
        module = importlib.import_module(package)  # the generated package whose tools are served
        generated = getattr(module, "Client", None)
        if isinstance(generated, type) and issubclass(generated, Client):
            sync_cls = generated
        generated_async = getattr(module, "AsyncClient", None)
        if isinstance(generated_async, type) and issubclass(generated_async, AsyncClient):
            async_cls = generated_async
    return (client_class or sync_cls), async_cls


def start_mock(
    stack: contextlib.ExitStack, *, client_class: type[Client] | None = None, **options: Any
) -> McpMock:
    """Start a mock (options as `running_mock` takes them) whose mock and clients `stack` stops."""
    sync_cls, async_cls = _client_classes(options.get("package"), client_class)
    running = stack.enter_context(running_mock(**options))
    # The client (entered later) closes before its mock stops: the stack unwinds in reverse.
    return McpMock(running, sync_cls, async_cls, stack)
