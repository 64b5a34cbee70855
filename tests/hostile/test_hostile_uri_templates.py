"""Issue 31, item 1: a hostile `resources/read` or `completion/complete` URI costs time linear in its
length, and no other client waits for it.

tests/hostile/uri_templates_app.py serves a resource template of every RFC 6570 shape; it runs as a
real subprocess with the URI cap raised to 64 KiB (`--max-uri-length 65536`), over HTTP (2026-07-28
requests, and an initialize-based 2025-11-25 session) and over stdio (both eras too). Every template
gets 64 KiB URIs built from the characters its expressions stop at or split on, each repeated to
the cap, alone and followed by characters that make the match fail at the very end (the worst case
of the backtracking matcher this replaced: a 2.5 KB URI of dashes took over a minute on
`team://{org}-{team}-{member}`). Each must be answered within 50 ms (the best of five tries, on a
shared two-core machine), while another client's `tools/call` keeps being answered promptly; the
server's peak RSS grows by less than 64 MB over the whole run. One character over the cap is
`-32602` naming the limit.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpgen_runtime.protocol.headers import encode_value
from tests.hostile.uri_templates_app import TEMPLATES
from tests.runtime.legacy_helpers import LegacySession
from tests.runtime.server_helpers import StdioPeer, call, mcp_headers, request
from tests.support import PYTHON, free_port, running_server

LIMIT = 64 * 1024
BOUND_S = 0.050  # one hostile read, best of five tries
PING_BOUND_S = 1.0  # the other client's slowest call while hostile reads run (the old matcher: minutes)
RSS_GROWTH_KIB = 64 * 1024
MODULE = "tests.hostile.uri_templates_app"
FLAGS = ["--max-uri-length", str(LIMIT)]
# Repeated to fill the cap: separators of every kind, a non-ASCII and an astral character.
UNITS = ["-", ".", "/", ",", "a-", "/a.", ";a=&", "%2F", "é-", "😀,"]
ENDINGS = ["", "/#"]  # "/#": no expression may end there, so every split is tried and refused


def hostile_uris(template: str) -> Iterator[str]:
    prefix = template.split("{", 1)[0]
    for unit in UNITS:
        for ending in ENDINGS:
            body = (unit * LIMIT)[: LIMIT - len(prefix) - len(ending)]
            uri = prefix + body + ending
            assert len(uri) == LIMIT
            yield uri


def read(id_: int, uri: str) -> dict[str, Any]:
    return request(id_, "resources/read", {"uri": uri})


def complete(id_: int, uri: str) -> dict[str, Any]:
    return request(
        id_,
        "completion/complete",
        {"ref": {"type": "ref/resource", "uri": uri}, "argument": {"name": "x", "value": "v"}},
    )


def best_of_five(send: Callable[[], dict[str, Any]]) -> tuple[float, dict[str, Any]]:
    best, answer = float("inf"), {}
    for _ in range(5):
        started = time.perf_counter()
        answer = send()
        best = min(best, time.perf_counter() - started)
        if best < BOUND_S:
            break
    return best, answer


def check_answer(answer: dict[str, Any], uri: str) -> None:
    """Served (the reader's variables) or not found; never a crash."""
    if "result" in answer:
        contents = answer["result"]["contents"]
        assert contents[0]["uri"] == uri and isinstance(json.loads(contents[0]["text"]), dict)
    else:
        assert answer["error"]["code"] in (-32602, -32002), answer["error"]
        assert answer["error"]["message"] == "Resource not found"


def status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def run_hostile(send: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    slow: list[tuple[str, int, float]] = []
    id_ = 10
    for template in TEMPLATES:
        for uri in hostile_uris(template):
            id_ += 1
            taken, answer = best_of_five(lambda uri=uri, id_=id_: send(read(id_, uri)))
            check_answer(answer, uri)
            if taken >= BOUND_S:
                slow.append((template, len(uri), taken))
        uri = next(hostile_uris(template))
        taken, answer = best_of_five(lambda uri=uri, id_=id_: send(complete(id_, uri)))
        assert "result" in answer or answer["error"]["code"] == -32602, answer
        if taken >= BOUND_S:
            slow.append((f"completion {template}", len(uri), taken))
    assert not slow, f"answered in {BOUND_S * 1000:.0f} ms or more: {slow}"


def check_cap(send: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    for message in (read(1, "file:///" + "a" * LIMIT), complete(2, "file:///" + "a" * LIMIT)):
        error = send(message)["error"]
        assert error["code"] == -32602 and str(LIMIT) in error["message"], error
        assert error["data"] == {"maxUriLength": LIMIT}


# ---- HTTP -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_server() -> Iterator[tuple[str, int]]:
    port = free_port()
    args = [PYTHON, "-m", MODULE, "--http", "--port", str(port), *FLAGS]
    with running_server(args, port) as proc:
        yield f"http://127.0.0.1:{port}/mcp", proc.pid


def modern_sender(http: httpx.Client) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def send(message: dict[str, Any]) -> dict[str, Any]:
        headers = mcp_headers(message)
        if message["method"] == "resources/read":
            headers["Mcp-Name"] = encode_value(message["params"]["uri"])
        response = http.post("", content=json.dumps(message).encode(), headers=headers)
        assert response.status_code in (200, 400), response.text[:300]
        answer: dict[str, Any] = response.json()
        return answer

    return send


def legacy_sender(http: httpx.Client) -> Callable[[dict[str, Any]], dict[str, Any]]:
    session = LegacySession(http)
    session.initialize()

    def send(message: dict[str, Any]) -> dict[str, Any]:
        bare = {**message, "params": {k: v for k, v in message["params"].items() if k != "_meta"}}
        exchange = session.exchange(bare)
        assert exchange.response is not None, exchange
        return dict(exchange.response)

    return send


class Pinger(threading.Thread):
    """Another client: `tools/call ping` in a loop on its own connection, timing each call."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.latencies: list[float] = []
        self.stop = threading.Event()

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=30) as http:
            send = modern_sender(http)
            while not self.stop.is_set():
                started = time.perf_counter()
                answer = send(call(1, "ping", {}))
                self.latencies.append(time.perf_counter() - started)
                assert answer["result"]["content"][0]["text"] == "pong"
                time.sleep(0.005)


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_hostile_uris_over_http(http_server: tuple[str, int], era: str) -> None:
    url, pid = http_server
    pinger = Pinger(url)
    with httpx.Client(base_url=url, timeout=5) as http:  # the old matcher: a timeout, not a hang
        send = modern_sender(http) if era == "2026-07-28" else legacy_sender(http)
        check_cap(send)
        send(read(3, "file:///warm"))
        rss_before = status_kib(pid, "VmRSS")
        pinger.start()
        try:
            run_hostile(send)
        finally:
            pinger.stop.set()
            pinger.join(timeout=30)
    peak_growth = status_kib(pid, "VmHWM") - rss_before
    assert peak_growth < RSS_GROWTH_KIB, f"peak RSS grew by {peak_growth} KiB"
    assert len(pinger.latencies) > 10
    assert max(pinger.latencies) < PING_BOUND_S, max(pinger.latencies)
    assert statistics.median(pinger.latencies) < BOUND_S, statistics.median(pinger.latencies)


# ---- stdio ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_hostile_uris_over_stdio(era: str) -> None:
    peer = StdioPeer(*FLAGS, module=MODULE)
    try:
        if era == "2025-11-25":
            hello = {
                "protocolVersion": era,
                "capabilities": {},
                "clientInfo": {"name": "hostile", "version": "0"},
            }
            peer.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
            assert peer.recv()["result"]["protocolVersion"] == era
            peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

        def send(message: dict[str, Any]) -> dict[str, Any]:
            if era != "2026-07-28":
                message = {**message, "params": {k: v for k, v in message["params"].items() if k != "_meta"}}
            peer.send(message)
            # The call of another request, sent right behind the hostile one, is answered as promptly.
            peer.send(
                call("ping", "ping", {})
                if era == "2026-07-28"
                else {"jsonrpc": "2.0", "id": "ping", "method": "tools/call", "params": {"name": "ping"}}
            )
            got: dict[Any, dict[str, Any]] = {}
            while len(got) < 2:
                answer = peer.recv(timeout=5)
                got[answer.get("id")] = answer
            assert got["ping"]["result"]["content"][0]["text"] == "pong"
            return got[message["id"]]

        check_cap(send)
        rss_before = status_kib(peer.proc.pid, "VmRSS")
        run_hostile(send)
        peak_growth = status_kib(peer.proc.pid, "VmHWM") - rss_before
        assert peak_growth < RSS_GROWTH_KIB, f"peak RSS grew by {peak_growth} KiB"
    finally:
        peer.close()
