"""Issue 26's acceptance: ``sortie server`` on its REAL clock sees its fleet through the vehicles.

The world's file telemetry is a day old (every drone "ONLINE" in the file);
one drone's simulated vehicle (PX4, which streams by default) talks over UDP on
127.0.0.1 and reports 90 % battery where the file says 10 % (below the
reserve: the file alone would refuse it). The plan uses that drone and never a
silent one; ``GET /v1/fleet`` and ``sortie fleet --json`` show the vehicle's
state (``source: live``) and a named fault for each silent link. A second
vehicle starts talking and the first stops: within 30 s the first is OFFLINE
(``fleet.offline`` on ``/v1/events``) and the next plan flies the second.
Real tokens (``sortie admin token create``), the real ``sortie server``, the
real simulator; every wait bounded. Cost: about a minute on a shared 2-core
machine.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

from flows.context import DEMO_WORLD_DIR
from flows.sim.vehicle import SimVehicle
from testkit import free_port, stop_process_group

ROOT = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"
TEXT = "这块地今天巡一遍消防通道"
DOCK_B = (60.17328, 24.948, 6.0)


def clean_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith(("SORTIE_", "PREFECT_"))} | {"COLUMNS": "200"}


def until(what: Callable[[], Any], timeout_s: float, step_s: float = 0.5) -> Any:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        got = what()
        if got:
            return got
        time.sleep(step_s)
    return what()


class Server:
    def __init__(self, url: str, world: Path, home: Path) -> None:
        self.url, self.world, self.home = url, world, home
        self.tokens: dict[str, str] = {}

    def token(self, user: str) -> str:
        p = subprocess.run([str(SORTIE), "admin", "token", "create", user, "--home", str(self.home), "--world",
                            str(self.world), "--json"], env=clean_env(), cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 0, p.stderr + p.stdout
        return str(json.loads(p.stdout)["token"])

    def call(self, user: str, method: str, path: str, **kw: Any) -> httpx.Response:
        with httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.tokens[user]}"},
                          timeout=240) as c:
            return c.request(method, path, **kw)

    def fleet(self, user: str = "li.wei") -> dict[str, dict[str, Any]]:
        r = self.call(user, "GET", "/v1/fleet")
        assert r.status_code == 200, r.text
        return {d["id"]: d for d in r.json()["drones"]}

    def plan(self) -> dict[str, Any]:
        r = self.call("li.wei", "POST", "/v1/plan", json={"text": TEXT, "region_id": "region-1001"})
        assert r.status_code == 200, r.text
        return dict(r.json())


@pytest.fixture
def talking(tmp_path: Path) -> Iterator[dict[str, int]]:
    """The world: file telemetry a day old, M3TD-01's file battery 10 %; each drone's link on its own UDP port."""
    world = tmp_path / "world"
    shutil.copytree(DEMO_WORLD_DIR, world)
    fleet = json.loads((world / "fleet.json").read_text(encoding="utf-8"))
    day_old = (datetime.now(timezone.utc) - timedelta(days=1)).replace(microsecond=0).isoformat()
    ports: dict[str, int] = {}
    for d in fleet["drones"]:
        ports[d["id"]] = free_port("udp")
        d.update(status="ONLINE", last_telemetry_at=day_old, link=f"udpout:127.0.0.1:{ports[d['id']]}")
        if d["id"] == "M3TD-01":
            d["battery_pct"] = 10
    (world / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    yield ports


@pytest.fixture
def server(tmp_path: Path, talking: dict[str, int]) -> Iterator[Server]:
    port = free_port()
    s = Server(f"http://127.0.0.1:{port}", tmp_path / "world", tmp_path / "home")
    log = tmp_path / "server.log"
    with open(log, "wb") as out:  # no --clock: the server's real clock; no --fleet: live is the default
        proc = subprocess.Popen([str(SORTIE), "server", "--world", str(s.world), "--home", str(s.home), "--listen",
                                 f"127.0.0.1:{port}", "--sweep-s", "0"], env=clean_env(), cwd=ROOT, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        def up() -> bool:
            assert proc.poll() is None, log.read_text(errors="replace")
            try:
                return httpx.get(f"{s.url}/v1/health", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        assert until(up, 60, 0.2), log.read_text(errors="replace")
        for user in ("li.wei", "chen.jing", "aino.virtanen"):
            s.tokens[user] = s.token(user)
        yield s
    finally:
        stop_process_group(proc)


def drones_of(plan: dict[str, Any]) -> set[str]:
    return {str(x["drone"]) for x in plan["sorties"]}


def test_the_server_plans_with_the_talking_vehicle_and_its_battery_and_drops_it_when_it_stops(
        server: Server, talking: dict[str, int]) -> None:
    one = SimVehicle(f"udpin:127.0.0.1:{talking['M3TD-01']}", "px4", battery_pct=90.0, home=DOCK_B).start()
    two: SimVehicle | None = None
    events: list[dict[str, Any]] = []
    try:
        assert until(lambda: server.fleet()["M3TD-01"]["battery_pct"] == 90.0, 30), server.fleet()
        silent = until(lambda: all(d["fault"] for i, d in server.fleet().items() if i != "M3TD-01"), 30)
        assert silent, server.fleet()
        fleet = server.fleet()
        me = fleet["M3TD-01"]
        assert (me["status"], me["source"], me["mode"], me["armed"]) == ("ONLINE", "live", "LOITER", False), me
        assert me["position"] == {"lat": DOCK_B[0], "lon": DOCK_B[1], "alt_m": 0.0}
        seen = datetime.fromisoformat(me["last_seen"])
        assert abs((datetime.now(timezone.utc) - seen).total_seconds()) < 5  # the server's real clock
        assert set(fleet) == {"M30T-01", "M30T-02", "M3TD-01", "M3TD-02"}  # li.wei's tenant only
        for drone_id in ("M30T-01", "M30T-02", "M3TD-02"):
            d = fleet[drone_id]
            assert (d["status"], d["fault"]["code"], d["source"]) == ("OFFLINE", "LINK_UNAVAILABLE", "live"), d
        port = server.fleet("aino.virtanen")
        assert set(port) <= {"M4TD-01", "M4TD-02"}  # another tenant's drones only

        first = server.plan()
        assert first["status"] == "DRAFT" and first["verdict"] != "block", first
        assert drones_of(first) == {"M3TD-01"}, first["sorties"]  # the file's 10 % would have refused it
        assert first["notes"]["fleet"] == ["M3TD-01"], first["notes"]

        p = subprocess.run([str(SORTIE), "fleet", "--json"], env=clean_env() | {
            "SORTIE_SERVER": server.url, "SORTIE_TOKEN": server.tokens["li.wei"]}, cwd=ROOT, capture_output=True,
            text=True, timeout=120)
        assert p.returncode == 0, p.stderr + p.stdout
        cli = {d["id"]: d for d in json.loads(p.stdout)["drones"]}
        assert (cli["M3TD-01"]["status"], cli["M3TD-01"]["battery_pct"], cli["M3TD-01"]["source"]) == \
            ("ONLINE", 90.0, "live")

        two = SimVehicle(f"udpin:127.0.0.1:{talking['M3TD-02']}", "px4", battery_pct=85.0, home=DOCK_B).start()
        assert until(lambda: server.fleet()["M3TD-02"]["status"] == "ONLINE", 30), server.fleet()["M3TD-02"]

        def listen() -> None:
            with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {server.tokens['chen.jing']}"},
                              timeout=60) as c, c.stream("GET", "/v1/events", params={"timeout_s": 45}) as r:
                for line in r.iter_lines():
                    if line.startswith("data: "):
                        events.append(json.loads(line[6:]))
                        if events[-1]["type"] == "fleet.offline":
                            return

        feed = threading.Thread(target=listen, daemon=True)
        feed.start()
        time.sleep(1.0)
        one.stop()
        t0 = time.monotonic()
        assert until(lambda: server.fleet()["M3TD-01"]["status"] == "OFFLINE", 30), server.fleet()["M3TD-01"]
        took_s = time.monotonic() - t0
        assert took_s < 30
        gone = server.fleet()["M3TD-01"]
        assert gone["fault"]["code"] == "SILENT" and gone["last_seen"], gone
        feed.join(20)
        offline = [e for e in events if e["type"] == "fleet.offline"]
        assert offline and offline[0]["drone_id"] == "M3TD-01" and offline[0]["tenant"] == "city-fire", events

        second = server.plan()
        assert second["status"] == "DRAFT", second
        assert drones_of(second) == {"M3TD-02"}, second["sorties"]
        assert "M3TD-01" not in second["notes"]["fleet"]
    finally:
        one.stop()
        if two is not None:
            two.stop()
