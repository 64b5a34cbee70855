"""Task ids: 192 random bits, URL-safe, never starting with "-" (a command line's option)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcpgen_runtime.server.core.tasks import records
from mcpgen_runtime.server.core.tasks.records import new_task_id


def test_a_task_id_is_32_url_safe_characters() -> None:
    ids = {new_task_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(len(task_id) == 32 and not task_id.startswith("-") for task_id in ids)


def test_an_id_that_would_start_with_a_dash_is_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: Iterator[str] = iter(["-" + "a" * 31, "b" * 32])
    monkeypatch.setattr(records.secrets, "token_urlsafe", lambda n: next(drawn))
    assert new_task_id() == "b" * 32
