"""Servers shared by every interop module: each starts once per session as a real uvicorn process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.interop._support import our_http_command, sdk_http_command
from tests.support import free_port, running_server


@pytest.fixture(scope="session")
def sdk_http_url() -> Iterator[str]:
    """The official SDK (mcp==2.3.0) serving the weather tools + extras, 4 tools per page."""
    port = free_port()
    with running_server(sdk_http_command(port), port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="session")
def our_http_url() -> Iterator[str]:
    """`python -m weather_server --http --page-size 2` (the checked-in generated server)."""
    port = free_port()
    with running_server(our_http_command(port), port):
        yield f"http://127.0.0.1:{port}/mcp"
