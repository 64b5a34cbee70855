"""VALIDATE: which loaded tools the generator may use, and why the others fail.

    checks.py      `validate(LoadedSpec) -> ValidatedSpec`: names, fields, bounds, schemas, x-mcp-header
    metaschema.py  one subschema against its dialect's meta-schema (SCHEMA-05/07), fast path first

Every problem is a `codegen.errors.Diagnostic` with a rule id from docs/RULES.md.
"""
