"""FIRE_LANE_PATROL: the world's lanes inside the area, minus the no-fly zones, routed from the docks.

Lanes of ``job.lane_kinds`` inside the area are cut junction to junction
(``planner.patrol.lanes``), minus the no-fly parts; ``planner.patrol.arc_routing`` routes them with one
depot per dock; each sortie goes to that dock's drones, longest first, to the drone free
soonest that has the energy for it. What cannot be flown is ``Unserved`` with the reason.
"""

from __future__ import annotations

import math
from datetime import timedelta

import numpy as np
from shapely.geometry import LineString

from planner.patrol.arc_routing import ArcDepot, route_lanes
from planner.job import Job
from planner.patrol.lanes import required_lane_edges
from planner.routing.budget import Budget
from planner.plan import Unserved
from planner.sortie_parts import BATTERY_SWAP_S, XY, Piece
from planner.geo.transit import TransitGraph
from planner.world.model import World

__all__ = ["plan_patrol"]

# ------------------------------------------------------------------ fire-lane patrol
def _lane_edges(world: World, job: Job, transit: TransitGraph) -> tuple[list[tuple[str, LineString]], list[Unserved]]:
    """Lane pieces to fly (``planner.patrol.lanes``: junction to junction, clipped to the area), minus no-fly parts.

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


def plan_patrol(world, job, usable, transit, builder, *, budget: Budget | None = None):
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
    res = route_lanes(lines, depots, transit) if budget is None else route_lanes(lines, depots, transit, budget=budget)
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
    return sorties, unserved, {
        "lane_edges": len(edges),
        "lane_length_m": round(sum(lane_len), 2),
        "routing_engine": res.engine,  # what produced the sorties: "ortools-ils" or "pyvrp-start+ortools"
    }


def _lane_pieces(s, edges, dock_xy: XY) -> list[Piece]:
    """Split a sortie path back into transits and lane legs (the lanes appear in it in order)."""
    path = [tuple(p) for p in s.path]
    pieces: list[Piece] = []
    pos = 0
    for k, rev in s.lines:
        coords = [tuple(map(float, c)) for c in edges[k][1].coords]
        if rev:
            coords = coords[::-1]
        j = pos + int(np.argmin([math.dist(coords[0], q) for q in path[pos:]]))
        pieces.append(Piece("transit", tuple(path[pos : j + 1])))
        pieces.append(Piece("lane", tuple(coords), edges[k][0]))
        # the lane's points follow in the path (consecutive repeats dropped); a closed lane
        # starts and ends at one point, so look for its end after its start
        n_pts = 1 + sum(1 for a, b in zip(coords, coords[1:]) if a != b)
        pos = j + n_pts - 1
        if pos >= len(path) or math.dist(path[pos], coords[-1]) > 1e-6:
            pos = j + 1 + int(np.argmin([math.dist(coords[-1], q) for q in path[j + 1 :]]))
    pieces.append(Piece("transit", tuple(path[pos:])))
    return pieces
