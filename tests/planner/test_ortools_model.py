"""planner.routing.model: the one OR-Tools model — disjunction pairs, limits, starts, determinism."""

from __future__ import annotations

import numpy as np

from planner.routing.model import ModelVehicle, RouteModel, Search, routes_fit, solve_model
from planner.routing.vrp import euclidean_matrix


def _points_model(n: int = 30, cap: int = 9000, seed: int = 2) -> RouteModel:
    rng = np.random.default_rng(seed)
    xy = np.vstack([[[0.0, 0.0], [1500.0, 1500.0]], rng.uniform(-1000, 2500, size=(n, 2))])
    D = euclidean_matrix(xy)
    vehicles = (ModelVehicle(0, 0, cap), ModelVehicle(0, 0, cap), ModelVehicle(1, 1, cap))
    return RouteModel((D,), vehicles, tuple((i,) for i in range(2, 2 + n)), 1_000_000)


def _pairs_model() -> RouteModel:
    """Four 'lanes' as pairs of directed nodes (entered at either end) around one depot."""
    ends = np.array([[[100, 0], [300, 0]], [[300, 100], [100, 100]], [[0, 200], [0, 400]], [[-100, 300], [-100, 100]]], float)
    depot = np.array([[0.0, 0.0]])
    entry = np.vstack([depot] + [e[::s][0:1] for e in ends for s in (1, -1)])
    exit_ = np.vstack([depot] + [e[::s][1:2] for e in ends for s in (1, -1)])
    length = np.concatenate([[0.0], np.repeat(np.hypot(*(ends[:, 1] - ends[:, 0]).T), 2)])
    diff = exit_[:, None, :] - entry[None, :, :]
    cost = np.ceil(np.hypot(diff[..., 0], diff[..., 1]) + length[None, :]).astype(np.int64)
    np.fill_diagonal(cost, 0)
    groups = tuple((1 + 2 * t, 2 + 2 * t) for t in range(4))
    return RouteModel((cost,), (ModelVehicle(0, 0, 5000), ModelVehicle(0, 0, 5000)), groups, 1_000_000)


def _cost(model: RouteModel, routes) -> int:
    total = 0
    for v, r in zip(model.vehicles, routes):
        if r:
            walk = np.asarray([v.start, *r, v.end])
            total += int(model.costs[v.profile][walk[:-1], walk[1:]].sum())
    return total


def test_ils_serves_every_point_within_limits_and_repeats() -> None:
    model = _points_model()
    a = solve_model(model, Search("ils", 200, 60.0))
    b = solve_model(model, Search("ils", 200, 60.0))
    assert a.routes == b.routes
    assert sorted(n for r in a.routes for n in r) == list(range(2, 32))
    assert routes_fit(model, a.routes)


def test_a_stalled_ils_still_counts_to_its_limit_repeats_and_keeps_its_prefix() -> None:
    """``Search.stall``: once that many solutions found nothing cheaper, each further local search ends at its first
    solution; the count still reaches the limit (OR-Tools' annealing keeps its pace), the search repeats, a plan is
    served within every limit, and a stall the search never reaches leaves it exactly the unstalled search."""
    model = _points_model()
    full = solve_model(model, Search("ils", 200, 60.0))
    stalled = [solve_model(model, Search("ils", 200, 60.0, stall=5)) for _ in range(2)]
    assert stalled[0].routes == stalled[1].routes and stalled[0].objective == stalled[1].objective
    assert all(out.solutions >= 200 for out in (full, *stalled))
    assert sorted(n for r in stalled[0].routes for n in r) == list(range(2, 32)) and routes_fit(model, stalled[0].routes)
    never = solve_model(model, Search("ils", 200, 60.0, stall=10_000))
    assert never.routes == full.routes and never.objective == full.objective


def test_renumbering_changes_the_search_not_the_rules() -> None:
    model = _points_model(seed=4)
    for perm in (0, 3, 7):
        out = solve_model(model, Search("ils", 100, 60.0, perm))
        assert sorted(n for r in out.routes for n in r) == list(range(2, 32))
        assert routes_fit(model, out.routes)


def test_a_pair_is_flown_once_in_one_direction() -> None:
    model = _pairs_model()
    out = solve_model(model, Search("ils", 100, 60.0, first="PARALLEL_CHEAPEST_INSERTION"))
    served = [n for r in out.routes for n in r]
    for a, b in model.groups:
        assert (a in served) != (b in served)  # exactly one direction of each lane
    assert len(served) == 4


def test_start_routes_load_only_when_feasible_and_gls_never_worsens_them() -> None:
    model = _points_model(n=12, cap=20000)
    nodes = list(range(2, 14))
    start = [nodes[:6], nodes[6:], []]
    out = solve_model(model, Search("gls", 50, 60.0), start_routes=start)
    assert out.start_accepted is True
    assert _cost(model, out.routes) <= _cost(model, start)
    # one vehicle with every visit breaks its capacity: the model refuses to load it
    tight = RouteModel(model.costs, tuple(ModelVehicle(v.start, v.end, 6000) for v in model.vehicles), model.groups, model.penalty)
    refused = solve_model(tight, Search("gls", 50, 60.0), start_routes=[nodes, [], []])
    assert refused.start_accepted is False
    assert routes_fit(tight, refused.routes)


def test_duration_dimension_limits_a_route() -> None:
    xy = np.array([[0.0, 0.0], [300.0, 0.0], [0.0, 300.0], [-300.0, 0.0]])
    dist = euclidean_matrix(xy)
    dur = (dist // 10 + np.array([0, 100, 100, 100])[:, None]).astype(np.int64)
    model = RouteModel((dist,), (ModelVehicle(0, 0, 100_000, max_duration=320),), ((1,), (2,), (3,)), 1_000_000, (dur,))
    out = solve_model(model, Search("ils", 50, 60.0))
    assert len(out.routes[0]) == 2
    assert routes_fit(model, out.routes)


def test_only_the_shared_model_reaches_ortools() -> None:
    """Every mission kind routes on planner.routing.model: no other planner module imports OR-Tools."""
    from pathlib import Path

    import planner

    root = Path(planner.__file__).parent
    importers = sorted(
        str(p.relative_to(root)) for p in root.rglob("*.py")
        if any(line.lstrip().startswith(("import ortools", "from ortools")) for line in p.read_text().splitlines())
    )
    assert importers == ["routing/model.py"]


def test_open_tour_flies_every_piece_once_and_never_worse_than_its_start() -> None:
    """The survey order: pieces as direction pairs on one vehicle, a free depot for an open path."""
    from planner.survey.order import solve_open_tour

    rng = np.random.default_rng(5)
    ends = rng.uniform(0, 1000, size=(12, 2, 2))  # 12 pieces, variant 2p+d flies piece p from end d
    first = np.asarray([ends[v // 2, v % 2] for v in range(24)])
    last = np.asarray([ends[v // 2, 1 - v % 2] for v in range(24)])
    arc = np.hypot(*(last[:, None, :] - first[None, :, :]).transpose(2, 0, 1))
    groups = [[2 * p, 2 * p + 1] for p in range(12)]
    initial = [2 * p for p in range(12)]
    seq = solve_open_tour(arc, np.zeros(24), np.zeros(24), groups, initial, 200)
    assert sorted(v // 2 for v in seq) == list(range(12))  # each piece once, in one direction
    cost = lambda s: sum(arc[u, v] for u, v in zip(s, s[1:]))  # noqa: E731
    assert cost(seq) < cost(initial)
    assert seq == solve_open_tour(arc, np.zeros(24), np.zeros(24), groups, initial, 200)  # deterministic


def test_pyvrp_restart_from_given_routes_never_returns_worse() -> None:
    """The second PyVRP phase starts from the best routes so far (a restart, not a fresh random start)."""
    from planner.routing.budget import Budget
    from planner.routing.pyvrp_start import pyvrp_instance, pyvrp_run

    model = _points_model(n=30, cap=12000)
    inst = pyvrp_instance(model, True, None, False)
    work = Budget.work(1.0)
    first, done, why, _ = pyvrp_run(inst, work, 50, 0)
    assert done == 50 and why == "iterations"
    kept, *_ = pyvrp_run(inst, work, 1, 7, start=first)
    assert _cost(model, kept) <= _cost(model, first)
    again, *_ = pyvrp_run(inst, work, 200, 7, start=first)
    assert _cost(model, again) <= _cost(model, first) and routes_fit(model, again)
    assert sorted(n for r in again for n in r) == list(range(2, 32))
