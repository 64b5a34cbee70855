"""VALIDATE: which loaded tools the generator may use, and why the others fail.

    checks.py      `validate(LoadedSpec) -> ValidatedSpec`: the pass over every tool: bounds, fields, names
    schemas.py     a tool's inputSchema and outputSchema: dialect, `$ref`s, loops, x-mcp-header, patterns
    run.py         a run's state: `Limits`, the diagnostics so far, the tool being checked
    metaschema.py  one subschema against its dialect's meta-schema (SCHEMA-05/07), fast path first

Every problem is a `codegen.errors.Diagnostic` with a rule id from docs/RULES.md.
"""
