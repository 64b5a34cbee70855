"""Progress of a tool call on stderr: the command line's `on_progress` callback.

On a terminal, one line redrawn in place: a bar when the server gives a `total`, a count when it
does not, and a spinner for a call that has run past a second without any progress yet; the line
is erased when the call ends, so stderr keeps only what follows (an error, say). Anywhere else
(a pipe, a log file) one plain line per progress notification, written as it arrives, and no
spinner. Nothing is ever written to stdout: it carries the result. `--quiet` makes none.

The server's `message` is untrusted text: every character that does not print (ESC and the
other C0/C1 controls, bidi and format characters, line separators) is shown as its escape
(`text.printable`), so a hostile server cannot move the cursor, recolour or retitle the
terminal, and it is cut to the line's width (a terminal) or to `MAX_MESSAGE_CHARS`.

A terminal's line is redrawn by a daemon thread a few times a second (the blocking client waits
in the calling thread, which could not animate a spinner); `pause()` stops it while a form is
asked on the same terminal.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import unicodedata
from collections.abc import Iterator
from types import TracebackType
from typing import Final, TextIO

from .text import printable

__all__ = ["MAX_MESSAGE_CHARS", "SPINNER_AFTER", "ProgressDisplay"]

SPINNER_AFTER: Final = 1.0  # seconds without progress before a terminal shows the spinner
MAX_MESSAGE_CHARS: Final = 200  # a progress message, cut (before escaping) on a plain line
_TICK: Final = 0.1  # seconds between redraws on a terminal
_BAR_WIDTH: Final = 24
_SPINNER: Final = "|/-\\"
_CLEAR: Final = "\r\x1b[K"  # back to the start of the line, erase it (our own escape, not the server's)


def _number(value: float) -> str:
    return f"{value:g}"


class ProgressDisplay:
    """`on_progress(progress, total, message)` for one tool call, shown on `stream` (stderr).

    Use it as a context manager around the call: on a terminal it starts the redraw thread on
    entry and erases its line on exit."""

    def __init__(self, stream: TextIO, label: str, *, terminal: bool | None = None) -> None:
        self.stream = stream
        self.label = printable(label, keep_newlines=False)
        self.terminal = _isatty(stream) if terminal is None else terminal
        self.updates = 0
        self._progress: float | None = None
        self._total: float | None = None
        self._message: str | None = None
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._paused = False
        self._drawn: str | None = None  # the line of ours on the terminal
        self._frame = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the callback ------------------------------------------------------------------------

    def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        with self._lock:
            self.updates += 1
            self._progress, self._total = progress, total
            self._message = None if message is None else message[:MAX_MESSAGE_CHARS]
            if not self.terminal:
                self._write(self._line(plain=True) + "\n")
            elif not self._paused:
                self._draw()

    # -- the call's lifetime -----------------------------------------------------------------

    def __enter__(self) -> ProgressDisplay:
        self._started = time.monotonic()
        if self.terminal:
            self._thread = threading.Thread(target=self._run, name="mcpgen-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1.0)
        with self._lock:
            self._erase()

    @contextlib.contextmanager
    def pause(self) -> Iterator[None]:
        """No drawing meanwhile (a form is asked on the terminal); the line is erased first."""
        with self._lock:
            self._paused = True
            self._erase()
        try:
            yield
        finally:
            with self._lock:
                self._paused = False

    # -- drawing -----------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.wait(_TICK):
            with self._lock:
                if self._paused or self._stop.is_set():
                    continue
                self._frame += 1
                if self._progress is not None or time.monotonic() - self._started >= SPINNER_AFTER:
                    self._draw()

    def _draw(self) -> None:
        line = _cut(self._line(plain=False), _width(self.stream) - 1)
        if line != self._drawn:  # a bar that has not moved is not redrawn
            self._write(_CLEAR + line)
            self._drawn = line

    def _erase(self) -> None:
        if self._drawn is not None:
            self._write(_CLEAR)
            self._drawn = None

    def _line(self, *, plain: bool) -> str:
        progress, total = self._progress, self._total
        message = "" if self._message is None else " " + printable(self._message, keep_newlines=False)
        elapsed = f" ({int(time.monotonic() - self._started)}s)"
        if plain:
            if progress is None:  # pragma: no cover - plain lines are written for updates only
                return f"{self.label}: waiting"
            if total is not None and total > 0:
                share = min(max(progress / total, 0.0), 1.0)
                return f"{self.label}: {_number(progress)}/{_number(total)} ({share:.0%}){message}"
            return f"{self.label}: {_number(progress)}{message}"
        spinner = _SPINNER[self._frame % len(_SPINNER)]
        if progress is None:
            return f"{spinner} {self.label}: waiting{elapsed}"
        if total is not None and total > 0:
            share = min(max(progress / total, 0.0), 1.0)
            filled = round(share * _BAR_WIDTH)
            bar = "#" * filled + "-" * (_BAR_WIDTH - filled)
            return f"{self.label} [{bar}] {share:4.0%}{message}"
        return f"{spinner} {self.label}: {_number(progress)}{message}{elapsed}"

    def _write(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # a closed or broken stderr ends no call
            self.stream.write(text)
            self.stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _cut(line: str, columns: int) -> str:
    """`line` within `columns` terminal columns (wide characters take two, combining ones none),
    ended by `~` when cut: a line that wrapped could not be redrawn in place."""
    widths = [_columns(char) for char in line]
    if sum(widths) <= columns:
        return line
    used = 0
    for index, width in enumerate(widths):
        if used + width > columns - 1:  # room for the `~`
            return line[:index] + "~"
        used += width
    return line  # pragma: no cover - the sum above was larger


def _columns(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _width(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        return 80
