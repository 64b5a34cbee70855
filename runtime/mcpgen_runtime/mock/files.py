"""The mock's input files (a cassette, a `--responses` file): read whole, within a bound."""

from __future__ import annotations

from pathlib import Path

__all__ = ["read_bounded"]


def read_bounded(path: Path, limit: int, error: type[Exception], what: str = "") -> bytes:
    """The bytes of `path`; `error` when it cannot be read (`what`: the file's kind, for the
    message) or holds more than `limit` bytes (never more than `limit` + 1 are read)."""
    try:
        with path.open("rb") as file:
            raw = file.read(limit + 1)
    except OSError as exc:
        raise error(f"{path}: {what}{exc.strerror or exc}") from exc
    if len(raw) > limit:
        raise error(f"{path}: larger than {limit} bytes")
    return raw
