"""bench.lanes_lp_bound: a lower bound that counts the flight between components — tight where known, below plans."""

from __future__ import annotations

import numpy as np

from bench.lanes_bound import lane_bounds
from bench.lanes_lp_bound import lp_bound
from planner.patrol.arc_routing import ArcDepot, route_lanes

SQUARE = ([[0, 0], [200, 0]], [[200, 0], [200, 200]], [[200, 200], [0, 200]], [[0, 200], [0, 0]])


def _square(dx: float) -> list[np.ndarray]:
    return [np.asarray(s, float) + [dx, 0.0] for s in SQUARE]


def test_tight_on_a_line_and_a_loop_from_their_end() -> None:
    depot = np.asarray([[0.0, 0.0]])
    line = lp_bound([np.asarray([[0.0, 0.0], [100.0, 0.0]])], depot, 1000.0, None)
    assert line["lp_bound_m"] == 200.0 and line["converged"]  # out along it, straight back: the only plan
    loop = lp_bound(_square(0.0), depot, 1000.0, None)
    assert loop["lp_bound_m"] == 800.0 and loop["converged"]


def test_counts_the_flight_to_a_second_component() -> None:
    """Two closed squares 1 km apart: no odd end, so the T-join bound sees only the lines; a plan flies there and back."""
    lines = _square(0.0) + _square(1200.0)
    depot = np.asarray([[0.0, 0.0]])
    old = lane_bounds(lines, depot, 10_000.0, None)
    assert old["bound_m"] == 1600.0
    got = lp_bound(lines, depot, 10_000.0, None)
    assert got["converged"] and got["lp_bound_m"] == 3600.0  # 1 000 m out to the far square and back
    plan = route_lanes([l.tolist() for l in lines], [ArcDepot(0.0, 0.0, 10_000.0)], budget=0.5)
    assert abs(plan.total_length_m - 3600.0) < 1e-6


def test_at_least_the_t_join_bound_and_below_the_plan() -> None:
    block = 200.0
    lines = []
    for i in range(4):
        for j in range(3):
            if (i + j) % 3:  # a sparse grid: several components, odd ends
                lines.append([(j * block, i * block), ((j + 1) * block, i * block)])
                lines.append([(i * block, j * block), (i * block, (j + 1) * block)])
    depot = ArcDepot(900.0, 300.0, 2500.0)  # off the grid: every sortie flies out and back
    res = route_lanes(lines, [depot], budget=0.5)
    assert not res.unserved
    arrays = [np.asarray(l, float) for l in lines]
    xy = np.asarray([[depot.x, depot.y]])
    old = lane_bounds(arrays, xy, depot.max_sortie_m, None)
    got = lp_bound(arrays, xy, depot.max_sortie_m, None)
    assert got["converged"]
    assert old["bound_odd_m"] - 1e-6 <= got["lp_bound_m"] <= res.total_length_m + 1e-6
    assert got["lp_sorties"] <= len(res.sorties)
