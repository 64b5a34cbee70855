"""RENDER: `PackageIR` -> {relative path: source}, written already in black's layout."""
