"""planner.routing.construct and the city search's deadline: a complete first plan, cheap and on time."""

from __future__ import annotations

import time

import numpy as np

from planner.routing.budget import STOPPED_BY_DEADLINE, STOPPED_BY_ITERATIONS, Budget
from planner.routing.construct import ArcPool, farthest_first, insert_leftovers
from planner.routing.engines import routes_cost
from planner.routing.model import ModelVehicle, RouteModel, routes_fit
from planner.routing.regions import MIN_ROUND_S, construct, search_city
from planner.routing.vrp import RoutingProblem, RoutingVehicle, euclidean_matrix, solve_routing


def _city(n_sites: int, n_docks: int, per_dock: int, seed: int, side_m: float = 10000.0) -> tuple[RouteModel, np.ndarray]:
    rng = np.random.default_rng(seed)
    docks = rng.uniform(0.1 * side_m, 0.9 * side_m, size=(n_docks, 2))
    xy = np.vstack([docks, rng.uniform(0, side_m, size=(n_sites, 2))])
    caps = [int(rng.choice([12000, 15000, 20000])) for _ in range(n_docks * per_dock)]
    vehicles = tuple(ModelVehicle(d, d, caps[d * per_dock + j]) for d in range(n_docks) for j in range(per_dock))
    return RouteModel((euclidean_matrix(xy),), vehicles, tuple((n,) for n in range(n_docks, n_docks + n_sites)), 10**7), xy


def _complete(model: RouteModel, routes: list[list[int]]) -> bool:
    served = [n for r in routes for n in r]
    return sorted(served) == sorted(g[0] for g in model.groups) and routes_fit(model, routes)


def _cheapest_by_loops(model: RouteModel, routes: list[list[int]], n: int) -> int | None:
    """The least added cost of ``n`` over every gap of every route within its capacity: plain loops, the reference."""
    best = None
    for v, r in zip(model.vehicles, routes):
        c = model.costs[v.profile]
        walk = [v.start, *r, v.end]
        load = sum(int(c[a, b]) for a, b in zip(walk[:-1], walk[1:]))
        for a, b in zip(walk[:-1], walk[1:]):
            added = int(c[a, n]) + int(c[n, b]) - int(c[a, b])
            if load + added <= v.capacity and (best is None or added < best):
                best = added
    return best


def test_each_insertion_adds_the_least_any_gap_of_any_route_allows() -> None:
    model, _ = _city(120, 4, 2, seed=11, side_m=6000.0)
    pool = ArcPool(model, [[] for _ in model.vehicles])
    order = farthest_first(model, [g[0] for g in model.groups])
    for n in order:
        routes = pool.routes()
        want = _cheapest_by_loops(model, routes, n)
        before = routes_cost(model, routes)
        assert pool.insert(n) == (want is not None)
        if want is not None:
            assert routes_cost(model, pool.routes()) - before == want
        assert int(pool.load.sum()) == routes_cost(model, pool.routes())
    assert routes_fit(model, pool.routes())


def test_farthest_first_orders_by_the_nearest_reaching_dock() -> None:
    xy = np.array([[0.0, 0.0], [1000.0, 0.0], [0.0, 300.0], [1000.0, 900.0], [500.0, 0.0]])
    model = RouteModel((euclidean_matrix(xy),), (ModelVehicle(0, 0, 5000), ModelVehicle(1, 1, 5000)),
                       ((2,), (3,), (4,)), 10**7)
    assert farthest_first(model, [2, 3, 4]) == [3, 4, 2]  # there and back: 1 800, 1 000 (either dock), 600 m


def test_the_first_plan_serves_every_site_within_every_limit() -> None:
    model, _ = _city(600, 8, 4, seed=2)
    routes = construct(model, {})
    assert _complete(model, routes)
    assert construct(model, {}) == routes  # deterministic


def test_no_ejection_once_the_deadline_has_passed() -> None:
    """The site only dock 0's full drone reaches needs an ejection: with time it goes in, past the deadline it waits."""
    xy = np.array([[0.0, 0.0], [100.0, 0.0], [0.0, 200.0], [50.0, 200.0], [100.0, 200.0], [0.0, 4900.0]])
    model = RouteModel((euclidean_matrix(xy),), (ModelVehicle(0, 0, 9850), ModelVehicle(1, 1, 700)),
                       ((2,), (3,), (4,), (5,)), 10**7)
    full = [[2, 3, 4], []]  # 524 m; the far site adds at least 9 350 m anywhere in it: over 9 850
    assert 5 in insert_leftovers(model, full, expired=lambda: False)[0]
    late = insert_leftovers(model, full, expired=lambda: True)
    assert 5 not in {n for r in late for n in r} and routes_fit(model, late)


def test_a_tiny_deadline_returns_on_time_with_every_site_served() -> None:
    """1 000 sites (the city search) with 1 s: no time for a regional round after the tail is kept, so the
    insertion's plan is the answer; it is complete and on time (bound: generous, the machine is shared)."""
    rng = np.random.default_rng(5)
    docks = rng.uniform(2000, 18000, size=(10, 2))
    xy = np.vstack([docks, rng.uniform(0, 20000, size=(1000, 2))])
    problem = RoutingProblem((euclidean_matrix(xy),), tuple(RoutingVehicle(d, 25000) for d in range(10) for _ in range(6)),
                             tuple(range(10, 1010)), coords=xy, droppable=False)
    t0 = time.monotonic()
    sol = solve_routing(problem, budget=Budget.deadline(1.0, time.monotonic), lanes=2)
    took = time.monotonic() - t0
    assert sol.engine == "pyvrp-regions" and not sol.unserved
    assert sorted(n for r in sol.routes for n in r) == sorted(problem.visit_nodes)
    assert sol.iterations == 0 and sol.stopped_by == STOPPED_BY_DEADLINE  # no round started: work count 0
    assert took < 1.0 + 4.0, took


def test_rounds_stop_at_the_deadline() -> None:
    """With time for a few rounds the search improves on the first plan and still ends by the deadline."""
    model, xy = _city(400, 8, 3, seed=7)
    first = routes_cost(model, construct(model, {}))
    seconds = 3 * MIN_ROUND_S + 2.0
    t0 = time.monotonic()
    out = search_city(model, Budget.deadline(seconds, time.monotonic), 2, xy, required=True, nominal_iterations=1)
    took = time.monotonic() - t0
    assert _complete(model, out.routes) and out.work > 0 and out.stopped_by == STOPPED_BY_DEADLINE
    assert routes_cost(model, out.routes) < first
    assert took < seconds + 3.0, took  # the search ends TAIL_SHARE early; the rest is the shared machine's noise


def test_a_seed_and_an_iteration_cap_repeat_under_a_deadline() -> None:
    model, xy = _city(300, 8, 3, seed=1)
    runs = [search_city(model, Budget.deadline(600.0, time.monotonic, seed=4, iterations=300), 2, xy, required=True,
                        nominal_iterations=1) for _ in range(2)]
    assert runs[0].routes == runs[1].routes and _complete(model, runs[0].routes)
    assert runs[0].stopped_by == STOPPED_BY_ITERATIONS and runs[0].work == runs[1].work > 0


def test_two_profiles_and_a_duration_limit_are_kept() -> None:
    """Vehicles on two matrices, one with a duration limit: every route within both, the loads as flown."""
    rng = np.random.default_rng(8)
    xy = np.vstack([[[2000.0, 2000.0], [6000.0, 6000.0]], rng.uniform(0, 8000, size=(150, 2))])
    d = euclidean_matrix(xy)
    vehicles = (ModelVehicle(0, 0, 30000, 0), ModelVehicle(1, 1, 30000, 1, max_duration=2500),
                ModelVehicle(0, 0, 25000, 1, max_duration=2000), ModelVehicle(1, 1, 40000, 0))
    model = RouteModel((d, 2 * d), vehicles, tuple((n,) for n in range(2, 152)), 10**7,
                       durations=(d // 5, d // 4))
    pool = ArcPool(model, [[] for _ in vehicles])
    placed = [n for n in farthest_first(model, list(range(2, 152))) if pool.insert(n)]
    routes = pool.routes()
    assert routes_fit(model, routes) and sorted(n for r in routes for n in r) == sorted(placed)
    assert int(pool.load.sum()) == routes_cost(model, routes)
    assert any(routes[1]) and any(routes[2])  # the limited vehicles were used, within their limits


def test_the_constructed_start_descends_to_a_local_optimum_before_the_search() -> None:
    """With the deadline already passed PyVRP runs no iteration: without the descent its answer is the start
    itself, with it the start's local optimum (complete, within every limit, cheaper)."""
    from planner.routing.pyvrp_start import pyvrp_instance, pyvrp_run

    model, xy = _city(400, 6, 4, seed=4)
    start = construct(model, {})
    inst = pyvrp_instance(model, True, xy, True)
    clock = time.monotonic
    passed = Budget.deadline(1.0, clock, started_at=clock() - 10.0)
    plain, done, why, _ = pyvrp_run(inst, passed, None, 0, 50, start)
    assert done == 0 and why == STOPPED_BY_DEADLINE
    assert sorted(map(sorted, plain)) == sorted(map(sorted, start))  # the start as it was (vehicle types pool drones)
    descended, done, _, feasible = pyvrp_run(inst, passed, None, 0, 50, start, descend=True)
    assert done == 0 and feasible and _complete(model, descended)
    assert routes_cost(model, descended) < 0.9 * routes_cost(model, start)
