"""Sans-I/O dispatch: one JSON-RPC message in, one `Outcome` out (router.py), split by job:
the served set and its run-time changes (served.py), tools/call's check chain (tool_call.py)
and the input-required rounds (rounds.py)."""

from .router import Dispatcher
from .served import BUILTIN_METHODS, CACHEABLE_METHODS, REMOVED_METHODS

__all__ = ["BUILTIN_METHODS", "CACHEABLE_METHODS", "REMOVED_METHODS", "Dispatcher"]
