"""A way out of a stuck binding (issue 38): a drone bound anew while its version is DISPATCHED.

A real ``sortie server`` (live fleet, real clock, real tokens) dispatches the hydrant inspection to a simulated
PX4 (system 1) over UDP. Then the drone's flight controller is replaced: the new one is system 7 on the same
link and the fleet entry says so. Every command of the old dispatch goes to system 1 as the dispatch recorded,
so the launch is DEVICE_MISMATCH; the version holds the drone. ``reconcile`` asks the vehicle under its binding
of now, finds it on the ground and disarmed, and releases the version (ABORTED, both bindings named); the drone
is free again: a new version is dispatched to system 7 and accepted.

And a vehicle of the wrong identity: an unbound drone whose link is repointed onto a bound drone's vehicle (at a
port that answers unsigned) is DEVICE_MISMATCH in ``/v1/fleet``, never ONLINE on it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from fleet.fleetkit import DOCK_B, HYDRANTS, day_old_world, start_server, until
from flows.ledger import Ledger
from testkit import sim_vehicle

pytestmark = pytest.mark.timeout(300)


def test_reconcile_releases_a_dispatched_version_whose_vehicle_was_bound_anew(tmp_path: Path) -> None:
    ports = day_old_world(tmp_path / "world", lambda d: d.update(mavlink_system_id=1) if d["id"] == "M3TD-01" else None)
    listen = f"udpin:127.0.0.1:{ports['M3TD-01']}"
    sim = sim_vehicle(listen, "px4", home=DOCK_B, heartbeat_s=0.2, system_id=1).start()
    try:
        with start_server(tmp_path) as s:
            assert until(lambda: s.fleet()["M3TD-01"]["status"] == "ONLINE", 30), s.fleet()["M3TD-01"]
            draft = s.plan(HYDRANTS)
            d, v = draft["draft_id"], draft["version"]
            s.ok("chen.jing", "POST", f"/v1/drafts/{d}/approve", json={"version": v, "plan_hash": draft["plan_hash"]})
            assert s.ok("chen.jing", "POST", f"/v1/drafts/{d}/dispatch", json={"version": v})["status"] == "ACKED"

            # the flight controller is replaced: system 7 on the same link, and the fleet entry says so
            sim.stop()
            sim = sim_vehicle(listen, "px4", home=DOCK_B, heartbeat_s=0.2, system_id=7).start()
            fleet_file = tmp_path / "world" / "fleet.json"
            fleet = json.loads(fleet_file.read_text(encoding="utf-8"))
            for e in fleet["drones"]:
                if e["id"] == "M3TD-01":
                    e["mavlink_system_id"] = 7
            fleet_file.write_text(json.dumps(fleet), encoding="utf-8")
            assert until(lambda: s.fleet()["M3TD-01"]["status"] == "ONLINE", 30), s.fleet()["M3TD-01"]

            stuck = s.call("chen.jing", "POST", f"/v1/drafts/{d}/launch", json={"version": v})
            assert stuck.status_code != 200 and stuck.json()["error"]["code"] == "DEVICE_MISMATCH", stuck.text
            refused = s.call("li.wei", "POST", f"/v1/drafts/{d}/reconcile", json={})
            assert refused.status_code == 403, refused.text  # a planner may not release it

            out = s.ok("chen.jing", "POST", f"/v1/drafts/{d}/reconcile", json={})
            assert out["released"] == ["M3TD-01"] and out["draft_status"] == "ABORTED", out
            assert "system_id 1" in out["message"] and "system_id 7" in out["message"], out["message"]
            assert "disarmed" in out["message"]

            again = s.plan(HYDRANTS)  # the drone is free: planned and dispatched to the vehicle as bound now
            assert {x["drone"] for x in again["sorties"]} == {"M3TD-01"}, again
            s.ok("chen.jing", "POST", f"/v1/drafts/{again['draft_id']}/approve",
                 json={"version": again["version"], "plan_hash": again["plan_hash"]})
            done = s.ok("chen.jing", "POST", f"/v1/drafts/{again['draft_id']}/dispatch",
                        json={"version": again["version"]})
            assert done["status"] == "ACKED" and sim.stats.uploads_completed >= 1, done
        ledger = Ledger(tmp_path / "home" / "ledger.duckdb")
        [ended] = [e for e in ledger.events(d) if e.to_state == "ABORTED"]
        assert ended.actor == "chen.jing" and "bound anew" in ended.reason
    finally:
        sim.stop()


def test_an_unbound_drone_repointed_onto_a_bound_drones_vehicle_is_device_mismatch_never_online(
        tmp_path: Path) -> None:
    from flows.vehicle.keys import write_signing_key
    from testkit import free_port

    serial0, port = free_port("udp"), free_port()

    def edit(d: dict[str, Any]) -> None:
        if d["id"] == "M3TD-01":  # bound: its own key, its TCP port
            d.update(link=f"tcp:127.0.0.1:{port}", signing_key="m3td-01", mavlink_system_id=1)
        elif d["id"] == "M3TD-02":  # unbound, repointed onto M3TD-01's vehicle (its SERIAL0, which answers unsigned)
            d.update(link=f"udpout:127.0.0.1:{serial0}", mavlink_system_id=None)
            d.pop("signing_key", None)

    day_old_world(tmp_path / "world", edit)
    key = bytes(range(140, 172))
    write_signing_key(tmp_path / "home" / "keys", "m3td-01", key)
    sim = sim_vehicle([f"udpin:127.0.0.1:{serial0}", f"tcpin:127.0.0.1:{port}"], "px4", signing_key=key,
                      home=DOCK_B, heartbeat_s=0.2).start()
    try:
        with start_server(tmp_path) as s:
            assert until(lambda: s.fleet()["M3TD-01"]["status"] == "ONLINE", 30), s.fleet()["M3TD-01"]
            row = until(lambda: (s.fleet()["M3TD-02"].get("fault") or {}).get("code") == "DEVICE_MISMATCH"
                        and s.fleet()["M3TD-02"], 30)
            assert row and row["status"] != "ONLINE" and "signs its messages" in row["fault"]["message"], \
                s.fleet()["M3TD-02"]
            for _ in range(6):  # and it stays so while the vehicle talks
                assert s.fleet()["M3TD-02"]["status"] != "ONLINE", s.fleet()["M3TD-02"]
                time.sleep(0.5)
    finally:
        sim.stop()
