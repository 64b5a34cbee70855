"""Made-up values valid against a schema, the same for the same seed: `ValueMaker` (maker.py)
over the generation schema (prepare.py), plausible candidates (realistic.py) and objects drawn
with hypothesis's public API (objects.py)."""

from .maker import MockDependencyError, ValueGenerationError, ValueMaker, require_generator

__all__ = ["MockDependencyError", "ValueGenerationError", "ValueMaker", "require_generator"]
