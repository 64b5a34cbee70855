"""`mcpgen` against a protected server: the login through the loopback redirect listener with
`--no-browser` (the printed URL is followed the way a person would), stored tokens reused by
the next run, `mcpgen auth status|logout`, and `--token`. The token file is a temporary one."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.auth._oidc import follow_login, machine_token
from tests.support import ROOT, subprocess_env

pytestmark = pytest.mark.timeout(120)
MCPGEN = [sys.executable, "-m", "codegen.cli"]


def env_for(token_file: Path) -> dict[str, str]:
    return {**subprocess_env(), "MCPGEN_TOKEN_STORE": "file", "MCPGEN_TOKEN_FILE": str(token_file)}


def run(args: list[str], token_file: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MCPGEN, *args],
        cwd=ROOT,
        env=env_for(token_file),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_snapshot_logs_in_through_the_loopback_listener_and_reuses_the_login(
    server: str, tmp_path: Path
) -> None:
    tokens = tmp_path / "config" / "tokens.json"
    out = tmp_path / "tools.json"
    proc = subprocess.Popen(
        [*MCPGEN, "snapshot", server, "-o", str(out), "--no-browser"],
        cwd=ROOT,
        env=env_for(tokens),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        url = None
        for line in proc.stderr:
            if match := re.search(r"(http://\S+/auth\?\S+)", line):
                url = match[1]
                break
        assert url is not None, "no login URL printed"
        redirect_uri = httpx.QueryParams(url.split("?", 1)[1])["redirect_uri"]
        assert redirect_uri.startswith("http://127.0.0.1:")
        callback = follow_login(url, redirect_uri)
        assert httpx.get(callback, timeout=10).status_code == 200  # the CLI's listener takes the code
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    assert "saved" in stdout and {t["name"] for t in json.loads(out.read_text())["tools"]} >= {
        "calculate_sum",
        "whoami",
    }

    assert stat.S_IMODE(os.stat(tokens).st_mode) == 0o600  # AUTH-16
    stored = json.loads(tokens.read_text())
    access = stored[f"tokens {server} -"]["tokens"]["access_token"]

    again = run(["validate", server], tokens)  # logged in already: no URL, no prompt
    assert again.returncode == 0, again.stderr
    assert "To log in" not in again.stderr

    status = run(["auth", "status", server], tokens)
    assert (
        status.returncode == 0
        and "issuer http://127.0.0.1:" in status.stdout
        and "mcp:tools" in status.stdout
    )
    assert access not in status.stdout + status.stderr + stdout + stderr + again.stdout + again.stderr

    logout = run(["auth", "logout", server], tokens)
    assert logout.returncode == 0 and "forgot 1 login" in logout.stdout
    assert f"tokens {server} -" not in json.loads(tokens.read_text())


def test_a_ready_token_is_sent_instead_of_logging_in(server: str, issuer: str, tmp_path: Path) -> None:
    token = machine_token(issuer, server)
    done = run(["validate", server, "--token", token], tmp_path / "tokens.json")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "tokens.json").exists()


def test_a_refused_token_fails_with_a_clear_error_and_does_not_leak(server: str, tmp_path: Path) -> None:
    token = "not-a-valid-token-0123456789abcdef"
    done = run(["validate", server, "--token", token], tmp_path / "tokens.json")
    assert done.returncode == 1
    assert "401" in done.stderr and "invalid_token" in done.stderr and token not in done.stderr + done.stdout


def test_the_login_options_for_workloads_and_company_sign_in(tmp_path: Path) -> None:
    """Their usage errors come before any connection; the options build the OAuth settings they
    name, and secrets given on the command line are masked from then on."""
    from click.testing import CliRunner

    from codegen.cli import main
    from codegen.cli.auth import Login
    from mcpgen_runtime.masking import masked

    runner = CliRunner()
    url = "http://127.0.0.1:9/mcp"
    for args, message in [
        (["--token", "t", "--workload-token-env", "W"], "pick one way in"),
        (["--workload-token-file", "f", "--workload-token-env", "W"], "pick one way in"),
        (["--idp-issuer", "https://idp.example"], "--idp-issuer needs --client-id"),
        (["--id-token-env", "ID"], "go with --idp-issuer"),
        (["--dpop", "sometimes"], "Invalid value for '--dpop'"),
    ]:
        done = runner.invoke(main, ["auth", "login", url, *args])
        assert done.exit_code == 2 and message in done.output, (args, done.output)
    token = tmp_path / "token"
    token.write_text("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3In0.c2ln\n")
    workload = Login(workload_token_file=str(token), client_id="bot", dpop="required").oauth()
    assert workload is not None and workload.chosen_grant == "jwt_bearer" and workload.dpop == "required"
    assert workload.assertion is not None and callable(workload.assertion)
    assert workload.assertion() == "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3In0.c2ln"
    company = Login(
        client_id="chat",
        client_secret="chat-secret-0123",
        idp_issuer="https://idp.example",
        idp_client_id="chat-at-idp",
        idp_client_secret="idp-secret-0123",
        id_token_env="ID_TOKEN",
    ).oauth()
    assert company is not None and company.chosen_grant == "enterprise" and company.grant == "auto"
    assert company.enterprise is not None and company.enterprise.client_id == "chat-at-idp"
    assert masked("idp-secret-0123 chat-secret-0123") == "*** ***"
