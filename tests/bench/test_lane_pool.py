"""bench.lane_pool: search lanes on forked processes give the plans one process gives (work mode)."""

from __future__ import annotations

import numpy as np

from bench.lane_pool import ForkPool
from planner.patrol.arc_routing import ArcDepot, route_lanes
from planner.routing.budget import Budget
from planner.routing.model import ModelVehicle, RouteModel, routes_fit
from planner.routing.regions import search_city
from planner.routing.vrp import RoutingProblem, RoutingVehicle, euclidean_matrix, solve_routing


def _streets(n: int, seed: int) -> list[list[tuple[float, float]]]:
    """``n`` straight 100-250 m streets scattered over a square kilometre."""
    rng = np.random.default_rng(seed)
    starts, angle, length = rng.uniform(0, 1000, size=(n, 2)), rng.uniform(0, np.pi, n), rng.uniform(100, 250, n)
    ends = starts + np.c_[np.cos(angle), np.sin(angle)] * length[:, None]
    return [[(float(a[0]), float(a[1])), (float(b[0]), float(b[1]))] for a, b in zip(starts, ends)]


def test_lane_patrol_search_lanes_do_not_depend_on_the_processes() -> None:
    """Two lanes (PyVRP seeds 0 and 1) on two forked workers give the sorties one process gives."""
    lines = _streets(70, 4)
    depots = [ArcDepot(0.0, 0.0, 3000.0), ArcDepot(900.0, 900.0, 3000.0)]
    two = route_lanes(lines, depots, budget=Budget.work(0.2), lanes=2)
    assert route_lanes(lines, depots, budget=Budget.work(0.2, runner=ForkPool(2)), lanes=2) == two
    one = route_lanes(lines, depots, budget=0.2)
    assert two.total_length_m <= one.total_length_m + 1e-6  # lane 0 is the one-lane search


def test_point_routes_search_lanes_do_not_depend_on_the_processes() -> None:
    rng = np.random.default_rng(11)
    xy = np.vstack([[[0.0, 0.0], [2000.0, 0.0]], rng.uniform(-800, 2800, size=(24, 2))])
    vehicles = tuple(RoutingVehicle(start_node=k % 2, capacity=c) for k, c in enumerate((12000, 12000, 8000)))
    problem = RoutingProblem((euclidean_matrix(xy),), vehicles, tuple(range(2, 26)), coords=xy)
    seq = solve_routing(problem, budget=Budget.work(0.2), lanes=2)
    par = solve_routing(problem, budget=Budget.work(0.2, runner=ForkPool(2)), lanes=2)
    assert seq.routes == par.routes and seq.cost == par.cost


def test_city_regions_do_not_depend_on_the_processes() -> None:
    rng = np.random.default_rng(1)
    docks = rng.uniform(1000, 9000, size=(8, 2))
    xy = np.vstack([docks, rng.uniform(0, 10000, size=(300, 2))])
    vehicles = tuple(ModelVehicle(d, d, int(rng.choice([12000, 15000, 20000]))) for d in range(8) for _ in range(3))
    model = RouteModel((euclidean_matrix(xy),), vehicles, tuple((n,) for n in range(8, 308)), 10**7)
    a = search_city(model, Budget.work(1.0, iterations=400), 2, xy, required=True, nominal_iterations=400)
    b = search_city(model, Budget.work(1.0, iterations=400, runner=ForkPool(2)), 2, xy, required=True,
                    nominal_iterations=400)
    assert a.routes == b.routes and routes_fit(model, a.routes)
