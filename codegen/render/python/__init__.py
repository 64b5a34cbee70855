"""Python source as RENDER writes it: the only code that turns data into source (`pysource`: markers,
escaping; `spelling`: how strings, numbers and docstring text are spelled), statements in black's
layout (`layout`, `black_format`), import blocks and type annotations (`imports`, `typenodes`), and
the compile check every generated module passes (`syntax`)."""
