"""DIFF: `mcpgen diff`, two loaded tool lists compared, every change judged for clients and servers.

    compare.py  `diff_tools`: the changes (no recursion over input; `$ref`s followed) and their severity
    formats.py  a `DiffReport` as a table, JSON or Markdown

Works on tool lists as loaded (`LoadedSpec.tools`), not on the model: a diff needs no valid spec.
"""
