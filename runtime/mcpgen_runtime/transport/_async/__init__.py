"""Transport code written once: `_async/` holds the asyncio source, `_sync/` the blocking twins
that `scripts/sync_twins.py` writes from it."""
