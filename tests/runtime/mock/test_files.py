"""The mock's input files are read within a bound (mock/files.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpgen_runtime.mock import cassette
from mcpgen_runtime.mock.cassette import CassetteError, load_cassette
from mcpgen_runtime.mock.files import read_bounded


class _Refused(Exception):
    pass


def test_a_file_past_its_bound_is_refused_and_one_at_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "eleven"
    path.write_bytes(b"x" * 11)
    with pytest.raises(_Refused, match=r"eleven: larger than 10 bytes"):
        read_bounded(path, 10, _Refused)
    assert read_bounded(path, 11, _Refused) == b"x" * 11


def test_an_unreadable_file_is_the_callers_error_with_its_wording(tmp_path: Path) -> None:
    with pytest.raises(_Refused, match=r"missing\.yaml: cannot read the file: ") as raised:
        read_bounded(tmp_path / "missing.yaml", 10, _Refused, "cannot read the file: ")
    assert isinstance(raised.value.__cause__, FileNotFoundError)


def test_a_cassette_over_its_bound_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("cassette: 1\ninteractions: []\n")
    monkeypatch.setattr(cassette, "MAX_CASSETTE_BYTES", 8)
    with pytest.raises(CassetteError, match=r"big\.yaml: larger than 8 bytes"):
        load_cassette(path)


def test_reading_costs_what_the_file_holds_not_the_bound(tmp_path: Path) -> None:
    """`read(limit + 1)` would allocate the whole bound (256 MiB for a cassette) for a small file."""
    import tracemalloc

    path = tmp_path / "small"
    path.write_bytes(b"x" * 1000)
    tracemalloc.start()
    try:
        assert read_bounded(path, 256 * 2**20, _Refused) == b"x" * 1000
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**21, peak  # a 1 MiB chunk at most, and the bytes read


def test_a_file_that_is_not_regular_is_read_to_its_end(tmp_path: Path) -> None:
    import os
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(b"y" * (3 * 2**20 + 5)))
    writer.start()
    try:
        assert len(read_bounded(fifo, 4 * 2**20, _Refused)) == 3 * 2**20 + 5
    finally:
        writer.join(10)
