"""DIFF: `mcpgen diff`, two loaded tool lists compared, every change judged for clients and servers."""
