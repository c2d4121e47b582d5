"""The planner's top entry: a job and the eligible drones → a ``Plan`` of sorties.

``plan_mission(world, job, drones)`` builds the job's local frame and the no-fly
polygons in force at ``job.start_at`` (grown by ``job.safety_margin_m``), turns
the job into work and routes it under each drone's usable energy::

    usable_wh = battery_wh × battery_pct / 100 × (1 − world.defaults.reserve_fraction)

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

Energy (until a shared model lands in ``planner.energy``): the spec-calibrated
model of FACTS.md — cruise power ``drone.cruise_power_w`` at
``cruise_speed_mps`` for transits, hover power ``drone.hover_power_w`` for slow
work (sweeps and lanes at ``inspection_speed_mps``), hovers, climb and descent.

Nothing here raises for a fleet too small: what cannot be flown is listed in
``Plan.unserved`` with the reason. Pure: no clock, no files; deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import timedelta

import numpy as np
from shapely.geometry import LineString, MultiLineString, Point
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

from planner.airspace import no_fly_polygons
from planner.arc_routing import ArcDepot, deadhead_matrix, route_lanes
from planner.assignment import SurveyDrone, assign_survey, connections_from_path, split_long_sweeps
from planner.errors import AirspaceBlocked, InvalidArgument
from planner.job import Job
from planner.plan import Leg, Plan, Sortie, Unserved, Waypoint
from planner.routing import RoutingProblem, RoutingVehicle, solve_routing
from planner.transit import TransitGraph
from planner.world import Drone, World

__all__ = [
    "BATTERY_SWAP_S",
    "CLIMB_MPS",
    "DESCENT_MPS",
    "MAX_SORTIES_PER_DRONE",
    "ROUTING_BUDGET_S",
    "usable_energy_wh",
    "plan_mission",
]

BATTERY_SWAP_S = 600.0  # dock battery swap / top-up between two sorties of one drone
CLIMB_MPS = 4.0
DESCENT_MPS = 3.0
MAX_SORTIES_PER_DRONE = 3  # point inspection: vehicle copies per drone
ROUTING_BUDGET_S = 1.0  # sets the routing iteration count (deterministic), not a deadline
SURVEY_PIECE_FRACTION = 0.25  # sweeps longer than this share of a battery's reach are cut
_MWH = 1000.0  # routing works in integer milli-watt-hours

XY = tuple[float, float]


@dataclass(frozen=True)
class _Rates:
    """What a metre, a second of hover and a sortie's climb/descent cost one drone."""

    usable_wh: float
    cruise_mps: float
    work_mps: float
    cruise_w: float
    hover_w: float
    climb_s: float
    descent_s: float

    @property
    def transit_wh_per_m(self) -> float:
        return self.cruise_w / 3600.0 / self.cruise_mps

    @property
    def work_wh_per_m(self) -> float:
        return self.hover_w / 3600.0 / self.work_mps

    @property
    def fixed_s(self) -> float:
        return self.climb_s + self.descent_s

    @property
    def fixed_wh(self) -> float:
        return self.hover_w * self.fixed_s / 3600.0

    def reach_m(self) -> float:
        """Metres of the dearer kind of flight the usable energy buys after climb and descent."""
        return max(0.0, (self.usable_wh - self.fixed_wh) / max(self.transit_wh_per_m, self.work_wh_per_m))


def usable_energy_wh(drone: Drone, reserve_fraction: float) -> float:
    """Energy a sortie may use: the charge now, less the reserve that must remain at landing."""
    return drone.battery_wh * drone.battery_pct / 100.0 * (1.0 - reserve_fraction)


def _rates(drone: Drone, job: Job, reserve_fraction: float) -> _Rates:
    return _Rates(
        usable_wh=usable_energy_wh(drone, reserve_fraction),
        cruise_mps=drone.cruise_speed_mps,
        work_mps=drone.inspection_speed_mps,
        cruise_w=drone.cruise_power_w,
        hover_w=drone.hover_power_w,
        climb_s=job.altitude_m / CLIMB_MPS,
        descent_s=job.altitude_m / DESCENT_MPS,
    )


# ------------------------------------------------------------------ sortie building
@dataclass(frozen=True)
class _Piece:
    """One leg to build: a polyline flown at one speed, or a hover at a point."""

    kind: str  # transit | sweep | lane | inspect
    points: tuple[XY, ...]
    target_id: str | None = None
    hold_s: float = 0.0


class _Builder:
    def __init__(self, job: Job, world: World) -> None:
        self.job = job
        self.frame = job.frame
        self.alt = job.altitude_m
        self.world = world

    def _wp(self, xy: XY, action: str, speed: float, hold_s: float = 0.0, target: str | None = None) -> Waypoint:
        lon, lat = self.frame.inverse(float(xy[0]), float(xy[1]))
        return Waypoint(lon, lat, self.alt, action, speed, hold_s, target)  # type: ignore[arg-type]

    def sortie(self, index: int, drone: Drone, rates: _Rates, dock_xy: XY, pieces: Sequence[_Piece], start_at) -> Sortie:
        legs: list[Leg] = [
            Leg(
                "takeoff",
                (self._wp(dock_xy, "TAKEOFF", CLIMB_MPS),),
                0.0,
                rates.climb_s,
                rates.hover_w * rates.climb_s / 3600.0,
            )
        ]
        for p in pieces:
            length = float(LineString(p.points).length) if len(p.points) > 1 else 0.0
            if p.kind == "transit":
                if length <= 1e-6:
                    continue
                wps = tuple(self._wp(q, "WAYPOINT", rates.cruise_mps) for q in p.points[1:])
                dur = length / rates.cruise_mps
                legs.append(Leg("transit", wps, length, dur, rates.cruise_w * dur / 3600.0))
            elif p.kind in ("sweep", "lane"):
                inner = tuple(self._wp(q, "WAYPOINT", rates.work_mps, target=p.target_id) for q in p.points[1:-1])
                wps = (
                    self._wp(p.points[0], "CAMERA_ON", rates.work_mps, target=p.target_id),
                    *inner,
                    self._wp(p.points[-1], "CAMERA_OFF", rates.work_mps, target=p.target_id),
                )
                dur = length / rates.work_mps
                legs.append(Leg(p.kind, wps, length, dur, rates.hover_w * dur / 3600.0, p.target_id))  # type: ignore[arg-type]
            elif p.kind == "inspect":
                wps = (self._wp(p.points[0], "INSPECT", 0.0, p.hold_s, p.target_id),)
                legs.append(Leg("inspect", wps, 0.0, p.hold_s, rates.hover_w * p.hold_s / 3600.0, p.target_id))
            else:  # pragma: no cover - internal
                raise ValueError(p.kind)
        legs.append(
            Leg(
                "landing",
                (self._wp(dock_xy, "LAND", DESCENT_MPS),),
                0.0,
                rates.descent_s,
                rates.hover_w * rates.descent_s / 3600.0,
            )
        )
        energy = sum(l.energy_wh for l in legs)
        charge = drone.battery_wh * drone.battery_pct / 100.0
        return Sortie(
            index=index,
            drone_id=drone.id,
            dock_id=drone.dock_id,
            start_at=start_at,
            legs=tuple(legs),
            distance_m=sum(l.distance_m for l in legs),
            duration_s=sum(l.duration_s for l in legs),
            energy_wh=energy,
            battery_fraction=energy / charge if charge > 0 else math.inf,
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
    authorised_zone_ids: frozenset[str] = frozenset(),
) -> Plan:
    """Plan ``job`` with ``drones`` (already judged eligible by the rules) into a ``Plan``.

    Raises ``InvalidArgument`` only for malformed input (an unknown dock);
    an infeasible fleet gives a plan whose ``unserved`` says what is left and why.
    """
    frame = job.frame
    reserve = world.defaults.reserve_fraction
    zone_ids = frozenset(job.authorised_zone_ids) | frozenset(authorised_zone_ids)
    raw_nofly = no_fly_polygons(world, job.start_at, job.altitude_m, frame, 0.0, zone_ids)
    transit = TransitGraph(raw_nofly, job.safety_margin_m)
    drones = sorted(drones, key=lambda d: d.id)
    usable: list[tuple[Drone, _Rates, XY]] = []
    skipped: list[str] = []
    for d in drones:
        dock = world.dock(d.dock_id)
        xy = frame.forward(dock.lon, dock.lat)
        try:
            transit.path(xy, xy)  # a dock inside a no-fly zone cannot launch
        except AirspaceBlocked:
            skipped.append(d.id)
            continue
        rates = _rates(d, job, reserve)
        if rates.reach_m() <= 0 or rates.cruise_mps <= 0 or rates.work_mps <= 0:
            skipped.append(d.id)
            continue
        usable.append((d, rates, (float(xy[0]), float(xy[1]))))
    builder = _Builder(job, world)
    params: dict = {
        "battery_swap_s": BATTERY_SWAP_S,
        "reserve_fraction": reserve,
        "safety_margin_m": job.safety_margin_m,
        "drones": [d.id for d, _, _ in usable],
        "drones_not_usable": skipped,
        "no_fly_polygons": len(raw_nofly),
    }
    if job.mission_type == "FIRE_LANE_PATROL":
        sorties, unserved, extra = _lanes(world, job, usable, transit, builder)
        coverage = None
    elif job.mission_type == "AREA_SURVEY":
        sorties, unserved, extra = _survey(job, usable, transit, builder)
        coverage = extra.pop("coverage_fraction", None)
    elif job.mission_type == "POINT_INSPECTION":
        sorties, unserved, extra = _points(world, job, usable, transit, builder)
        coverage = None
    else:  # Job validates this; kept for a clear message
        raise InvalidArgument(f"unknown mission type {job.mission_type!r}")
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
    """Lane pieces to fly (noded at junctions, outside no-fly zones), each with its lane id."""
    frame = job.frame
    area = job.area_local.buffer(1.0)
    blocked = transit.obstacles_local
    lanes = []
    unserved: list[Unserved] = []
    for lane in sorted(world.lanes, key=lambda l: l.id):
        if lane.kind not in job.lane_kinds:
            continue
        line = frame.to_local(lane.line)
        if not line.intersects(area):
            continue
        inside = line.intersection(area)
        free = inside.difference(blocked) if not blocked.is_empty else inside
        if free.length < 1.0:
            unserved.append(Unserved(lane.id, "in a no-fly zone"))
            continue
        if free.length < inside.length - 1.0:
            unserved.append(Unserved(f"{lane.id}:part", f"{inside.length - free.length:.0f} m in a no-fly zone"))
        lanes.append((lane.id, free))
    if not lanes:
        return [], unserved
    noded = unary_union([g for _, g in lanes])
    parts = list(noded.geoms) if isinstance(noded, MultiLineString) else [noded]
    out: list[tuple[str, LineString]] = []
    for part in parts:
        if not isinstance(part, LineString) or part.length < 0.5:
            continue
        mid = part.interpolate(0.5, normalized=True)
        owner = min(lanes, key=lambda lg: (lg[1].distance(mid), lg[0]))[0]
        out.append((owner, part))
    out.sort(key=lambda e: (e[0], tuple(np.round(e[1].coords[0], 3))))
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
        unserved.append(Unserved(f"{edges[k][0]}@{k}", reason.replace("_", " ")))
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
                unserved.append(Unserved(f"{edges[k][0]}@{k}", "no drone at the dock has the energy for its sortie"))
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
        sorties.append(builder.sortie(0, drone, rates, dock_xy, pieces, start))
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
        a = coords[0]
        j = pos + int(np.argmin([math.dist(a, q) for q in path[pos:]]))
        pieces.append(_Piece("transit", tuple(path[pos : j + 1])))
        pieces.append(_Piece("lane", tuple(coords), edges[k][0]))
        b = coords[-1]
        pos = j + int(np.argmin([math.dist(b, q) for q in path[j:]]))
    pieces.append(_Piece("transit", tuple(path[pos:])))
    return pieces


# ------------------------------------------------------------------ area survey
def _survey(job, usable, transit, builder):
    from planner.coverage import plan_coverage

    area = job.area_local
    blocked = transit.obstacles_local
    free = area.difference(blocked) if not blocked.is_empty else area
    if free.is_empty or free.area < 1.0:
        return [], [Unserved("area", "wholly inside no-fly zones")], {"coverage_fraction": 0.0}
    if not usable:
        return [], [Unserved("area", "no usable drone")], {"coverage_fraction": 0.0}
    swath = min(job.swath_for(d) for d, _, _ in usable)
    first_dock = usable[0][2]
    cov = plan_coverage(free, swath, coverage_target=job.coverage_target, start=first_dock, end=first_dock)
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
        for i in range(s.first, s.last + 1):
            p = pieces[i]
            legs.append(_Piece("sweep", (p.start, p.end), f"sweep-{p.sweep_index}"))
            if i < s.last:
                if pieces[i + 1].sweep_index == p.sweep_index:
                    continue  # the next piece continues this sweep
                legs.append(_Piece("transit", tuple(conns[p.sweep_index])))
        legs.append(_Piece("transit", tuple(dh.path(index[pieces[s.last].end], index[dock_xy]))))
        start = job.start_at + timedelta(seconds=s.start_offset_s)
        sorties.append(builder.sortie(0, drone, rates, dock_xy, legs, start))
    unserved = [Unserved(f"sweep-{pieces[i].sweep_index}@{i}", "out of range of every drone") for i in res.unserved]
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
    area = job.area_local.buffer(1.0)
    blocked = transit.obstacles_local
    targets: list[tuple[str, XY]] = []
    unserved: list[Unserved] = []
    for poi in sorted(world.pois, key=lambda p: p.id):
        if poi.kind not in job.poi_kinds:
            continue
        xy = frame.forward(poi.lon, poi.lat)
        if not area.contains(Point(xy)):
            continue
        if not blocked.is_empty and blocked.contains(Point(xy)):
            unserved.append(Unserved(poi.id, "in a no-fly zone"))
            continue
        targets.append((poi.id, (float(xy[0]), float(xy[1]))))
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
    for k, (drone, r, xy) in enumerate(usable):
        hover_wh = r.hover_w * job.hover_s / 3600.0
        leave = np.where(is_point, hover_wh, r.fixed_wh)[:, None]
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
        dur += sum(float(D[a, b]) for a, b in zip(walk[:-1], walk[1:])) / r.cruise_mps + job.hover_s * len(route)
        items.append((k, dur, (v, route)))
    sorties = []
    for k, start, (v, route) in _schedule(job, items):
        drone, rates, xy = usable[k]
        node_dock = vehicles[v].start_node
        legs: list[_Piece] = []
        prev = node_dock
        for node in route:
            legs.append(_Piece("transit", tuple(dh.path(prev, node))))
            legs.append(_Piece("inspect", (targets[node - nd][1],), targets[node - nd][0], job.hover_s))
            prev = node
        legs.append(_Piece("transit", tuple(dh.path(prev, node_dock))))
        sorties.append(builder.sortie(0, drone, rates, xy, legs, start))
    return sorties, unserved, {"points": len(targets), "routing_solver": sol.solver, "routing_iterations": sol.iterations}
