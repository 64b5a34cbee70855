"""Limits on how a client may send HTTP requests: `HttpLimits`, a `ServerConfig` field; and the
longest resource URI served by default (`MAX_URI_LENGTH`, checked in resources/uri_match.py).

Enforced in two places: the header deadline and the cap on slow connections per connection,
below the ASGI app, where uvicorn reads the header block (http/slow_clients.py); the body deadlines
in the ASGI app (http/body_reader.py), so they hold under any ASGI server.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_URI_LENGTH", "HttpLimits"]

# Characters a resources/read or completion URI may have (ServerConfig.max_uri_length's default).
MAX_URI_LENGTH = 8192


@dataclass(frozen=True)
class HttpLimits:
    """Time limits on receiving an HTTP request, and how many connections may be receiving one at once.

    - `header_timeout_s`: from a connection's first byte of a request (or from accepting a connection)
      to the end of its header block; past it the connection is closed (408 if any of the request
      had arrived).
    - `body_idle_timeout_s`: the longest pause between two parts of a request body;
      `body_timeout_s`: the whole body, from the end of the headers. Past either: 408, closed.
    - `max_header_bytes`: the request line and header block together; past it: 431, closed.
    - `max_slow_connections`: connections whose current request has not been fully received yet
      (headers or body still on their way). One over the cap closes the connection that has been
      receiving longest, so a crowd of trickling clients cannot keep a prompt one out.
    """

    header_timeout_s: float = 10.0
    body_idle_timeout_s: float = 30.0
    body_timeout_s: float = 60.0
    max_header_bytes: int = 64 * 1024
    max_slow_connections: int = 256

    def __post_init__(self) -> None:
        if min(self.header_timeout_s, self.body_idle_timeout_s, self.body_timeout_s) <= 0:
            raise ValueError("header_timeout_s, body_idle_timeout_s and body_timeout_s must be positive")
        if self.max_slow_connections < 1 or self.max_header_bytes < 1024:
            raise ValueError("max_slow_connections must be at least 1 and max_header_bytes at least 1024")
