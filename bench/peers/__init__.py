"""The same `add(a, b)` tool (output schema `{sum: number}`) served by other runtimes, for bench/."""
