"""The syntax check of the generated modules of one package: every module is compiled (`compile`:
cheaper than building an AST, and stricter: `return` outside a function, duplicate arguments, ...
are errors too), and a failure is a bug in mcpgen that names the file.

    check = SyntaxCheck()
    check.add("client.py", text, classes=("Client", "AsyncClient"))
    ...
    methods = check.wait()  # {path: {class: its methods' names, in order}} for the classes asked

A large package is checked in two halves at once: its biggest modules (a 1,000-tool client.py is
1.9 MB, half a second to compile) by a helper process (`python -I -S`, started for this package,
reading the texts from an unnamed temporary file), the rest here while it runs. Below `_SPLIT_BYTES` of Python
everything is compiled here: starting the helper would cost more than it saves. Should the helper
fail to start or answer, its share is compiled here. A module already checked with the same text
(models.py and `_models/` are the same for a client and a server) is not compiled again.
"""

from __future__ import annotations

import marshal
import subprocess
import sys
import tempfile
import types
from collections.abc import Mapping

from ..errors import InternalGeneratorError

__all__ = ["SyntaxCheck"]

Methods = dict[str, tuple[str, ...]]  # class name -> the names of the functions its body defines

# Below this much Python text a package is compiled in this process alone.
_SPLIT_BYTES = 1_000_000

# The helper: read (path, text, classes) triples, compile each, answer (path, methods) or
# (path, (line, message)) for a syntax error; marshal both ways (texts and names only).
_HELPER = """
import marshal, sys, types
answers = []
for path, text, classes in marshal.load(sys.stdin.buffer):
    try:
        code = compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        answers.append((path, False, (exc.lineno or 0, exc.msg)))
        continue
    bodies = {c.co_name: c for c in code.co_consts if isinstance(c, types.CodeType)}
    methods = {
        name: tuple(c.co_name for c in bodies[name].co_consts if isinstance(c, types.CodeType))
        for name in classes if name in bodies
    }
    answers.append((path, True, methods))
sys.stdout.buffer.write(marshal.dumps(answers))
"""

# (text, methods) of the last module checked at each path: a client and a server share models.py
_CHECKED: dict[str, tuple[str, Methods]] = {}


def _error(path: str, line: int | None, message: str) -> InternalGeneratorError:
    return InternalGeneratorError(
        f"generated {path} is not valid Python (line {line}: {message}); this is a bug in mcpgen"
    )


def _compile(path: str, text: str, classes: tuple[str, ...]) -> Methods:
    try:
        code = compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise _error(path, exc.lineno, exc.msg) from exc
    bodies = {const.co_name: const for const in code.co_consts if isinstance(const, types.CodeType)}
    return {
        name: tuple(c.co_name for c in bodies[name].co_consts if isinstance(c, types.CodeType))
        for name in classes
        if name in bodies
    }


class SyntaxCheck:
    """Collects the modules of one package (`add`), then compiles them (`wait`)."""

    def __init__(self) -> None:
        self._modules: dict[str, tuple[str, tuple[str, ...]]] = {}

    def add(self, path: str, text: str, classes: tuple[str, ...] = ()) -> None:
        """Check `text` as module `path`; `classes`: the classes whose methods `wait` reports."""
        self._modules[path] = (text, classes)

    def wait(self) -> dict[str, Methods]:
        """Compile every module added; raises InternalGeneratorError for the first that fails."""
        found: dict[str, Methods] = {}
        todo: list[tuple[str, str, tuple[str, ...]]] = []
        for path, (text, classes) in self._modules.items():
            hit = _CHECKED.get(path)
            if hit is not None and hit[0] == text and all(name in hit[1] for name in classes):
                found[path] = hit[1]
            else:
                todo.append((path, text, classes))
        helper, here = _split(todo)
        running = _start_helper(helper) if helper else None
        try:
            for path, text, classes in here:
                found[path] = _compile(path, text, classes)
        except BaseException:
            if running is not None:  # no use for its answer now
                running.kill()
                running.wait()
            raise
        if helper:
            found.update(_helper_results(helper, _answers(running)))
        for path, (text, _) in self._modules.items():
            _CHECKED[path] = (text, found[path])
        return found


def _split(
    todo: list[tuple[str, str, tuple[str, ...]]],
) -> tuple[list[tuple[str, str, tuple[str, ...]]], list[tuple[str, str, tuple[str, ...]]]]:
    """(the helper's modules, this process's): the largest first, each to the lighter half."""
    if sum(len(text) for _, text, _ in todo) < _SPLIT_BYTES:
        return [], todo
    halves: tuple[list[tuple[str, str, tuple[str, ...]]], ...] = ([], [])
    sizes = [0, 0]
    for module in sorted(todo, key=lambda item: -len(item[1])):
        lighter = 0 if sizes[0] <= sizes[1] else 1
        halves[lighter].append(module)
        sizes[lighter] += len(module[1])
    return halves[0], halves[1]


def _start_helper(modules: list[tuple[str, str, tuple[str, ...]]]) -> subprocess.Popen[bytes] | None:
    """The helper process, compiling `modules` from an unnamed temporary file (not a pipe this
    process would have to keep feeding while it compiles); None when it cannot start."""
    try:
        with tempfile.TemporaryFile() as payload:
            payload.write(marshal.dumps(modules))
            payload.seek(0)
            return subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _HELPER],
                stdin=payload,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
    except (OSError, ValueError):
        return None


def _answers(helper: subprocess.Popen[bytes] | None) -> object:
    """What the helper answered, or None (it did not start, failed, or said something unreadable)."""
    if helper is None:
        return None
    out, _ = helper.communicate()
    if helper.returncode != 0:
        return None
    try:
        return marshal.loads(out)
    except (ValueError, EOFError, TypeError):
        return None


def _helper_results(modules: list[tuple[str, str, tuple[str, ...]]], answers: object) -> dict[str, Methods]:
    """The helper's methods per path; what it did not answer is compiled here."""
    answered: Mapping[str, tuple[bool, object]] = {}
    if isinstance(answers, list):
        answered = {
            item[0]: (item[1], item[2]) for item in answers if isinstance(item, tuple) and len(item) == 3
        }
    found: dict[str, Methods] = {}
    for path, text, classes in modules:
        ok, value = answered.get(path, (None, None))
        if ok is True and isinstance(value, dict):
            found[path] = value
        elif ok is False and isinstance(value, tuple):
            raise _error(path, value[0], value[1])
        else:
            found[path] = _compile(path, text, classes)
    return found
