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
from planner.energy import EnergyModel, usable_energy_wh
from planner.job import Job
from planner.output.mission_items import mission_items
from planner.output.sortie_flight import TIMING, fly_sortie, item_figures
from planner.sortie_parts import turnaround_s
from rules.context import EvaluationContext
from rules.derived_limits import planning_limits
from rules.evaluate import evaluate

NIGHT = datetime(2026, 12, 1, 0, 0, tzinfo=timezone.utc)  # calm: no drone is kept on the ground by wind
RULES = load_rules(RULES_FILE)
LIMITS = planning_limits(RULES)
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


@pytest.fixture(scope="module")
def patrol(world):  # noqa: ANN001, ANN201
    """The demo's patrol of region-1001 for M30T-01 at 40 m, at the time the recorded flight started."""
    job = Job("FIRE_LANE_PATROL", world.region("region-1001").area, datetime(2026, 12, 6, 5, 10, 58, tzinfo=timezone.utc),
              altitude_m=40.0)
    return mission.plan_mission(world, job, [world.drone("M30T-01")], limits=LIMITS)


def test_the_recorded_patrol_is_planned_to_fly_fast(world, patrol) -> None:
    """The demo's patrol of region-1001 for M30T-01 at 40 m (the flight ArduCopter 4.6.3 flew in 1,202 s,
    213 nav items, planned 463 s): now planned at its flown figures, under 800 s, with fewer waypoints."""
    plan = patrol
    (s,) = plan.sorties
    items = mission_items(plan, s, world)
    navs = [i for i in items if i.command in (16, 21, 22) and i.seq > 0]
    waypoints = [i for i in navs if i.command == 16]
    assert 600.0 < s.duration_s < 800.0
    assert len(navs) < 120
    assert all((a.lat, a.lon) != (b.lat, b.lon) for a, b in zip(waypoints, waypoints[1:]))  # no repeated place


def test_the_battery_reserve_is_judged_on_the_flight_not_on_constant_speed(world, patrol) -> None:
    """The plan's figures are its vehicle's flight of its mission (``fly_sortie``), well above a constant-speed
    estimate (distance at cruise speed and cruise power); the reserve rule blocks a battery that would carry the
    constant-speed sortie but not the flown one, and passes one that carries the flown one."""
    (s,) = patrol.sorties
    drone = world.drone(s.drone_id)
    flight = fly_sortie(patrol, s, world)
    assert patrol.parameters["timing"] == TIMING
    assert s.duration_s == pytest.approx(flight.duration_s, abs=0.05) and s.energy_wh == pytest.approx(flight.energy_wh, abs=0.01)
    model = EnergyModel.for_drone(drone, world.weather.hour_at(s.start_at), patrol.altitude_m)
    constant_wh = s.distance_m / drone.cruise_speed_mps * model.power_w(drone.cruise_speed_mps) / 3600.0
    assert s.energy_wh > 1.3 * constant_wh

    def verdict(needed_wh: float):  # noqa: ANN202 - the battery % whose usable energy is needed_wh
        pct = 100.0 * needed_wh / usable_energy_wh(drone.battery_wh, 100.0, LIMITS.reserve_fraction,
                                                   patrol.parameters["energy_derating"])
        w = dataclasses.replace(world, drones=tuple(dataclasses.replace(d, battery_pct=pct) if d.id == drone.id else d
                                                    for d in world.drones))
        v = evaluate(patrol, w, RULES, context=EvaluationContext(now=s.start_at - timedelta(minutes=5), phase="plan"))
        return [f for f in v.findings if f.kind == "battery_reserve"]

    (short,) = verdict((constant_wh + s.energy_wh) / 2)  # enough for the constant-speed figure only
    assert short.measured == pytest.approx(s.energy_wh, abs=0.01)
    assert verdict(s.energy_wh * 1.02) == []


def test_item_figures_are_the_sorties_flight_per_nav_item(world, patrol) -> None:
    """Per nav item of the uploaded mission: the same flight as the sortie's figures (totals equal), in order, and
    not a share of the path: the fast first transit spends a smaller share of the time than of the distance."""
    (s,) = patrol.sorties
    items = mission_items(patrol, s, world)
    f = item_figures(patrol, s, world, items)
    navs = [i.seq for i in items if i.command in (16, 21, 22) and i.seq > 0]
    assert list(f.seqs) == navs
    assert f.total_s == pytest.approx(s.duration_s, abs=0.05) and f.total_wh == pytest.approx(s.energy_wh, abs=0.01)
    assert all(a <= b for a, b in zip(f.time_s, f.time_s[1:])) and all(a <= b for a, b in zip(f.energy_wh, f.energy_wh[1:]))
    transit = s.legs[1]
    assert transit.kind == "transit"
    end = next(i for i, it in enumerate(items) if it.seq in f.seqs and (it.lat, it.lon) == (transit.waypoints[-1].lat, transit.waypoints[-1].lon))
    k = f.seqs.index(items[end].seq)
    assert f.time_s[k] - f.time_s[1] == pytest.approx(transit.duration_s, abs=0.05)  # from where the take-off ends
    assert (f.time_s[k] - f.time_s[1]) / f.total_s < 0.7 * transit.distance_m / s.distance_m
