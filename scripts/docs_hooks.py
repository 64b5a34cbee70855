"""mkdocs hooks (mkdocs.yml `hooks:`): put this checkout's code on the import path before the pages are
rendered, so mkdocs-click imports the generator, the runtime and a generated client from here
rather than from whatever is installed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def on_config(config: Any) -> Any:
    for path in (ROOT / "scripts", ROOT / "generated", ROOT / "runtime", ROOT):
        if str(path) not in sys.path:
            sys.path.insert(0, str(path))
    return config
