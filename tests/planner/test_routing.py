"""planner.routing.vrp: feasibility, determinism, unserved reporting, both solvers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from planner.routing.vrp import (
    ENGINE_ILS,
    ENGINE_PYVRP_START,
    UNSERVED_CAPACITY,
    UNSERVED_OUT_OF_RANGE,
    RoutingProblem,
    RoutingVehicle,
    euclidean_matrix,
    route_load,
    solve_routing,
)

BENCH = next((p / "shared" / "bench" for p in Path(__file__).resolve().parents if (p / "shared" / "bench").is_dir()),
             Path("/nonexistent")) / "routes"  # ../shared beside the repo (or beside the worktrees)


def _grid_problem(n_sites: int = 24, caps=(12000, 12000, 8000), seed: int = 3) -> RoutingProblem:
    rng = np.random.default_rng(seed)
    depots = np.array([[0.0, 0.0], [2000.0, 0.0]])
    sites = rng.uniform(-800, 2800, size=(n_sites, 2))
    xy = np.vstack([depots, sites])
    vehicles = tuple(RoutingVehicle(start_node=k % 2, capacity=c) for k, c in enumerate(caps))
    return RoutingProblem((euclidean_matrix(xy),), vehicles, tuple(range(2, 2 + n_sites)), coords=xy)


def _check_feasible(problem: RoutingProblem, sol) -> None:
    served = [n for r in sol.routes for n in r]
    assert len(served) == len(set(served)), "a site is visited twice"
    assert set(served) | set(sol.unserved) == set(problem.visit_nodes)
    assert not set(served) & set(sol.unserved)
    total = 0
    for v, r in zip(problem.vehicles, sol.routes):
        load = route_load(problem.matrices[v.profile], v.start_node, r) if r else 0
        assert load <= v.capacity
        total += load
    assert total == sol.cost


@pytest.mark.parametrize("solver", ["pyvrp", "ortools"])
def test_small_instance_is_feasible_and_complete(solver: str) -> None:
    problem = _grid_problem()
    sol = solve_routing(problem, budget=0.2, solver=solver)
    _check_feasible(problem, sol)
    assert not sol.unserved
    assert len(sol.routes) == len(problem.vehicles)


@pytest.mark.parametrize("solver", ["pyvrp", "ortools"])
def test_same_input_same_routes(solver: str) -> None:
    problem = _grid_problem(seed=5)
    a = solve_routing(problem, budget=0.2, solver=solver)
    b = solve_routing(problem, budget=0.2, solver=solver)
    assert a.routes == b.routes and a.cost == b.cost and a.unserved == b.unserved


def test_infeasible_fleet_reports_unserved_instead_of_raising() -> None:
    # one short-range vehicle cannot fly everything: it serves what it can
    problem = _grid_problem(n_sites=30, caps=(5000,))
    sol = solve_routing(problem, budget=0.2)
    _check_feasible(problem, sol)
    assert sol.unserved and set(sol.unserved.values()) <= {UNSERVED_CAPACITY, UNSERVED_OUT_OF_RANGE}
    assert any(sol.routes)


def test_out_of_range_site_is_named() -> None:
    xy = np.array([[0.0, 0.0], [100.0, 0.0], [9000.0, 0.0]])
    problem = RoutingProblem((euclidean_matrix(xy),), (RoutingVehicle(0, 1000),), (1, 2))
    sol = solve_routing(problem, budget=0.1)
    assert sol.routes == [[1]]
    assert sol.unserved == {2: UNSERVED_OUT_OF_RANGE}


@pytest.mark.parametrize("solver", ["pyvrp", "ortools"])
def test_duration_limit_is_respected(solver: str) -> None:
    xy = np.array([[0.0, 0.0], [300.0, 0.0], [0.0, 300.0], [-300.0, 0.0]])
    dist = euclidean_matrix(xy)
    service = np.array([0, 100, 100, 100])
    durations = (dist // 10 + service[:, None]).astype(np.int64)  # 10 m/s plus service at the from-node
    problem = RoutingProblem(
        (dist,), (RoutingVehicle(0, 100_000, max_duration_s=320),), (1, 2, 3), durations=(durations,)
    )
    sol = solve_routing(problem, budget=0.1, solver=solver)
    assert len(sol.routes[0]) == 2  # two visits take 302 s, three 444 s
    assert route_load(durations, 0, sol.routes[0]) <= 320
    assert len(sol.unserved) == 1


@pytest.mark.skipif(not (BENCH / "md_n020.json").exists(), reason="../shared/bench is not beside the repo")
def test_md_n020_reaches_best_known() -> None:
    inst = json.loads((BENCH / "md_n020.json").read_text())
    xy = np.array([(d["x"], d["y"]) for d in inst["depots"]] + [(s["x"], s["y"]) for s in inst["sites"]])
    dep = {d["id"]: i for i, d in enumerate(inst["depots"])}
    vehicles = tuple(RoutingVehicle(dep[v["depot"]], v["max_distance_m"]) for v in inst["vehicles"])
    problem = RoutingProblem((euclidean_matrix(xy),), vehicles, tuple(range(2, 2 + len(inst["sites"]))), coords=xy)
    sol = solve_routing(problem, budget=0.5)
    _check_feasible(problem, sol)
    assert not sol.unserved
    assert sol.cost <= 23731 * 1.01


def test_rejects_bad_problems() -> None:
    xy = np.zeros((3, 2))
    with pytest.raises(ValueError):
        RoutingProblem((euclidean_matrix(xy),), (RoutingVehicle(0, 10),), (0, 1))
    with pytest.raises(ValueError):
        solve_routing(RoutingProblem((euclidean_matrix(xy),), (RoutingVehicle(0, 10),), (1, 2)), budget=0)


def test_more_lanes_never_do_worse() -> None:
    problem = _grid_problem(seed=11)
    two = solve_routing(problem, budget=0.2, lanes=2)
    one = solve_routing(problem, budget=0.2, lanes=1)
    assert two.cost <= one.cost  # lane 0 is the one-lane search


def test_default_engine_is_ortools_ils() -> None:
    problem = _grid_problem(seed=7)
    sol = solve_routing(problem, budget=1.0)
    assert sol.solver == "ortools" and sol.engine == ENGINE_ILS
    _check_feasible(problem, sol)
    assert not sol.unserved


def test_pyvrp_start_when_the_budget_buys_ils_too_few_solutions() -> None:
    # 120 sites at a tiny budget: ILS would get a handful of solutions for 122 nodes, so PyVRP
    # supplies the start, the OR-Tools model loads it (a feasibility proof) and polishes it
    problem = _grid_problem(n_sites=120, caps=(15000, 15000, 15000, 15000), seed=9)
    a = solve_routing(problem, budget=0.05)
    assert a.engine == ENGINE_PYVRP_START
    _check_feasible(problem, a)
    assert not a.unserved
    b = solve_routing(problem, budget=0.05)
    assert a.routes == b.routes


@pytest.mark.parametrize("n", [0, 1, 2, 511, 512, 513, 1300])
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_the_distance_matrix_is_the_full_computation_bit_for_bit(n: int, dtype: type) -> None:
    """Only the upper triangle is computed (row blocks of 512, mirrored): the same integers as every pair computed
    (a city plan's first phase under its deadline), on coordinates with fractions and exact halves."""
    rng = np.random.default_rng(n)
    xy = np.round(rng.uniform(-20000, 20000, size=(n, 2)), 1)
    if n >= 2:
        xy[1] = xy[0] + (0.5, 0.0)  # a tie rounded half to even
    full = np.rint(np.hypot(xy[:, None, 0] - xy[None, :, 0], xy[:, None, 1] - xy[None, :, 1])).astype(dtype)
    got = euclidean_matrix(xy, dtype)
    assert got.dtype == dtype and got.shape == (n, n)
    assert np.array_equal(got, full)
