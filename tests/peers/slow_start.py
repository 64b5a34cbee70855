"""Test peer: a stdio MCP server that starts slowly (it sleeps before it reads stdin, like `npx`
on a first run or an SDK under load), so a dual-era client's `server/discover` probe times out
before the answer comes (tests/runtime/client/test_client_slow_start.py).

    python tests/peers/slow_start.py --delay 1.5 --era modern --log received.jsonl

`--era`: `modern` answers `server/discover` and refuses `initialize` with -32022 naming
2026-07-28 (the official SDK 2.x does both); `modern-drops-probe` too, but leaves the first
`server/discover` unanswered (a server that honours the probe's cancellation); `dual` answers
both; `legacy-error` answers the probe with -32601; `legacy-silent` ignores it. Every era
answers `tools/call` with "ok (<era>)". Each line received is appended to `--log`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

MODERN = "2026-07-28"
DISCOVERED = {
    "supportedVersions": [MODERN],
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "slow-start", "version": "1.0.0"},
    "resultType": "complete",
}
NOT_FOUND = {"code": -32601, "message": "Method not found"}
REFUSED = {
    "code": -32022,
    "message": "this server speaks 2026-07-28 only",
    "data": {"supported": [MODERN], "requested": "2025-11-25"},
}


ERAS = ("modern", "modern-drops-probe", "dual", "legacy-error", "legacy-silent")


def answer(era: str, message: dict[str, Any]) -> dict[str, Any] | None:
    method = message["method"]
    if method == "server/discover":
        if era == "modern-drops-probe" and message["id"] == 1:
            return None
        if era.startswith("modern") or era == "dual":
            return {"result": DISCOVERED}
        return None if era == "legacy-silent" else {"error": NOT_FOUND}
    if method == "initialize":
        if era.startswith("modern"):
            return {"error": REFUSED}
        version = message["params"]["protocolVersion"]
        info = {"name": "slow-start", "version": "1.0.0"}
        return {"result": {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}}
    if method == "tools/call":
        return {"result": {"content": [{"type": "text", "text": f"ok ({era})"}], "isError": False}}
    return {"error": NOT_FOUND}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, required=True)
    parser.add_argument("--era", choices=ERAS, required=True)
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    time.sleep(args.delay)  # a slow start: whatever the client sent waits in the pipe
    with open(args.log, "a", encoding="utf-8") as log:
        for line in sys.stdin:
            log.write(line)
            log.flush()
            message = json.loads(line)
            if "id" not in message or "method" not in message:
                continue
            reply = answer(args.era, message)
            if reply is not None:
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], **reply}) + "\n")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
