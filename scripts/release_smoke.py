"""Smoke-test built distributions as a user gets them: `python scripts/release_smoke.py DIST [VERSION]`.

DIST holds the wheels of both distributions (the release workflow's `dist/`). In a fresh virtualenv
(its other dependencies from the index) it installs them, checks that both carry VERSION (default:
the wheels' own, which must agree) and that the generator requires exactly its runtime, then
generates a client and a server from a one-tool spec and imports both. Exits non-zero on the first
failure, saying what failed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

SPEC = {
    "tools": [
        {
            "name": "get_weather",
            "description": "Current weather for a city",
            "inputSchema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        }
    ]
}


def run(*args: str | Path, cwd: Path | None = None) -> str:
    result = subprocess.run([str(arg) for arg in args], cwd=cwd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, args))}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result.stdout


def wheel_version(dist: Path, name: str) -> tuple[Path, str]:
    wheels = sorted(dist.glob(f"{name}-*.whl"))
    if len(wheels) != 1:
        sys.exit(f"expected one {name} wheel in {dist}, found {[w.name for w in wheels]}")
    return wheels[0], wheels[0].name.split("-")[1]


def main(dist: Path, expected: str | None) -> None:
    generator, generator_version = wheel_version(dist, "mcpgen")
    runtime, runtime_version = wheel_version(dist, "mcpgen_runtime")
    version = expected or generator_version
    if not generator_version == runtime_version == version:
        sys.exit(
            f"versions disagree: mcpgen {generator_version}, "
            f"mcpgen-runtime {runtime_version}, wanted {version}"
        )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        venv.create(work / "venv", with_pip=True)
        python = work / "venv" / "bin" / "python"
        run(python, "-m", "pip", "install", "--quiet", generator, runtime)
        shown = run(python, "-m", "pip", "show", "mcpgen", "mcpgen-runtime")
        if shown.count(f"Version: {version}") != 2:
            sys.exit(f"installed versions are not {version}:\n{shown}")
        requires = run(
            python, "-c", "import importlib.metadata as m; print('\\n'.join(m.requires('mcpgen') or []))"
        )
        if f"mcpgen-runtime[cli,server]=={version}" not in requires.splitlines():
            sys.exit(f"mcpgen does not require mcpgen-runtime=={version}:\n{requires}")
        mcpgen = work / "venv" / "bin" / "mcpgen"
        if not run(mcpgen, "--version").startswith(f"mcpgen {version}"):
            sys.exit("`mcpgen --version` names another version")
        (work / "tools.json").write_text(json.dumps(SPEC))
        run(mcpgen, "client", "tools.json", "-o", "out", "--package", "smoke_client", cwd=work)
        run(mcpgen, "server", "tools.json", "-o", "out", "--package", "smoke_server", cwd=work)
        run(python, "-c", "import smoke_client, smoke_server.base", cwd=work / "out")
    print(f"ok: mcpgen {version} and mcpgen-runtime {version} install, generate and import")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(Path(sys.argv[1]).resolve(), sys.argv[2].removeprefix("v") if len(sys.argv) == 3 else None)
