"""The world seen through the vehicles (pure): status, battery and telemetry time from the live value, the rest
from the file; the fleet view labels its source."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

from flows.fleet.live import Fault, live_drone
from flows.fleet.overlay import fleet_rows, live_world
from flows.vehicle.view import VehicleView
from testkit import bare_world, drone

NOW = datetime(2026, 12, 2, 8, 0, tzinfo=timezone.utc)
DAY_OLD = NOW - timedelta(days=1)


def world():  # type: ignore[no-untyped-def]
    w = bare_world(drones=[drone("A", last_telemetry_at=DAY_OLD, battery_pct=10.0, status="OFFLINE"),
                           drone("B", last_telemetry_at=DAY_OLD, tenant="other"),
                           drone("C", status="MAINTENANCE", last_telemetry_at=DAY_OLD),
                           drone("D", last_telemetry_at=DAY_OLD)])
    return replace(w, snapshot_hash="h1")


def test_status_battery_and_time_come_from_the_vehicle_and_the_files_hash_stays() -> None:
    talking = VehicleView(mode="STABILIZE", battery_pct=81.0, lat=60.0, lon=24.0, alt_m=0.0)
    live = {
        "A": live_drone("A", "udpout:x:1", talking, 2.0, NOW, silent_after_s=10),
        "B": live_drone("B", "udpout:x:2", VehicleView(), None, NOW, silent_after_s=10,
                        fault=Fault("LINK_UNAVAILABLE", "nothing")),
        "C": live_drone("C", "udpout:x:3", talking, 1.0, NOW, silent_after_s=10),
        "D": live_drone("D", "udpout:x:4", replace(talking, armed=True, battery_pct=None), 0.5, NOW, silent_after_s=10),
    }
    w = live_world(world(), live)
    a, b, c, d = (w.drone(x) for x in "ABCD")
    assert (a.status, a.battery_pct, a.last_telemetry_at) == ("ONLINE", 81.0, NOW - timedelta(seconds=2))
    assert (b.status, b.last_telemetry_at) == ("OFFLINE", DAY_OLD)  # configured but silent: whatever the file says
    assert c.status == "MAINTENANCE"  # an operator's hold is not telemetry
    assert (d.status, d.battery_pct) == ("IN_FLIGHT", 0.0)  # armed; an unreported battery never flies
    assert w.snapshot_hash == "h1" and (a.dock_id, a.capabilities) == (world().drone("A").dock_id,
                                                                       world().drone("A").capabilities)


def test_a_vehicle_heard_long_ago_is_offline_and_says_how_long() -> None:
    d = live_drone("A", "l", VehicleView(mode="AUTO", armed=True), 42.0, NOW, silent_after_s=10)
    assert d.status == "OFFLINE" and d.fault is not None and d.fault.code == "SILENT_IN_FLIGHT"
    assert d.last_seen == NOW - timedelta(seconds=42)


def test_the_fleet_view_is_tenant_scoped_and_labels_its_source() -> None:
    live = {"A": live_drone("A", "l", VehicleView(mode="LOITER", battery_pct=70.0, lat=1.0, lon=2.0, alt_m=3.04),
                            1.0, NOW, silent_after_s=10)}
    rows = fleet_rows(world(), live, ["t"])
    assert [r["id"] for r in rows] == ["A", "C", "D"]
    a = rows[0]
    assert (a["source"], a["status"], a["battery_pct"], a["mode"], a["armed"]) == ("live", "ONLINE", 70.0, "LOITER", False)
    assert a["position"] == {"lat": 1.0, "lon": 2.0, "alt_m": 3.0}
    assert rows[1]["source"] == "file" and rows[1]["last_seen"] == DAY_OLD.isoformat()
    assert [r["id"] for r in fleet_rows(world(), None, ["*"])] == ["A", "B", "C", "D"]
