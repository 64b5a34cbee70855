from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support import PYTHON, free_port, running_server


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    with running_server([PYTHON, "-m", "tests.runtime.server.tasks.tasks_app", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10.0) as client:
        yield client
