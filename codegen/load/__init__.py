"""LOAD: the only generator stage that reads the world (a spec file, or a live server's tool list).

    source.py    `load_source`: which loader reads a source (`--stdio COMMAND`, an http(s):// URL, a file)
    document.py  a JSON document -> `LoadedSpec`: `load_file`, `spec_from_document`; the shapes accepted
    live.py      a live server's every `tools/list` page through the runtime's `Client`: `load_url`,
                 `load_stdio`

Every loader returns a `codegen.spec.LoadedSpec`; nothing here decides which tools are usable.
"""
