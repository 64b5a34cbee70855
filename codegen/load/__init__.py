"""LOAD: the only generator stage that reads the world (a spec file, or a live server's tool list).

    source.py    `load_source`: which loader reads a source (`--stdio COMMAND`, an http(s):// URL, a
                 server of an MCP config file `FILE#NAME`, a file)
    document.py  a JSON document -> `LoadedSpec`: `load_file`, `spec_from_document`; the shapes accepted
    live.py      a live server's every `tools/list` page through the runtime's `Client`: `load_url`,
                 `load_stdio`, `load_stdio_argv`
    mcp_config.py  MCP config files (Claude, Cursor, Windsurf, VS Code, Codex): servers read,
                 `FILE#NAME`, the well-known places
    launch.py    one server of such a file made ready: variables expanded -> `ServerLaunch`
    git.py       a spec file as committed at a git revision
    filters.py   `select_tools`: the tools `--include-tools` / `--exclude-tools` keep, before validation

Every loader returns a `codegen.spec.LoadedSpec`; nothing here decides which tools are usable (the
filters choose which tools the user wants, not which the generator can use).
"""
