"""The syntax check of a generated module (codegen/render/python/syntax.py): compiled, a failure names the
file and line, and the methods of the asked classes are reported in order."""

from __future__ import annotations

import pytest

from codegen.errors import InternalGeneratorError
from codegen.render.python import syntax

SMALL = "class Server:\n    def one(self) -> None: ...\n    async def two(self) -> None: ...\n"


def test_the_methods_of_each_asked_class_in_order() -> None:
    text = SMALL + "class Other:\n    def three(self) -> None: ...\n"
    assert syntax.check("small.py", text, ("Server", "Missing")) == {"Server": ("one", "two")}
    assert syntax.check("small.py", text) == {}


def test_a_syntax_error_names_the_file_and_line() -> None:
    broken = SMALL + "    def broken(self) -> None\n"
    with pytest.raises(InternalGeneratorError, match=r"generated small\.py is not valid Python \(line 4:"):
        syntax.check("small.py", broken, ("Server",))


def test_compile_errors_beyond_the_grammar_are_errors_too() -> None:
    with pytest.raises(InternalGeneratorError, match=r"generated small\.py is not valid Python \(line 1:"):
        syntax.check("small.py", "return 1\n")  # `return` outside a function: compile, not only parse
