"""bench.lanes_bound: a lower bound on any lane plan — tight where the answer is known, below every plan."""

from __future__ import annotations

import numpy as np

from bench.lanes_bound import lane_bounds
from planner.patrol.arc_routing import ArcDepot, route_lanes


def test_tight_on_a_line_and_a_loop_from_their_end() -> None:
    depot = np.asarray([[0.0, 0.0]])
    line = lane_bounds([np.asarray([[0.0, 0.0], [100.0, 0.0]])], depot, 1000.0, None)
    assert line["bound_m"] == 200.0  # out along it, straight back: the only plan
    square = [np.asarray(s) for s in ([[0, 0], [200, 0]], [[200, 0], [200, 200]], [[200, 200], [0, 200]], [[0, 200], [0, 0]])]
    loop = lane_bounds([a.astype(float) for a in square], depot, 1000.0, None)
    assert loop["bound_m"] == 800.0 and loop["odd_nodes"] == 0


def test_below_the_plan_and_the_sortie_count_adds_depot_legs() -> None:
    block = 200.0
    lines = []
    for i in range(4):
        for j in range(3):
            lines.append([(j * block, i * block), ((j + 1) * block, i * block)])
            lines.append([(i * block, j * block), (i * block, (j + 1) * block)])
    depot = ArcDepot(900.0, 300.0, 3000.0)  # off the grid: every sortie flies out and back
    res = route_lanes(lines, [depot], budget=0.5)
    assert not res.unserved
    got = lane_bounds([np.asarray(l, float) for l in lines], np.asarray([[depot.x, depot.y]]), depot.max_sortie_m, None)
    assert got["required_m"] == 4800.0
    assert got["required_m"] < got["bound_odd_m"] <= got["bound_m"] <= res.total_length_m
    assert got["bound_m"] > got["bound_odd_m"]  # the legs from the depot 300 m away count
    assert got["bound_sorties"] <= len(res.sorties)
