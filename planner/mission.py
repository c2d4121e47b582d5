"""The planner's top entry: a job and the eligible drones → a ``Plan`` of sorties.

``plan_mission(world, job, drones, limits=...)`` builds the job's local frame and
the no-fly polygons in force at some instant of the job's flight window (grown
by ``limits.safety_margin_m``; see Airspace below), turns the job into work and
routes it under each drone's usable energy (``planner.energy.usable_energy_wh``
with the reserves and cold derating of ``limits`` over the flight window's
forecast hours). ``limits`` (``planner.limits.PlanningLimits``) is derived from
the rule set that will judge the plan (``rules.limits.planning_limits``), so the
plan is made inside those rules: the flight altitude must lie in its
ceiling/floor band, and a drone whose flight window is windier than its wind
limit less the rule's margin is not used.

The mission kinds are the ``PIPELINES`` table: mission type → the function that
turns the job into sorties (one per pipeline below).

* FIRE_LANE_PATROL — the world's lanes of ``job.lane_kinds`` inside the area,
  minus the no-fly zones, noded at junctions → ``planner.arc_routing`` (one
  depot per dock; sorties go to that dock's drones, longest first, to the
  drone free soonest that can fly them).
* AREA_SURVEY — the area minus the no-fly zones → ``planner.coverage`` sweeps →
  ``planner.assignment`` (battery-feasible sorties, spread over the drones for
  the soonest finish).
* POINT_INSPECTION — the world's POIs of ``job.poi_kinds`` inside the area →
  ``planner.routing`` (multi-depot routing on an energy matrix; each drone may
  fly up to ``MAX_SORTIES_PER_DRONE`` sorties).

Timing: a drone's first sortie starts at ``job.start_at``; each later sortie of
the same drone starts ``BATTERY_SWAP_S`` after the previous one lands (the dock
swaps or charges the battery; a swapped battery is assumed at least as charged
as the reported one).

Airspace: the rules judge every leg over its own time window, so a zone that
opens while a sortie is up must already be avoided. The flight window is
``airspace_window``: from ``job.start_at`` for ``MAX_SORTIES_PER_DRONE`` back-to-back
sorties of the longest endurance among ``drones`` with ``BATTERY_SWAP_S`` between
them (3 × (3240 s + 600 s) = 3.2 h for the demo fleet). Every zone that blocks
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

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import numpy as np
from shapely.geometry import LineString, Point

from planner.airspace import blocking_zones, flight_window, no_fly_polygons
from planner.energy import EnergyModel, wind_level_mps
from planner.arc_routing import ArcDepot, deadhead_matrix, route_lanes
from planner.assignment import SurveyDrone, assign_survey, connections_from_path, split_long_sweeps
from planner.errors import AirspaceBlocked, InvalidArgument
from planner.job import Job
from planner.lanes import required_lane_edges
from planner.limits import PlanningLimits
from planner.legs import inspect_leg, landing_leg, lane_leg, sortie_totals, sweep_leg, takeoff_leg, transit_leg
from planner.plan import Leg, Plan, Sortie, Unserved
from planner.points import inspection_points
from planner.routing import RoutingProblem, RoutingVehicle, solve_routing
from planner.transit import TransitGraph
from planner.world import Drone, WeatherHour, World

__all__ = [
    "BATTERY_SWAP_S",
    "MAX_SORTIES_PER_DRONE",
    "ROUTING_BUDGET_S",
    "PIPELINES",
    "airspace_window",
    "plan_mission",
]

BATTERY_SWAP_S = 600.0  # dock battery swap / top-up between two sorties of one drone
MAX_SORTIES_PER_DRONE = 3  # point inspection: vehicle copies per drone; the airspace window's sorties
ROUTING_BUDGET_S = 1.0  # sets the routing iteration count (deterministic), not a deadline
SURVEY_PIECE_FRACTION = 0.25  # sweeps longer than this share of a battery's reach are cut
_MWH = 1000.0  # routing works in integer milli-watt-hours
_HEADING_STEP_DEG = 5  # headings tried for the worst per-metre cost in the wind
_RATE_MARGIN = 1.01  # planning figures 1 % above the model's, so flown figures stay inside

XY = tuple[float, float]


@dataclass(frozen=True)
class _Rates:
    """What a metre, a second of hover and a sortie's climb/descent cost one drone, planned safe.

    Per-metre figures are the worst over every heading in the forecast wind
    (``EnergyModel`` gives the true, heading-dependent figure when the legs are
    built), so a route planned within ``usable_wh`` stays within it when flown.
    """

    model: EnergyModel
    usable_wh: float
    cruise_mps: float
    work_mps: float
    transit_wh_per_m: float
    work_wh_per_m: float
    hover_w: float
    fixed_wh: float
    fixed_s: float

    def reach_m(self) -> float:
        """Metres of the dearer kind of flight the usable energy buys after climb and descent."""
        return max(0.0, (self.usable_wh - self.fixed_wh) / max(self.transit_wh_per_m, self.work_wh_per_m))


def airspace_window(job: Job, drones: Sequence[Drone]) -> tuple[datetime, datetime]:
    """``(job.start_at, until)``: the window whose zones the plan keeps clear of (module docstring).

    ``until`` is ``MAX_SORTIES_PER_DRONE`` × (longest endurance of ``drones`` +
    ``BATTERY_SWAP_S``) after the start (``planner.airspace.flight_window``).
    """
    return flight_window(job.start_at, drones, sorties=MAX_SORTIES_PER_DRONE, turnaround_s=BATTERY_SWAP_S)


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


def _worst_wh_per_m(model: EnergyModel, speed_mps: float) -> float:
    worst = max(model.power_w(model.airspeed_mps(speed_mps, h)) for h in range(0, 360, _HEADING_STEP_DEG))
    worst = max(worst, model.power_w(model.airspeed_mps(speed_mps, None)))
    return worst * _RATE_MARGIN / 3600.0 / speed_mps


def _rates(drone: Drone, job: Job, world: World, usable_wh: float) -> _Rates:
    model = EnergyModel.for_drone(drone, world.weather.hour_at(job.start_at), job.altitude_m)
    up = model.leg(0.0, 1.0, climb_m=job.altitude_m)
    down = model.leg(0.0, 1.0, climb_m=-job.altitude_m)
    return _Rates(
        model=model,
        usable_wh=usable_wh,
        cruise_mps=drone.cruise_speed_mps,
        work_mps=drone.inspection_speed_mps,
        transit_wh_per_m=_worst_wh_per_m(model, drone.cruise_speed_mps),
        work_wh_per_m=_worst_wh_per_m(model, drone.inspection_speed_mps),
        hover_w=model.power_w(model.wind_speed_mps) * _RATE_MARGIN,
        fixed_wh=(up.energy_wh + down.energy_wh) * _RATE_MARGIN,
        fixed_s=up.duration_s + down.duration_s,
    )


# ------------------------------------------------------------------ sortie building
@dataclass(frozen=True)
class _Piece:
    """One leg to build: a polyline (transit, lane, survey run) or a hover at a point."""

    kind: str  # transit | sweep | lane | inspect
    points: tuple[XY, ...]
    target_id: str | None = None
    hold_s: float = 0.0
    reverse: bool = False
    sweeps: tuple[tuple[XY, XY], ...] = ()


class _Builder:
    """Strings ``planner.legs`` builders into a ``Sortie``."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.frame = job.frame
        self.alt = job.altitude_m

    def sortie(self, drone: Drone, rates: _Rates, dock_xy: XY, pieces: Sequence[_Piece], start_at) -> Sortie:
        m, f, alt = rates.model, self.frame, self.alt
        legs: list[Leg] = [takeoff_leg(dock_xy, alt, f, m)]
        for p in pieces:
            if p.kind == "transit":
                if len(p.points) < 2 or LineString(p.points).length <= 1e-6:
                    continue
                legs.append(transit_leg(p.points, alt, f, m, rates.cruise_mps))
            elif p.kind == "lane":
                legs.append(lane_leg(p.points, alt, f, m, rates.work_mps, lane_edge_id=p.target_id or "", reverse=p.reverse))
            elif p.kind == "sweep":
                legs.append(sweep_leg(p.points, p.sweeps, alt, f, m, rates.work_mps, target_id=p.target_id))
            elif p.kind == "inspect":
                legs.append(inspect_leg(p.points[0], alt, f, m, target_id=p.target_id or "", hold_s=p.hold_s))
            else:  # pragma: no cover - internal
                raise ValueError(p.kind)
        legs.append(landing_leg(dock_xy, alt, f, m))
        distance, duration, energy, fraction = sortie_totals(legs, drone.battery_wh)
        return Sortie(
            index=0,
            drone_id=drone.id,
            dock_id=drone.dock_id,
            start_at=start_at,
            legs=tuple(legs),
            distance_m=distance,
            duration_s=duration,
            energy_wh=energy,
            battery_fraction=fraction,
        )


def _schedule(job: Job, items: Sequence[tuple[int, float, object]]) -> list[tuple[int, object, object]]:
    """(drone, duration_s, payload) in flight order per drone → (drone, start_at, payload)."""
    free: dict[int, object] = {}
    out = []
    for d, dur, payload in items:
        start = free.get(d, job.start_at)
        out.append((d, start, payload))
        free[d] = start + timedelta(seconds=dur + BATTERY_SWAP_S)  # type: ignore[operator]
    return out


# ------------------------------------------------------------------ public entry
def plan_mission(
    world: World,
    job: Job,
    drones: Sequence[Drone],
    *,
    limits: PlanningLimits,
    authorised_zone_ids: frozenset[str] = frozenset(),
) -> Plan:
    """Plan ``job`` with ``drones`` (already judged eligible by the rules) into a ``Plan`` inside ``limits``.

    Raises ``InvalidArgument`` for malformed input (an unknown dock, an altitude
    outside the limits' ceiling/floor band); an infeasible fleet gives a plan
    whose ``unserved`` says what is left and why. Every zone blocking at some
    instant from ``job.start_at`` to the last landing is kept clear of, and the
    cold derating and wind limit cover the same window (module docstring).
    """
    limits.check_altitude(job.altitude_m)
    zone_ids = frozenset(job.authorised_zone_ids) | frozenset(authorised_zone_ids)
    drones = sorted(drones, key=lambda d: d.id)
    start, until = airspace_window(job, drones)

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
        plan = _plan_in_window(world, job, drones, zone_ids, until, limits, seen)
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
) -> Plan:
    """``plan_mission`` with the zones blocking at some instant of ``[job.start_at, until]``
    and the usable energy and windy drones of that window (``conditions``)."""
    frame = job.frame
    _, usable_wh, windy = conditions
    raw_nofly = no_fly_polygons(world, job.start_at, job.altitude_m, frame, 0.0, zone_ids, until=until)
    transit = TransitGraph(raw_nofly, limits.safety_margin_m)
    temps = [h.temperature_2m_c for h in world.weather.hours_between(job.start_at, until)]
    usable: list[tuple[Drone, _Rates, XY]] = []
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
        rates = _rates(d, job, world, energy_wh)
        if rates.reach_m() <= 0:
            skipped.append(d.id)
            continue
        usable.append((d, rates, (float(xy[0]), float(xy[1]))))
    builder = _Builder(job)
    params: dict = {
        "battery_swap_s": BATTERY_SWAP_S,
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
    sorties, unserved, extra = pipeline(world, job, usable, transit, builder)
    coverage = extra.pop("coverage_fraction", None)
    params.update(extra)
    sorties = sorted(sorties, key=lambda s: (s.start_at, s.drone_id))
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
    )


# ------------------------------------------------------------------ fire-lane patrol
def _lane_edges(world: World, job: Job, transit: TransitGraph) -> tuple[list[tuple[str, LineString]], list[Unserved]]:
    """Lane pieces to fly (``planner.lanes``: junction to junction, clipped to the area), minus no-fly parts.

    Each entry is (lane edge id, local line); a piece cut in two by a zone keeps
    its id with ``/k`` appended per part.
    """
    frame = job.frame
    blocked = transit.obstacles_local
    out: list[tuple[str, LineString]] = []
    unserved: list[Unserved] = []
    for edge in required_lane_edges(world, job.area_wgs84, sorted(job.lane_kinds)):
        line = LineString(edge.coords_local(frame))
        if line.length < 0.5:
            continue
        free = line.difference(blocked) if not blocked.is_empty and line.intersects(blocked) else line
        parts = [g for g in getattr(free, "geoms", [free]) if isinstance(g, LineString) and g.length >= 0.5]
        if not parts:
            unserved.append(Unserved(edge.id, "in a no-fly zone"))
            continue
        lost = line.length - sum(g.length for g in parts)
        if lost > 0.5:
            unserved.append(Unserved(f"{edge.id}:no-fly", f"{lost:.0f} m of it in a no-fly zone"))
        if len(parts) == 1:
            out.append((edge.id, parts[0]))
        else:
            out.extend((f"{edge.id}/{k}", g) for k, g in enumerate(parts))
    return out, unserved


def _lanes(world, job, usable, transit, builder):
    edges, unserved = _lane_edges(world, job, transit)
    if not edges:
        return [], unserved, {"lane_edges": 0}
    if not usable:
        return [], unserved + [Unserved(l, "no usable drone") for l in sorted({e[0] for e in edges})], {}
    docks: dict[str, list[int]] = {}
    for k, (d, _, _) in enumerate(usable):
        docks.setdefault(d.dock_id, []).append(k)
    dock_ids = sorted(docks)
    depots = []
    for dk in dock_ids:
        members = docks[dk]
        depots.append(ArcDepot(*usable[members[0]][2], max(usable[k][1].reach_m() for k in members)))
    lines = [list(g.coords) for _, g in edges]
    res = route_lanes(lines, depots, transit)
    for k, reason in res.unserved.items():
        unserved.append(Unserved(edges[k][0], "out of range of every dock's drones"))
    lane_len = [g.length for _, g in edges]
    # sorties to the dock's drones: longest first, to the drone free soonest that can fly it
    free_at = {k: 0.0 for k in range(len(usable))}
    items: list[tuple[int, float, object]] = []
    order = sorted(range(len(res.sorties)), key=lambda i: (-res.sorties[i].length_m, i))
    for i in order:
        s = res.sorties[i]
        work = sum(lane_len[k] for k, _ in s.lines)
        best = None
        for k in docks[dock_ids[s.depot]]:
            r = usable[k][1]
            energy = r.fixed_wh + r.transit_wh_per_m * (s.length_m - work) + r.work_wh_per_m * work
            if energy > r.usable_wh + 1e-9:
                continue
            dur = r.fixed_s + (s.length_m - work) / r.cruise_mps + work / r.work_mps
            if best is None or (free_at[k], k) < (free_at[best[0]], best[0]):
                best = (k, dur)
        if best is None:
            for k, _ in s.lines:
                unserved.append(Unserved(edges[k][0], "no drone at the dock has the energy for its sortie"))
            continue
        k, dur = best
        items.append((k, free_at[k], (i, dur)))
        free_at[k] += dur + BATTERY_SWAP_S
    items.sort(key=lambda t: (t[0], t[1]))
    sorties = []
    for d, offset_s, (i, _dur) in items:
        s = res.sorties[i]
        drone, rates, dock_xy = usable[d]
        pieces = _lane_pieces(s, edges, dock_xy)
        start = job.start_at + timedelta(seconds=offset_s)
        sorties.append(builder.sortie(drone, rates, dock_xy, pieces, start))
    return sorties, unserved, {"lane_edges": len(edges), "lane_length_m": round(sum(lane_len), 2)}


def _lane_pieces(s, edges, dock_xy: XY) -> list[_Piece]:
    """Split a sortie path back into transits and lane legs (the lanes appear in it in order)."""
    path = [tuple(p) for p in s.path]
    pieces: list[_Piece] = []
    pos = 0
    for k, rev in s.lines:
        coords = [tuple(map(float, c)) for c in edges[k][1].coords]
        if rev:
            coords = coords[::-1]
        j = pos + int(np.argmin([math.dist(coords[0], q) for q in path[pos:]]))
        pieces.append(_Piece("transit", tuple(path[pos : j + 1])))
        pieces.append(_Piece("lane", tuple(coords), edges[k][0]))
        # the lane's points follow in the path (consecutive repeats dropped); a closed lane
        # starts and ends at one point, so look for its end after its start
        n_pts = 1 + sum(1 for a, b in zip(coords, coords[1:]) if a != b)
        pos = j + n_pts - 1
        if pos >= len(path) or math.dist(path[pos], coords[-1]) > 1e-6:
            pos = j + 1 + int(np.argmin([math.dist(coords[-1], q) for q in path[j + 1 :]]))
    pieces.append(_Piece("transit", tuple(path[pos:])))
    return pieces


# ------------------------------------------------------------------ area survey
def _survey(world, job, usable, transit, builder):
    from planner.coverage import plan_coverage

    area = job.area_local
    blocked = transit.obstacles_local
    free = area.difference(blocked) if not blocked.is_empty else area
    if free.is_empty or free.area < 1.0:
        return [], [Unserved("area", "wholly inside no-fly zones")], {"coverage_fraction": 0.0}
    if not usable:
        return [], [Unserved("area", "no usable drone")], {"coverage_fraction": 0.0}
    swaths, why = [], None
    for d, _, _ in usable:  # a drone without a camera model has no footprint of its own
        try:
            swaths.append(job.swath_for(d))
        except InvalidArgument as exc:
            why = why or exc
    if not swaths:
        raise why  # type: ignore[misc]
    swath = min(swaths)  # every drone images at least this wide
    first_dock = usable[0][2]
    # bridge: when a zone splits the area, the hop between its parts goes around the zone
    cov = plan_coverage(
        free, swath, coverage_target=job.coverage_target, start=first_dock, end=first_dock, bridge=transit.path
    )
    conns = connections_from_path(cov.sweeps, cov.path)
    reach = max(r.reach_m() for _, r, _ in usable)
    pieces = split_long_sweeps(cov.sweeps, conns, SURVEY_PIECE_FRACTION * reach)
    docks = [xy for _, _, xy in usable]
    pts = np.asarray([p.start for p in pieces] + [p.end for p in pieces] + docks, dtype=float)
    D, dh = deadhead_matrix(pts, transit)
    n = len(pieces)
    index = {}
    for i, p in enumerate(pieces):
        index.setdefault(p.start, i)
        index.setdefault(p.end, n + i)
    for k, xy in enumerate(docks):
        index.setdefault(xy, 2 * n + k)

    def transit_m(a: XY, b: XY) -> float:
        return float(D[index[a], index[b]])

    sdrones = [
        SurveyDrone(
            xy, r.usable_wh, r.transit_wh_per_m, r.work_wh_per_m, 1.0 / r.cruise_mps, 1.0 / r.work_mps,
            r.fixed_wh, r.fixed_s, BATTERY_SWAP_S,
        )
        for _, r, xy in usable
    ]
    res = assign_survey(pieces, sdrones, transit_m)
    sorties = []
    for s in res.sorties:
        drone, rates, dock_xy = usable[s.drone]
        legs: list[_Piece] = [_Piece("transit", tuple(dh.path(index[dock_xy], index[pieces[s.first].start])))]
        run: list[XY] = []  # the survey part: sweeps and the connections between them, inside the area
        for i in range(s.first, s.last + 1):
            p = pieces[i]
            run += [p.start, p.end]
            if i < s.last and pieces[i + 1].sweep_index != p.sweep_index:
                run += list(conns[p.sweep_index])
        segs = tuple((pieces[i].start, pieces[i].end) for i in range(s.first, s.last + 1))
        legs.append(_Piece("sweep", tuple(run), "area", sweeps=segs))
        legs.append(_Piece("transit", tuple(dh.path(index[pieces[s.last].end], index[dock_xy]))))
        start = job.start_at + timedelta(seconds=s.start_offset_s)
        sorties.append(builder.sortie(drone, rates, dock_xy, legs, start))
    unserved = [Unserved(f"sweep-{pieces[i].sweep_index}.{i}", "out of range of every drone") for i in res.unserved]
    flown = sum(pieces[i].length_m for s in res.sorties for i in range(s.first, s.last + 1))
    total = sum(p.length_m for p in pieces)
    fraction = cov.coverage_fraction * (flown / total if total > 0 else 0.0)
    return sorties, unserved, {
        "coverage_fraction": fraction,
        "swath_m": round(swath, 3),
        "sweeps": len(cov.sweeps),
        "sweep_angle_deg": round(cov.angle_deg, 3),
        "makespan_s": round(res.makespan_s, 1),
    }


# ------------------------------------------------------------------ point inspection
def _points(world, job, usable, transit, builder):
    frame = job.frame
    blocked = transit.obstacles_local
    targets: list[tuple[str, XY]] = []
    hover: list[float] = []
    unserved: list[Unserved] = []
    for pt in inspection_points(world, job.area_wgs84, sorted(job.poi_kinds), job.hover_s):
        xy = pt.xy(frame)
        if not blocked.is_empty and blocked.contains(Point(xy)):
            unserved.append(Unserved(pt.id, "in a no-fly zone"))
            continue
        targets.append((pt.id, (float(xy[0]), float(xy[1]))))
        hover.append(pt.hover_s)
    if not targets:
        return [], unserved, {"points": 0}
    if not usable:
        return [], unserved + [Unserved(t, "no usable drone") for t, _ in targets], {"points": len(targets)}
    dock_xy = sorted({xy for _, _, xy in usable})
    nd = len(dock_xy)
    pts = np.asarray(dock_xy + [xy for _, xy in targets], dtype=float)
    D, dh = deadhead_matrix(pts, transit)
    # one profile per drone: energy in mWh of arc i → j, hover at i and climb/descent folded in
    matrices, vehicles, owners = [], [], []
    is_point = np.arange(len(pts)) >= nd
    hover_s = np.concatenate([np.zeros(nd), np.asarray(hover)])
    for k, (drone, r, xy) in enumerate(usable):
        leave = np.where(is_point, r.hover_w * hover_s / 3600.0, r.fixed_wh)[:, None]
        m = np.ceil((D * r.transit_wh_per_m + leave) * _MWH).astype(np.int64)
        matrices.append(m)
        for _ in range(MAX_SORTIES_PER_DRONE):
            vehicles.append(RoutingVehicle(dock_xy.index(xy), int(math.floor(r.usable_wh * _MWH)), profile=k))
            owners.append(k)
    problem = RoutingProblem(tuple(matrices), tuple(vehicles), tuple(range(nd, len(pts))), coords=pts)
    sol = solve_routing(problem, budget_s=ROUTING_BUDGET_S)
    for node, reason in sol.unserved.items():
        why = "out of range of every drone" if reason == "out_of_range" else "the fleet has no energy left for it"
        unserved.append(Unserved(targets[node - nd][0], why))
    items = []
    for v, route in enumerate(sol.routes):
        if not route:
            continue
        k = owners[v]
        r = usable[k][1]
        dur = r.fixed_s
        walk = [vehicles[v].start_node, *route, vehicles[v].start_node]
        dur += sum(float(D[a, b]) for a, b in zip(walk[:-1], walk[1:])) / r.cruise_mps + float(hover_s[route].sum())
        items.append((k, dur, (v, route)))
    sorties = []
    for k, start, (v, route) in _schedule(job, items):
        drone, rates, xy = usable[k]
        node_dock = vehicles[v].start_node
        legs: list[_Piece] = []
        prev = node_dock
        for node in route:
            legs.append(_Piece("transit", tuple(dh.path(prev, node))))
            legs.append(_Piece("inspect", (targets[node - nd][1],), targets[node - nd][0], float(hover_s[node])))
            prev = node
        legs.append(_Piece("transit", tuple(dh.path(prev, node_dock))))
        sorties.append(builder.sortie(drone, rates, xy, legs, start))
    return sorties, unserved, {"points": len(targets), "routing_solver": sol.solver, "routing_iterations": sol.iterations}


#: Mission type → the pipeline that turns a job into (sorties, unserved, extra parameters).
#: ``extra["coverage_fraction"]``, when a pipeline measures one, becomes ``Plan.coverage_fraction``.
PIPELINES = {
    "FIRE_LANE_PATROL": _lanes,
    "AREA_SURVEY": _survey,
    "POINT_INSPECTION": _points,
}
