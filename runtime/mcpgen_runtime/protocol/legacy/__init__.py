"""The initialize-based revisions (2024-11-05 .. 2025-11-25), without I/O; "modern" is 2026-07-28.

- `handshake.py`: `initialize` both sides speak, version negotiation, the legacy lifecycle's methods
- `detect.py`: whether a server is modern or legacy, from what it answers (VER-07..10)
- `serving.py`: what a dual-version server does differently for a legacy client (result shapes, ...)
- `sse_writer.py`: SSE events as a server writes them, with the ids and priming event of resumption
"""
