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
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

from fleet.fleetkit import DOCK_B, ROOT, SORTIE, Server, clean_env, day_old_world, start_server, until
from flows.sim.vehicle import SimVehicle
from testkit import sim_vehicle


@pytest.fixture
def talking(tmp_path: Path) -> dict[str, int]:
    """File telemetry a day old, M3TD-01's file battery 10 %; each drone's link on its own UDP port."""
    return day_old_world(tmp_path / "world", lambda d: d.update(battery_pct=10) if d["id"] == "M3TD-01" else None)


@pytest.fixture
def server(tmp_path: Path, talking: dict[str, int]) -> Iterator[Server]:
    with start_server(tmp_path) as s:  # no --clock: the server's real clock; no --fleet: live is the default
        yield s


def drones_of(plan: dict[str, Any]) -> set[str]:
    return {str(x["drone"]) for x in plan["sorties"]}


def test_the_server_plans_with_the_talking_vehicle_and_its_battery_and_drops_it_when_it_stops(
        server: Server, talking: dict[str, int]) -> None:
    one = sim_vehicle(f"udpin:127.0.0.1:{talking['M3TD-01']}", "px4", battery_pct=90.0, home=DOCK_B).start()
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
        table = subprocess.run([str(SORTIE), "fleet"], env=clean_env() | {
            "SORTIE_SERVER": server.url, "SORTIE_TOKEN": server.tokens["li.wei"], "COLUMNS": "80"}, cwd=ROOT,
            capture_output=True, text=True, timeout=120)
        assert table.returncode == 0, table.stderr + table.stdout
        lines = table.stdout.splitlines()  # a terminal's default width: one line a drone, nothing wrapped or cut
        assert max(map(len, lines)) <= 80 and "…" not in table.stdout, table.stdout
        row = next(line.split() for line in lines if line.startswith("M3TD-01"))
        assert row[:7] == ["M3TD-01", "ONLINE", "90", "%", "LOITER", "no", f"{DOCK_B[0]:.5f}"], table.stdout
        assert "M30T-01: LINK_UNAVAILABLE" in table.stdout and "live from the vehicles" in table.stdout

        two = sim_vehicle(f"udpin:127.0.0.1:{talking['M3TD-02']}", "px4", battery_pct=85.0, home=DOCK_B).start()
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


def test_a_server_reading_its_fleet_from_the_file_labels_it_and_the_day_old_file_cannot_plan(tmp_path: Path) -> None:
    day_old_world(tmp_path / "world")
    with start_server(tmp_path, "--fleet", "file") as server:
        out = server.ok("li.wei", "GET", "/v1/fleet")
        assert out["source"] == "file" and {d["source"] for d in out["drones"]} == {"file"}
        assert {d["status"] for d in out["drones"]} == {"ONLINE"}  # what the file says, a day late
        plan = server.plan()
        assert plan["status"] == "WAITING_RESOURCE", plan  # the freshness rule: nothing has reported for a day
