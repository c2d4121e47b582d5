"""planner.patrol.arc_routing: every required line flown once, limits kept, no-fly avoided, deterministic."""

from __future__ import annotations

import numpy as np
import pytest
from shapely.geometry import LineString, Point, box

from planner.patrol.arc_routing import ENGINE, ENGINE_PYVRP_START, UNSERVED_OUT_OF_RANGE, ArcDepot, route_lanes
from planner.geo.transit import TransitGraph


def _grid_lines(n: int = 4, block: float = 200.0) -> list[list[tuple[float, float]]]:
    lines = []
    for i in range(n + 1):
        for j in range(n):
            lines.append([(j * block, i * block), ((j + 1) * block, i * block)])
            lines.append([(i * block, j * block), (i * block, (j + 1) * block)])
    return lines


def _flown_along(path, line, tol=0.5) -> bool:
    """The line lies on the path (within tol) — the sortie flew along it."""
    return LineString(path).buffer(tol).covers(LineString(line))


def _check(lines, depots, res, transit=None):
    served = [k for s in res.sorties for k, _ in s.lines]
    assert len(served) == len(set(served)), "a line is flown twice"
    assert set(served) | set(res.unserved) == set(range(len(lines)))
    for s in res.sorties:
        d = depots[s.depot]
        assert np.hypot(s.path[0][0] - d.x, s.path[0][1] - d.y) < 1e-6
        assert np.hypot(s.path[-1][0] - d.x, s.path[-1][1] - d.y) < 1e-6
        assert s.length_m <= d.max_sortie_m + 1e-6
        assert abs(LineString(s.path).length - s.length_m) < 1e-6
        for k, _ in s.lines:
            assert _flown_along(s.path, lines[k])
        if transit is not None:
            inner = transit.obstacles_local.buffer(-0.01)
            assert not LineString(s.path).intersects(inner)
    assert abs(res.total_length_m - sum(s.length_m for s in res.sorties)) < 1e-6


def test_grid_two_depots_feasible_and_short() -> None:
    lines = _grid_lines()
    depots = [ArcDepot(0.0, 0.0, 2500.0), ArcDepot(800.0, 800.0, 2500.0)]
    res = route_lanes(lines, depots, budget=2.0)
    _check(lines, depots, res)
    assert not res.unserved
    required = sum(LineString(l).length for l in lines)  # 8000 m
    assert len(res.sorties) >= 4  # 8 km of lines with 2.5 km sorties
    assert res.total_length_m < 1.5 * required


def test_same_input_same_sorties() -> None:
    lines = _grid_lines(3)
    depots = [ArcDepot(-50.0, 300.0, 1800.0)]
    a = route_lanes(lines, depots, budget=1.0)
    b = route_lanes(lines, depots, budget=1.0)
    assert a == b


def test_deadheads_go_around_no_fly() -> None:
    # two lanes on either side of a no-fly box; the straight hop between them crosses it
    lines = [[(0.0, 0.0), (0.0, 200.0)], [(400.0, 200.0), (400.0, 0.0)]]
    transit = TransitGraph([box(100, -300, 300, 500)], 0.0)
    depots = [ArcDepot(200.0, -400.0, 5000.0)]
    res = route_lanes(lines, depots, transit)
    _check(lines, depots, res, transit)
    assert len(res.sorties) == 1


def test_line_out_of_reach_is_unserved_not_an_error() -> None:
    lines = [[(0.0, 10.0), (100.0, 10.0)], [(5000.0, 0.0), (5100.0, 0.0)]]
    depots = [ArcDepot(0.0, 0.0, 1000.0)]
    res = route_lanes(lines, depots)
    _check(lines, depots, res)
    assert res.unserved == {1: UNSERVED_OUT_OF_RANGE}


def test_no_depot_is_an_error() -> None:
    with pytest.raises(ValueError):
        route_lanes([[(0.0, 0.0), (1.0, 0.0)]], [])


def test_circle_no_fly_like_the_bench() -> None:
    circle = Point(500, 500).buffer(150, 16)
    lines = [[(300.0, 500.0 + dy), (300.0, 520.0 + dy)] for dy in (-200, 0, 200)] + [
        [(700.0, 500.0), (700.0, 540.0)]
    ]
    transit = TransitGraph([circle], 0.0)
    depots = [ArcDepot(900.0, 500.0, 3000.0)]
    res = route_lanes(lines, depots, transit)
    _check(lines, depots, res, transit)


def test_engine_is_named_and_budget_sets_the_work_not_the_answer() -> None:
    lines = _grid_lines(2)
    depots = [ArcDepot(0.0, 0.0, 1200.0), ArcDepot(400.0, 400.0, 1200.0)]
    a = route_lanes(lines, depots, budget=2.0)
    assert a.engine == ENGINE
    _check(lines, depots, a)
    assert route_lanes(lines, depots, budget=2.0) == a


def test_large_model_on_small_budget_uses_a_pyvrp_start_loaded_into_the_model() -> None:
    lines = _grid_lines(6, 150.0)  # 84 lines → 168 directed nodes
    depots = [ArcDepot(0.0, 0.0, 3000.0), ArcDepot(900.0, 900.0, 3000.0)]
    res = route_lanes(lines, depots, budget=0.2)
    assert res.engine == ENGINE_PYVRP_START
    _check(lines, depots, res)
    assert not res.unserved
    assert route_lanes(lines, depots, budget=0.2) == res


def test_search_lanes_keep_the_best() -> None:
    """Two lanes (PyVRP seeds 0 and 1): never worse than one (lane 0 is the one-lane search)."""
    lines = _grid_lines(6, 150.0)
    depots = [ArcDepot(0.0, 0.0, 3000.0), ArcDepot(900.0, 900.0, 3000.0)]
    one = route_lanes(lines, depots, budget=0.2)
    two = route_lanes(lines, depots, budget=0.2, lanes=2)
    _check(lines, depots, two)
    assert two.total_length_m <= one.total_length_m + 1e-6


def test_only_a_small_lane_model_under_a_deadline_stops_searching_when_it_stalls() -> None:
    """Issue 27: a deadline's ILS on a lane model below 100 nodes ends its local searches after 2 solutions a node
    (at least 150) without a shorter plan; work mode (golden files, bench) and larger models search in full."""
    import time

    from planner.patrol.arc_search import _stall
    from planner.routing.budget import Budget
    from planner.routing.model import ModelVehicle, RouteModel

    def model(n: int) -> RouteModel:
        pairs = tuple((k, k + 1) for k in range(2, n - 1, 2))
        return RouteModel((np.zeros((n, n), dtype=np.int64),), (ModelVehicle(0, 0, 10), ModelVehicle(1, 1, 10)),
                          pairs, 100)

    deadline = Budget.deadline(20.0, time.monotonic)
    assert _stall(model(53), deadline) == 150  # the demo's patrol: its best by solution 141, 84 the longest wait
    assert _stall(model(90), deadline) == 180
    assert _stall(model(100), deadline) == 0
    assert _stall(model(53), Budget.work(20.0)) == 0
    assert _stall(model(53), Budget.deadline(20.0, time.monotonic, iterations=500)) == 0
