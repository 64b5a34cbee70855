"""RENDER: `PackageIR` -> {relative path: source}, written already in black's layout.

There is no separate formatting stage: statements are laid out as black would lay them out while
they are written, black itself formats the rare statement the layout cannot place, and the
`Style` (black's settings of the project the code lands in) is read here, in `black_format`.

    package.py        `render_client`, `render_server`: the jobs rendering every file of a package
    models_module.py  `render_models`: the jobs of models.py and `_models/`
    jobs.py           a package as jobs, each run once, on two cores (`parallel.py`)
    syntax.py         the compile that proves a generated module is Python
    templates.py      the Jinja environment (templates/ or codegen/_templates) and the file header
    imports.py        a generated module's import block, planned as data
    typenodes.py      IR type expressions -> annotation nodes
    layout.py         statements in black's layout
    pysource.py       the only code that turns data into Python source: markers and escaping
    black_format.py   `Style`, black's `Mode`, one-statement black, the parse that proves output is Python
    toolsjson.py      tools.json, as data
    deploy.py         a server package's Dockerfile and deploy/ files (templates/deploy/)
"""
