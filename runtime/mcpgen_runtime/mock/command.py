"""Running a mock: `serve_mock` (both command lines end here) and `python -m mcpgen_runtime.mock`.

`mcpgen mock` (codegen/cli.py) reads specs from files and live servers and reports the
generator's diagnostics first; `python -m mcpgen_runtime.mock` needs only the runtime and reads
spec files (`{"tools": [...]}`, a bare list, a JSON-RPC `tools/list` response, or a generated
package's `tools.json`). The pytest plugin starts the latter for stdio and subprocess mocks.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

from .. import _json
from .responses import ResponsesError
from .server import MockServer
from .values import MockDependencyError

__all__ = ["build_parser", "keep_hypothesis_files_in_the_cache", "load_spec_file", "main", "serve_mock"]

MAX_SPEC_BYTES: Final = 64 * 1024 * 1024
Transport = Literal["http", "stdio"]


def load_spec_file(path: str | Path) -> list[dict[str, Any]]:
    """The tool objects in a spec file; `ValueError` saying why when there are none."""
    path = Path(path)
    data = path.read_bytes()
    if len(data) > MAX_SPEC_BYTES:
        raise ValueError(f"{path}: larger than {MAX_SPEC_BYTES} bytes")
    try:
        document = _json.loads(data)
    except _json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from exc
    if isinstance(document, Mapping) and isinstance(document.get("result"), Mapping):
        document = document["result"]  # a JSON-RPC tools/list response
    tools = document.get("tools") if isinstance(document, Mapping) else document
    if not isinstance(tools, list) or not all(isinstance(tool, Mapping) for tool in tools):
        raise ValueError(f'{path}: expected {{"tools": [...]}} or a list of tool objects')
    return [dict(tool) for tool in tools]


def keep_hypothesis_files_in_the_cache() -> None:
    """For a mock process of its own: hypothesis's files (its unicode tables) go to
    `$XDG_CACHE_HOME/mcpgen/hypothesis` (else `~/.cache/...`), not `.hypothesis/` wherever the
    mock was started, unless `HYPOTHESIS_STORAGE_DIRECTORY` says otherwise. It moves them for
    the whole process: only the mock's own command lines call it, before anything imports
    hypothesis-jsonschema (which builds those tables when imported)."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    try:
        from hypothesis.configuration import set_hypothesis_home_dir
    except ImportError:  # nothing to move: the mock then needs no generated values
        return
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    set_hypothesis_home_dir(os.path.join(cache, "mcpgen", "hypothesis"))


def serve_mock(server: MockServer, transport: Transport = "http", host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve until interrupted (HTTP) or until stdin closes (stdio)."""
    if transport == "stdio":
        server.run_stdio()
    else:
        server.run_http(host, port)


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Serve a spec's tools with schema-valid answers (mcpgen mock without the generator)."
    )
    parser.add_argument("spec", help="spec file or a generated package's tools.json")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--http", dest="transport", action="store_const", const="http", help="Streamable HTTP (default)")
    mode.add_argument("--stdio", dest="transport", action="store_const", const="stdio", help="stdin/stdout")
    parser.set_defaults(transport="http")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    parser.add_argument("--seed", type=int, default=0, help="the same seed gives the same answers (default 0)")
    parser.add_argument("--responses", metavar="FILE", help="canned answers, errors and faults (YAML or JSON)")
    parser.add_argument("--record", metavar="FILE", help="append every call to FILE as JSON lines")
    parser.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"],
                        help="log level; logs go to stderr (default warning)")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser("python -m mcpgen_runtime.mock").parse_args(argv)
    keep_hypothesis_files_in_the_cache()  # before hypothesis builds (and stores) its unicode tables
    # Logs never go to stdout: on stdio it carries protocol messages only (STDIO-03).
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        server = MockServer(load_spec_file(args.spec), seed=args.seed, responses=args.responses, record=args.record)
    except (OSError, ValueError, ResponsesError, MockDependencyError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(1) from None
    serve_mock(server, args.transport, args.host, args.port)
