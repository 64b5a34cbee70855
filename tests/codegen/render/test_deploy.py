"""The deployment files `mcpgen server` writes into a server package (codegen/render/deploy.py): what they
say, that only the validated package name gets in, and that they are the user's after the first
write. The nginx configuration itself runs in tests/cluster/."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from codegen.cli import main
from codegen.errors import InternalGeneratorError
from codegen.render.deploy import DEPLOY_FILES, deploy_files, nginx_conf
from mcpgen_runtime._version import __version__
from tests.support import ROOT


def test_files_name_the_package_and_nothing_else() -> None:
    files = deploy_files("weather_server", __version__)
    assert tuple(files) == tuple(sorted(DEPLOY_FILES))
    for path, text in files.items():
        assert text.startswith(f"# Created by mcpgen {__version__} for the package weather_server.\n"), path
        assert "yours" in text.splitlines()[1] and "DO NOT EDIT" not in text
        assert not re.search(r"@[A-Z_]+@", text) and text.endswith("\n")
    assert files == deploy_files("weather_server", __version__)  # deterministic
    dockerfile = files["Dockerfile"]
    assert (
        f'"mcpgen-runtime[fast,redis]=={__version__}"' in dockerfile
    )  # compose.yaml sets MCPGEN_STORE=redis://
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
