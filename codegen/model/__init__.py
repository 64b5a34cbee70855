"""MODEL: validated tools -> `PackageIR`, what the renderer prints, every name and order fixed.

    build.py        entry point `build_ir`: tool schemas -> `ModelsIR` and one method plan per tool
    ir.py           the IR: a small type algebra (`TypeExpr`), models, aliases, tools, parameters
    schemadoc.py    one tool schema opened: `$ref`s resolved to pointers, the work budget (SCHEMA-11)
    schemafacts.py  what a subschema says about a value's shape (following `$ref` and `allOf`)
    typebuild.py    facts -> type expressions, model classes, aliases, tagged unions, class order
    shareddefs.py   identical `$defs` entries of several tools -> one class
    fields.py       one models.py field: description, default, constraints
    classnames.py   every class and alias name models.py defines
    naming.py       Python identifiers for server-supplied text
    reserved.py     the names the runtime's classes and pydantic's BaseModel reserve

Nothing here writes source text: that is RENDER's.
"""
