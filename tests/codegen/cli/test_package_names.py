"""`mcpgen client` / `server` without --package, against real servers: the package is named after
the server (its serverInfo.name: generated servers name themselves after their package), never
after the loopback address or a transport word; a second server never silently replaces the first's
package (writing over a package generated from another source needs --force)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from codegen.write.manifest import recorded_source
from tests.support import free_port, run_mcpgen, running_server


def _mcpgen(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_mcpgen(cwd, *args)


def _stdio(package: str) -> str:
    return f"{sys.executable} -m {package} --stdio"


def _source(package_dir: Path) -> str | None:
    return recorded_source((package_dir / "__init__.py").read_bytes())


def test_two_stdio_servers_get_their_own_packages(tmp_path: Path) -> None:
    weather = _mcpgen(tmp_path, "client", "--stdio", _stdio("weather_server"), "-o", "out")
    assert weather.returncode == 0, weather.stderr
    shapes = _mcpgen(tmp_path, "client", "--stdio", _stdio("shapes_server"), "-o", "out", "-q")
    assert shapes.returncode == 0, shapes.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["shapes_client", "weather_client"]
    # the header names the module started, not only the interpreter
    assert _source(tmp_path / "out" / "weather_client") == "stdio:python -m weather_server".replace(
        "python", Path(sys.executable).name
    )


def test_another_source_needs_force(tmp_path: Path) -> None:
    first = _mcpgen(tmp_path, "client", "--stdio", _stdio("weather_server"), "-o", "out")
    assert first.returncode == 0, first.stderr
    package = tmp_path / "out" / "weather_client"
    before = {p.name: p.read_bytes() for p in package.iterdir() if p.is_file()}
    other = ("client", "--stdio", _stdio("shapes_server"), "-o", "out", "--package", "weather_client")

    refused = _mcpgen(tmp_path, *other)  # refused before any warning about the spec
    assert refused.returncode == 1
    shown = Path(sys.executable).name
    assert refused.stderr.strip() == (
        f"error: out/weather_client was generated from stdio:{shown} -m weather_server, not "
        f"stdio:{shown} -m shapes_server: give --force to replace it, or --package NAME to write the "
        "new one beside it"
    )
    assert {p.name: p.read_bytes() for p in package.iterdir() if p.is_file()} == before

    again = _mcpgen(tmp_path, "client", "--stdio", _stdio("weather_server"), "-o", "out")  # same source
    assert again.returncode == 0 and again.stderr == "", again.stderr

    forced = _mcpgen(tmp_path, *other, "--force")
    assert forced.returncode == 0, forced.stderr
    assert _source(package) == f"stdio:{shown} -m shapes_server"

    # a spec file over a server's package: the same rule, for `server` too
    spec = Path(__file__).resolve().parents[3] / "specs" / "weather.json"
    served = _mcpgen(tmp_path, "server", str(spec), "-o", "out", "--package", "weather_client")
    assert served.returncode == 1 and "give --force" in served.stderr


def test_a_loopback_url_is_named_after_the_server(tmp_path: Path) -> None:
    port = free_port()
    with running_server([sys.executable, "-m", "weather_server", "--port", str(port)], port):
        url = f"http://127.0.0.1:{port}/mcp"
        result = _mcpgen(tmp_path, "client", url, "-o", "out")
        assert result.returncode == 0, result.stderr
        assert [p.name for p in (tmp_path / "out").iterdir()] == ["weather_client"]
    # the same server at another port is the same source (a local server's port changes)
    other_port = free_port()
    with running_server([sys.executable, "-m", "weather_server", "--port", str(other_port)], other_port):
        again = _mcpgen(tmp_path, "client", f"http://127.0.0.1:{other_port}/mcp", "-o", "out")
        assert again.returncode == 0, again.stderr
