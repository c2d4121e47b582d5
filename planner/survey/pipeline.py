"""AREA_SURVEY: the area minus the no-fly zones, swept, cut into battery-sized pieces, shared out.

``planner.survey.coverage`` lays the sweeps (the hop between the parts of an area a zone splits
goes around the zone), long sweeps are cut to a share of a battery's reach, and
``planner.routing.assignment`` gives the pieces to the drones for the soonest finish. The swath
is the narrowest camera footprint of the drones (every drone images at least that wide).

Deadline (a ``Budget`` with a clock): the whole plan ends within it, not only the coverage. The
coverage is given the deadline less ``AFTER_COVERAGE_SHARE`` of it, kept for what follows it —
the dock ↔ sweep distances around the zones, the split over the drones, the dark-area
measurement and the sorties. The split (``assign_survey``) is anytime: the first drone order's
split always runs to its end, and the other orders are tried until ``TAIL_SHARE`` of the deadline
is left. (Before, the split ran after the coverage's deadline: with four drones a 1 s plan of a
4.5 km² survey took 1.56-1.68 CPU s, 0.9-1.0 s of it the split's 24 drone orders.) Without a clock nothing changes: the same work,
the same plan (the golden files).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import numpy as np

from planner.geo.deadheads import deadhead_matrix
from planner.routing.assignment import SurveyDrone, assign_survey, connections_from_path, split_long_sweeps
from planner.errors import InvalidArgument
from planner.plan import Unserved
from planner.routing.budget import Budget
from planner.sortie_parts import XY, Piece

__all__ = ["plan_survey"]

SURVEY_PIECE_FRACTION = 0.25  # sweeps longer than this share of a battery's reach are cut
AFTER_COVERAGE_SHARE = 0.3  # of a deadline, kept after the coverage for the distances, the split and the sorties
TAIL_SHARE = 0.1  # of a deadline, kept after the split's search for the dark-area measurement and the sorties

# ------------------------------------------------------------------ area survey
def plan_survey(world, job, usable, transit, builder, *, budget: Budget | None = None):
    from planner.survey.coverage import plan_coverage
    from planner.survey.repair import reportable_unimaged, shortfall, unimaged_area

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
    timed = budget is not None and budget.timed
    cov = plan_coverage(
        free, swath, coverage_target=job.coverage_target, start=first_dock, end=first_dock, bridge=transit.path,
        budget=budget.share(1.0 - AFTER_COVERAGE_SHARE) if timed else budget,  # type: ignore[union-attr]
    )
    # the split's search stops TAIL_SHARE of the whole deadline before it (never a share of what is left)
    split_expired = replace(budget, seconds=budget.seconds * (1.0 - TAIL_SHARE)).expired if timed else None  # type: ignore[arg-type]
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
            r.fixed_wh, r.fixed_s, r.turnaround_s,
        )
        for _, r, xy in usable
    ]
    res = assign_survey(pieces, sdrones, transit_m, split_expired)
    sorties = []
    for s in res.sorties:
        drone, rates, dock_xy = usable[s.drone]
        legs: list[Piece] = [Piece("transit", tuple(dh.path(index[dock_xy], index[pieces[s.first].start])))]
        run: list[XY] = []  # the survey part: sweeps and the connections between them, inside the area
        for i in range(s.first, s.last + 1):
            p = pieces[i]
            run += [p.start, p.end]
            if i < s.last and pieces[i + 1].sweep_index != p.sweep_index:
                run += list(conns[p.sweep_index])
        segs = tuple((pieces[i].start, pieces[i].end) for i in range(s.first, s.last + 1))
        legs.append(Piece("sweep", tuple(run), "area", sweeps=segs))
        legs.append(Piece("transit", tuple(dh.path(index[pieces[s.last].end], index[dock_xy]))))
        start = job.start_at + timedelta(seconds=s.start_offset_s)
        sorties.append(builder.sortie(drone, rates, dock_xy, legs, start))
    unserved = [Unserved(f"sweep-{pieces[i].sweep_index}.{i}", "out of range of every drone") for i in res.unserved]
    flown = sum(pieces[i].length_m for s in res.sorties for i in range(s.first, s.last + 1))
    total = sum(p.length_m for p in pieces)
    # what the flown sweeps leave dark (pieces out of every drone's range included), for the map
    flown_segs = [(pieces[i].start, pieces[i].end) for s in res.sorties for i in range(s.first, s.last + 1)]
    dark = unimaged_area(free, flown_segs, swath)
    fraction = 1.0 - dark.area / free.area if free.area > 0 else 0.0
    del flown, total  # the length ratio was an estimate; the strips are the figure
    return sorties, unserved, {
        "coverage_fraction": fraction,
        # what the operator asked for and whether the flown sweeps reach it (the plan says both)
        "coverage_target": job.coverage_target,
        "coverage_target_met": bool(fraction >= job.coverage_target),
        **({} if fraction >= job.coverage_target else {"coverage_shortfall": shortfall(free, dark, swath, job.coverage_target)}),
        "unimaged_local": reportable_unimaged(dark),
        "swath_m": round(swath, 3),
        "sweeps": len(cov.sweeps),
        "sweep_angle_deg": round(cov.angle_deg, 3),
        "makespan_s": round(res.makespan_s, 1),
        **({"makespan_search": "cut by the deadline"} if res.cut else {}),
        "routing_engine": cov.engine,  # what ordered the sweeps: OR-Tools' guided local search on the routing model
    }
