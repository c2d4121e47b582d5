"""Only our vehicles (issue 38), through a real ``sortie server`` over real HTTP and real MAVLink on 127.0.0.1:
a fleet that does not bind its vehicles does not start (unless ``--allow-unsigned``, said in health and the
audit); ``sortie admin vehicle bind`` provisions the key on the vehicle (SETUP_SIGNING); forged telemetry from
another source changes nothing in ``/v1/fleet`` and raises ``fleet.intrusion``; a mission uploaded by another
client while nothing is dispatched raises it too, holds the drone out of planning, and an operator clears it."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil  # noqa: E402

from fleet.fleetkit import DOCK_B, PATROL, ROOT, SORTIE, clean_env, day_old_world, start_server, until  # noqa: E402
from fleet.rawpeer import forge_flight, forger  # noqa: E402
from flows.ledger import open_ledger  # noqa: E402
from testkit import sim_vehicle  # noqa: E402
from flows.vehicle.keys import load_signing_key  # noqa: E402
from flows.vehicle.link import VehicleLink  # noqa: E402
from flows.vehicle.binding import VehicleBinding  # noqa: E402
from flows.vehicle.mission_client import MissionClient  # noqa: E402
from planner.output.mission_items import FRAME_GLOBAL_RELATIVE_ALT, MISSION, MissionItem  # noqa: E402

M = mavutil.mavlink
DRONES = ("M3TD-01", "M3TD-02")  # DOCK-B's pair; the patrol's drones when they are free


def two_drone_world(world: Path) -> dict[str, int]:
    """The day-old demo world with DOCK-B's two drones only (each its UDP port on 127.0.0.1)."""
    ports = day_old_world(world)
    fleet = json.loads((world / "fleet.json").read_text(encoding="utf-8"))
    fleet["drones"] = [d for d in fleet["drones"] if d["id"] in DRONES]
    (world / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    return {d: ports[d] for d in DRONES}


def sortie(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SORTIE), *args], env=clean_env(), cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


class Events:
    """The server's event stream for one token, read on a thread."""

    def __init__(self, url: str, token: str) -> None:
        self.got: list[dict[str, Any]] = []
        self._t = threading.Thread(target=self._run, args=(url, token), daemon=True)
        self._t.start()

    def _run(self, url: str, token: str) -> None:
        try:
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=None) as c, \
                    c.stream("GET", "/v1/events") as r:
                for line in r.iter_lines():
                    if line.startswith("data: "):
                        self.got.append(json.loads(line[6:]))
        except httpx.HTTPError:
            return  # the server stopped

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.got if e.get("type") == kind]


def test_only_bound_vehicles_forged_traffic_is_refused_and_foreign_control_holds_the_drone(tmp_path: Path) -> None:
    ports = two_drone_world(tmp_path / "world")
    home = tmp_path / "home"
    sims = {d: sim_vehicle(f"udpin:127.0.0.1:{ports[d]}", "px4", battery_pct=90.0, home=DOCK_B).start() for d in DRONES}
    try:
        refused = sortie("server", "--world", str(tmp_path / "world"), "--home", str(home), "--listen",
                         "127.0.0.1:9")
        assert refused.returncode == 2 and "do not bind their vehicle" in refused.stdout + refused.stderr
        assert "M3TD-01" in refused.stdout + refused.stderr and "--allow-unsigned" in refused.stdout + refused.stderr
        for d in DRONES:  # one admin command each: the vehicle gets its key and proves it signs with it
            bound = sortie("admin", "vehicle", "bind", d, "--system-id", "1", "--home", str(home), "--world",
                           str(tmp_path / "world"), "--json")
            assert bound.returncode == 0, bound.stdout + bound.stderr
            assert sims[d].signing_key == load_signing_key(home / "keys", json.loads(bound.stdout)["key_ref"])
        with start_server(tmp_path, unsigned=False) as server:
            health = httpx.get(f"{server.url}/v1/health", timeout=10).json()
            assert health["vehicles"] == {"allow_unsigned": False, "unsigned": []}
            assert until(lambda: all(server.fleet()[d]["status"] == "ONLINE" for d in DRONES), 30), server.fleet()
            assert all(server.fleet()[d]["signed"] is True for d in DRONES)
            events = Events(server.url, server.tokens["chen.jing"])
            before = server.fleet()["M3TD-02"]

            # forged telemetry from another source: to the hub's own socket, as the sim sees it
            alive = sims["M3TD-02"].ports[0].conn.clients_last_alive  # the admin's closed sockets spoke before
            hub_addr = max(dict(alive).items(), key=lambda kv: kv[1])[0]
            attacker = forger(hub_addr)
            for _ in range(30):
                forge_flight(attacker)
                time.sleep(0.04)
            attacker.close()
            assert until(lambda: server.fleet()["M3TD-02"]["intrusion"]["other_source"] >= 30, 10)
            after = server.fleet()["M3TD-02"]
            assert (after["status"], after["armed"], after["battery_pct"]) == ("ONLINE", False, 90.0)
            assert after["position"]["alt_m"] == before["position"]["alt_m"]
            assert until(lambda: events.of("fleet.intrusion"), 10)
            assert events.of("fleet.intrusion")[0]["kind"] == "forged"
            assert not events.of("fleet.battery_low")

            # a mission uploaded by another client while nothing of ours is dispatched
            key = load_signing_key(home / "keys", "m3td-02")
            other = VehicleLink(f"udpout:127.0.0.1:{ports['M3TD-02']}", VehicleBinding(signing_key=key),
                                system_id=254, streams={})
            try:
                other.connect(time.monotonic() + 5)
                items = tuple(MissionItem(seq=i, command=M.MAV_CMD_NAV_WAYPOINT, frame=FRAME_GLOBAL_RELATIVE_ALT,
                                          lat=DOCK_B[0] + i * 1e-4, lon=DOCK_B[1], alt_m=30.0) for i in range(6))
                assert MissionClient(other, retry_s=0.2).upload(items, MISSION, time.monotonic() + 10).outcome \
                    == "ACCEPTED"
            finally:
                other.close()
            assert until(lambda: server.fleet()["M3TD-02"]["status"] == "HELD", 10), server.fleet()["M3TD-02"]
            row = server.fleet()["M3TD-02"]
            assert row["fault"]["code"] == "INTRUSION" and "mission" in row["fault"]["message"]
            held = until(lambda: [e for e in events.of("fleet.intrusion") if e["kind"] == "foreign_control"], 5)
            assert held and held[0]["drone_id"] == "M3TD-02" and held[0]["what"] == ["mission"]
            plan = server.plan(PATROL)
            flying = {str(x["drone"]) for x in plan["sorties"]}
            assert flying == {"M3TD-01"}, plan  # the held drone is not eligible: only its free partner flies
            refused_clear = server.call("li.wei", "POST", "/v1/fleet/M3TD-02/clear", json={"reason": "looked"})
            assert refused_clear.status_code == 403, refused_clear.text  # a planner may not release it
            cleared = server.ok("chen.jing", "POST", "/v1/fleet/M3TD-02/clear",
                                json={"reason": "the maintenance crew loaded a test mission; checked"})
            assert cleared["by"] == "chen.jing"
            assert until(lambda: server.fleet()["M3TD-02"]["status"] == "ONLINE", 5)
        ledger = open_ledger(home)
        rows = ledger.audit_of(("fleet.intrusion", "fleet.cleared", "admin.vehicle.bind"))
        kinds = [(r.command, r.args_redacted.get("kind")) for r in rows]
        assert ("fleet.intrusion", "forged") in kinds and ("fleet.intrusion", "foreign_control") in kinds
        assert kinds[-1] == ("fleet.cleared", None) and rows[-1].actor == "chen.jing"
        assert sum(1 for c, _ in kinds if c == "admin.vehicle.bind") == 2
    finally:
        for sim in sims.values():
            sim.stop()


def test_allow_unsigned_is_said_in_health_on_every_row_and_in_the_audit(tmp_path: Path) -> None:
    two_drone_world(tmp_path / "world")
    with start_server(tmp_path, "--fleet", "file") as server:
        health = httpx.get(f"{server.url}/v1/health", timeout=10).json()
        assert health["vehicles"] == {"allow_unsigned": True, "unsigned": list(DRONES)}
        assert all(row["signed"] is False for row in server.fleet().values())
    rows = open_ledger(tmp_path / "home").audit_of(("server.allow_unsigned",))
    assert rows and rows[-1].args_redacted["drones"] == list(DRONES)
