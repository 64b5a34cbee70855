"""Generator speed: wall-clock of real `mcpgen` runs, and where the time goes.

    python bench/gen_bench.py [--repeat 3] [--tree PATH] [--skip-stages]

Specs: the 117-tool GitHub list (../shared/realworld/github-tools.json) and the 1,000-tool synthetic
spec (specs/tools/make_synthetic.py). Each is a temporary [tool.mcpgen] project with a client and a
server target. Timed (median of --repeat runs, fresh processes, so imports count):

    generate (clean)      `mcpgen generate` into an empty output folder: load, validate, build, write
    client + server       `mcpgen client` then `mcpgen server`, two processes (the budget's wording)
    check (fresh)         `mcpgen generate --check` on the unchanged tree
    check (hand edit)     the same after editing one generated file (no shortcut: build and compare)

Runs share the per-user cache of reserved names (~/.cache/mcpgen, codegen/model/reserved.py) as a user's
runs do; after an edit of mcpgen_runtime the first run rebuilds it (about half a second, once).

Budgets: GitHub client + server <= 3 s, synthetic <= 10 s, fresh check of the synthetic <= 2 s.
--tree PATH measures another checkout's generator (e.g. a `git worktree` of an older commit) with
this interpreter; --skip-stages omits the in-process breakdown.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
GITHUB = ROOT.parent / "shared" / "realworld" / "github-tools.json"
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


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")])}


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


def measure(tree: Path, name: str, spec: Path, repeat: int) -> dict[str, float]:
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="gen-bench-") as tmp:
        project = Path(tmp)
        shutil.copy(spec, project / "spec.json")
        (project / "pyproject.toml").write_text(PYPROJECT.format(spec="spec.json", name=name), "utf-8")
        runs = []
        for _ in range(repeat):
            shutil.rmtree(project / "out", ignore_errors=True)
            runs.append(_mcpgen(tree, project, "generate"))
        results["generate (clean)"] = _median(runs)
        runs = []
        for _ in range(repeat):
            shutil.rmtree(project / "two", ignore_errors=True)
            runs.append(
                _mcpgen(tree, project, "client", "spec.json", "-o", "two", "--package", f"{name}_client")
                + _mcpgen(tree, project, "server", "spec.json", "-o", "two", "--package", f"{name}_server")
            )
        results["client + server"] = _median(runs)
        shutil.rmtree(project / "out", ignore_errors=True)
        _mcpgen(tree, project, "generate")
        results["check (fresh)"] = _median(
            [_mcpgen(tree, project, "generate", "--check") for _ in range(repeat)]
        )
        client = project / "out" / f"{name}_client" / "client.py"
        client.write_text(client.read_text("utf-8") + "# hand edit\n", "utf-8")
        results["check (hand edit)"] = _median(
            [_mcpgen(tree, project, "generate", "--check", expect_stale=True) for _ in range(repeat)]
        )
    return results


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
@click.option("--skip-stages", is_flag=True)
def command(repeat: int, tree: Path, skip_stages: bool) -> int:
    tree = tree.resolve()
    with tempfile.TemporaryDirectory(prefix="gen-bench-specs-") as tmp:
        synthetic = Path(tmp) / "synthetic.json"
        _synthetic(synthetic)
        specs = {"github": GITHUB, "synthetic": synthetic}
        print(f"generator: {tree}   python {sys.version.split()[0]}   repeat {repeat} (median)\n")
        print(f"{'spec':<10} {'measure':<20} {'seconds':>8} {'budget':>8}")
        print("-" * 50)
        failed = False
        for name, spec in specs.items():
            try:
                measured = measure(tree, name, spec, repeat)
            except Failed as exc:
                print(f"{name:<10} {'generate':<20} {'failed':>8}  {str(exc)[:70]}")
                failed = True
                continue
            for label, seconds in measured.items():
                budget = BUDGETS.get((name, label))
                flag = "" if budget is None else f"{budget:>7.1f}" + ("" if seconds <= budget else " !")
                failed |= budget is not None and seconds > budget
                print(f"{name:<10} {label:<20} {seconds:>8.2f} {flag:>8}")
        if not skip_stages:
            print(f"\n{'spec':<10} {'stage (in process)':<20} {'seconds':>8}")
            print("-" * 41)
            for name, spec in specs.items():
                try:
                    for label, value in stages(tree, spec).items():
                        print(f"{name:<10} {label:<20} {value:>8.2f}")
                except Failed as exc:
                    print(f"{name:<10} {'stages':<20} {'failed':>8}  {str(exc)[:70]}")
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
