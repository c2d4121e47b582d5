"""Plans whose figures are the vehicle's flight: battery kept, dock turnarounds kept, the patrol flown fast."""

from __future__ import annotations

import dataclasses
import doctest
from datetime import datetime, timedelta, timezone

import pytest

import planner.flight.costs
import planner.mission as mission
from flows.context import DEMO_WORLD_DIR, RULES_FILE
from flows.rule_file import load_rules
from flows.world_folder import load_world
from planner.energy import usable_energy_wh
from planner.job import Job
from planner.output.mission_items import mission_items
from planner.output.sortie_flight import TIMING
from planner.sortie_parts import turnaround_s
from rules.derived_limits import planning_limits

NIGHT = datetime(2026, 12, 1, 0, 0, tzinfo=timezone.utc)  # calm: no drone is kept on the ground by wind
LIMITS = planning_limits(load_rules(RULES_FILE))
REROUTES = mission.ENERGY_REROUTES


@pytest.fixture(scope="module")
def world():
    return load_world(DEMO_WORLD_DIR)


def test_costs_example_runs() -> None:
    failures, tried = doctest.testmod(planner.flight.costs, verbose=False)
    assert tried > 0 and failures == 0


def _weak_survey(world, reroutes: int, monkeypatch):  # noqa: ANN001, ANN202
    monkeypatch.setattr(mission, "ENERGY_REROUTES", reroutes)
    drone = dataclasses.replace(world.drone("M30T-01"), battery_pct=25.0)
    job = Job("AREA_SURVEY", world.region("region-1001").area, NIGHT, altitude_m=40.0, sensors=frozenset({"RGB_CAMERA"}))
    plan = mission.plan_mission(world, job, [drone], limits=LIMITS)
    usable = usable_energy_wh(drone.battery_wh, drone.battery_pct, LIMITS.reserve_fraction, plan.parameters["energy_derating"])
    return plan, usable


def test_a_drone_whose_flown_sorties_cost_more_is_routed_again_within_its_battery(world, monkeypatch) -> None:
    routed_once, usable = _weak_survey(world, 0, monkeypatch)
    assert any(s.energy_wh > usable for s in routed_once.sorties)  # per-metre routing alone overspends
    plan, usable = _weak_survey(world, REROUTES, monkeypatch)
    assert plan.sorties and not plan.unserved
    assert all(s.energy_wh <= usable + 1e-9 for s in plan.sorties)
    assert len(plan.sorties) > len(routed_once.sorties)
    assert plan.parameters["timing"] == TIMING


def test_later_sorties_start_after_the_dock_turnaround(world, monkeypatch) -> None:
    monkeypatch.setattr(mission, "ENERGY_REROUTES", 0)
    docks = tuple(dataclasses.replace(d, turnaround_s=1920.0) if d.id == "DOCK-A" else d for d in world.docks)
    w = dataclasses.replace(world, docks=docks)
    drone = dataclasses.replace(w.drone("M30T-01"), battery_pct=25.0)
    job = Job("AREA_SURVEY", w.region("region-1001").area, NIGHT, altitude_m=40.0, sensors=frozenset({"RGB_CAMERA"}))
    plan = mission.plan_mission(w, job, [drone], limits=LIMITS)
    assert turnaround_s(w, "DOCK-A") == 1920.0 and plan.parameters["dock_turnaround_s"] == {"DOCK-A": 1920.0}
    starts = sorted(plan.sorties, key=lambda s: s.start_at)
    assert len(starts) > 2 and starts[0].start_at == NIGHT
    for a, b in zip(starts, starts[1:]):
        assert b.start_at - a.end_at >= timedelta(seconds=1920) - timedelta(microseconds=1)


def test_the_recorded_patrol_is_planned_to_fly_fast(world) -> None:
    """The demo's patrol of region-1001 for M30T-01 at 40 m (the flight ArduCopter 4.6.3 flew in 1,202 s,
    213 nav items, planned 463 s): now planned at its flown figures, under 800 s, with fewer waypoints."""
    job = Job("FIRE_LANE_PATROL", world.region("region-1001").area, datetime(2026, 12, 6, 5, 10, 58, tzinfo=timezone.utc),
              altitude_m=40.0)
    plan = mission.plan_mission(world, job, [world.drone("M30T-01")], limits=LIMITS)
    (s,) = plan.sorties
    items = mission_items(plan, s, world)
    navs = [i for i in items if i.command in (16, 21, 22) and i.seq > 0]
    waypoints = [i for i in navs if i.command == 16]
    assert 600.0 < s.duration_s < 800.0
    assert len(navs) < 120
    assert all((a.lat, a.lon) != (b.lat, b.lon) for a, b in zip(waypoints, waypoints[1:]))  # no repeated place
