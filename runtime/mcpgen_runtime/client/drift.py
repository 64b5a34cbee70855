"""The client's drift check (`core.drift`): a generated client's pinned tools against the server's.

A generated client's tools.json carries a pin per tool (`mcpgen_runtime.pins`). Unless
`on_drift="ignore"`, the first tool call first lists the server's tools (every page, from the response
cache while fresh: `ttlMs`) and compares; a `notifications/tools/list_changed` (with a reply, or on
a `listen()` stream) makes the next call compare again. A notification arrives in the middle of
some other exchange, so the comparison waits for the next call rather than running inside it.

What a drift does depends on the mode: "warn" warns (`ToolDriftWarning`) once per distinct drift
and calls on; "error" raises `ToolDriftError` from the call, and keeps raising from every call
until the server's listing matches the pins again (a drifted tool is never called); "ignore" never
lists. `check_drift()` runs the comparison on demand in any mode. A client built without pins
(not generated, or `tools=` given) has nothing to compare and never lists for it.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from ..errors import ToolDriftError, ToolDriftWarning

if TYPE_CHECKING:  # the check's types; importing a client stays as fast
    from typing import Protocol

    from ..pins import DriftReport, ToolDrift
    from .steps import Flow

    class Lister(Protocol):
        """What the check needs of its `ClientCore`: the era and one `tools/list` page at a time."""

        default_partition: str | None

        @property
        def era(self) -> str | None: ...

        def list_page_flow(
            self, cursor: str | None = None, *, partition: str | None = None, refresh: bool = False
        ) -> Flow[tuple[Any, Any]]: ...


__all__ = ["DRIFT_MODES", "DriftCheck", "DriftMode"]

DriftMode = Literal["warn", "error", "ignore"]
DRIFT_MODES: Final = ("warn", "error", "ignore")
_MAX_PAGES: Final = 1000  # as list_all_tools
_LEGACY: Final = "legacy"
_RUNTIME: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class DriftCheck:
    """The drift state of one client (shared by its `with_options` views)."""

    def __init__(self, owner: Lister, source: object) -> None:
        self._owner = owner
        self._source = source  # a generated package's PackageTools carries `pins`; others none
        self.mode: DriftMode = "ignore"  # the drivers set the client's (default "warn")
        self.pending = True  # compare before the next call: never compared yet, or the list changed
        self._warned: set[ToolDrift] = set()

    def set_mode(self, mode: str) -> None:
        if mode not in DRIFT_MODES:
            raise ValueError(f"on_drift must be one of {', '.join(map(repr, DRIFT_MODES))}, not {mode!r}")
        self.mode = mode  # type: ignore[assignment]

    @property
    def pins(self) -> Mapping[str, str]:
        pins = getattr(self._source, "pins", None)
        return pins if isinstance(pins, Mapping) else {}

    def list_changed(self) -> None:
        self.pending = True

    def before_call_flow(self) -> Flow[None]:
        """Before a tool call: compare when due (see the module docstring)."""
        if self.mode == "ignore" or not self.pending or not self.pins:
            return
        self.act((yield from self.report_flow()))

    def report_flow(self, *, refresh: bool = False) -> Flow[DriftReport]:
        """List the server's tools (every page) and compare them with the pins."""
        from ..pins import DriftReport, check  # on first use: importing a client stays as fast

        pins = self.pins
        if not pins:
            return DriftReport((), 0)
        owner = self._owner
        listed: list[Mapping[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            page, _specs = yield from owner.list_page_flow(
                cursor, partition=owner.default_partition, refresh=refresh
            )
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None or cursor in seen:  # a repeated cursor: what was listed is compared
                break
            seen.add(cursor)
        self.pending = False
        find = getattr(self._source, "find", None)
        return check(pins, find if callable(find) else lambda name: None, listed, legacy=owner.era == _LEGACY)

    def act(self, report: DriftReport) -> None:
        """What the mode does with a report: raise ("error"), warn once per drift ("warn")."""
        if not report or self.mode == "ignore":
            return
        if self.mode == "error":
            self.pending = True  # every later call compares again (from the cache while fresh)
            raise ToolDriftError(report)
        fresh = [drift for drift in report.drifts if drift not in self._warned]
        if fresh:
            self._warned.update(fresh)
            warnings.warn(
                type(report)(tuple(fresh), report.pinned).describe(),
                ToolDriftWarning,
                stacklevel=_outside_the_runtime(),
            )


def _outside_the_runtime() -> int:
    """The `stacklevel` that names the first frame outside mcpgen_runtime (the call that found
    the drift, or the generated method it went through), not one of the flows' frames."""
    frame = sys._getframe(2)  # act's caller: stacklevel 2
    level = 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_RUNTIME):
        frame = frame.f_back
        level += 1
    return level
