"""Skills served from a folder (SEP-2640): folder.py reads and checks it at start, serving.py answers
the extension's methods; frontmatter.py reads a SKILL.md's frontmatter."""
