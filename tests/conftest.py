"""Session set-up shared by every test directory."""

from __future__ import annotations

import runpy

from tests.support import ROOT


def pytest_configure() -> None:
    # The runtime's blocking twins are generated from their asyncio sources (not kept in git);
    # write any that are missing or stale, so a bare `pytest` in a fresh clone tests current code.
    runpy.run_path(str(ROOT / "scripts" / "sync_twins.py"))["write_all"]()
