"""The deployment files `mcpgen server` writes into a server package (codegen/render/deploy.py): what they
say, that only the validated package name gets in, and that they are the user's after the first
write. The nginx configuration itself runs in tests/cluster/."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from codegen import RELEASE
from codegen.cli import main
from codegen.errors import InternalGeneratorError
from codegen.render.deploy import DEPLOY_FILES, deploy_files, nginx_conf
from mcpgen_runtime._version import __version__
from mcpgen_runtime.client import Client
from tests.support import ROOT, free_port, wait_for_port
from tests.wheels import Wheels, ok, run


def test_files_name_the_package_and_nothing_else() -> None:
    files = deploy_files("weather_server", __version__)
    assert tuple(files) == tuple(sorted(DEPLOY_FILES))
    for path, text in files.items():
        assert text.startswith(f"# Created by mcpgen {__version__} for the package weather_server.\n"), path
        assert "yours" in text.splitlines()[1] and "DO NOT EDIT" not in text
        assert not re.search(r"@[A-Z_]+@", text) and text.endswith("\n")
    assert files == deploy_files("weather_server", __version__)  # deterministic
    dockerfile = files["Dockerfile"]
    # compose.yaml sets MCPGEN_STORE=redis://; the runtime comes from wheels/ when it is there
    assert (
        "RUN pip install --no-cache-dir --find-links /srv/weather_server/wheels "
        f'"mcpgen-runtime[fast,redis]=={__version__}"\n' in dockerfile
    )
    assert (
        'CMD ["python", "-m", "weather_server", "--http", "--host", "0.0.0.0", "--port", "8000"]'
        in dockerfile
    )


def test_compose_runs_replicas_redis_and_nginx() -> None:
    compose = yaml.safe_load(deploy_files("weather_server", __version__)["deploy/compose.yaml"])
    services = compose["services"]
    assert set(services) == {"app", "redis", "nginx"}
    app = services["app"]
    assert app["environment"]["MCPGEN_STORE"] == "redis://redis:6379/0"
    assert app["environment"]["MCPGEN_STATE_SECRET"].startswith(
        "${MCPGEN_STATE_SECRET:?"
    )  # from the environment
    assert app["deploy"]["replicas"] == 3
    assert "/readyz" in " ".join(app["healthcheck"]["test"])
    assert services["nginx"]["volumes"] == ["./nginx.conf:/etc/nginx/nginx.conf:ro"]
    assert services["nginx"]["depends_on"]["app"]["condition"] == "service_healthy"


def test_nginx_conf_has_the_proxy_rules() -> None:
    conf = nginx_conf("weather_server", __version__)
    for directive in (
        "proxy_http_version 1.1;",
        'proxy_set_header Connection "";',
        "proxy_buffering off;",
        "proxy_read_timeout 600s;",
        "proxy_next_upstream error timeout;",
        "keepalive 64;",
        "server app:8000 max_fails=1 fail_timeout=5s;",
        "listen 8080;",
        "client_body_timeout 10s;",
    ):
        assert directive in conf, directive
    assert "non_idempotent" not in conf.replace("(no `non_idempotent` here)", "")  # never resend a sent POST
    several = nginx_conf(
        "weather_server",
        __version__,
        upstreams=["127.0.0.1:1", "127.0.0.1:2"],
        listen="127.0.0.1:3",
        http_extra=["access_log off;"],
    )
    assert "server 127.0.0.1:1 max_fails=1" in several and "server 127.0.0.1:2 max_fails=1" in several
    assert "    access_log off;" in several and "listen 127.0.0.1:3;" in several


@pytest.mark.parametrize(
    "kwargs",
    [
        {"upstreams": ["app:8000; include /etc/passwd"]},
        {"listen": "8080;\nserver {"},
        {"http_extra": ["access_log off; } server {"]},
        {"upstreams": []},
    ],
)
def test_nginx_conf_refuses_what_is_not_an_address(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        nginx_conf("weather_server", __version__, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("package", ["weather server", "x\nRUN curl evil", "café"])
def test_only_a_validated_package_name_gets_in(package: str) -> None:
    with pytest.raises(InternalGeneratorError):
        deploy_files(package, __version__)


def test_written_once_then_the_users(tmp_path: Path) -> None:
    spec = ROOT / "specs" / "weather.json"
    args = ["server", str(spec), "-o", str(tmp_path), "--package", "wx_server"]
    first = CliRunner().invoke(main, args, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    package = tmp_path / "wx_server"
    for path in DEPLOY_FILES:
        assert (package / path).is_file(), path
    manifest = json.loads((package / ".mcpgen-manifest.json").read_text())
    assert not set(DEPLOY_FILES) & set(manifest["files"])  # not generator-owned
    edited = (package / "deploy" / "nginx.conf").read_text() + "# my TLS settings\n"
    (package / "deploy" / "nginx.conf").write_text(edited)
    again = CliRunner().invoke(main, args, catch_exceptions=False)
    assert again.exit_code == 0, again.output
    assert (package / "deploy" / "nginx.conf").read_text() == edited  # regeneration keeps the user's edit


@pytest.mark.parametrize("package", ["bench_server", "conformance_server", "shapes_server", "weather_server"])
def test_checked_in_dockerfiles_are_the_templates(package: str) -> None:
    """generated/'s Dockerfiles are user files, edited by hand to follow the template (of the release
    that created them, named in their first line)."""
    dockerfile = (ROOT / "generated" / package / "Dockerfile").read_text("utf-8")
    created_by = re.match(r"# Created by mcpgen (\S+) for", dockerfile)
    assert created_by is not None
    assert dockerfile == deploy_files(package, created_by[1])["Dockerfile"]


def _steps(dockerfile: str, context: Path) -> tuple[list[list[str]], Path, list[str]]:
    """The image's pip commands, its working directory and its CMD, with the image's paths mapped
    to where the files are here (COPY sources are under `context`)."""
    lines = dockerfile.replace("\\\n", " ").splitlines()
    copies: list[tuple[str, Path]] = []
    pips: list[list[str]] = []
    workdir, cmd = Path("/"), []
    for line in lines:
        word, _, rest = line.partition(" ")
        if word == "COPY":
            source, target = shlex.split(rest)
            copies.append((target.rstrip("/"), context / source))
        elif word == "WORKDIR":
            workdir = Path(rest.strip())
        elif word == "CMD":
            cmd = json.loads(rest)
        elif word == "RUN":
            for command in rest.split("&&"):
                argv = shlex.split(command)
                if argv[:2] == ["pip", "install"]:
                    pips.append(argv)

    def local(arg: str) -> str:
        for target, source in copies:
            if arg == target or arg.startswith(target + "/"):
                return str(source) + arg[len(target) :]
        return arg

    here = next(source.parent for target, source in copies if target.startswith(str(workdir)))
    return [[local(arg) for arg in argv] for argv in pips], here, cmd


@pytest.mark.timeout(900)
def test_dockerfile_installs_the_runtime_from_wheels_and_serves(tmp_path: Path, wheels: Wheels) -> None:
    """Issue #21 trap 1: the image's pip steps, run in a fresh virtualenv with the runtime wheel in
    wheels/ beside the Dockerfile (taken from there, not from an index), install a runtime that serves
    the package as the image's CMD starts it."""
    # the checked-in weather server (its handlers answer), with the Dockerfile the generator writes
    # for the runtime built from this checkout (the checked-in one pins the release that created it)
    package = tmp_path / "srv" / "weather_server"
    shutil.copytree(
        ROOT / "generated" / "weather_server", package, ignore=shutil.ignore_patterns("__pycache__", "wheels")
    )
    runtime_version = wheels.runtime.name.split("-")[1]
    (package / "Dockerfile").write_text(
        deploy_files("weather_server", RELEASE, runtime_version)["Dockerfile"]
    )
    (package / "wheels").mkdir()
    shutil.copy(wheels.runtime, package / "wheels")  # as `pip wheel --no-deps --wheel-dir wheels runtime/`
    pips, workdir, cmd = _steps((package / "Dockerfile").read_text("utf-8"), package)
    assert pips and all("--no-cache-dir" in argv for argv in pips)
    assert any(str(package / "wheels") in argv for argv in pips)  # the wheels/ beside the Dockerfile
    ok(run([sys.executable, "-m", "venv", tmp_path / "venv"], tmp_path))
    python = tmp_path / "venv" / "bin" / "python"
    said = "".join(ok(run([python, "-m", *argv], tmp_path)) for argv in pips)
    # pip names the wheel it installs (relative to where it runs): the one in wheels/, not an index's
    assert re.search(
        rf"^Processing \S*srv/weather_server/wheels/{re.escape(wheels.runtime.name)}$", said, re.M
    )
    installed = ok(run([python, "-m", "pip", "show", "mcpgen-runtime"], tmp_path))
    assert f"Version: {runtime_version}" in installed
    assert cmd[:3] == ["python", "-m", "weather_server"] and cmd[cmd.index("--port") + 1] == "8000"
    port = free_port()
    argv = [str(python), *cmd[1:]]
    argv[argv.index("--port") + 1] = str(port)
    argv[argv.index("--host") + 1] = "127.0.0.1"  # the image binds every interface; a test binds loopback
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.Popen(argv, cwd=workdir, env=clean, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, proc)
        with Client(f"http://127.0.0.1:{port}/mcp") as client:
            result = client.call_tool("get_weather", {"location": "Berlin"})
        assert "Current weather in Berlin" in result.text
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        assert proc.stderr is not None
        proc.stderr.close()
