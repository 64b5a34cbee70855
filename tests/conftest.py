"""Session set-up shared by every test directory: the tiers (tests/tiers.py) and the wheels."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import tiers
from tests.wheels import Wheels, build_once


def pytest_addoption(parser: pytest.Parser) -> None:
    tiers.add_option(parser)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tiers.mark(config, items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    return (yield from _guard(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    return (yield from _guard(item))


def _guard(item: pytest.Item) -> Iterator[None]:
    if not tiers.is_guarded(item):
        return (yield)
    tiers.refused.clear()
    try:
        with tiers.guarded():
            return (yield)
    finally:
        if tiers.refused:  # also when the test, or a thread of it, swallowed the refusal
            pytest.fail(tiers.message(tiers.refused[0]), pytrace=False)


@pytest.fixture(scope="session")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Wheels:
    """Both distributions' wheels, built once per run (shared by xdist workers)."""
    return build_once(tmp_path_factory)
