"""What a program pays to use a generated client: import time, memory, and the typed command line.

    python -m bench.import_bench [--repeat 7] [--tools 1000]

Side by side, in one run, fresh processes each time (imports are the point), rows interleaved in
every repeat and the minimum kept (2 cores shared with other work: the minimum is the repeatable
figure). Byte code is written by a warm-up run first, as a wheel install compiles it.

    import           `import X` (and for a client package `X.Client(url)`, which sends nothing),
                     timed inside the process; RSS is the process's peak (VmHWM) at the end
    --help           wall time of `python -m PKG --help` (lists every tool)
    one call         wall time of `python -m PKG --url URL TOOL` against a live mock server
                     (`running_mock`, in this process), a tool without required arguments; the
                     same call repeated in this process is shown too (the server's answer: the two
                     tools' outputs differ), and the difference is the command line's start-up

Rows: the runtime alone (`import mcpgen_runtime.client`), the weather client (6 tools,
generated/weather_client), and a client generated from the synthetic spec (--tools, 1,000 by
default: specs/tools/make_synthetic.py) into a temporary directory. The issue's targets (#20):
the large client's import ≤ 1.5x the runtime's own and ≤ 25 MB above it; its `--help` and one call
≤ 1.5x the weather client's.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
URL_NOWHERE = "http://127.0.0.1:9/mcp"

# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child would report its parent's peak
_PROBE = """
import importlib, json, sys, time
start = time.perf_counter()
module = importlib.import_module(sys.argv[1])
if len(sys.argv) > 2:
    module.Client(sys.argv[2])
seconds = time.perf_counter() - start
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(json.dumps({"seconds": seconds, "rss_mb": peak / 1024}))
"""


def _env(extra: list[Path]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    paths = [*extra, ROOT / "runtime", ROOT, ROOT / "generated"]
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in paths)
    return env


def _probe(module: str, env: dict[str, str], client: bool) -> dict[str, float]:
    args = [sys.executable, "-c", _PROBE, module, *([URL_NOWHERE] if client else [])]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"import {module}: {done.stderr.strip()[-500:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _wall(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args[1:4])}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
    return seconds


def _generate(spec: Path, out: Path, package: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "codegen.cli", "client", str(spec), "-o", str(out), "--package", package],
        env=_env([]),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"mcpgen client {spec.name}: {done.stderr.strip()[-500:]}")


def measure(tools: int, repeat: int) -> dict[str, Any]:
    from mcpgen_runtime.mock.harness import running_mock

    sys.path.insert(0, str(ROOT / "specs" / "tools"))
    try:
        from make_synthetic import make_tools
    finally:
        sys.path.pop(0)
    with tempfile.TemporaryDirectory(prefix="import-bench-") as tmp:
        work = Path(tmp)
        spec = work / "synthetic.json"
        definitions = make_tools(tools)
        spec.write_text(json.dumps({"tools": definitions}) + "\n", "utf-8")
        big = f"synthetic{tools}_client"
        _generate(spec, work, big)
        weather_spec = ROOT / "specs" / "weather.json"
        env = _env([work])
        first = definitions[[bool(t["inputSchema"].get("required")) for t in definitions].index(False)]
        big_tool = _command(work / big / "__main__.py", first["name"])
        rows: dict[str, Callable[[], dict[str, float]]] = {
            "runtime alone": lambda: _probe("mcpgen_runtime.client", env, client=False),
            "weather client (6 tools)": lambda: _probe("weather_client", env, client=True),
            f"synthetic client ({tools} tools)": lambda: _probe(big, env, client=True),
        }
        samples: dict[str, list[dict[str, float]]] = {name: [] for name in rows}
        helps: dict[str, list[float]] = {"weather": [], "synthetic": []}
        calls: dict[str, list[float]] = {"weather": [], "synthetic": []}
        py = sys.executable
        with (
            running_mock(spec=weather_spec) as weather_mock,
            running_mock(spec=spec) as big_mock,
        ):
            commands = {
                "weather": (
                    [py, "-m", "weather_client", "--help"],
                    [py, "-m", "weather_client", "--url", str(weather_mock.url), "get-current-time"],
                ),
                "synthetic": (
                    [py, "-m", big, "--help"],
                    [py, "-m", big, "--url", str(big_mock.url), big_tool],
                ),
            }
            # the same call repeated in this process: what the server's answer itself costs, so that
            # `one call` minus this is the command line's start-up (the two tools differ in output)
            warm: dict[str, float] = {}
            sys.path[:0] = [str(work), str(ROOT / "generated")]  # as `_env` gives the subprocesses
            try:
                for name, package, url, method in (
                    ("weather", "weather_client", weather_mock.url, "get_current_time"),
                    ("synthetic", big, big_mock.url, big_tool.replace("-", "_")),
                ):
                    with importlib.import_module(package).Client(str(url)) as client:
                        getattr(client, method)()
                        times = []
                        for _ in range(5):
                            start = time.perf_counter()
                            getattr(client, method)()
                            times.append(time.perf_counter() - start)
                    warm[name] = min(times)
            finally:
                sys.path.remove(str(work))
                sys.path.remove(str(ROOT / "generated"))
            for run in range(repeat + 1):  # the first run writes byte code and is not kept
                for name, probe in rows.items():
                    sample = probe()
                    if run:
                        samples[name].append(sample)
                for name, (help_args, call_args) in commands.items():
                    help_s, call_s = _wall(help_args, env), _wall(call_args, env)
                    if run:
                        helps[name].append(help_s)
                        calls[name].append(call_s)
    result: dict[str, Any] = {"tools": tools, "repeat": repeat, "rows": {}}
    for name, runs in samples.items():
        result["rows"][name] = {
            "import_s": min(r["seconds"] for r in runs),
            "rss_mb": min(r["rss_mb"] for r in runs),
        }
    result["help_s"] = {name: min(runs) for name, runs in helps.items()}
    result["call_s"] = {name: min(runs) for name, runs in calls.items()}
    result["warm_call_s"] = warm
    return result


def _command(main: Path, wire_name: str) -> str:
    """The subcommand of `wire_name` in a generated `__main__.py` (its method, `-` for `_`)."""
    for line in main.read_text("utf-8").splitlines():
        text = line.strip()
        if text.startswith(f'CliTool("{wire_name}", "'):
            return text.split('"')[3].replace("_", "-")
    raise RuntimeError(f"{wire_name!r} not in {main}")


def _startup(result: dict[str, Any], name: str) -> float:
    return float(result["call_s"][name] - result["warm_call_s"][name])


def table(result: dict[str, Any]) -> str:
    rows = result["rows"]
    names = list(rows)
    runtime, weather, big = (rows[name] for name in names)
    lines = [
        f"{'':<28} {'import s':>9} {'RSS MB':>8} {'--help s':>9} {'one call s':>11}",
        "-" * 69,
    ]
    extra = {names[1]: "weather", names[2]: "synthetic"}
    for name in names:
        key = extra.get(name)
        help_s = f"{result['help_s'][key]:>9.3f}" if key else f"{'':>9}"
        call_s = f"{result['call_s'][key]:>11.3f}" if key else f"{'':>11}"
        lines.append(
            f"{name:<28} {rows[name]['import_s']:>9.3f} {rows[name]['rss_mb']:>8.1f} {help_s} {call_s}"
        )
    lines += [
        "",
        f"synthetic import ÷ runtime's: {big['import_s'] / runtime['import_s']:.2f} (target ≤ 1.5); "
        f"RSS above the runtime's: {big['rss_mb'] - runtime['rss_mb']:.1f} MB (target ≤ 25)",
        f"weather import ÷ runtime's: {weather['import_s'] / runtime['import_s']:.2f}; "
        f"RSS above: {weather['rss_mb'] - runtime['rss_mb']:.1f} MB",
        f"synthetic --help ÷ weather's: {result['help_s']['synthetic'] / result['help_s']['weather']:.2f}; "
        f"one call ÷ weather's: {result['call_s']['synthetic'] / result['call_s']['weather']:.2f} "
        "(targets ≤ 1.5)",
        "the same call repeated in one process (the server's answer, no start-up): "
        + ", ".join(f"{name} {seconds * 1000:.0f} ms" for name, seconds in result["warm_call_s"].items()),
        "one call minus that, synthetic ÷ weather: "
        f"{_startup(result, 'synthetic') / _startup(result, 'weather'):.2f}",
    ]
    return "\n".join(lines)


@click.command(help=__doc__.splitlines()[0])
@click.option("--repeat", type=int, default=7, show_default=True)
@click.option("--tools", type=int, default=1000, show_default=True)
@click.option("--json-out", type=click.Path(path_type=Path), default=None)
def command(repeat: int, tools: int, json_out: Path | None) -> None:
    result = measure(tools, repeat)
    print(f"python {sys.version.split()[0]}   repeat {repeat} (minimum), fresh processes\n")
    print(table(result))
    if json_out is not None:
        json_out.write_text(json.dumps(result, indent=1) + "\n", "utf-8")


if __name__ == "__main__":
    command()
