"""planner.mission: plans for the demo world — feasible, deterministic, honest about what is left."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone

import pytest
from shapely.geometry import LineString

from flows.context import DEMO_WORLD_DIR, RULES_FILE
from planner.energy import usable_energy_wh
from planner.job import Job
from planner.mission import plan_mission as plan_within
from planner.sortie_parts import turnaround_s
from planner.plan import canonical_json
from flows.world_folder import load_world
from rules.derived_limits import planning_limits
from flows.rule_file import load_rules

START = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
PATROL_FLEET = ("M3TD-01", "M3TD-02", "M4TD-01")


@pytest.fixture(scope="module")
def world():
    return load_world(DEMO_WORLD_DIR)


LIMITS = planning_limits(load_rules(RULES_FILE))  # the bundled rule set's limits


def plan_mission(world, job, drones):
    """The planner inside the bundled rule set's limits (what the service plans with)."""
    return plan_within(world, job, drones, limits=LIMITS)


def _job(world, mission_type: str, region: str = "region-1001") -> Job:
    return Job(mission_type, world.region(region).area, START, altitude_m=50.0, sensors=frozenset({"THERMAL_CAMERA"}))


def _check_feasible(world, plan, drones) -> None:
    by_id = {d.id: d for d in drones}
    for s in plan.sorties:
        d = by_id[s.drone_id]
        derating = plan.parameters["energy_derating"]
        assert s.energy_wh <= usable_energy_wh(d.battery_wh, d.battery_pct, LIMITS.reserve_fraction, derating) + 1e-6
        assert s.legs[0].kind == "takeoff" and s.legs[-1].kind == "landing"
        dock = world.dock(d.dock_id)
        for wp in (s.legs[0].waypoints[0], s.legs[-1].waypoints[-1]):
            assert abs(wp.lon - dock.lon) < 1e-6 and abs(wp.lat - dock.lat) < 1e-6
        assert abs(s.distance_m - sum(l.distance_m for l in s.legs)) < 1e-6
    # a drone's sorties never overlap and leave its dock's turnaround between them
    for d in by_id:
        mine = sorted((s for s in plan.sorties if s.drone_id == d), key=lambda s: s.start_at)
        for a, b in zip(mine, mine[1:]):
            assert (b.start_at - a.end_at).total_seconds() >= turnaround_s(world, a.dock_id) - 1e-6
        if mine:
            assert mine[0].start_at == START


def _lane_targets(plan) -> list[str]:
    return [l.target_id for s in plan.sorties for l in s.legs if l.kind == "lane"]


def test_fire_lane_patrol_demo_golden(world, golden) -> None:
    drones = [world.drone(i) for i in PATROL_FLEET]
    plan = plan_mission(world, _job(world, "FIRE_LANE_PATROL"), drones)
    _check_feasible(world, plan, drones)
    assert plan.sorties and _lane_targets(plan)
    golden.check_plan("firelane_patrol_demo", plan)


def test_patrol_flies_every_lane_piece_outside_no_fly(world) -> None:
    drones = [world.drone(i) for i in PATROL_FLEET]
    job = _job(world, "FIRE_LANE_PATROL")
    plan = plan_mission(world, job, drones)
    pieces = plan.parameters["lane_edges"]
    assert len(_lane_targets(plan)) == pieces  # every piece once (none unserved for range here)
    fully_blocked = {u.target_id for u in plan.unserved if u.reason == "in a no-fly zone"}
    assert not fully_blocked & set(_lane_targets(plan))


def test_same_input_same_plan(world) -> None:
    drones = [world.drone(i) for i in PATROL_FLEET]
    for mission_type in ("FIRE_LANE_PATROL", "POINT_INSPECTION"):
        job = _job(world, mission_type)
        assert canonical_json(plan_mission(world, job, drones)) == canonical_json(plan_mission(world, job, drones))


def test_weak_fleet_lists_unserved_instead_of_raising(world) -> None:
    weak = [dataclasses.replace(world.drone("M4TD-01"), battery_pct=4.0)]
    for mission_type in ("FIRE_LANE_PATROL", "POINT_INSPECTION", "AREA_SURVEY"):
        plan = plan_mission(world, _job(world, mission_type), weak)
        _check_feasible(world, plan, weak)
        assert plan.unserved
        assert any("range" in u.reason or "energy" in u.reason for u in plan.unserved)


def test_survey_splits_over_drones(world) -> None:
    drones = [world.drone(i) for i in PATROL_FLEET]
    plan = plan_mission(world, _job(world, "AREA_SURVEY"), drones)
    _check_feasible(world, plan, drones)
    assert plan.coverage_fraction is not None and plan.coverage_fraction > 0.95
    assert len({s.drone_id for s in plan.sorties}) >= 2  # shared out to finish sooner
    sweeps = [l for s in plan.sorties for l in s.legs if l.kind == "sweep"]
    assert sweeps and all(l.waypoints[0].action == "CAMERA_ON" for l in sweeps)
    assert plan.parameters["routing_engine"] == "ortools-gls"  # the sweep order's engine, said in the plan


def test_point_inspection_visits_each_point_once(world) -> None:
    drones = [world.drone(i) for i in PATROL_FLEET]
    plan = plan_mission(world, _job(world, "POINT_INSPECTION"), drones)
    _check_feasible(world, plan, drones)
    seen = [l.target_id for s in plan.sorties for l in s.legs if l.kind == "inspect"]
    assert len(seen) == len(set(seen)) == plan.parameters["points"]
    assert not set(seen) & {u.target_id for u in plan.unserved}
    assert plan.parameters["routing_engine"] in ("ortools-ils", "pyvrp-start+ortools")  # said in the plan


def test_no_drones_gives_an_empty_plan_with_reasons(world) -> None:
    plan = plan_mission(world, _job(world, "FIRE_LANE_PATROL"), [])
    assert not plan.sorties
    assert any(u.reason == "no usable drone" for u in plan.unserved)


def test_patrol_needing_several_sorties_shares_them_between_the_dock_drones(world) -> None:
    # two drones at DOCK-B with little charge: several sorties, spread so the patrol ends sooner
    drones = [dataclasses.replace(world.drone(i), battery_pct=30.0) for i in ("M3TD-01", "M3TD-02")]
    plan = plan_mission(world, _job(world, "FIRE_LANE_PATROL"), drones)
    _check_feasible(world, plan, drones)
    assert len(plan.sorties) >= 2
    assert {s.drone_id for s in plan.sorties} == {"M3TD-01", "M3TD-02"}
    flown = _lane_targets(plan)
    assert len(flown) == len(set(flown)) == plan.parameters["lane_edges"]


def test_survey_split_by_a_zone_never_crosses_it(world) -> None:
    """A prohibited strip cuts the area in two: the hop between the halves goes around it."""
    from shapely.geometry import Polygon

    from planner.world.model import Applicability, Geozone, Restriction, VerticalReference, ZoneVolume

    area = Polygon([(24.9400, 60.1670), (24.9460, 60.1670), (24.9460, 60.1700), (24.9400, 60.1700)])
    strip = Polygon([(24.9426, 60.1660), (24.9434, 60.1660), (24.9434, 60.1710), (24.9426, 60.1710)])
    zone = Geozone(
        "TESTSTRIP", "strip", Restriction.PROHIBITED,
        (ZoneVolume(strip, None, VerticalReference.AGL, None, VerticalReference.AGL),),
        (Applicability(permanent=True),), "no flights", "test",
    )
    split_world = dataclasses.replace(world, zones=world.zones + (zone,))
    job = Job("AREA_SURVEY", area, START, altitude_m=50.0, sensors=frozenset({"RGB_CAMERA"}))
    drones = [world.drone("M3TD-01")]
    plan = plan_mission(split_world, job, drones)
    assert plan.sorties
    frame = job.frame
    strip_local = frame.to_local(strip)
    for s in plan.sorties:
        track = LineString([frame.forward(w.lon, w.lat) for w in s.waypoints])
        assert track.intersection(strip_local).length < 0.5, "the survey flies through the prohibited strip"


# ------------------------------------------------------------------ zones that apply during the flight, not at take-off
FRI_1350 = datetime(2026, 12, 4, 13, 50, tzinfo=timezone.utc)  # HELX003's Friday slot opens at 14:00 UTC
# The demo forecast has gusts over 12 m/s from 13 to 16 UTC every day: inside the bundled limits no drone
# flies then. These tests are about airspace, so they plan at those hours without the wind limits.
CALM_LIMITS = dataclasses.replace(LIMITS, wind_margin_mps=None, gust_margin_mps=None)


def plan_in_gusts(world, job, drones):
    return plan_within(world, job, drones, limits=CALM_LIMITS)


def _helx003_as(world, **changes):
    """The demo world with HELX003 (Rautatientori, inside region-1001) made PROHIBITED and changed further."""
    from planner.world.model import Restriction

    helx003 = next(z for z in world.zones if z.id == "HELX003")
    zone = dataclasses.replace(helx003, restriction=Restriction.PROHIBITED, **changes)
    return zone, dataclasses.replace(world, zones=tuple(zone if z.id == "HELX003" else z for z in world.zones))


def _without_helx003(world):
    return dataclasses.replace(world, zones=tuple(z for z in world.zones if z.id != "HELX003"))


def _airspace_blocks(plan, world) -> list[str]:
    """The airspace rule's blocking findings on the plan as stored (canonical JSON), judged in ``world``."""
    import json

    from flows.context import RULES_FILE
    from planner.plan import plan_from_dict
    from rules.context import EvaluationContext
    from rules.evaluate import evaluate
    from flows.rule_file import load_rules

    stored = plan_from_dict(json.loads(canonical_json(plan)))
    now = datetime(2026, 11, 29, 7, tzinfo=timezone.utc)
    verdict = evaluate(stored, world, load_rules(RULES_FILE), context=EvaluationContext(now=now))
    return [f.zone_id for f in verdict.findings if f.kind == "geozone_clearance" and f.severity == "block"]


def _crosses(plan, job, zone) -> bool:
    poly = job.frame.to_local(zone.volumes[0].horizontal)
    return any(
        LineString([job.frame.forward(w.lon, w.lat) for w in s.waypoints]).intersects(poly) for s in plan.sorties
    )


def test_survey_starting_ten_minutes_before_a_scheduled_zone_opens_routes_around_it(world) -> None:
    zone, scheduled = _helx003_as(world)
    assert not zone.applies_at(FRI_1350) and zone.applies_during(FRI_1350, FRI_1350 + timedelta(minutes=10))
    job = Job("AREA_SURVEY", world.region("region-1001").area, FRI_1350, altitude_m=40.0, sensors=frozenset({"THERMAL_CAMERA"}))
    drones = [world.drone("M3TD-01")]
    # what checking the zone at take-off only amounts to: its sorties after 14:00 fly into it and are blocked
    at_take_off = plan_in_gusts(_without_helx003(world), job, drones)
    assert _crosses(at_take_off, job, zone) and "HELX003" in _airspace_blocks(at_take_off, scheduled)
    plan = plan_in_gusts(scheduled, job, drones)
    assert plan.sorties and plan.coverage_fraction > 0.9
    assert not _crosses(plan, job, zone)
    assert _airspace_blocks(plan, scheduled) == []


def test_zone_closed_before_the_job_starts_does_not_block(world) -> None:
    from planner.world.model import Applicability

    closed = Applicability(permanent=False, start=FRI_1350 - timedelta(hours=2), end=FRI_1350)
    zone, w = _helx003_as(world, applicability=(closed,))
    job = Job("AREA_SURVEY", world.region("region-1001").area, FRI_1350, altitude_m=40.0, sensors=frozenset({"THERMAL_CAMERA"}))
    drones = [world.drone("M3TD-01")]
    plan = plan_in_gusts(w, job, drones)
    assert canonical_json(plan) == canonical_json(plan_in_gusts(_without_helx003(world), job, drones))
    assert _crosses(plan, job, zone)  # it flies where the zone was, and that is allowed
    assert _airspace_blocks(plan, w) == []


def test_sorties_past_the_airspace_window_widen_it(world) -> None:
    """A weak battery needs many sorties; a zone that opens after the first window but before the
    last landing is found by widening the window to the last landing and planning again."""
    from planner.mission import airspace_window
    from planner.world.model import Applicability

    drone = dataclasses.replace(world.drone("M3TD-01"), battery_pct=25.0)
    job = Job("AREA_SURVEY", world.region("region-1001").area, START, altitude_m=40.0, sensors=frozenset({"THERMAL_CAMERA"}))
    _, until = airspace_window(job, [drone], world)
    zone, late = _helx003_as(world, applicability=(Applicability(permanent=False, start=until + timedelta(minutes=1)),))
    unaware = plan_in_gusts(_without_helx003(world), job, [drone])
    assert max(s.end_at for s in unaware.sorties) > until + timedelta(minutes=1)
    assert "HELX003" in _airspace_blocks(unaware, late)
    plan = plan_in_gusts(late, job, [drone])
    assert max(s.end_at for s in plan.sorties) > until  # the window really was widened
    assert plan.parameters["no_fly_polygons"] == unaware.parameters["no_fly_polygons"] + 1
    assert not _crosses(plan, job, zone)
    assert _airspace_blocks(plan, late) == []
