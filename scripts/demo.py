"""`make demo`: generate a client and a server from specs/weather.json, serve, call every tool, print;
then one call through the client package's command line and one `mcpgen diff`.

Runs what a user would run: the mcpgen CLI, `python -m weather_server --http`, and the generated client.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def run(*args: str) -> None:
    print(f"$ {' '.join(args)}", flush=True)
    subprocess.run(args, cwd=ROOT, check=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited early with code {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("server did not start listening within 20 s")


def main() -> None:
    run(str(BIN / "mcpgen"), "validate", "specs/weather.json")
    # Same packages as the [tool.mcpgen] targets in pyproject.toml; regenerating keeps handlers.py (yours).
    run(str(BIN / "mcpgen"), "client", "specs/weather.json", "-o", "generated", "--package", "weather_client")
    run(str(BIN / "mcpgen"), "server", "specs/weather.json", "-o", "generated", "--package", "weather_server")

    sys.path.insert(0, str(ROOT / "generated"))
    from weather_client import Client

    from mcpgen_runtime.errors import ToolError

    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "generated"), str(ROOT)])}
    command = [sys.executable, "-m", "weather_server", "--http", "--port", str(port)]
    print(f"$ {' '.join(command[1:])}  (PYTHONPATH=generated)", flush=True)
    server = subprocess.Popen(command, cwd=ROOT, env=env)
    try:
        wait_listening(port, server)
        url = f"http://127.0.0.1:{port}/mcp"
        print(f"\nserver listening on {url}\n")
        with Client(url) as client:
            info = client.discover()
            print(
                "server/discover ->", info["supportedVersions"], "tools:", info["capabilities"].get("tools")
            )
            print("tools/list      ->", [tool["name"] for tool in client.list_all_tools()])
            print()
            print("get_weather('Berlin')            ->", repr(client.get_weather("Berlin").text))
            print("get_weather_data('Berlin')       ->", repr(client.get_weather_data("Berlin")))
            print("list_users()                     ->", client.list_users())
            sql = client.execute_sql(region="us-west1", query="SELECT 1")  # two required: keyword-only
            print(
                "execute_sql(region='us-west1', query='SELECT 1') ->",
                repr(sql.text),
                " (sent Mcp-Param-Region: us-west1)",
            )
            print("calculate_sum(a=2, b=40.5)       ->", repr(client.calculate_sum(a=2, b=40.5).text))
            print("get_current_time()               ->", repr(client.get_current_time().text))
            try:
                client.execute_sql(region="us-west1", query="DROP TABLE users")
            except ToolError as exc:
                print(
                    "execute_sql(region='us-west1', query='DROP TABLE users') -> ToolError:",
                    repr(exc.result.text),
                )
        show_cli(url, env)
    finally:
        server.terminate()
        server.wait(timeout=10)
        print("\nserver stopped")
    show_diff()


def show_cli(url: str, env: dict[str, str]) -> None:
    """The same server from a shell: the generated package's command line (`python -m weather_client`)."""
    command = [
        sys.executable,
        "-m",
        "weather_client",
        "--url",
        url,
        "get-weather-data",
        "--location",
        "Berlin",
    ]
    print(f"\n$ python -m weather_client --url {url} get-weather-data --location Berlin", flush=True)
    result = subprocess.run(command, cwd=ROOT, env=env)
    print(f"(exit code {result.returncode}; `python -m weather_client --help` lists every tool)", flush=True)


def show_diff() -> None:
    """What a new version of the spec would break: one tool gone, one argument newly required."""
    spec = json.loads((ROOT / "specs" / "weather.json").read_text("utf-8"))
    spec["tools"] = [tool for tool in spec["tools"] if tool["name"] != "get_current_time"]
    data = next(tool for tool in spec["tools"] if tool["name"] == "get_weather_data")
    data["inputSchema"]["properties"]["units"] = {"type": "string", "enum": ["metric", "imperial"]}
    data["inputSchema"]["required"] = [*data["inputSchema"].get("required", []), "units"]
    changed = Path(tempfile.mkdtemp(prefix="mcpgen-demo-")) / "weather-v2.json"
    changed.write_text(json.dumps(spec, indent=2), "utf-8")
    print(f"\n$ mcpgen diff specs/weather.json {changed}")
    result = subprocess.run([str(BIN / "mcpgen"), "diff", "specs/weather.json", str(changed)], cwd=ROOT)
    print(f"(exit code {result.returncode}: 1 means the change breaks clients or servers of these tools)")


if __name__ == "__main__":
    main()
