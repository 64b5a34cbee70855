"""Generator speed: wall-clock of real `mcpgen` runs, this tree beside the generator before issue #20.

    python bench/gen_bench.py [--repeat 3] [--tree PATH] [--baseline-ref REF] [--skip-stages]

Specs: the 117-tool GitHub list (../shared/realworld/github-tools.json) and the 1,000-tool synthetic
spec (specs/tools/make_synthetic.py). Each is a temporary [tool.mcpgen] project with a client and a
server target. Timed (median of --repeat runs, fresh processes, so imports count):

    generate (clean)      `mcpgen generate` into an empty output folder: load, validate, build, write
                          client and server in one process
    client + server       `mcpgen client` then `mcpgen server`, two processes
    check (fresh)         `mcpgen generate --check` on the unchanged tree
    check (hand edit)     the same after editing one generated file (no shortcut: build and compare)

Side by side in one run: the generator of this tree ("now") and the generator of --baseline-ref
(default 940e9ef, main before issue #20; `git archive` of that commit into a temporary folder, its
own runtime beside it), the two runs of every measurement interleaved in each repeat, so a busy
machine slows both alike. `speed-up` is baseline ÷ now (issue #20: ≥ 2 for the synthetic spec's
client and server generated in one process, `generate (clean)`). --baseline-ref "" measures this
tree alone.

Each tree keeps its own per-user cache of reserved names (codegen/model/reserved.py, in a
temporary XDG_CACHE_HOME: two generators sharing one file would rebuild it on every run), filled by
a warm-up run that also writes byte code; neither is timed.

Budgets (this tree): GitHub client + server <= 3 s, synthetic <= 10 s, fresh check of the
synthetic <= 2 s. --tree PATH measures another checkout's generator as "now" (e.g. a `git
worktree`) with this interpreter; --skip-stages omits the in-process breakdown.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
GITHUB = ROOT.parent / "shared" / "realworld" / "github-tools.json"
BASELINE_REF = "940e9ef"  # main before issue #20 (its part 4: generating is >= 2x faster than this)
TARGET = ("synthetic", "generate (clean)")  # issue #20: "one process generating client and server"
BUDGETS = {
    ("github", "client + server"): 3.0,
    ("synthetic", "client + server"): 10.0,
    ("synthetic", "check (fresh)"): 2.0,
}

PYPROJECT = """\
[project]
name = "bench"
version = "0"

[[tool.mcpgen.targets]]
source = "{spec}"
kind = "client"
output = "out"
package = "{name}_client"

[[tool.mcpgen.targets]]
source = "{spec}"
kind = "server"
output = "out"
package = "{name}_server"
"""


def _synthetic(path: Path) -> None:
    sys.path.insert(0, str(ROOT / "specs" / "tools"))
    try:
        from make_synthetic import make_tools
    finally:
        sys.path.pop(0)
    path.write_text(json.dumps({"tools": make_tools(1000)}, indent=1) + "\n", "utf-8")


# the cache of reserved names per tree (`_cache_dirs`); a tree without one uses the user's
_CACHES: dict[Path, Path] = {}


def _env(tree: Path) -> dict[str, str]:
    """The tree's generator and its own runtime first on the path."""
    paths = [str(tree), str(tree / "runtime"), os.environ.get("PYTHONPATH", "")]
    # byte code as an install leaves it (the warm-up writes it): without, every run compiles the
    # generator's own sources first, the same constant added to both trees
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(paths)
    if tree in _CACHES:
        env["XDG_CACHE_HOME"] = str(_CACHES[tree])
    return env


@contextmanager
def baseline_tree(ref: str) -> Iterator[Path]:
    """The files of commit `ref` of this repository (`git archive`), in a temporary folder."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref], capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise click.ClickException(f"git archive {ref}: {archive.stderr.decode(errors='replace').strip()}")
    with tempfile.TemporaryDirectory(prefix=f"gen-bench-{ref}-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(tmp, filter="data")
        yield Path(tmp)


class Failed(Exception):
    """mcpgen could not generate the spec (the message is its last line of output)."""


def _mcpgen(tree: Path, cwd: Path, *args: str, expect_stale: bool = False) -> float:
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", "from codegen.cli import main; main()", *args],
        cwd=cwd,
        env=_env(tree),
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if result.returncode != 0 and not (expect_stale and result.returncode == 1):
        lines = (result.stderr or result.stdout).strip().splitlines()
        raise Failed(
            lines[-2 if len(lines) > 1 and "bug in mcpgen" in lines[-1] else -1] if lines else "failed"
        )
    return elapsed


def _median(runs: list[float]) -> float:
    return statistics.median(runs)


def measure(trees: dict[str, Path], name: str, spec: Path, repeat: int) -> dict[str, dict[str, float]]:
    """{tree label: {measurement: median seconds}}; the trees' runs interleaved in every repeat."""
    runs: dict[str, dict[str, list[float]]] = {label: {} for label in trees}

    def record(label: str, measurement: str, seconds: float) -> None:
        runs[label].setdefault(measurement, []).append(seconds)

    with tempfile.TemporaryDirectory(prefix="gen-bench-") as tmp:
        projects: dict[str, Path] = {}
        for label, tree in trees.items():
            project = projects[label] = Path(tmp) / label
            project.mkdir()
            shutil.copy(spec, project / "spec.json")
            (project / "pyproject.toml").write_text(PYPROJECT.format(spec="spec.json", name=name), "utf-8")
            _mcpgen(tree, project, "generate")  # warm-up: byte code and the cache of reserved names
        for _ in range(repeat):
            for label, tree in trees.items():
                shutil.rmtree(projects[label] / "out", ignore_errors=True)
                record(label, "generate (clean)", _mcpgen(tree, projects[label], "generate"))
        for _ in range(repeat):
            for label, tree in trees.items():
                project = projects[label]
                shutil.rmtree(project / "two", ignore_errors=True)
                client = ("client", "spec.json", "-o", "two", "--package", f"{name}_client")
                server = ("server", "spec.json", "-o", "two", "--package", f"{name}_server")
                seconds = _mcpgen(tree, project, *client) + _mcpgen(tree, project, *server)
                record(label, "client + server", seconds)
        for label, tree in trees.items():
            shutil.rmtree(projects[label] / "out", ignore_errors=True)
            _mcpgen(tree, projects[label], "generate")
        for _ in range(repeat):
            for label, tree in trees.items():
                record(label, "check (fresh)", _mcpgen(tree, projects[label], "generate", "--check"))
        for label in trees:
            client_py = projects[label] / "out" / f"{name}_client" / "client.py"
            client_py.write_text(client_py.read_text("utf-8") + "# hand edit\n", "utf-8")
        for _ in range(repeat):
            for label, tree in trees.items():
                seconds = _mcpgen(tree, projects[label], "generate", "--check", expect_stale=True)
                record(label, "check (hand edit)", seconds)
    return {label: {m: _median(values) for m, values in found.items()} for label, found in runs.items()}


_STAGES = """
import json, sys, time
from pathlib import Path
try:
    from codegen.load.document import load_file
    from codegen.validate.checks import validate
except ImportError:  # a tree from before the generator's stage packages
    from codegen.load import load_file
    from codegen.validate import validate
from codegen import pipeline
t = {}
start = time.perf_counter(); loaded = load_file(Path(sys.argv[1])); t["load"] = time.perf_counter() - start
start = time.perf_counter(); spec = validate(loaded); t["validate"] = time.perf_counter() - start
start = time.perf_counter(); client = pipeline.build_client(spec, package="c")
t["build client"] = time.perf_counter() - start
start = time.perf_counter(); server = pipeline.build_server(spec, package="s")
t["build server"] = time.perf_counter() - start
size = sum(len(d) for p in (client, server) for d in {**p.files, **p.user_files}.values())
t["output MB"] = size / 1e6
print(json.dumps(t))
"""


def stages(tree: Path, spec: Path) -> dict[str, float]:
    # cwd: `python -c` puts the working directory first on sys.path; it must be the measured tree
    result = subprocess.run(
        [sys.executable, "-c", _STAGES, str(spec)],
        cwd=tree,
        env=_env(tree),
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise Failed(result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "failed")
    return json.loads(result.stdout.strip().splitlines()[-1])


@click.command(help=__doc__.splitlines()[0])
@click.option("--repeat", type=int, default=3)
@click.option(
    "--tree", type=click.Path(path_type=Path), default=ROOT, help="checkout whose codegen/ to measure"
)
@click.option(
    "--baseline-ref",
    default=BASELINE_REF,
    show_default=True,
    help='the commit measured beside it ("" for none)',
)
@click.option("--skip-stages", is_flag=True)
def command(repeat: int, tree: Path, baseline_ref: str, skip_stages: bool) -> int:
    tree = tree.resolve()
    with tempfile.TemporaryDirectory(prefix="gen-bench-specs-") as tmp:
        synthetic = Path(tmp) / "synthetic.json"
        _synthetic(synthetic)
        specs = {"github": GITHUB, "synthetic": synthetic}
        if baseline_ref:
            with baseline_tree(baseline_ref) as base:
                return _report({"baseline": base, "now": tree}, baseline_ref, specs, repeat, skip_stages)
        return _report({"now": tree}, "", specs, repeat, skip_stages)


def _report(trees: dict[str, Path], ref: str, specs: dict[str, Path], repeat: int, skip_stages: bool) -> int:
    with tempfile.TemporaryDirectory(prefix="gen-bench-cache-") as caches:
        for label, path in trees.items():
            _CACHES[path] = Path(caches) / label
        try:
            return _print_report(trees, ref, specs, repeat, skip_stages)
        finally:
            _CACHES.clear()


def _print_report(
    trees: dict[str, Path], ref: str, specs: dict[str, Path], repeat: int, skip_stages: bool
) -> int:
    now = trees["now"]
    compared = "baseline" in trees
    print(f"generator: {now}   python {sys.version.split()[0]}   repeat {repeat} (median)")
    if compared:
        print(f"baseline: {ref} (git archive), measured in the same run, runs interleaved")
    print()
    head = f"{'spec':<10} {'measure':<20}" + (f" {'baseline s':>10}" if compared else "")
    head += f" {'now s':>8}" + (f" {'speed-up':>9}" if compared else "") + f" {'budget':>8}"
    print(head)
    print("-" * len(head))
    failed = False
    for name, spec in specs.items():
        try:
            measured = measure(trees, name, spec, repeat)
        except Failed as exc:
            print(f"{name:<10} {'generate':<20} {'failed':>8}  {str(exc)[:70]}")
            failed = True
            continue
        for label, seconds in measured["now"].items():
            budget = BUDGETS.get((name, label))
            flag = "" if budget is None else f"{budget:>7.1f}" + ("" if seconds <= budget else " !")
            failed |= budget is not None and seconds > budget
            row = f"{name:<10} {label:<20}"
            if compared:
                base = measured["baseline"][label]
                row += f" {base:>10.2f} {seconds:>8.2f} {base / seconds:>8.2f}x"
            else:
                row += f" {seconds:>8.2f}"
            print(f"{row} {flag:>8}")
            if compared and (name, label) == TARGET:
                speedup = measured["baseline"][label] / seconds
                print(f"{'':<10} {'':<20} issue #20: >= 2x faster: {'yes' if speedup >= 2 else 'NO'}")
    if not skip_stages:
        print(f"\n{'spec':<10} {'stage (in process)':<20}" + "".join(f" {label:>10}" for label in trees))
        print("-" * (31 + 11 * len(trees)))
        for name, spec in specs.items():
            try:
                found = {label: stages(path, spec) for label, path in trees.items()}
            except Failed as exc:
                print(f"{name:<10} {'stages':<20} {'failed':>8}  {str(exc)[:70]}")
                continue
            for stage in found["now"]:
                values = "".join(f" {found[label].get(stage, float('nan')):>10.2f}" for label in trees)
                print(f"{name:<10} {stage:<20}{values}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """The exit status: 1 when a run failed or went over its budget. Also run as a plain file
    (`python bench/gen_bench.py`), so no `bench._cli`: its few lines are here."""
    try:
        with command.make_context("gen_bench.py", list(sys.argv[1:] if argv is None else argv)) as ctx:
            return int(command.invoke(ctx))
    except click.exceptions.Exit as exc:  # --help
        return exc.exit_code
    except click.ClickException as exc:  # a usage error: exit 2, as argparse did
        exc.show()
        return exc.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
