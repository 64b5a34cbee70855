"""The mock's input files (a cassette, a `--responses` file): read whole, within a bound."""

from __future__ import annotations

from pathlib import Path

__all__ = ["read_bounded"]

_CHUNK = 1 << 20


def read_bounded(path: Path, limit: int, error: type[Exception], what: str = "") -> bytes:
    """The bytes of `path`; `error` when it cannot be read (`what`: the file's kind, for the
    message) or holds more than `limit` bytes (never more than `limit` + 1 are read)."""
    chunks: list[bytes] = []
    total = 0
    try:
        with path.open("rb") as file:
            # in chunks: `read(limit + 1)` allocates limit + 1 bytes up front, whatever the file holds
            while total <= limit and (chunk := file.read(min(_CHUNK, limit + 1 - total))):
                chunks.append(chunk)
                total += len(chunk)
    except OSError as exc:
        raise error(f"{path}: {what}{exc.strerror or exc}") from exc
    if total > limit:
        raise error(f"{path}: larger than {limit} bytes")
    return b"".join(chunks)
