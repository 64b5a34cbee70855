"""Session set-up shared by every test directory."""

from __future__ import annotations

import pytest

from tests.wheels import Wheels, build


@pytest.fixture(scope="session")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Wheels:
    """Both distributions' wheels, built once per session."""
    return build(tmp_path_factory.mktemp("wheels") / "dist")
