"""The official MCP conformance suite (pinned harness, docs/RULES.md conformance §6-7) against mcpgen's client
program, conformance/client.py: one harness run per client scenario tagged 2026-07-28 (the authorization
ones, `auth/*`, through conformance/auth_client.py), and per legacy-era scenario at the
initialize-based versions it is tagged for (`LEGACY_RUNS`).

    conformance client --command "<python> conformance/client.py" --scenario NAME
                       --spec-version 2026-07-28 -o DIR

Every scenario must exit 0 with no FAILURE and no WARNING check; there is no expected-failures
list. The harness validates every message the client sends against schema.json
(`wire-schema-valid`), so these runs also prove the client's wire shapes.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support import PYTHON, ROOT

BIN_DIR = ROOT / "conformance" / "node_modules" / ".bin"
CLIENT = ROOT / "conformance" / "client.py"
SCENARIOS = [
    "tools_call",
    "request-metadata",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "sep-2322-client-request-state",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
]
# Legacy-era (initialize-based) runs: (scenario, --spec-version); the harness is the legacy
# server, stateful at that version.
LEGACY_RUNS = [
    ("initialize", "2025-11-25"),
    ("initialize", "2025-06-18"),
    ("tools_call", "2025-11-25"),
    ("tools_call", "2025-06-18"),
    ("elicitation-sep1034-client-defaults", "2025-11-25"),
    ("sse-retry", "2025-11-25"),
    ("json-schema-2020-12-preservation", "2025-11-25"),
]
# Authorization (AUTH-01..18): every client scenario the harness has for 2026-07-28.
AUTH_SCENARIOS = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
]
# Outside the 2026-07-28 window, each on its own wire: the 2025-03-26 fallbacks (no protected
# resource metadata; the server's origin is the authorization server; the stateful 2025-03-26
# server), the client-credentials extension (client_secret_basic, private_key_jwt with ES256) and the
# other authorization extensions, which the harness runs when no --spec-version is given.
OWN_WIRE_RUNS: list[tuple[str, str | None]] = [
    ("auth/2025-03-26-oauth-metadata-backcompat", "2025-03-26"),
    ("auth/2025-03-26-oauth-endpoint-fallback", "2025-03-26"),
    ("auth/client-credentials-basic", None),
    ("auth/client-credentials-jwt", None),
    # the authorization extensions of issue 36: DPoP (SEP-1932), enterprise-managed authorization
    # (SEP-990) and workload identity federation (SEP-1933)
    ("auth/dpop", None),
    ("auth/dpop-nonce", None),
    ("auth/enterprise-managed-authorization", None),
    ("auth/wif-jwt-bearer", None),
    # the skills extension (SEP-2640): nothing fetched before a load; a tampered SKILL.md refused
    ("sep-2640-client-no-prefetch", None),
    ("sep-2640-client-verify-digest", None),
    ("sep-2640-client-verify-size", None),
    ("sep-2640-client-verify-frontmatter", None),
]
EXCLUDED_PREFIXES: tuple[str, ...] = ()

pytestmark = [
    pytest.mark.skipif(
        not (BIN_DIR / "conformance").exists(),
        reason="conformance harness not installed (make conformance-deps)",
    ),
    pytest.mark.timeout(240),
]


def harness(
    *args: str, timeout: float = 150, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **(env or {}), "PATH": os.pathsep.join([str(BIN_DIR), os.environ.get("PATH", "")])}
    return subprocess.run(
        [str(BIN_DIR / "conformance"), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def describe(checks: list[dict[str, Any]], run: subprocess.CompletedProcess[str], out_dir: Path) -> str:
    bad = [check for check in checks if check.get("status") in ("FAILURE", "WARNING")]
    lines = [f"exit code {run.returncode}"]
    lines += [
        f"{c['status']} {c['id']} ({c.get('name')}): {c.get('errorMessage') or c.get('description')}"
        for c in bad
    ]
    for name in ("stderr.txt", "stdout.txt"):
        for path in out_dir.glob(f"*/{name}"):
            if text := path.read_text().strip():
                lines.append(f"client {name}:\n{text[-3000:]}")
    if run.stderr.strip():
        lines.append(f"harness stderr:\n{run.stderr[-3000:]}")
    return "\n".join(lines)


def test_every_2026_07_28_client_scenario_is_run_or_excluded() -> None:
    """The installed harness's client scenarios for 2026-07-28 are all run (the auth ones: AUTH-01..18)."""
    run = harness("list", "--client", "--spec-version", "2026-07-28", timeout=60)
    assert run.returncode == 0, run.stderr
    listed = {
        line.strip()[2:].split(" [")[0] for line in run.stdout.splitlines() if line.strip().startswith("- ")
    }
    ours = set(SCENARIOS) | set(AUTH_SCENARIOS)
    assert ours <= listed, sorted(ours - listed)
    unaccounted = {name for name in listed - ours if not name.startswith(EXCLUDED_PREFIXES)}
    assert not unaccounted, f"new client scenarios to run or exclude: {sorted(unaccounted)}"


@pytest.mark.parametrize("scenario", SCENARIOS + AUTH_SCENARIOS)
def test_client_scenario(scenario: str, tmp_path: Path) -> None:
    run_scenario(scenario, "2026-07-28", tmp_path)


@pytest.mark.parametrize(("scenario", "version"), OWN_WIRE_RUNS, ids=[s for s, _ in OWN_WIRE_RUNS])
def test_extension_scenario_on_its_own_wire(scenario: str, version: str | None, tmp_path: Path) -> None:
    run_scenario(scenario, version, tmp_path)


@pytest.mark.parametrize(("scenario", "version"), LEGACY_RUNS, ids=[f"{s}@{v}" for s, v in LEGACY_RUNS])
def test_legacy_client_scenario(scenario: str, version: str, tmp_path: Path) -> None:
    run_scenario(scenario, version, tmp_path)


def run_client(
    scenario: str,
    out: Path,
    *,
    version: str | None = None,
    command: str = f"{PYTHON} {CLIENT}",
    env: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """The harness's client `scenario` run with `command` (at --spec-version `version`, if given):
    its run and its checks."""
    assert " " not in PYTHON and " " not in str(CLIENT), "the harness splits --command on spaces"
    wire = ["--spec-version", version] if version is not None else []
    run = harness(
        "client",
        "--command",
        command,
        "--scenario",
        scenario,
        *wire,
        "-o",
        str(out),
        "--timeout",
        "60000",
        env=env,
    )
    results = list(out.glob("*/checks.json")) + list(out.glob("auth/*/checks.json"))
    assert len(results) == 1, f"no checks.json from the harness:\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    checks: list[dict[str, Any]] = json.loads(results[0].read_text())
    return run, checks


def run_scenario(scenario: str, version: str | None, tmp_path: Path) -> None:
    run, checks = run_client(scenario, tmp_path, version=version)
    problems = describe(checks, run, tmp_path)
    assert not [c for c in checks if c.get("status") in ("FAILURE", "WARNING")], problems
    assert any(c.get("status") == "SUCCESS" for c in checks), problems
    assert run.returncode == 0, problems


@pytest.mark.parametrize(
    ("scenario", "env", "refused", "said"),
    [
        (
            "auth/wif-jwt-bearer",
            {"MCPGEN_CONFORMANCE_WIF_TOKEN": "expired_jwt"},
            "wif-assertion-expired",
            "workload login: the JWT-bearer grant at",
        ),
        (
            "auth/wif-jwt-bearer",
            {"MCPGEN_CONFORMANCE_WIF_TOKEN": "wrong_audience_jwt"},
            "wif-assertion-audience",
            "workload login: the JWT-bearer grant at",
        ),
        (
            "auth/enterprise-managed-authorization",
            {"MCPGEN_CONFORMANCE_IDP_TOKEN": "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJtYWxsb3J5In0.bm90LXNpZ25lZA"},
            "complete-flow-token-exchange",
            "enterprise login, step 1 of 2: the token exchange at the identity provider",
        ),
    ],
    ids=["wif-expired", "wif-wrong-audience", "enterprise-bad-id-token"],
)
def test_a_refused_workload_or_enterprise_login_is_reported_once_with_its_step(
    scenario: str, env: dict[str, str], refused: str, said: str, tmp_path: Path
) -> None:
    """A token the authorization server (or the identity provider) refuses ends the client with an
    error naming the step and the server's error: not sent again, no other grant tried (the
    harness's `wif-no-retry` / `wif-grant-fallback` checks would say so)."""
    run, listed = run_client(scenario, tmp_path, env=env)
    checks = {check["id"]: check["status"] for check in listed}
    assert checks.get(refused) == "FAILURE", describe(listed, run, tmp_path)
    assert "wif-no-retry" not in checks and "wif-grant-fallback" not in checks
    stderr = "\n".join(path.read_text() for path in tmp_path.glob("**/stderr.txt"))
    assert said in stderr and "invalid_grant" in stderr, stderr[-2000:]


WIF_CLI = '''"""The harness's client command for auth/wif-jwt-bearer: a generated package's command
line, logged in as a workload with the scenario's token in an environment variable."""
import json, os, subprocess, sys

context = json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"])
env = {**os.environ, "WIF_TOKEN": context["valid_jwt"]}
login = ["--workload-token-env", "WIF_TOKEN", "--client-id", context["client_id"]]
command = [sys.executable, "-m", "wif_probe_client", "--url", sys.argv[-1], *login, "test-tool"]
sys.exit(subprocess.call(command, env=env))
'''


def test_a_generated_command_line_logs_in_as_a_workload(tmp_path: Path) -> None:
    """`python -m PKG --workload-token-env VAR --client-id ID TOOL` against the harness's workload
    identity scenario: its authorization server verifies the JWT-bearer grant, the tool is called."""
    from tests.support import run_mcpgen, subprocess_env

    spec = tmp_path / "tools.json"
    spec.write_text(json.dumps({"tools": [{"name": "test-tool", "inputSchema": {"type": "object"}}]}))
    done = run_mcpgen(tmp_path, "client", str(spec), "-o", str(tmp_path), "--package", "wif_probe_client")
    assert done.returncode == 0, done.stderr
    script = tmp_path / "wif_cli.py"
    script.write_text(WIF_CLI)
    pythonpath = os.pathsep.join([str(tmp_path), subprocess_env().get("PYTHONPATH", "")])
    out = tmp_path / "out"
    run, checks = run_client(
        "auth/wif-jwt-bearer", out, command=f"{PYTHON} {script}", env={"PYTHONPATH": pythonpath}
    )
    problems = describe(checks, run, out)
    assert {c["id"]: c["status"] for c in checks}.get("wif-assertion-verified") == "SUCCESS", problems
    assert not [c for c in checks if c.get("status") in ("FAILURE", "WARNING")], problems
    (stdout,) = [path.read_text() for path in out.glob("**/stdout.txt")]
    assert json.loads(stdout) == [{"type": "text", "text": "test"}], problems  # the tool's answer, printed
