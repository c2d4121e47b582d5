"""Point routing: multi-depot vehicle routing under a per-vehicle capacity.

The one module that imports a vehicle-routing solver (OR-Tools, and PyVRP for
improvement). Everything else in sortie hands it plain integer matrices and gets
plain routes back (``list[list[int]]`` of node indices), so the solvers stay
swappable and their versions pinned (``ortools==9.15.6755``, ``pyvrp==0.14.1``).

Model
    Nodes ``0..n-1``. Each vehicle starts and ends at its own node (a dock) and
    flies at most one route. An arc ``i → j`` consumes ``matrices[profile][i][j]``
    of the vehicle's ``capacity`` (metres, or energy in integer units; the caller
    folds the service at ``i`` into the arcs leaving ``i``) and costs the same in
    the objective. Optional ``durations[profile]`` (seconds, service included
    the same way) with ``max_duration_s`` per vehicle express the job's time window.
    Every visit node may be dropped at a penalty, so a solve never ends in "no
    solution": nodes that no vehicle can reach and back are reported as
    ``out_of_range`` up front, nodes the fleet has no room for as ``capacity``.

Determinism
    Searches stop on an iteration / solution count derived from ``budget_s``;
    the wall clock is only a safety net (OR-Tools #1331: a time-limited search is
    not reproducible). Same problem and budget → same routes.

Solvers (measured on the public routes instances, see bench/routes.py)
    ``"pyvrp"`` (default): PyVRP's iterated local search, the best of up to four
    runs with seeds 0, 1, … sharing one ``MaxIterations`` budget; ``lanes``
    independent such searches (seeds after each other) may run side by side in
    worker processes. ``"ortools"``: PARALLEL_CHEAPEST_INSERTION then guided
    local search with a ``solution_limit``. OR-Tools GLS was +3.7 % above the
    best-known on md_n100 after 5 s and left 44 sites unserved on md_n500 early
    in its search; PyVRP matched md_n100 in 3 000 iterations (~2.5 s).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

__all__ = [
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
# OR-Tools GLS: accepted solutions per second fall with size (~100/s at 100 visits).
_ORTOOLS_WORK_PER_S = 10_000
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
    return 20 * max(big, 1)


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


# ---------------------------------------------------------------- OR-Tools: build → solve → extract
def _ortools_build(problem: RoutingProblem, visits: list[int]):
    from ortools.constraint_solver import pywrapcp

    n = problem.matrices[0].shape[0]
    starts = [v.start_node for v in problem.vehicles]
    manager = pywrapcp.RoutingIndexManager(n, len(problem.vehicles), starts, starts)
    model = pywrapcp.RoutingModel(manager)
    callbacks = [model.RegisterTransitMatrix(m.astype(np.int64).tolist()) for m in problem.matrices]
    per_vehicle = [callbacks[v.profile] for v in problem.vehicles]
    for k, cb in enumerate(per_vehicle):
        model.SetArcCostEvaluatorOfVehicle(cb, k)
    model.AddDimensionWithVehicleTransitAndCapacity(
        per_vehicle, 0, [int(v.capacity) for v in problem.vehicles], True, "load"
    )
    if problem.durations is not None:
        dcbs = [model.RegisterTransitMatrix(m.astype(np.int64).tolist()) for m in problem.durations]
        horizon = max((v.max_duration_s or 0) for v in problem.vehicles) or int(
            max(int(m.sum()) for m in problem.durations)
        )
        caps = [int(v.max_duration_s) if v.max_duration_s is not None else horizon for v in problem.vehicles]
        model.AddDimensionWithVehicleTransitAndCapacity(
            [dcbs[v.profile] for v in problem.vehicles], 0, caps, True, "time"
        )
    penalty = _penalty(problem)
    wanted = set(visits)
    for node in problem.visit_nodes:
        index = manager.NodeToIndex(node)
        if node in wanted:
            model.AddDisjunction([index], penalty)
        else:  # out of range: keep it out of every route
            model.AddDisjunction([index], 0)
            model.ActiveVar(index).SetValue(0)
    return manager, model


def _ortools_solve(model, solution_limit: int, budget_s: float):
    from ortools.constraint_solver import pywrapcp, routing_enums_pb2

    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = routing_enums_pb2.FirstSolutionStrategy.PARALLEL_CHEAPEST_INSERTION
    params.local_search_metaheuristic = routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    params.solution_limit = solution_limit
    params.time_limit.FromMilliseconds(int((_SAFETY_FACTOR * budget_s + 2.0) * 1000))
    return model.SolveWithParameters(params)


def _ortools_extract(manager, model, assignment, n_vehicles: int) -> list[list[int]]:
    routes: list[list[int]] = []
    for k in range(n_vehicles):
        route: list[int] = []
        if assignment is not None:
            index = assignment.Value(model.NextVar(model.Start(k)))
            while not model.IsEnd(index):
                route.append(manager.IndexToNode(index))
                index = assignment.Value(model.NextVar(index))
        routes.append(route)
    return routes


def routing_status_name(status: int) -> str:
    """OR-Tools' routing status as its enum name."""
    from ortools.constraint_solver import routing_enums_pb2

    return routing_enums_pb2.RoutingSearchStatus.Value.Name(status)


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
    solver: Solver = "pyvrp",
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
        return RoutingSolution([[] for _ in range(n_vehicles)], unserved, 0, solver, 0, "trivial")

    if solver == "pyvrp":
        data, order, n_depots = _pyvrp_build(problem, visits)
        iterations = _pyvrp_iterations(len(visits), budget_s)
        found, done, iterations = _pyvrp_solve(data, len(visits), iterations, budget_s, max(1, lanes), workers)
        routes = _pyvrp_extract(found, order, n_depots, n_vehicles)
        stopped_by = "iterations" if done >= iterations else "time_limit"
    elif solver == "ortools":
        manager, model = _ortools_build(problem, visits)
        limit = max(10, int(budget_s * _ORTOOLS_WORK_PER_S / max(len(visits), 1)))
        assignment = _ortools_solve(model, limit, budget_s)
        routes = _ortools_extract(manager, model, assignment, n_vehicles)
        done = limit
        # OR-Tools does not say which limit ended a search that found something; a timeout
        # without any solution is reported as such (the visits are then all unserved).
        timeout = routing_status_name(model.status()) == "ROUTING_FAIL_TIMEOUT"
        stopped_by = "time_limit" if timeout else "iterations"
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
        stopped_by=stopped_by,
    )
