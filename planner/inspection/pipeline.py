"""POINT_INSPECTION: the world's POIs of ``job.poi_kinds`` inside the area, visited and hovered at.

Multi-depot routing (``planner.routing.vrp``) on an energy matrix, one profile per drone,
hover and climb/descent folded in; each drone may fly up to ``MAX_SORTIES_PER_DRONE``
sorties. A point inside a no-fly zone is ``Unserved``.
"""

from __future__ import annotations

import math

import numpy as np
from shapely.geometry import Point

from planner.geo.deadheads import deadhead_matrix
from planner.plan import Unserved
from planner.inspection.points import inspection_points
from planner.routing.budget import Budget
from planner.routing.vrp import RoutingProblem, RoutingVehicle, solve_routing
from planner.sortie_parts import MAX_SORTIES_PER_DRONE, XY, Piece, schedule

__all__ = ["plan_points"]

ROUTING_BUDGET_S = 1.0  # without the shell's deadline: the work of a nominal second (deterministic)
_MWH = 1000.0  # routing works in integer milli-watt-hours

# ------------------------------------------------------------------ point inspection
def plan_points(world, job, usable, transit, builder, *, budget: Budget | None = None):
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
    sol = solve_routing(problem, budget=ROUTING_BUDGET_S if budget is None else budget)
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
    for k, start, (v, route) in schedule(job, items, [r.turnaround_s for _, r, _ in usable]):
        drone, rates, xy = usable[k]
        node_dock = vehicles[v].start_node
        legs: list[Piece] = []
        prev = node_dock
        for node in route:
            legs.append(Piece("transit", tuple(dh.path(prev, node))))
            legs.append(Piece("inspect", (targets[node - nd][1],), targets[node - nd][0], float(hover_s[node])))
            prev = node
        legs.append(Piece("transit", tuple(dh.path(prev, node_dock))))
        sorties.append(builder.sortie(drone, rates, xy, legs, start))
    return sorties, unserved, {
        "points": len(targets),
        "routing_solver": sol.solver,
        "routing_engine": sol.engine,  # what produced the routes: "ortools-ils" or "pyvrp-start+ortools"
        "routing_iterations": sol.iterations,
        "routing_stopped_by": sol.stopped_by,
    }


#: Mission type → the pipeline that turns a job into (sorties, unserved, extra parameters).
