"""Run the official MCP conformance suite's server scenarios against the generated conformance server.

    python conformance/server_scenarios.py                       # every 2026-07-28 scenario, a results table
    python conformance/server_scenarios.py --scenario caching    # one (repeatable)
    python conformance/server_scenarios.py --spec-version 2025-11-25   # the legacy (initialize) wire
    python conformance/server_scenarios.py --spec-version extension   # tasks' and skills' scenarios
    python conformance/server_scenarios.py --all-versions        # every version and scenario below
    python conformance/server_scenarios.py --url http://localhost:8000/mcp   # a server already running

Needs the pinned harness and Node 22 in conformance/node_modules (`make conformance-deps`).
Without `--url` it starts `python -m conformance_server --http --port N` on 127.0.0.1 (the
package generated from specs/conformance.json into generated/). Each scenario runs as
`conformance server --url … --spec-version VERSION --scenario NAME -o DIR`; the result is
the harness's exit code plus the checks it wrote to DIR/*/checks.json. The same server answers
every version: 2026-07-28 statelessly, the initialize-based revisions in sessions.

tests/conformance/test_server_conformance.py runs the same scenarios under pytest.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

ROOT = Path(__file__).resolve().parent.parent
BIN_DIR = ROOT / "conformance" / "node_modules" / ".bin"
HARNESS = BIN_DIR / "conformance"
SPEC_VERSION = "2026-07-28"
EXTENSION = "extension"  # --spec-version extension: the extension scenarios, run without the flag
SERVER_PACKAGE = "conformance_server"
# Signs requestState in the test server (the runtime would otherwise pick a random key and warn).
TEST_STATE_SECRET = "conformance-test-secret-not-for-production"

# Resources, resource templates, prompts and completion (issue 22): tagged 2025-06-18 onwards.
_SURFACES: tuple[str, ...] = (
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "completion-complete",
)
# ... and the legacy revisions' resource subscriptions (removed in 2026-07-28: listen instead).
_SUBSCRIPTIONS: tuple[str, ...] = ("resources-subscribe", "resources-unsubscribe")

# Every server scenario of docs/RULES.md conformance §5 (tagged 2026-07-28), in its order.
SCENARIOS: tuple[str, ...] = (
    "server-stateless",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "json-schema-2020-12",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
    "caching",
    "http-header-validation",
    "http-custom-header-server-validation",
    "input-required-result-basic-elicitation",
    "input-required-result-basic-sampling",
    "input-required-result-basic-list-roots",
    "input-required-result-request-state",
    "input-required-result-multiple-input-requests",
    "input-required-result-multi-round",
    "input-required-result-missing-input-response",
    "input-required-result-non-tool-request",
    "input-required-result-result-type",
    "input-required-result-unsupported-methods",
    "input-required-result-tampered-state",
    "input-required-result-capability-check",
    "input-required-result-ignore-extra-params",
    "input-required-result-validate-input",
    *_SURFACES,
    "sep-2164-resource-not-found",
)

# The initialize-based revisions: every tools-server scenario the harness tags with each version
# (its windows: server-initialize, logging-set-level, ping, tools-call-with-logging, -sampling and
# -elicitation are 2025-06-18 and 2025-11-25 only; json-schema-2020-12, server-sse-multiple-streams
# and dns-rebinding-protection begin at 2025-11-25; the SEP-1034/1330 and SSE polling scenarios
# are 2025-11-25 only; server-session-lifecycle alone runs at 2025-03-26).
_LEGACY_TOOLS_CALLS: tuple[str, ...] = (
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
)
LEGACY_SCENARIOS: dict[str, tuple[str, ...]] = {
    "2025-11-25": (
        "server-initialize",
        "server-session-lifecycle",
        "logging-set-level",
        "ping",
        "tools-list",
        *_LEGACY_TOOLS_CALLS,
        "json-schema-2020-12",
        "elicitation-sep1034-defaults",
        "elicitation-sep1330-enums",
        "server-sse-polling",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
        *_SURFACES,
        *_SUBSCRIPTIONS,
    ),
    "2025-06-18": (
        "server-initialize",
        "server-session-lifecycle",
        "logging-set-level",
        "ping",
        "tools-list",
        *_LEGACY_TOOLS_CALLS,
        *_SURFACES,
        *_SUBSCRIPTIONS,
    ),
    "2025-03-26": ("server-session-lifecycle",),
}

# The extensions' scenarios (tasks: issue 34; skills: issue 37): the harness tags them [extension]
# and runs them only without --spec-version (they speak 2026-07-28 plus the extension).
EXTENSION_SCENARIOS: tuple[str, ...] = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
    # The skills extension (SEP-2640): the fixture server serves generated/conformance_server/skills.
    "sep-2640-skills-manifest",
    "sep-2640-skills-directory",
    "sep-2640-skills-enumeration",
)

# Other extensions' server scenarios, not served by mcpgen (listed so a new one is noticed): none.
EXTENSION_EXCLUDED: dict[str, str] = {}

# Server scenarios the harness lists that docs/RULES.md conformance §8 excludes, and why: none since
# issue 22 (the fixture server serves resources, templates, prompts and completion).
EXCLUDED: dict[str, str] = {}
LEGACY_EXCLUDED: dict[str, str] = {}


@dataclass
class ScenarioResult:
    name: str
    returncode: int
    checks: list[dict[str, Any]] = field(default_factory=list)
    output: str = ""
    seconds: float = 0.0

    def with_status(self, *statuses: str) -> list[dict[str, Any]]:
        return [check for check in self.checks if check.get("status") in statuses]

    @property
    def failures(self) -> list[dict[str, Any]]:
        return self.with_status("FAILURE")

    @property
    def warnings(self) -> list[dict[str, Any]]:
        return self.with_status("WARNING")

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and bool(self.checks) and not self.failures

    def describe_problems(self) -> str:
        """Failures and warnings with their messages and details, for an assertion message."""
        lines = [f"scenario {self.name}: exit {self.returncode}, {len(self.checks)} checks"]
        for check in self.failures + self.warnings:
            details = json.dumps(check.get("details"), sort_keys=True)[:1500]
            lines.append(
                f"  {check.get('status')} {check.get('id')}: {check.get('errorMessage')}\n"
                f"    details: {details}"
            )
        if not self.checks or self.returncode != 0:
            lines.append("  harness output (tail):\n" + self.output[-3000:])
        return "\n".join(lines)


def harness_env() -> dict[str, str]:
    """The environment for the harness: Node 22 from node_modules first on PATH."""
    return {**os.environ, "PATH": os.pathsep.join([str(BIN_DIR), os.environ.get("PATH", "")])}


def harness_available() -> bool:
    return HARNESS.exists() and (BIN_DIR / "node").exists()


def scenarios_for(spec_version: str) -> tuple[str, ...]:
    if spec_version == EXTENSION:
        return EXTENSION_SCENARIOS
    return SCENARIOS if spec_version == SPEC_VERSION else LEGACY_SCENARIOS[spec_version]


def _listed(spec_version: str | None) -> list[str]:
    """The scenario lines of the harness's `list --server` ("NAME [versions]" or "NAME [extension]")
    for `spec_version` (None: every one)."""
    version_flag = ["--spec-version", spec_version] if spec_version is not None else []
    out = subprocess.run(
        [str(HARNESS), "list", "--server", *version_flag],
        env=harness_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return [line.strip()[2:] for line in out.splitlines() if line.strip().startswith("- ")]


def list_server_scenarios(spec_version: str = SPEC_VERSION) -> list[str]:
    """The server scenarios the installed harness applies to `spec_version`."""
    return [line.split(" ")[0] for line in _listed(spec_version)]


def list_extension_scenarios() -> list[str]:
    """The server scenarios the installed harness tags `[extension]`."""
    return [line.split(" ")[0] for line in _listed(None) if "[extension]" in line]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def conformance_server(port: int) -> Iterator[subprocess.Popen[bytes]]:
    """`python -m conformance_server --http --port PORT` on 127.0.0.1, until the block ends."""
    env = {
        **os.environ,
        # This tree's runtime first (a worktree's venv may have another checkout's installed).
        "PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), str(ROOT), str(ROOT / "generated")]),
        "MCPGEN_STATE_SECRET": TEST_STATE_SECRET,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", SERVER_PACKAGE, "--http", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(f"conformance server exited with {proc.returncode}:\n{err[-4000:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"conformance server did not listen on {port}")
            time.sleep(0.05)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()


def run_scenario(
    name: str, url: str, out_dir: Path, *, spec_version: str | None = SPEC_VERSION, timeout: float = 120
) -> ScenarioResult:
    """One `conformance server` run; its checks come from the checks.json files it wrote.
    `spec_version` None: no `--spec-version` (the extension scenarios run only so)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    proc = subprocess.run(
        [
            str(HARNESS),
            "server",
            "--url",
            url,
            *(["--spec-version", spec_version] if spec_version is not None else []),
            "--scenario",
            name,
            "-o",
            str(out_dir),
        ],
        env=harness_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    checks: list[dict[str, Any]] = []
    for path in sorted(out_dir.glob("*/checks.json")):
        data = json.loads(path.read_text())
        checks.extend(data if isinstance(data, list) else data.get("checks", []))
    return ScenarioResult(
        name, proc.returncode, checks, proc.stdout + proc.stderr, time.monotonic() - started
    )


def _table(results: Sequence[ScenarioResult]) -> str:
    rows = [
        "| scenario | exit | checks | failures | warnings | other (not SUCCESS) | s |",
        "|---|---:|---:|---:|---:|---|---:|",
    ]
    for r in results:
        other = sorted({str(c.get("status")) for c in r.checks} - {"SUCCESS", "FAILURE", "WARNING"})
        rows.append(
            f"| {r.name} | {r.returncode} | {len(r.checks)} | {len(r.failures)} | {len(r.warnings)} | "
            f"{', '.join(other) or '-'} | {r.seconds:.1f} |"
        )
    return "\n".join(rows)


@click.command(help=__doc__.splitlines()[0] if __doc__ else None)
@click.option("--scenario", "scenarios", multiple=True, help="run only this scenario (repeatable)")
@click.option("--url", help="test a server that is already running instead of starting one")
@click.option(
    "-o",
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="keep the harness output here",
)
@click.option(
    "--spec-version",
    type=click.Choice([SPEC_VERSION, *LEGACY_SCENARIOS, EXTENSION]),
    help=f"the wire and scenario set (default {SPEC_VERSION}; {EXTENSION}: the extensions' scenarios)",
)
@click.option("--all-versions", is_flag=True, help="every version's scenarios (not with --spec-version)")
def cli(
    scenarios: tuple[str, ...],
    url: str | None,
    output_dir: Path | None,
    spec_version: str | None,
    all_versions: bool,
) -> None:
    if all_versions and spec_version:
        raise click.UsageError("--spec-version and --all-versions exclude each other")
    sys.exit(
        main(
            scenarios=scenarios,
            url=url,
            output_dir=output_dir,
            spec_version=spec_version or SPEC_VERSION,
            all_versions=all_versions,
        )
    )


def main(
    *,
    scenarios: Sequence[str] = (),
    url: str | None = None,
    output_dir: Path | None = None,
    spec_version: str = SPEC_VERSION,
    all_versions: bool = False,
) -> int:
    if not harness_available():
        print(f"conformance harness not installed at {HARNESS}: run `make conformance-deps`", file=sys.stderr)
        return 2
    chosen = [SPEC_VERSION, *LEGACY_SCENARIOS, EXTENSION] if all_versions else [spec_version]
    runs = [(version, name) for version in chosen for name in (scenarios or scenarios_for(version))]
    with contextlib.ExitStack() as stack:
        if url is None:
            port = free_port()
            stack.enter_context(conformance_server(port))
            url = f"http://localhost:{port}/mcp"
        out = output_dir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mcp-conformance-")))
        results = [
            run_scenario(
                name, url, out / version / name, spec_version=None if version == EXTENSION else version
            )
            for version, name in runs
        ]
        if len(chosen) > 1:
            for (version, _), result in zip(runs, results, strict=True):
                result.name = f"{result.name} @ {version}"
    print(_table(results))
    for result in results:
        if result.failures or result.warnings or result.returncode != 0:
            print(result.describe_problems())
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    cli()
