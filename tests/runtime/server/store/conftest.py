from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.redis_server import RedisServer, running_redis


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    with running_redis() as server:
        yield server
