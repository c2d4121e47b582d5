"""Point routing: multi-depot vehicle routing under a per-vehicle capacity.

Everything else in sortie hands this module plain integer matrices and gets plain
routes back (``list[list[int]]`` of node indices). Every constraint lives in the
one OR-Tools model of ``planner.ortools_model`` (the only module importing
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
    ``"ortools-ils"`` (default, up to ``ILS_MAX_VISITS`` visits): OR-Tools'
    iterated local search with ruin-and-recreate, one run per node renumbering
    from a fixed seed list, the best kept. ``"pyvrp-start+ortools"`` (more
    visits, where ILS stays several per cent off within a budget): PyVRP's
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

from planner.ortools_model import ModelVehicle, RouteModel, Search, solve_model

__all__ = [
    "ENGINE_ILS",
    "ENGINE_PYVRP_START",
    "ILS_MAX_VISITS",
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

# Iteration rates measured on this 2-core machine kind (PyVRP 0.14.1 ILS): ~1500 it/s at
# 100-200 visits, ~500-700 it/s at 500 visits (optional clients, machine shared). The count
# is a pure function of (size, budget), so the same budget gives the same routes anywhere.
_PYVRP_WORK_PER_S = 250_000  # visits × iterations per second
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
ILS_MAX_VISITS = 300  # above this, a PyVRP start (ILS stays at +5..9 % on 500 sites in 20 s)
_PYVRP_START_SHARE = 0.85  # of the budget, for PyVRP; the rest for GLS on the OR-Tools model
_GLS_SOLUTIONS_PER_VISIT = 0.2  # GLS solutions per visit and second of the remaining budget
ENGINE_ILS = "ortools-ils"
_MIN_PENALTY = 1_000_000  # a dropped visit costs at least this (FACTS.md: what makes md_n500 solvable)
ENGINE_PYVRP_START = "pyvrp-start+ortools"
_SAFETY_FACTOR = 10.0  # wall-clock net = factor × budget + 2 s: generous, a loaded machine must not cut the count short
# Restarts: the iterations are shared by up to _PYVRP_MAX_RUNS runs (seeds 0, 1, ...) of at least
# this many iterations per visit each; on md_n100 one seed stalled at +1.8 % for 24 000
# iterations while two of four seeds reached the best-known in 3 000.
_PYVRP_RUN_ITERATIONS_PER_VISIT = 25
_PYVRP_MAX_RUNS = 4
# Worker processes (bench only; plans run in-process): forked, so no re-imports. Only a
# single-threaded caller may ask for workers > 1 (forking a threaded process is unsafe).
_MP_CONTEXT = "fork"


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


# ---------------------------------------------------------------- PyVRP: build → solve → extract
def _pyvrp_build(problem: RoutingProblem, visits: list[int]):
    import pyvrp

    depot_nodes = sorted({v.start_node for v in problem.vehicles})
    order = depot_nodes + visits  # pyvrp location index → our node
    idx = np.asarray(order, dtype=np.int64)
    coords = problem.coords
    locations = [
        pyvrp.Location(float(coords[n][0]), float(coords[n][1])) if coords is not None else pyvrp.Location(0, 0)
        for n in order
    ]
    depots = [pyvrp.Depot(location=i) for i in range(len(depot_nodes))]
    prize = _penalty(problem)
    clients = [
        pyvrp.Client(location=len(depot_nodes) + k, prize=prize if problem.droppable else 0, required=not problem.droppable)
        for k in range(len(visits))
    ]
    dpos = {n: i for i, n in enumerate(depot_nodes)}
    vtypes = []
    for k, v in enumerate(problem.vehicles):
        kwargs = dict(
            num_available=1,
            start_depot=dpos[v.start_node],
            end_depot=dpos[v.start_node],
            max_distance=int(v.capacity),
            profile=v.profile,
            name=str(k),
        )
        if v.max_duration_s is not None:
            kwargs["shift_duration"] = int(v.max_duration_s)
        vtypes.append(pyvrp.VehicleType(**kwargs))
    dist = [np.ascontiguousarray(m[np.ix_(idx, idx)], dtype=np.int64) for m in problem.matrices]
    if problem.durations is not None:
        dur = [np.ascontiguousarray(m[np.ix_(idx, idx)], dtype=np.int64) for m in problem.durations]
    else:
        dur = [np.zeros_like(d) for d in dist]
    for m in (*dist, *dur):  # self-arcs are never flown; service folded into them must not count
        np.fill_diagonal(m, 0)
    data = pyvrp.ProblemData(locations, clients, depots, vtypes, dist, dur)
    return data, order, len(depot_nodes)


def _pyvrp_runs(n_visits: int, iterations: int) -> int:
    """How many independent seeded runs share the iterations (restarts beat one long stall)."""
    per_run = _PYVRP_RUN_ITERATIONS_PER_VISIT * max(n_visits, 1)
    return max(1, min(_PYVRP_MAX_RUNS, iterations // per_run))


def _pyvrp_lane(data, seeds: tuple[int, ...], each: int, net_s: float) -> tuple[tuple[bool, int], list[tuple[int, list[int]]], int]:
    """One lane of search: a run per seed in turn. Returns (key, routes, iterations) as plain data.

    ``routes`` are (vehicle type, client indices); ``key`` orders results (feasible first, then cost).
    Module-level so a worker process can run it.
    """
    import pyvrp
    from pyvrp.stop import MaxIterations, MaxRuntime, MultipleCriteria

    best, done = None, 0
    for seed in seeds:
        stop = MultipleCriteria([MaxIterations(each), MaxRuntime(net_s)])
        res = pyvrp.solve(data, stop, seed=seed, collect_stats=False, display=False)
        done += int(res.num_iterations)
        key = (not res.is_feasible(), int(res.cost()) if res.is_feasible() else 0)
        if best is None or key < best[0]:
            routes = [
                (int(r.vehicle_type()), [int(a.idx) for a in r.schedule() if a.is_client()]) for r in res.best.routes()
            ]
            best = (key, routes)
    assert best is not None
    return best[0], best[1], done


def _pyvrp_solve(data, n_visits: int, iterations: int, budget_s: float, lanes: int, workers: int):
    """Best over ``lanes`` lanes of ``_pyvrp_runs`` seeded runs each (seeds 0, 1, … in lane order).

    The result depends on ``lanes`` only; ``workers`` > 1 runs lanes in parallel processes.
    Returns (routes, iterations done, iterations planned).
    """
    runs = _pyvrp_runs(n_visits, iterations)
    each = iterations // runs
    net_s = (_SAFETY_FACTOR * budget_s + 2.0) / runs
    jobs = [(data, tuple(range(k * runs, (k + 1) * runs)), each, net_s) for k in range(lanes)]
    if workers > 1 and lanes > 1:
        import multiprocessing

        with multiprocessing.get_context(_MP_CONTEXT).Pool(min(workers, lanes)) as pool:
            outs = pool.starmap(_pyvrp_lane, jobs)
    else:
        outs = [_pyvrp_lane(*job) for job in jobs]
    best = min(range(len(outs)), key=lambda k: (outs[k][0], k))
    return outs[best][1], sum(o[2] for o in outs), lanes * runs * each


def _pyvrp_extract(found: list[tuple[int, list[int]]], order: list[int], n_depots: int, n_vehicles: int) -> list[list[int]]:
    routes: list[list[int]] = [[] for _ in range(n_vehicles)]
    for k, clients in found:
        routes[k] = [order[n_depots + c] for c in clients]
    return routes


# ---------------------------------------------------------------- OR-Tools: the one routing model
def _model(problem: RoutingProblem, visits: list[int]) -> RouteModel:
    """The problem as ``planner.ortools_model`` sees it: every visit its own disjunction."""
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


def _map_lanes(fn, jobs: list[tuple], workers: int) -> list:
    if workers > 1 and len(jobs) > 1:
        import multiprocessing

        with multiprocessing.get_context(_MP_CONTEXT).Pool(min(workers, len(jobs))) as pool:
            return pool.starmap(fn, jobs)
    return [fn(*job) for job in jobs]


def _ortools_ils(problem: RoutingProblem, visits: list[int], budget_s: float, lanes: int, workers: int):
    """ILS on the OR-Tools model: ``lanes`` lanes of ``_ILS_RUNS`` renumberings each, the best kept."""
    model = _model(problem, visits)
    limit = _ils_limit(len(visits), budget_s)
    each = max(_ILS_MIN_SOLUTIONS, limit // _ILS_RUNS)
    net_s = (_SAFETY_FACTOR * budget_s + 2.0) / _ILS_RUNS
    jobs = [(model, tuple(_ILS_SEEDS[(k * _ILS_RUNS + i) % len(_ILS_SEEDS)] for i in range(_ILS_RUNS)), each, net_s) for k in range(lanes)]
    outs = _map_lanes(_ils_lane, jobs, workers)
    best = min(range(len(outs)), key=lambda k: (outs[k][0], k))
    return outs[best][1], lanes * _ILS_RUNS * each


def _pyvrp_start_ortools(problem: RoutingProblem, visits: list[int], budget_s: float, lanes: int, workers: int):
    """PyVRP's best routes loaded into the OR-Tools model, which proves them feasible and searches on (GLS).

    For instances where ILS does not reach the quality goal within the budget
    (measured: md_n500 +9 % at 20 s, PyVRP +0.8 %). Returns (routes, work done,
    work planned, whether the start loaded).
    """
    data, order, n_depots = _pyvrp_build(problem, visits)
    iterations = _pyvrp_iterations(len(visits), _PYVRP_START_SHARE * budget_s)
    found, done, planned = _pyvrp_solve(data, len(visits), iterations, budget_s, lanes, workers)
    start = _pyvrp_extract(found, order, n_depots, len(problem.vehicles))
    model = _model(problem, visits)
    limit = max(_ILS_MIN_SOLUTIONS, int(_GLS_SOLUTIONS_PER_VISIT * len(visits) * budget_s * (1 - _PYVRP_START_SHARE)))
    out = solve_model(model, Search("gls", limit, _SAFETY_FACTOR * budget_s + 2.0), start_routes=start)
    routes = out.routes if out.start_accepted else start  # a start that does not load is repaired below
    if out.start_accepted and _routes_cost(model, routes) > _routes_cost(model, start):
        routes = start  # GLS reports its best, never worse; kept as a guard
    return routes, done + limit, planned + limit, bool(out.start_accepted)


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
        data, order, n_depots = _pyvrp_build(problem, visits)
        iterations = _pyvrp_iterations(len(visits), budget_s)
        found, done, iterations = _pyvrp_solve(data, len(visits), iterations, budget_s, max(1, lanes), workers)
        routes = _pyvrp_extract(found, order, n_depots, n_vehicles)
        stopped_by = "iterations" if done >= iterations else "time_limit"
        engine = "pyvrp"
    elif solver == "ortools":
        if len(visits) > ILS_MAX_VISITS:
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
