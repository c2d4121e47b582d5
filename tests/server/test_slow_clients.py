"""Header and body timeouts (issue 38): a client that sends its headers or its body a byte at a time is cut off,
and a prompt client is served meanwhile. The server's app (``create_app``) under uvicorn with the server's own
protocol (``flows.server.timeouts.timed_h11``) in a thread on 127.0.0.1, short limits; real sockets."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from flows.context import DEMO_WORLD_DIR
from testkit import free_port

CLOCK = "2026-11-29T07:00:00+02:00"
HEADERS_S, BODY_S = 1.0, 1.5


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    import uvicorn

    from flows.server.api import create_app
    from flows.server.run import make_config
    from flows.server.timeouts import timed_h11

    base = tmp_path_factory.mktemp("slow")
    shutil.copytree(DEMO_WORLD_DIR, base / "world")
    config = replace(make_config(base / "world", base / "home", CLOCK, fleet="file", allow_unsigned=True),
                     header_timeout_s=HEADERS_S, body_timeout_s=BODY_S, full_walk=False, plan_workers=0)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(config), host="127.0.0.1", port=port, log_level="warning",
                                          http=timed_h11(config.header_timeout_s)))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    end = time.monotonic() + 30
    while not server.started and time.monotonic() < end:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", config.home
    finally:
        server.should_exit = True
        thread.join(10)


def _trickle(url: str, head: bytes, body: bytes, every_s: float = 0.3) -> tuple[float, bytes]:
    """Send ``head`` then ``body`` a byte every ``every_s`` until the server answers or closes; (seconds, answer)."""
    host, port = url.removeprefix("http://").split(":")
    t0 = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.settimeout(every_s)
        for b in head + body:
            if time.monotonic() - t0 > 20:
                break
            try:
                s.sendall(bytes([b]))
            except OSError:
                break
            try:
                got = s.recv(4096)
            except socket.timeout:
                continue
            return time.monotonic() - t0, got  # an answer, or b"" when it closed
    return time.monotonic() - t0, b"(still open)"


def _whole_answer(s: socket.socket, first: bytes, budget_s: float = 5.0) -> bytes:
    """``first`` completed to the end of its body: the server's head and body may arrive in separate segments."""
    answer, end = first, time.monotonic() + budget_s
    s.settimeout(0.5)
    while time.monotonic() < end and not _complete(answer):
        try:
            chunk = s.recv(4096)
        except socket.timeout:
            continue
        except OSError:
            break
        if not chunk:
            break
        answer += chunk
    return answer


def _complete(answer: bytes) -> bool:
    head, sep, body = answer.partition(b"\r\n\r\n")
    if not sep:
        return False
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    return len(body) >= length


def test_slow_headers_are_cut_off_and_a_prompt_client_is_served(served: tuple[str, Path]) -> None:
    url = served[0]
    head = b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 60 + b"\r\n\r\n"
    seconds, answer = _trickle(url, head, b"")
    assert answer == b"" and HEADERS_S <= seconds < HEADERS_S + 3, (seconds, answer)
    assert httpx.get(f"{url}/v1/health", timeout=5).status_code == 200


def test_a_slow_body_is_408_and_audited_as_a_refusal(served: tuple[str, Path]) -> None:
    from flows.ledger import open_ledger

    url, home = served
    body = b'{"text": "inspect the hydrants today", "region_id": "region-1002"}'
    head = (b"POST /v1/plan HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Authorization: Bearer sortie_x_y\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n")
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        t0 = time.monotonic()  # before the head: the server's body clock starts when it has read the head
        s.sendall(head)
        s.settimeout(0.3)
        answer = b""
        for b in body:
            s.sendall(bytes([b]))
            try:
                answer = s.recv(4096)
                break
            except socket.timeout:
                if time.monotonic() - t0 > 20:
                    break
        seconds = time.monotonic() - t0
        answer = _whole_answer(s, answer) if answer else answer
    assert answer.startswith(b"HTTP/1.1 408") and b"REQUEST_TIMEOUT" in answer, answer
    assert BODY_S <= seconds < BODY_S + 3, seconds
    end, rows = time.monotonic() + 5, []
    while not rows and time.monotonic() < end:  # a refusal before any route ran is audited in the next batch
        time.sleep(0.2)
        rows = [r for r in open_ledger(home).audit_rows(limit=20) if r.result_code == "REQUEST_TIMEOUT"]
    assert rows and rows[0].command.endswith("POST /v1/plan"), rows
