"""The syntax check of a generated module: it is compiled (`compile`: cheaper than building an AST,
and stricter: `return` outside a function, duplicate arguments, ... are errors too), and a failure
is a bug in mcpgen that names the file and line.

    check("client.py", text, classes=("Client", "AsyncClient"))
        -> {"Client": (its methods' names, in order), "AsyncClient": (...)}

The pipeline runs it on every module, in whichever process rendered it (`jobs`).
"""

from __future__ import annotations

import types

from ...errors import InternalGeneratorError

__all__ = ["Methods", "check"]

Methods = dict[str, tuple[str, ...]]  # class name -> the names of the functions its body defines


def check(path: str, text: str, classes: tuple[str, ...] = ()) -> Methods:
    """Compile `text` as module `path`; the methods each of `classes` defines (a class the module
    lacks is left out). Raises InternalGeneratorError for a syntax error."""
    try:
        # optimize=2: docstrings are parsed, then dropped rather than compiled into constants
        code = compile(text, path, "exec", dont_inherit=True, optimize=2)
    except SyntaxError as exc:
        raise InternalGeneratorError(
            f"generated {path} is not valid Python (line {exc.lineno}: {exc.msg}); this is a bug in mcpgen"
        ) from exc
    bodies = {const.co_name: const for const in code.co_consts if isinstance(const, types.CodeType)}
    return {
        name: tuple(c.co_name for c in bodies[name].co_consts if isinstance(c, types.CodeType))
        for name in classes
        if name in bodies
    }
