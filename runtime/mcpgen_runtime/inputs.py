"""Moved to `mcpgen_runtime.protocol.inputs` (one set of input-required wire types for client
and server); this path is kept for one release."""

from .protocol.inputs import *  # noqa: F403  (every public name of the moved module)
from .protocol.inputs import __all__ as __all__
