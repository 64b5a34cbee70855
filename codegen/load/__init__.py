"""LOAD: the only generator stage that reads the world (a spec file, or a live server's tool list)."""
