"""The planner's top entry: a job and the eligible drones → a ``Plan`` of sorties.

``plan_mission(world, job, drones, limits=...)`` builds the job's local frame and
the no-fly polygons in force at some instant of the job's flight window (grown
by ``limits.safety_margin_m``; see Airspace below), turns the job into work and
routes it under each drone's usable energy (``planner.energy.usable_energy_wh``
with the reserves and cold derating of ``limits`` over the flight window's
forecast hours). ``limits`` (``planner.planning_limits.PlanningLimits``) is derived from
the rule set that will judge the plan (``rules.derived_limits.planning_limits``), so the
plan is made inside those rules: the flight altitude must lie in its
ceiling/floor band, and a drone whose flight window is windier than its wind
limit less the rule's margin is not used.

The mission kinds are the ``PIPELINES`` table: mission type → the function that
turns the job into sorties, one module each (``planner.patrol.pipeline``,
``planner.survey.pipeline``, ``planner.inspection.pipeline``); what they share — a drone's
planning rates, sortie pieces and the builder — is ``planner.sortie_parts``.

* FIRE_LANE_PATROL — the world's lanes of ``job.lane_kinds`` inside the area,
  minus the no-fly zones, noded at junctions → ``planner.patrol.arc_routing`` (one
  depot per dock; sorties go to that dock's drones, longest first, to the
  drone free soonest that can fly them).
* AREA_SURVEY — the area minus the no-fly zones → ``planner.survey.coverage`` sweeps →
  ``planner.routing.assignment`` (battery-feasible sorties, spread over the drones for
  the soonest finish).
* POINT_INSPECTION — the world's POIs of ``job.poi_kinds`` inside the area →
  ``planner.routing.vrp`` (multi-depot routing on an energy matrix; each drone may
  fly up to ``MAX_SORTIES_PER_DRONE`` sorties).

Timing: a sortie's time and energy are its vehicle's flight of its mission
(``planner.output.sortie_flight``). A drone's first sortie starts at ``job.start_at``;
each later sortie of the same drone starts its dock's turnaround after the previous
one lands (``Dock.turnaround_s`` of docks.json, the battery swap or charge, else
``BATTERY_SWAP_S``; a swapped battery is assumed at least as charged as the reported
one): these are the planned starts a flight follower launches at.

Airspace: the rules judge every leg over its own time window, so a zone that
opens while a sortie is up must already be avoided. The flight window is
``airspace_window``: from ``job.start_at`` for ``MAX_SORTIES_PER_DRONE`` back-to-back
sorties of the longest endurance among ``drones`` with the longest of their docks'
turnarounds between them (3 × (3240 s + 600 s) = 3.2 h for the demo fleet). Every zone that blocks
at some instant of it is an obstacle for every sortie (simple and safe; a zone
that only opens late costs the early sorties a detour). Surveys and patrols
may give one drone more sorties than that: when the plan's last landing falls
after the window, the window is widened to it and, if that brings in a new
zone, the job is planned again. Each replan adds a zone, so there are at most
``len(world.zones)`` of them. A zone that has closed before ``job.start_at`` or
opens after the last landing never blocks. The cold derating and the wind
limit read the same window's forecast hours (every sortie flies inside it), and
a wider window that changes them is planned again too.

Energy (``planner.energy.EnergyModel``): the spec-calibrated model of FACTS.md — cruise power ``drone.cruise_power_w`` at
``cruise_speed_mps`` for transits, hover power ``drone.hover_power_w`` for slow
work (sweeps and lanes at ``inspection_speed_mps``), hovers, climb and descent.

Nothing here raises for a fleet too small: what cannot be flown is listed in
``Plan.unserved`` with the reason. Pure: no clock, no files; deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from planner.geo.airspace import blocking_zones, flight_window, no_fly_polygons
from planner.energy import wind_level_mps
from planner.errors import AirspaceBlocked, InvalidArgument
from planner.inspection.pipeline import ROUTING_BUDGET_S, plan_points
from planner.output.sortie_flight import TIMING
from planner.job import Job
from planner.planning_limits import PlanningLimits
from planner.patrol.pipeline import plan_patrol
from planner.plan import Plan
from planner.routing.budget import Budget
from planner.sortie_parts import (
    BATTERY_SWAP_S,
    MAX_SORTIES_PER_DRONE,
    XY,
    Rates,
    SortieBuilder,
    after_turnaround,
    rates,
    turnaround_s,
)
from planner.survey.pipeline import plan_survey
from planner.geo.transit import TransitGraph
from planner.world.model import Drone, WeatherHour, World

__all__ = [
    "BATTERY_SWAP_S",
    "MAX_SORTIES_PER_DRONE",
    "ROUTING_BUDGET_S",
    "PIPELINES",
    "Pipeline",
    "airspace_window",
    "plan_mission",
]

#: (world, job, usable drones as (drone, rates, dock xy), transit graph, builder, *, budget) → (sorties, unserved, extra)
Pipeline = Callable[..., tuple[list[Any], list[Any], dict[str, Any]]]

# Routing prices work by the metre; a sortie's flown figures (corners, stops) may cost more. A drone
# whose flown sortie needs more than it may spend is routed again with its energy scaled down, at most
# this many times; what still does not fit is the battery rule's to block.
ENERGY_REROUTES = 2


def airspace_window(job: Job, drones: Sequence[Drone], world: World) -> tuple[datetime, datetime]:
    """``(job.start_at, until)``: the window whose zones the plan keeps clear of (module docstring).

    ``until`` is ``MAX_SORTIES_PER_DRONE`` × (longest endurance of ``drones`` + the longest
    turnaround of their docks) after the start (``planner.geo.airspace.flight_window``).
    """
    turnaround = max((turnaround_s(world, d.dock_id) for d in drones), default=BATTERY_SWAP_S)
    return flight_window(job.start_at, drones, sorties=MAX_SORTIES_PER_DRONE, turnaround_s=turnaround)


def _too_windy(drone: Drone, world: World, hours: Sequence[WeatherHour], altitude_m: float, limits: PlanningLimits) -> bool:
    """Whether some hour of ``hours`` has more wind (at ``altitude_m``) or gusts than ``limits`` let
    ``drone`` at its dock plan for (the weather rule's check, over the whole flight window)."""
    dock = next((d for d in world.docks if d.id == drone.dock_id), None)
    wind_cap, gust_cap = limits.wind_cap_mps(drone.max_wind_mps, dock.max_wind_mps if dock is not None else None)
    for h in hours:
        level = wind_level_mps(h, altitude_m)
        if wind_cap is not None and level is not None and level[0] > wind_cap:
            return True
        if gust_cap is not None and h.wind_gusts_10m_mps is not None and h.wind_gusts_10m_mps > gust_cap:
            return True
    return False

# ------------------------------------------------------------------ public entry
def plan_mission(
    world: World,
    job: Job,
    drones: Sequence[Drone],
    *,
    limits: PlanningLimits,
    authorised_zone_ids: frozenset[str] = frozenset(),
    budget: Budget | None = None,
) -> Plan:
    """Plan ``job`` with ``drones`` (already judged eligible by the rules) into a ``Plan`` inside ``limits``.

    ``budget`` (``planner.routing.budget.Budget``) bounds every search of the plan: the
    shell gives a deadline on its clock (the replans of a widened window share it);
    without one each pipeline does the fixed work of its nominal budget, so the same
    inputs give the same plan byte for byte (the golden files).

    Raises ``InvalidArgument`` for malformed input (an unknown dock, an altitude
    outside the limits' ceiling/floor band); an infeasible fleet gives a plan
    whose ``unserved`` says what is left and why. Every zone blocking at some
    instant from ``job.start_at`` to the last landing is kept clear of, and the
    cold derating and wind limit cover the same window (module docstring).
    """
    limits.check_altitude(job.altitude_m)
    zone_ids = frozenset(job.authorised_zone_ids) | frozenset(authorised_zone_ids)
    drones = sorted(drones, key=lambda d: d.id)
    start, until = airspace_window(job, drones, world)

    def conditions(end: datetime) -> tuple[frozenset[str], tuple[float, ...], frozenset[str]]:
        """What the window up to ``end`` decides: blocking zones, usable energy per drone, windy drones."""
        found = blocking_zones(world, start, job.altitude_m, until=end, authorised_zone_ids=zone_ids)
        hours = world.weather.hours_between(start, end)
        temps = [h.temperature_2m_c for h in hours]
        usable = tuple(limits.usable_energy_wh(d.battery_wh, d.battery_pct, temps) for d in drones)
        windy = frozenset(d.id for d in drones if _too_windy(d, world, hours, job.altitude_m, limits))
        return frozenset(z.id for z, _ in found), usable, windy

    seen = conditions(until)
    # bounded: each pass that does not return adds a zone or a windy drone, or lowers a drone's energy
    # (once per battery rule: a derating applies or it does not)
    for _ in range(len(world.zones) + len(drones) * (len(limits.reserves) + 1) + 1):
        plan = _plan_in_window(world, job, drones, zone_ids, until, limits, seen, budget)
        last = max((s.end_at for s in plan.sorties), default=start)
        if last <= until:
            return plan
        until = last
        wider = conditions(until)
        if wider == seen:  # nothing new up to the last landing: the plan stands
            return plan
        seen = wider
    raise AssertionError("unreachable: the window's conditions changed more often than they can")  # pragma: no cover


def _plan_in_window(
    world: World,
    job: Job,
    drones: Sequence[Drone],
    zone_ids: frozenset[str],
    until: datetime,
    limits: PlanningLimits,
    conditions: tuple[frozenset[str], tuple[float, ...], frozenset[str]],
    budget: Budget | None = None,
) -> Plan:
    """``plan_mission`` with the zones blocking at some instant of ``[job.start_at, until]``
    and the usable energy and windy drones of that window (``conditions``)."""
    frame = job.frame
    _, usable_wh, windy = conditions
    raw_nofly = no_fly_polygons(world, job.start_at, job.altitude_m, frame, 0.0, zone_ids, until=until)
    transit = TransitGraph(raw_nofly, limits.safety_margin_m)
    temps = [h.temperature_2m_c for h in world.weather.hours_between(job.start_at, until)]
    usable: list[tuple[Drone, Rates, XY]] = []
    skipped: list[str] = []
    for d, energy_wh in zip(drones, usable_wh):
        dock = world.dock(d.dock_id)
        xy = frame.forward(dock.lon, dock.lat)
        if d.id in windy:
            skipped.append(d.id)
            continue
        try:
            transit.path(xy, xy)  # a dock inside a no-fly zone cannot launch
        except AirspaceBlocked:
            skipped.append(d.id)
            continue
        r = rates(d, job, world, energy_wh)
        if r.reach_m() <= 0:
            skipped.append(d.id)
            continue
        usable.append((d, r, (float(xy[0]), float(xy[1]))))
    builder = SortieBuilder(job, world, transit.obstacles_local)
    params: dict = {
        "timing": TIMING,  # the figures are the vehicle's flight (planner.output.sortie_flight)
        "battery_swap_s": BATTERY_SWAP_S,
        "dock_turnaround_s": {dk: turnaround_s(world, dk) for dk in sorted({d.dock_id for d, _, _ in usable})},
        "reserve_fraction": limits.reserve_fraction,
        "energy_derating": limits.derating(temps),
        "safety_margin_m": limits.safety_margin_m,
        "ceiling_m": limits.ceiling_m,
        "drones": [d.id for d, _, _ in usable],
        "drones_not_usable": skipped,
        "drones_too_windy": sorted(windy),
        "no_fly_polygons": len(raw_nofly),
    }
    pipeline = PIPELINES.get(job.mission_type)
    if pipeline is None:  # Job validates this; kept for a clear message
        raise InvalidArgument(f"unknown mission type {job.mission_type!r}")
    allowed = {d.id: r.usable_wh for d, r, _ in usable}
    for attempt in range(ENERGY_REROUTES + 1):
        sorties, unserved, extra = pipeline(world, job, usable, transit, builder, budget=budget)
        scale = _dearer_than_routed(sorties, usable, allowed)
        if not scale or attempt == ENERGY_REROUTES:
            break
        usable = [(d, replace(r, usable_wh=r.usable_wh * scale.get(d.id, 1.0)), xy) for d, r, xy in usable]
    coverage = extra.pop("coverage_fraction", None)
    dark = extra.pop("unimaged_local", None)  # surveys: where the sweeps leave the area dark
    params.update(extra)
    sorties = sorted(after_turnaround(sorties, world), key=lambda s: (s.start_at, s.drone_id))
    sorties = [replace(s, index=i) for i, s in enumerate(sorties)]
    return Plan(
        mission_type=job.mission_type,
        planned_for=job.start_at,
        area_wgs84=job.area_wgs84,
        altitude_m=job.altitude_m,
        sorties=tuple(sorties),
        unserved=tuple(sorted(unserved, key=lambda u: u.target_id)),
        coverage_fraction=coverage,
        parameters=params,
        unimaged_wgs84=None if dark is None else job.frame.to_wgs84(dark),
    )


def _dearer_than_routed(sorties: Sequence[Any], usable: Sequence[tuple[Drone, Rates, XY]], allowed: dict[str, float]) -> dict[str, float]:
    """Per drone whose flown sortie needs more than ``allowed``: the factor on the energy it is routed with
    (what the router's per-metre rates said that sortie costs over what its flight costs, with a 2 % margin)."""
    by_id = {d.id: r for d, r, _ in usable}
    out: dict[str, float] = {}
    for s in sorties:
        r = by_id.get(s.drone_id)
        if r is None or s.energy_wh <= allowed[s.drone_id] + 1e-9:
            continue
        routed = r.fixed_wh
        for leg in s.legs:
            if leg.kind == "transit":
                routed += r.transit_wh_per_m * leg.distance_m
            elif leg.kind in ("lane", "sweep"):
                routed += r.work_wh_per_m * leg.distance_m
            elif leg.kind == "inspect":
                routed += r.hover_w * sum(w.hold_s for w in leg.waypoints) / 3600.0
        out[s.drone_id] = min(out.get(s.drone_id, 1.0), 0.98 * routed / s.energy_wh)
    return out


#: ``extra["coverage_fraction"]``, when a pipeline measures one, becomes ``Plan.coverage_fraction``.
#: Mission type → the pipeline that turns a job into (sorties, unserved, extra parameters); one module each.
#: ``extra["coverage_fraction"]``, when a pipeline measures one, becomes ``Plan.coverage_fraction``.
PIPELINES: dict[str, Pipeline] = {
    "FIRE_LANE_PATROL": plan_patrol,
    "AREA_SURVEY": plan_survey,
    "POINT_INSPECTION": plan_points,
}
