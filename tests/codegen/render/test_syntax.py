"""The syntax check of generated modules (codegen/render/syntax.py): every module compiled, a large
package split with a helper process, the same verdicts and method lists either way."""

from __future__ import annotations

import pytest

from codegen.errors import InternalGeneratorError
from codegen.render import syntax

# a module well over the split threshold on its own: the helper takes it
METHODS = tuple(f"call_{n}" for n in range(40_000))
BIG = "class Client:\n" + "".join(f"    def {name}(self) -> None: ...\n" for name in METHODS)
SMALL = "class Server:\n    def one(self) -> None: ...\n    async def two(self) -> None: ...\n"


@pytest.fixture(autouse=True)
def _forget() -> None:
    syntax._CHECKED.clear()


def _check(modules: dict[str, tuple[str, tuple[str, ...]]]) -> dict[str, syntax.Methods]:
    check = syntax.SyntaxCheck()
    for path, (text, classes) in modules.items():
        check.add(path, text, classes)
    return check.wait()


def _record_compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths compiled in this process from now on."""
    paths: list[str] = []
    real = syntax._compile

    def recording(path: str, text: str, classes: tuple[str, ...]) -> syntax.Methods:
        paths.append(path)
        return real(path, text, classes)

    monkeypatch.setattr(syntax, "_compile", recording)
    return paths


def test_a_large_package_is_split_and_reports_the_same_methods(monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(BIG) > syntax._SPLIT_BYTES
    helper, here = syntax._split([("big.py", BIG, ("Client",)), ("small.py", SMALL, ("Server",))])
    assert [path for path, _, _ in helper] == ["big.py"] and [path for path, _, _ in here] == ["small.py"]
    compiled_here = _record_compiles(monkeypatch)
    found = _check({"big.py": (BIG, ("Client",)), "small.py": (SMALL, ("Server",))})
    assert found == {"big.py": {"Client": METHODS}, "small.py": {"Server": ("one", "two")}}
    assert compiled_here == ["small.py"]  # big.py by the helper process


def test_a_syntax_error_in_the_helpers_share_names_the_file_and_line() -> None:
    broken = BIG + "    def broken(self) -> None\n"
    with pytest.raises(InternalGeneratorError, match=r"generated big\.py is not valid Python \(line 40002"):
        _check({"big.py": (broken, ("Client",))})


def test_a_syntax_error_here_names_the_file() -> None:
    with pytest.raises(InternalGeneratorError, match=r"generated small\.py is not valid Python \(line 1:"):
        _check({"small.py": ("return 1\n", ())})  # `return` outside a function: compile, not only parse


def test_without_a_helper_everything_is_compiled_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.executable", "/nonexistent/python")
    found = _check({"big.py": (BIG, ("Client",))})
    assert found == {"big.py": {"Client": METHODS}}
    broken = BIG + "    def broken(self) -> None\n"
    with pytest.raises(InternalGeneratorError, match=r"big\.py is not valid Python"):
        _check({"big.py": (broken, ("Client",))})


def test_the_same_text_is_not_compiled_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    _check({"small.py": (SMALL, ("Server",))})
    compiled = _record_compiles(monkeypatch)
    assert _check({"small.py": (SMALL, ("Server",))}) == {"small.py": {"Server": ("one", "two")}}
    assert _check({"small.py": (SMALL + "\n", ("Server",))})["small.py"] == {"Server": ("one", "two")}
    assert compiled == ["small.py"]  # the changed text only
