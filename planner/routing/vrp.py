"""Point routing: multi-depot vehicle routing under a per-vehicle capacity.

Everything else in sortie hands this module plain integer matrices and gets plain
routes back (``list[list[int]]`` of node indices). Every constraint lives in the
one OR-Tools model of ``planner.routing.model`` (the only module importing
OR-Tools); PyVRP (pinned ``pyvrp==0.14.1``) may only supply a starting point.

Model
    Nodes ``0..n-1``. Each vehicle starts and ends at its own node (a dock) and
    flies at most one route. An arc ``i → j`` consumes ``matrices[profile][i][j]``
    of the vehicle's ``capacity`` (metres, or energy in integer units; the caller
    folds the service at ``i`` into the arcs leaving ``i``) and costs the same in
    the objective. Optional ``durations[profile]`` (seconds, service included
    the same way) with ``max_duration_s`` per vehicle express the job's time window.
    Every visit node is its own disjunction with a large penalty, so a solve never
    ends in "no solution" (that is also what makes a tight 500-site fleet solvable
    at all): nodes that no vehicle can reach and back are reported as
    ``out_of_range`` up front, nodes the fleet has no room for as ``capacity``.

Engines (``RoutingSolution.engine``)
    ``"ortools-ils"`` (default): OR-Tools' iterated local search with
    ruin-and-recreate, one run per node renumbering from a fixed seed list, the
    best kept. ``"pyvrp-start+ortools"`` (when the budget buys ILS too few
    solutions for the model's size, ``planner.routing.pyvrp_start.needs_start``; e.g.
    500 sites at 20 s, where ILS stays 5-9 % off): PyVRP's
    iterated local search supplies routes, which are loaded into the same
    OR-Tools model (``ReadAssignmentFromRoutes``: a feasibility proof under every
    dimension) and searched on with guided local search. ``solver="pyvrp"``
    keeps PyVRP alone (comparison only).

Determinism
    Searches stop on a solution / iteration count derived from ``budget_s``;
    the wall clock is only a safety net (OR-Tools #1331: a time-limited search is
    not reproducible). Same problem and budget → same routes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from planner.routing.model import ModelVehicle, RouteModel, Search, routes_fit, solve_model
from planner.routing.pyvrp_start import ils_cap, map_lanes, needs_start, pyvrp_routes, start_then_gls

__all__ = [
    "ENGINE_ILS",
    "ENGINE_PYVRP_START",
    "RoutingVehicle",
    "RoutingProblem",
    "RoutingSolution",
    "UNSERVED_OUT_OF_RANGE",
    "UNSERVED_CAPACITY",
    "solve_routing",
    "route_load",
    "euclidean_matrix",
]

Solver = Literal["pyvrp", "ortools"]

UNSERVED_OUT_OF_RANGE = "out_of_range"
UNSERVED_CAPACITY = "capacity"

# Iteration rates measured on this 2-core machine kind (PyVRP 0.14.1 ILS, per CPU second of one
# core; granular neighbourhood of ``pyvrp_start.NEIGHBOURS``): ~1500 it/s at 100-200 visits, ~1 050
# it/s at 500 visits (16 000 iterations in 14.4-15.5 CPU s on md_n500 under load; wall time on a
# shared machine is longer). The count
# is a pure function of (size, budget), so the same budget gives the same routes anywhere.
_PYVRP_WORK_PER_S = 500_000  # visits × iterations per CPU second (measured 515 000-555 000 at 500 visits, loaded)
_PYVRP_MAX_RATE = 1_200
_PYVRP_MIN_ITERATIONS = 100
# OR-Tools ILS: improving local-search solutions per second fall with size (measured on this
# loaded 2-core machine kind: ~250/s at 100 visits, ~70/s at 200). md_n100 and md_n200_lines reach
# the best-known within ~3 000 solutions; the count is a pure function of (size, budget).
_ILS_WORK_PER_S = 15_000  # visits × solutions per second of one core (measured ~22 000, loaded)
_ILS_MAX_RATE = 600
_ILS_MIN_SOLUTIONS = 20
_ILS_RUNS = 1  # node renumberings per lane, the lane's solutions shared between them
_ILS_SEEDS = (0, 1, 2, 3, 4, 5, 6, 7)  # the fixed list of renumberings (0: the nodes as given)
_PYVRP_START_SHARE = 0.9  # of the budget, for PyVRP; the rest builds, loads and polishes the OR-Tools model
_PYVRP_RESTART_SHARE = 0.35  # of PyVRP's iterations, for the restart of every lane from the best so far
# GLS moves after the load. Each scans the whole neighbourhood: ~0.5 CPU s per solution at 500 sites,
# and on PyVRP's local optimum it finds next to nothing (md_n500: 100 solutions, 50 CPU s, 0 m gained;
# FACTS.md: +2.04 → +2.03 %), so a few confirm the start and the budget goes to PyVRP.
_GLS_POLISH_SOLUTIONS = 5
ENGINE_ILS = "ortools-ils"
_MIN_PENALTY = 1_000_000  # a dropped visit costs at least this (FACTS.md: what makes md_n500 solvable)
ENGINE_PYVRP_START = "pyvrp-start+ortools"
_SAFETY_FACTOR = 10.0  # wall-clock net = factor × budget + 2 s: generous, a loaded machine must not cut the count short
# Restarts: the iterations are shared by up to _PYVRP_MAX_RUNS runs (seeds 0, 1, ...) of at least
# this many iterations per visit each; on md_n100 one seed stalled at +1.8 % for 24 000
# iterations while two of four seeds reached the best-known in 3 000.
_PYVRP_RUN_ITERATIONS_PER_VISIT = 25
_PYVRP_MAX_RUNS = 4


@dataclass(frozen=True)
class RoutingVehicle:
    """One vehicle: its dock node, capacity on its profile's matrix, optional duration limit."""

    start_node: int
    capacity: int
    profile: int = 0
    max_duration_s: int | None = None


@dataclass(frozen=True)
class RoutingProblem:
    """A multi-depot routing instance in plain integers.

    ``matrices[p][i][j]``: capacity use and cost of arc i → j for vehicles of profile p.
    ``durations[p][i][j]``: seconds of that arc (optional, needed with ``max_duration_s``).
    ``visit_nodes``: the nodes to serve (never a vehicle's start node).
    ``drop_penalty``: objective cost of leaving a node unserved (default: large).
    ``droppable``: let the search drop visits at that penalty (plans: yes). With ``False``
    every visit is required during the search (benchmarks, where a dropped site is
    invalid); a search that still ends over a limit is repaired by dropping visits.
    """

    matrices: tuple[np.ndarray, ...]
    vehicles: tuple[RoutingVehicle, ...]
    visit_nodes: tuple[int, ...]
    durations: tuple[np.ndarray, ...] | None = None
    drop_penalty: int | None = None
    droppable: bool = True
    coords: np.ndarray | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        starts = {v.start_node for v in self.vehicles}
        if starts & set(self.visit_nodes):
            raise ValueError("a vehicle start node cannot also be a visit node")
        if len(set(self.visit_nodes)) != len(self.visit_nodes):
            raise ValueError("visit nodes must be distinct")
        for m in self.matrices:
            if m.ndim != 2 or m.shape[0] != m.shape[1]:
                raise ValueError("matrices must be square")


@dataclass(frozen=True)
class RoutingSolution:
    """Routes per vehicle (visit nodes in order, [] when it stays home) and what was left."""

    routes: list[list[int]]
    unserved: dict[int, str]
    cost: int
    solver: str
    iterations: int
    stopped_by: str  # "iterations" | "time_limit" | "trivial"
    engine: str = ""  # what produced the routes: "ortools-ils", "pyvrp-start+ortools", "pyvrp"


def euclidean_matrix(xy: np.ndarray) -> np.ndarray:
    """Euclidean distances rounded half-to-even to integer metres (``numpy.rint``)."""
    xy = np.asarray(xy, dtype=float)
    diff = xy[:, None, :] - xy[None, :, :]
    return np.rint(np.sqrt((diff**2).sum(-1))).astype(np.int64)


def route_load(matrix: np.ndarray, start_node: int, visits: Sequence[int]) -> int:
    """Capacity used by the closed walk start → visits → start."""
    walk = [start_node, *visits, start_node]
    return int(sum(int(matrix[a, b]) for a, b in zip(walk[:-1], walk[1:])))


def _route_duration(problem: RoutingProblem, v: RoutingVehicle, visits: Sequence[int]) -> int:
    if problem.durations is None or not visits:
        return 0
    return route_load(problem.durations[v.profile], v.start_node, visits)


def _fits(problem: RoutingProblem, v: RoutingVehicle, visits: Sequence[int]) -> bool:
    if route_load(problem.matrices[v.profile], v.start_node, visits) > v.capacity:
        return False
    if v.max_duration_s is not None and _route_duration(problem, v, visits) > v.max_duration_s:
        return False
    return True


def _reachable(problem: RoutingProblem) -> tuple[list[int], list[int]]:
    """Split visit nodes into those some vehicle can serve alone and those none can."""
    ok, out = [], []
    for node in problem.visit_nodes:
        if any(_fits(problem, v, [node]) for v in problem.vehicles):
            ok.append(node)
        else:
            out.append(node)
    return ok, out


def _penalty(problem: RoutingProblem) -> int:
    if problem.drop_penalty is not None:
        return int(problem.drop_penalty)
    big = max(int(m.max()) for m in problem.matrices) if problem.matrices else 1
    return max(_MIN_PENALTY, 20 * max(big, 1))


def _pyvrp_iterations(n_visits: int, budget_s: float) -> int:
    rate = min(_PYVRP_MAX_RATE, _PYVRP_WORK_PER_S / max(n_visits, 1))
    return max(_PYVRP_MIN_ITERATIONS, int(budget_s * rate))


def _pyvrp_runs(n_visits: int, iterations: int) -> int:
    """How many independent seeded runs share the iterations (restarts beat one long stall)."""
    per_run = _PYVRP_RUN_ITERATIONS_PER_VISIT * max(n_visits, 1)
    return max(1, min(_PYVRP_MAX_RUNS, iterations // per_run))


# ---------------------------------------------------------------- OR-Tools: the one routing model
def _model(problem: RoutingProblem, visits: list[int]) -> RouteModel:
    """The problem as ``planner.routing.model`` sees it: every visit its own disjunction."""
    wanted = set(visits)
    docks = {v.start_node for v in problem.vehicles}
    return RouteModel(
        costs=tuple(np.asarray(m, dtype=np.int64) for m in problem.matrices),
        vehicles=tuple(
            ModelVehicle(v.start_node, v.start_node, int(v.capacity), v.profile, v.max_duration_s)
            for v in problem.vehicles
        ),
        groups=tuple((n,) for n in visits),
        penalty=_penalty(problem),
        durations=None if problem.durations is None else tuple(np.asarray(m, dtype=np.int64) for m in problem.durations),
        # out-of-range visits, and nodes that are neither a visit nor a vehicle's dock (a dock with
        # no vehicle here): OR-Tools would otherwise make them mandatory stops
        excluded=tuple(n for n in range(problem.matrices[0].shape[0]) if n not in wanted and n not in docks),
    )


def _ils_limit(n_visits: int, budget_s: float) -> int:
    """ILS solution count for a budget: a pure function of (size, budget), so runs repeat anywhere."""
    rate = min(_ILS_MAX_RATE, _ILS_WORK_PER_S / max(n_visits, 1))
    return max(_ILS_MIN_SOLUTIONS, int(budget_s * rate))


def _ils_lane(model: RouteModel, seeds: tuple[int, ...], limit: int, net_s: float) -> tuple[tuple[int, int], list[list[int]]]:
    """One lane of search: an ILS run per node renumbering in turn; the best (fewest dropped, cheapest).

    Module-level so a worker process can run it; OR-Tools is imported inside the worker.
    """
    best = None
    for seed in seeds:
        out = solve_model(model, Search("ils", limit, net_s, seed))
        key = (-sum(len(r) for r in out.routes), _routes_cost(model, out.routes))
        if best is None or key < best[0]:
            best = (key, out.routes)
    assert best is not None
    return best


def _routes_cost(model: RouteModel, routes: list[list[int]]) -> int:
    total = 0
    for v, r in zip(model.vehicles, routes):
        if r:
            walk = np.asarray([v.start, *r, v.end])
            total += int(model.costs[v.profile][walk[:-1], walk[1:]].sum())
    return total


def _ortools_ils(problem: RoutingProblem, visits: list[int], budget_s: float, lanes: int, workers: int):
    """ILS on the OR-Tools model: ``lanes`` lanes of ``_ILS_RUNS`` renumberings each, the best kept."""
    model = _model(problem, visits)
    limit = ils_cap(_ils_limit(len(visits), budget_s), model.n_nodes)
    each = max(_ILS_MIN_SOLUTIONS, limit // _ILS_RUNS)
    net_s = (_SAFETY_FACTOR * budget_s + 2.0) / _ILS_RUNS
    jobs = [(model, tuple(_ILS_SEEDS[(k * _ILS_RUNS + i) % len(_ILS_SEEDS)] for i in range(_ILS_RUNS)), each, net_s) for k in range(lanes)]
    outs = map_lanes(_ils_lane, jobs, workers)
    best = min(range(len(outs)), key=lambda k: (outs[k][0], k))
    return outs[best][1], lanes * _ILS_RUNS * each


def _pyvrp_start_ortools(problem: RoutingProblem, visits: list[int], budget_s: float, lanes: int, workers: int):
    """PyVRP's best routes loaded into the OR-Tools model, which proves them feasible and searches on (GLS).

    For instances where ILS does not reach the quality goal within the budget
    (measured: md_n500 +9 % at 20 s). PyVRP runs in two phases: every lane
    searches from scratch with its own seeds, then every lane restarts from the
    best routes of the first phase with a fresh seed (``_PYVRP_RESTART_SHARE``
    of the iterations; md_n500: +0.35 % after the first phase, +0.00 % after the
    restart). Returns (routes, work done, work planned, whether the start loaded).
    """
    model = _model(problem, visits)
    iterations = _pyvrp_iterations(len(visits), _PYVRP_START_SHARE * budget_s)
    second = int(iterations * _PYVRP_RESTART_SHARE)
    runs = _pyvrp_runs(len(visits), iterations - second)
    each = (iterations - second) // runs
    net_s = _SAFETY_FACTOR * budget_s + 2.0
    required, coords = not problem.droppable, problem.coords
    jobs = [(model, each, tuple(range(k * runs, (k + 1) * runs)), net_s, required, coords, False) for k in range(lanes)]
    outs = map_lanes(pyvrp_routes, jobs, workers)
    best = outs[min((_start_key(model, r), k) for k, (r, _) in enumerate(outs))[1]][0]
    if second > 0:
        restart = [(model, second, (lanes * runs + k,), net_s, required, coords, False, None, best) for k in range(lanes)]
        again = map_lanes(pyvrp_routes, restart, workers)
        outs += again
        best = min([(_start_key(model, best), -1, best)] + [(_start_key(model, r), k, r) for k, (r, _) in enumerate(again)])[2]
    limit = _GLS_POLISH_SOLUTIONS
    routes, loaded = start_then_gls(model, best, limit, net_s)
    done = sum(d for _, d in outs) + limit
    return routes, done, lanes * (runs * each + (second if second > 0 else 0)) + limit, loaded


def _start_key(model: RouteModel, routes: list[list[int]]) -> tuple[bool, int, int]:
    """Order PyVRP results: within every limit first, then most visits, then cheapest."""
    return (not routes_fit(model, routes), -sum(len(r) for r in routes), _routes_cost(model, routes))


# ---------------------------------------------------------------- repair + public entry
def _repair(problem: RoutingProblem, routes: list[list[int]]) -> tuple[list[list[int]], list[int]]:
    """Drop visits from any route over its limits (cheapest loss first) so every route is feasible.

    The solvers work with penalties, so their best answer can exceed a limit on a tight
    fleet; the plan must not. Ties are broken by position so the result is deterministic.
    """
    dropped: list[int] = []
    fixed: list[list[int]] = []
    for v, route in zip(problem.vehicles, routes):
        route = list(route)
        mat = problem.matrices[v.profile]
        while route and not _fits(problem, v, route):
            walk = [v.start_node, *route, v.start_node]
            saving = [
                int(mat[walk[i], walk[i + 1]]) + int(mat[walk[i + 1], walk[i + 2]]) - int(mat[walk[i], walk[i + 2]])
                for i in range(len(route))
            ]
            best = max(range(len(route)), key=lambda i: (saving[i], -i))
            dropped.append(route.pop(best))
        fixed.append(route)
    return fixed, dropped


def solve_routing(
    problem: RoutingProblem,
    *,
    budget_s: float = 5.0,
    solver: Solver = "ortools",
    lanes: int = 1,
    workers: int = 1,
) -> RoutingSolution:
    """Route every visit node it can; report the rest with a reason. Never raises for infeasibility.

    PyVRP: ``lanes`` independent searches of the whole budget each (more lanes, better
    and costlier answers); ``workers`` processes run them side by side. The routes depend
    on ``lanes``, never on ``workers``.

    ``budget_s`` sets the iteration count (deterministic), not a deadline: the
    wall-clock net is ``10 × budget_s + 2 s``, hit only on a heavily loaded machine.
    """
    if budget_s <= 0 or not math.isfinite(budget_s):
        raise ValueError("budget_s must be a positive number of seconds")
    n_vehicles = len(problem.vehicles)
    visits, out_of_range = _reachable(problem)
    unserved = {node: UNSERVED_OUT_OF_RANGE for node in out_of_range}
    if not visits or not n_vehicles:
        for node in visits:
            unserved[node] = UNSERVED_CAPACITY
        return RoutingSolution([[] for _ in range(n_vehicles)], unserved, 0, solver, 0, "trivial", "none")

    if solver == "pyvrp":
        model = _model(problem, visits)
        iterations = _pyvrp_iterations(len(visits), budget_s)
        runs = _pyvrp_runs(len(visits), iterations)
        each = iterations // runs
        net_s = _SAFETY_FACTOR * budget_s + 2.0
        jobs = [(model, each, tuple(range(k * runs, (k + 1) * runs)), net_s, not problem.droppable, problem.coords, False) for k in range(max(1, lanes))]
        outs = map_lanes(pyvrp_routes, jobs, workers)
        routes = outs[min((_start_key(model, r), k) for k, (r, _) in enumerate(outs))[1]][0]
        done, iterations = sum(d for _, d in outs), max(1, lanes) * runs * each
        stopped_by = "iterations" if done >= iterations else "time_limit"
        engine = "pyvrp"
    elif solver == "ortools":
        n_nodes = len(visits) + len({v.start_node for v in problem.vehicles})
        if needs_start(_ils_limit(len(visits), budget_s), n_nodes):
            routes, done, planned, loaded = _pyvrp_start_ortools(problem, visits, budget_s, max(1, lanes), workers)
            engine = ENGINE_PYVRP_START if loaded else "pyvrp"
        else:
            routes, done = _ortools_ils(problem, visits, budget_s, max(1, lanes), workers)
            planned, engine = done, ENGINE_ILS
        stopped_by = "iterations" if done >= planned else "time_limit"
    else:
        raise ValueError(f"unknown solver {solver!r}")

    routes, dropped = _repair(problem, routes)
    served = {n for r in routes for n in r}
    for node in visits:
        if node not in served:
            unserved[node] = UNSERVED_CAPACITY
    del dropped  # accounted for through `served`
    cost = sum(
        route_load(problem.matrices[v.profile], v.start_node, r) for v, r in zip(problem.vehicles, routes) if r
    )
    return RoutingSolution(
        routes=routes,
        unserved=dict(sorted(unserved.items())),
        cost=cost,
        solver=solver,
        iterations=done,
        engine=engine,
        stopped_by=stopped_by,
    )
