"""JSON Schema `pattern`s: ECMA-262 regular expressions parsed, translated and matched in bounded time.

- `ecma_properties.py`: the Unicode property names ECMA-262 allows (tables)
- `ecma_parser.py`: a pattern parsed into a tree; `EcmaSyntaxError` for an invalid one
- `ecma_hazards.py`: which trees can backtrack catastrophically in other engines
- `pattern_match.py`: the matching engines (RE2 in linear time, `regex` within a time budget)
- `ecma_regex.py`: `translate` (the tree in Python's and RE2's syntax), `search_function`, `is_valid`
"""
