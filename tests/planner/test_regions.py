"""planner.routing.regions: the city search — regions along the docks, leftovers placed, rounds, the whole."""

from __future__ import annotations

import numpy as np

from planner.routing.budget import Budget
from planner.routing.engines import routes_cost
from planner.routing.model import ModelVehicle, RouteModel, routes_fit
from planner.routing.construct import insert_leftovers
from planner.routing.regions import partition, region_model, reserve_far, search_city
from planner.routing.vrp import RoutingProblem, RoutingVehicle, euclidean_matrix, solve_routing


def _city(n_sites: int = 300, n_docks: int = 8, per_dock: int = 3, seed: int = 1) -> tuple[RouteModel, np.ndarray]:
    rng = np.random.default_rng(seed)
    docks = rng.uniform(1000, 9000, size=(n_docks, 2))
    xy = np.vstack([docks, rng.uniform(0, 10000, size=(n_sites, 2))])
    D = euclidean_matrix(xy)
    vehicles = tuple(ModelVehicle(d, d, int(rng.choice([12000, 15000, 20000]))) for d in range(n_docks) for _ in range(per_dock))
    groups = tuple((n,) for n in range(n_docks, n_docks + n_sites))
    return RouteModel((D,), vehicles, groups, 10**7), xy


def _complete(model: RouteModel, routes: list[list[int]]) -> bool:
    served = [n for r in routes for n in r]
    return sorted(served) == sorted(g[0] for g in model.groups) and routes_fit(model, routes)


def test_regions_split_the_docks_and_every_site_and_vehicle_once() -> None:
    model, xy = _city()
    for turn in (0, 1):
        regions = partition(model, xy, 2, turn)
        assert len(regions) == 2
        assert sorted(g for r in regions for g in r.groups) == list(range(len(model.groups)))
        assert sorted(k for r in regions for k in r.vehicles) == list(range(len(model.vehicles)))
        assert all(len(r.groups) > 50 for r in regions)  # about half each, not one empty side
        sub, idx = region_model(model, regions[0])
        assert sub.n_nodes == len(regions[0].docks) + len(regions[0].groups)
        assert int(sub.costs[0][1, 2]) == int(model.costs[0][idx[1], idx[2]])


def test_a_far_site_gets_a_drone_that_makes_room() -> None:
    """Dock 0's long-range drone is full of near sites; the far site only it reaches goes in, the near
    sites it drops go to dock 1's drone."""
    xy = np.array([[0.0, 0.0], [100.0, 0.0], [0.0, 200.0], [50.0, 200.0], [100.0, 200.0], [0.0, 4900.0]])
    D = euclidean_matrix(xy)
    model = RouteModel((D,), (ModelVehicle(0, 0, 10000), ModelVehicle(1, 1, 700)),
                       ((2,), (3,), (4,), (5,)), 10**7)
    full = [[2, 3, 4], []]
    assert routes_fit(model, full)
    out = insert_leftovers(model, full)
    assert 5 in out[0] and _complete(model, out)


def test_a_far_site_keeps_a_drone_and_the_regions_search_without_it() -> None:
    """A site needing 0.9 of the only drone that reaches it gets that drone before any region is
    searched (a region searched alone would fill it with near sites first); the regions leave both out."""
    rng = np.random.default_rng(3)
    docks = np.array([[0.0, 0.0], [3000.0, 0.0]])
    near = np.vstack([d + rng.uniform(-700, 700, size=(20, 2)) for d in docks])
    xy = np.vstack([docks, near, [[0.0, 9000.0]]])  # the far site: 18 km there and back
    far = len(xy) - 1
    vehicles = (ModelVehicle(0, 0, 20000), ModelVehicle(0, 0, 5000), ModelVehicle(1, 1, 5000), ModelVehicle(1, 1, 5000))
    model = RouteModel((euclidean_matrix(xy),), vehicles, tuple((n,) for n in range(2, len(xy))), 10**7)
    kept = reserve_far(model)
    assert kept == {0: [far]}
    regions = partition(model, xy, 2, kept=kept)
    assert all(0 not in r.vehicles for r in regions)
    assert sorted(g for r in regions for g in r.groups) == list(range(len(model.groups) - 1))  # all but the far one
    assert sorted(k for r in regions for k in r.vehicles) == [1, 2, 3]
    assert reserve_far(model) == kept  # deterministic


def test_city_search_is_complete_feasible_and_repeats_with_a_work_budget() -> None:
    model, xy = _city()
    budget = Budget.work(1.0, iterations=400)
    a = search_city(model, budget, 1, xy, required=True, nominal_iterations=400)
    assert _complete(model, a.routes) and a.work > 0 and a.stopped_by == "iterations"
    b = search_city(model, budget, 1, xy, required=True, nominal_iterations=400)
    assert a.routes == b.routes  # (tests/bench/test_lane_pool.py: nor do the processes)


def test_solve_routing_uses_the_city_search_from_a_thousand_sites() -> None:
    rng = np.random.default_rng(5)
    docks = rng.uniform(2000, 18000, size=(10, 2))
    xy = np.vstack([docks, rng.uniform(0, 20000, size=(1000, 2))])
    problem = RoutingProblem((euclidean_matrix(xy),), tuple(RoutingVehicle(d, 25000) for d in range(10) for _ in range(6)),
                             tuple(range(10, 1010)), coords=xy, droppable=False)
    sol = solve_routing(problem, budget=Budget.work(1.0, iterations=300))
    assert sol.engine == "pyvrp-regions" and not sol.unserved
    assert sorted(n for r in sol.routes for n in r) == list(range(10, 1010))
    model = RouteModel((problem.matrices[0],), tuple(ModelVehicle(v.start_node, v.start_node, v.capacity) for v in problem.vehicles),
                       tuple((n,) for n in range(10, 1010)), 10**7)
    assert routes_fit(model, sol.routes) and sol.cost == routes_cost(model, sol.routes)
