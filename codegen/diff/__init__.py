"""DIFF: `mcpgen diff`, two loaded tool lists compared, every change judged for clients and servers.

    compare.py  `diff_tools`: the changes of tools and whom they break (client, server)
    schemas.py  two versions of one schema: narrowed, widened, changed, cosmetic (no recursion over
                input; `$ref`s followed on both sides)
    surfaces.py `diff_specs`: `diff_tools` plus resources, resource templates and prompts
    formats.py  a `DiffReport` as a table, JSON or Markdown

Works on tool lists as loaded (`LoadedSpec.tools`), not on the model: a diff needs no valid spec.
"""
