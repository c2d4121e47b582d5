"""A real ``sortie server`` on its REAL clock (no ``--clock``), live fleet, real tokens, for the fleet's tests.

The world is a copy of the demo world whose file telemetry is a day old
(every drone "ONLINE" in the file) and whose drones each have their own UDP
port on 127.0.0.1: only a simulated vehicle started on that port makes its
drone talk.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx

from flows.context import DEMO_WORLD_DIR
from flows.server.tokens import TokenStore
from testkit import free_port, stop_process_group

ROOT = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"
PATROL = {"text": "这块地今天巡一遍消防通道", "region_id": "region-1001"}  # DOCK-B's drones when they are free
HYDRANTS = {"text": "inspect the hydrants today", "region_id": "region-1002"}  # one sortie, M3TD-01 (PX4)
DOCK_B = (60.17328, 24.948, 6.0)


def clean_env(**extra: str) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("SORTIE_", "PREFECT_"))} | {"COLUMNS": "200",
                                                                                                  **extra}


def until(what: Callable[[], Any], timeout_s: float, step_s: float = 0.5) -> Any:
    """``what()`` once it is truthy, polled every ``step_s`` for at most ``timeout_s`` (then its last value)."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        got = what()
        if got:
            return got
        time.sleep(step_s)
    return what()


def day_old_world(world: Path, edit: Callable[[dict[str, Any]], None] | None = None) -> dict[str, int]:
    """Copy the demo world to ``world`` with file telemetry a day old and one free UDP port per drone (returned);
    ``edit(drone)`` changes an entry further."""
    shutil.copytree(DEMO_WORLD_DIR, world)
    fleet = json.loads((world / "fleet.json").read_text(encoding="utf-8"))
    day_old = (datetime.now(timezone.utc) - timedelta(days=1)).replace(microsecond=0).isoformat()
    ports: dict[str, int] = {}
    for d in fleet["drones"]:
        ports[d["id"]] = free_port("udp")
        d.update(status="ONLINE", last_telemetry_at=day_old, link=f"udpout:127.0.0.1:{ports[d['id']]}")
        if edit is not None:
            edit(d)
    (world / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    calm_weather_around_now(world)
    return ports


def calm_weather_around_now(world: Path, reference_hour: str = "2026-11-29T05:00") -> None:
    """Make the world's weather the demo's calm reference hour, hour by hour from yesterday to a week ahead.

    These tests run on the server's real clock and are about the fleet, not the weather: the demo's forecast
    is a real one for late November 2026 (on 2 December its wind reaches 12 m/s at 13:00 UTC, enough to leave
    a drone at 90 % no lane it can fly), and it ends on 6 December."""
    path = world / "weather.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    hourly = doc["hourly"]
    k = hourly["time"].index(reference_hour)
    start = (datetime.now(timezone.utc) - timedelta(days=1)).replace(minute=0, second=0, microsecond=0)
    hours = [start + timedelta(hours=i) for i in range(24 * 8)]
    doc["hourly"] = {key: [h.strftime("%Y-%m-%dT%H:00") for h in hours] if key == "time" else [values[k]] * len(hours)
                     for key, values in hourly.items()}
    path.write_text(json.dumps(doc), encoding="utf-8")


class Server:
    """One running ``sortie server`` and its users' tokens."""

    def __init__(self, url: str, world: Path, home: Path) -> None:
        self.url, self.world, self.home = url, world, home
        self.tokens: dict[str, str] = {}

    def call(self, user: str, method: str, path: str, **kw: Any) -> httpx.Response:
        with httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.tokens[user]}"},
                          timeout=240) as c:
            return c.request(method, path, **kw)

    def ok(self, user: str, method: str, path: str, **kw: Any) -> dict[str, Any]:
        r = self.call(user, method, path, **kw)
        assert r.status_code == 200, r.text
        return dict(r.json())

    def fleet(self, user: str = "li.wei") -> dict[str, dict[str, Any]]:
        return {d["id"]: d for d in self.ok(user, "GET", "/v1/fleet")["drones"]}

    def plan(self, body: dict[str, Any] = PATROL) -> dict[str, Any]:
        return self.ok("li.wei", "POST", "/v1/plan", json=body)


@contextlib.contextmanager
def start_server(base: Path, *extra: str, unsigned: bool = True, env: dict[str, str] | None = None) -> Iterator[Server]:
    """``sortie server`` on ``base/world`` (made by ``day_old_world``) and ``base/home``; real clock, live fleet;
    ``unsigned``: with ``--allow-unsigned`` (the demo world's drones are bound to no signing key until an admin
    binds them: ``tests/fleet/test_server_bindings.py``); ``env``: more of the server's environment (a crash
    test's ``SORTIE_TEST_KILL_AT``)."""
    port = free_port()
    s = Server(f"http://127.0.0.1:{port}", base / "world", base / "home")
    log = base / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(SORTIE), "server", "--world", str(s.world), "--home", str(s.home), "--listen",
                                 f"127.0.0.1:{port}", "--sweep-s", "0", *extra,
                                 *(["--allow-unsigned"] if unsigned else [])], env=clean_env(**(env or {})), cwd=ROOT,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        def up() -> bool:
            assert proc.poll() is None, log.read_text(errors="replace")
            try:
                return httpx.get(f"{s.url}/v1/health", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        assert until(up, 60, 0.2), log.read_text(errors="replace")
        store = TokenStore(s.home)  # what `sortie admin token create` does on the host, without a process a token
        for user in ("li.wei", "chen.jing", "aino.virtanen"):
            s.tokens[user] = store.create(user)[1]
        yield s
    finally:
        stop_process_group(proc)
