"""Fleet eligibility before planning, the ordered alternatives, and the WAITING_RESOURCE list."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from shapely.geometry import box

from flows.context import DEMO_WORLD_DIR, RULES_FILE
from flows.rule_file import load_rules
from flows.world_folder import load_world
from rules.eligibility import JobRequirements, candidate_fleets, fleet_eligibility, waiting_resource_reasons
from testkit import T0, at, calm_weather, dock, drone, world

NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")


@pytest.fixture(scope="module")
def demo():  # type: ignore[no-untyped-def]
    return load_world(DEMO_WORLD_DIR), load_rules(RULES_FILE)


def thermal_job(w, start=NOW):  # type: ignore[no-untyped-def]
    return JobRequirements(sensors=frozenset({"THERMAL_CAMERA"}), area_wgs84=w.region("region-1001").area, start_at=start)


def test_demo_offline_stale_and_missing_thermal_each_give_a_reason(demo) -> None:  # type: ignore[no-untyped-def]
    w, rules = demo
    e = fleet_eligibility(w, thermal_job(w), NOW, rules=rules)
    assert [d.id for d in e.eligible] == ["M30T-01", "M3TD-01", "M4TD-01"]
    codes = {d: [r.code for r in rs] for d, rs in e.rejected}
    assert codes == {"M30T-02": ["OFFLINE"], "M3TD-02": ["STALE_TELEMETRY"], "M4TD-02": ["MISSING_SENSOR"]}
    assert str(e.reasons_for("M30T-02")[0]) == "M30T-02 offline since 2026-11-28 17:42"
    assert "03:12" in str(e.reasons_for("M3TD-02")[0])
    assert "THERMAL_CAMERA" in e.reasons_for("M4TD-02")[0].message_zh


def test_tenant_filter(demo) -> None:  # type: ignore[no-untyped-def]
    w, rules = demo
    req = JobRequirements(frozenset({"THERMAL_CAMERA"}), w.region("region-1001").area, NOW, tenants=frozenset({"city-fire"}))
    e = fleet_eligibility(w, req, NOW, rules=rules)
    assert [d.id for d in e.eligible] == ["M30T-01", "M3TD-01"]
    assert [r.code for r in e.reasons_for("M4TD-01")] == ["TENANT"]


def test_candidates_in_documented_order(demo) -> None:  # type: ignore[no-untyped-def]
    w, rules = demo
    cands = candidate_fleets(w, thermal_job(w), NOW, rules=rules)
    # nearest dock first (DOCK-B ~143 m, DOCK-A ~178 m, DOCK-C ~563 m), then all docks together
    assert [c.dock_ids for c in cands] == [("DOCK-B",), ("DOCK-A",), ("DOCK-C",), ("DOCK-B", "DOCK-A", "DOCK-C")]
    assert cands[0].distance_m < cands[1].distance_m < cands[2].distance_m
    assert len(candidate_fleets(w, thermal_job(w), NOW, rules=rules, max_candidates=2)) == 2


def test_capability_then_battery_break_distance_ties() -> None:
    docks = [dock("DOCK-A"), dock("DOCK-B"), dock("DOCK-C")]  # all at the same place
    drones = [
        drone("A1", dock_id="DOCK-A", battery_pct=50.0),
        drone("B1", dock_id="DOCK-B", battery_pct=90.0),
        drone("C1", dock_id="DOCK-C", battery_pct=40.0),
        drone("C2", dock_id="DOCK-C", battery_pct=40.0),
    ]
    w = world(drones=drones, docks=docks)
    area = box(*at(200, 200), *at(400, 400))
    req = JobRequirements(frozenset({"THERMAL_CAMERA"}), area, T0)
    assert [c.dock_ids for c in candidate_fleets(w, req, T0)][:3] == [("DOCK-C",), ("DOCK-B",), ("DOCK-A",)]


def test_range_battery_and_weather_reasons() -> None:
    w = world(
        drones=[drone("FAR", dock_id="SMALL"), drone("LOW", battery_pct=25.0), drone("OK")],
        docks=[dock("DOCK-A"), dock("SMALL", radius_m=300.0)],
        weather=calm_weather(),
    )
    area = box(*at(200, 200), *at(400, 400))
    e = fleet_eligibility(w, JobRequirements(frozenset(), area, T0), T0)
    assert [d.id for d in e.eligible] == ["OK"]
    assert [r.code for r in e.reasons_for("FAR")] == ["OUT_OF_RANGE"]
    assert [r.code for r in e.reasons_for("LOW")] == ["LOW_BATTERY"]
    windy = world(drones=[drone("OK")], weather=calm_weather(wind_speed_80m_mps=10.5, wind_gusts_10m_mps=12.5, temperature_2m_c=-30.0))
    e = fleet_eligibility(windy, JobRequirements(frozenset(), area, T0), T0)
    assert [r.code for r in e.reasons_for("OK")] == ["WIND", "GUSTS", "TEMPERATURE"]


def test_waiting_resource_reasons(demo) -> None:  # type: ignore[no-untyped-def]
    w, rules = demo
    # an hour later M30T-01, M3TD-01 and M4TD-01 are stale too: nothing is eligible
    later = NOW + timedelta(hours=1)
    req = thermal_job(w, later)
    e = fleet_eligibility(w, req, later, rules=rules)
    assert e.eligible == () and candidate_fleets(w, req, later, rules=rules, eligibility=e) == ()
    reasons = [str(r) for r in waiting_resource_reasons(w, req, later, rules=rules, eligibility=e)]
    assert reasons[0] == "needs THERMAL_CAMERA within 10 km of the area"
    assert "M30T-02 offline since 2026-11-28 17:42" in reasons
    assert any(r.startswith("M3TD-02 silent since 03:12") for r in reasons)
    assert not any(r.startswith("M4TD-02") for r in reasons)  # no thermal camera: not a near miss
    lidar = JobRequirements(frozenset({"LIDAR"}), w.region("region-1001").area, NOW)
    assert [r.code for r in waiting_resource_reasons(w, lidar, NOW, rules=rules)] == ["NEEDS", "NO_SENSOR_IN_FLEET"]
