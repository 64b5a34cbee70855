"""Written once, asyncio: `scripts/sync_twins.py` generates the blocking twins in `../_sync/`."""
