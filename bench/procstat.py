"""Process and machine facts from /proc: CPU ticks, peak RSS, the machine description."""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_ticks(pid: int) -> int:
    """utime + stime of `pid` (all its threads), in clock ticks."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5), after pid and comm


def status_kib(pid: int, key: str) -> int:
    """A `kB` line of /proc/<pid>/status, e.g. VmHWM (peak RSS) or VmRSS."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def _cpu_totals() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot, from the first line of /proc/stat."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def machine_busy(seconds: float = 2.0) -> float:
    """Share of the machine's CPU capacity in use over `seconds` (0..1), measured, not guessed
    from the load average (which still counts whatever ran in the previous minute)."""
    busy0, total0 = _cpu_totals()
    time.sleep(seconds)
    busy1, total1 = _cpu_totals()
    return (busy1 - busy0) / max(total1 - total0, 1)


def machine() -> dict[str, str]:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        load = "?"
    return {
        "cpu": model,
        "cores": str(os.cpu_count()),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "loadavg": load,
    }
