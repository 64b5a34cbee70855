"""mcpgen runtime: what generated clients and servers import (see docs/ARCHITECTURE.md)."""
