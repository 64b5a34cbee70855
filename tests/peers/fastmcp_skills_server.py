"""FastMCP 4.1.4 serving a folder of skills through its SEP-2640 extension (run by the FastMCP venv,
tests/peers/.venv-fastmcp): python fastmcp_skills_server.py --port PORT --root DIR

The folder is read again on every request (`reload=True`), so a test can change a file under a running
server: what a client holds from its listing then no longer matches what it reads."""

from __future__ import annotations

import argparse

from fastmcp import FastMCP
from fastmcp.server.providers.skills import SkillsDirectoryProvider
from fastmcp.skills.extension import SkillsExtension


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    server = FastMCP("fastmcp-skills-peer")
    provider = SkillsDirectoryProvider(roots=args.root, reload=True, experimental_skills=True)
    server.add_provider(provider)
    server.add_extension(SkillsExtension(providers=[provider]))
    server.run(transport="http", host="127.0.0.1", port=args.port, show_banner=False)


if __name__ == "__main__":
    main()
