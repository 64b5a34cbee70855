"""One place that turns JSON text into Python values and back (orjson: the hot path).

The functions are orjson's own, not wrappers: a Python frame per call is measurable here.
`dumps` gives compact UTF-8 JSON and raises TypeError for non-str keys or non-JSON values
(orjson writes NaN and infinities as null).
"""

from __future__ import annotations

import orjson

JSONDecodeError = orjson.JSONDecodeError
dumps = orjson.dumps
loads = orjson.loads
