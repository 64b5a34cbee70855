"""`UNSET`: the default of every optional parameter of a generated client method.

Leaving a parameter out and passing `None` mean different things on the wire: a parameter left at
`UNSET` is not sent at all, `None` is sent as JSON `null` (accepted only where the tool's schema
allows null; the annotation says where). Test for it with `value is UNSET` or
`isinstance(value, Unset)`; type checkers narrow both.

    client.browser_emulate_media()                    # {}: leaves the colour scheme as it is
    client.browser_emulate_media(color_scheme=None)   # {"colorScheme": null}: clears the override
"""

from __future__ import annotations

import enum
from typing import Final, Literal

__all__ = ["UNSET", "Unset"]


class Unset(enum.Enum):
    """The type of `UNSET` (a one-member enum: a singleton that survives copy and pickle, and that
    type checkers narrow on `is`)."""

    UNSET = "UNSET"

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET
