"""Legacy sessions (2025-03-26 … 2025-11-25) on Streamable HTTP."""
