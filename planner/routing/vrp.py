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

Engines (``RoutingSolution.engine``; ``planner.routing.engines``)
    ``"ortools-ils"`` (default, small models): OR-Tools' iterated local search
    with ruin-and-recreate, one run per search lane (node renumbering), the best
    kept. ``"pyvrp-start+ortools"`` (when the budget buys ILS too few solutions for
    the model's size, ``planner.routing.pyvrp_start.needs_start``; e.g. 500 sites at
    20 s, where ILS stays 5-9 % off): PyVRP's iterated local search supplies the
    routes, which are loaded into the same OR-Tools model (``ReadAssignmentFromRoutes``:
    a feasibility proof under every dimension) and polished by guided local search.
    ``"pyvrp"``: the same PyVRP search on models too large for the dense OR-Tools
    model to pay (``engines.LOAD_MAX_NODES``; city scale), every route checked
    against its limits by arithmetic (``engines.drop_over_limits``). ``solver="pyvrp"`` keeps PyVRP
    alone, without restarts (comparison only).

Budget (``planner.routing.budget.Budget``)
    A deadline (the shell's clock): every search stops at it with its best routes,
    start-up included, and ``RoutingSolution`` says how long it took and how much
    work it did. Without a clock the work is fixed — ``budget.iterations``, or what
    ``budget.seconds`` buys at the rates measured below — and the same problem and
    budget give the same routes anywhere (OR-Tools #1331: a time-limited search is
    not reproducible). A plain number of seconds is such a work budget.

Scale
    The problem's matrices are NumPy integer arrays (``euclidean_matrix`` builds
    the upper triangle in row blocks and mirrors it, never an n × n × 2 temporary); reachability is one vector
    operation per kind of vehicle; PyVRP gets the matrix without a copy when the
    node order is already its own; the OR-Tools model (a Python list of n² integers)
    is only built where it is small enough to pay.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from planner.routing.budget import STOPPED_BY_ITERATIONS, Budget
from planner.routing.engines import RESTART_SHARE, drop_over_limits, finish, nominal, search_ils, search_pyvrp
from planner.routing.model import ModelVehicle, RouteModel
from planner.routing.pyvrp_start import needs_start
from planner.routing.regions import CITY_MIN_VISITS, search_city

__all__ = [
    "ENGINE_ILS",
    "ENGINE_PYVRP_START",
    "ENGINE_PYVRP",
    "ENGINE_REGIONS",
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
ENGINE_ILS = "ortools-ils"
ENGINE_PYVRP_START = "pyvrp-start+ortools"
ENGINE_PYVRP = "pyvrp"
ENGINE_REGIONS = "pyvrp-regions"

# Nominal rates: the work one second of a work budget (no clock) buys, measured on this 2-core
# machine kind (PyVRP 0.14.1 ILS, per CPU second of one core; granular neighbourhood of
# ``pyvrp_start.NEIGHBOURS``): ~1500 it/s at 100-200 visits, ~1 050 it/s at 500 visits (16 000
# iterations in 14.4-15.5 CPU s on md_n500 under load). The count is a pure function of (size,
# budget), so the same work budget gives the same routes anywhere. A deadline does not use them,
# except to choose the engine (``needs_start``), which stays a pure function of size and seconds.
_PYVRP_WORK_PER_S = 500_000  # visits × iterations per CPU second (measured 515 000-555 000 at 500 visits, loaded)
_PYVRP_MAX_RATE = 1_200
_PYVRP_MIN_ITERATIONS = 100
# OR-Tools ILS: improving local-search solutions per second fall with size (measured on this
# loaded 2-core machine kind: ~250/s at 100 visits, ~70/s at 200). md_n100 and md_n200_lines reach
# the best-known within ~3 000 solutions.
_ILS_WORK_PER_S = 15_000  # visits × solutions per second of one core (measured ~22 000, loaded)
_ILS_MAX_RATE = 600
_ILS_MIN_SOLUTIONS = 20
_PYVRP_START_SHARE = 0.9  # work mode: of the nominal seconds, for PyVRP; the rest loads and polishes
_MIN_PENALTY = 1_000_000  # a dropped visit costs at least this (FACTS.md: what makes md_n500 solvable)
# Work mode: the iterations are shared by up to _PYVRP_MAX_RUNS runs (seeds 0, 1, ...) of at least
# this many iterations per visit each; on md_n100 one seed stalled at +1.8 % for 24 000
# iterations while two of four seeds reached the best-known in 3 000.
_PYVRP_RUN_ITERATIONS_PER_VISIT = 25
_PYVRP_MAX_RUNS = 4
_MATRIX_BLOCK_ROWS = 512  # euclidean_matrix: rows a block (two float buffers of 512 × n: 20 MB each at 5 000 nodes)


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
    """Routes per vehicle (visit nodes in order, [] when it stays home) and what was left.

    ``iterations``: the engine's work (PyVRP iterations, or OR-Tools solutions, over
    every lane); ``stopped_by``: ``"iterations"`` (the work cap: reproducible),
    ``"deadline"`` or ``"trivial"``; ``elapsed_s``: the budget's clock from the start
    of planning to the answer (0 without a clock).
    """

    routes: list[list[int]]
    unserved: dict[int, str]
    cost: int
    solver: str
    iterations: int
    stopped_by: str
    engine: str = ""  # what produced the routes: "ortools-ils", "pyvrp-start+ortools", "pyvrp"
    elapsed_s: float = 0.0


def euclidean_matrix(xy: np.ndarray, dtype: type = np.int64) -> np.ndarray:
    """Euclidean distances rounded half-to-even to integer metres (``numpy.rint``), the upper triangle computed.

    Why: it is the first phase of a city plan under its deadline, every site against every
    site. Row blocks of ``_MATRIX_BLOCK_ROWS`` compute only the columns from the block's first
    row on, into two reused float buffers (no temporaries), and the block is mirrored below the
    diagonal: x_j − x_i is exactly −(x_i − x_j) in floating point and ``hypot`` ignores signs,
    so the matrix is the full computation's, bit for bit. Measured (CPU s, loaded 2-core
    machine): 2 020 nodes 0.20-0.43 → 0.06; 5 050 nodes (int32) 0.93-1.0 → 0.38-0.60.
    """
    xy = np.asarray(xy, dtype=float)
    n = len(xy)
    out = np.empty((n, n), dtype=dtype)
    if n == 0:
        return out
    step = min(n, _MATRIX_BLOCK_ROWS)
    x, y = xy[:, 0], xy[:, 1]
    dx, dy = np.empty((step, n)), np.empty((step, n))
    for i in range(0, n, step):
        k = min(step, n - i)
        a, b = dx[:k, : n - i], dy[:k, : n - i]
        np.subtract(x[i : i + k, None], x[None, i:], out=a)
        np.subtract(y[i : i + k, None], y[None, i:], out=b)
        np.hypot(a, b, out=a)
        np.rint(a, out=a)
        out[i : i + k, i:] = a
        out[i + k :, i : i + k] = a[:, k:].T
    return out


def route_load(matrix: np.ndarray, start_node: int, visits: Sequence[int]) -> int:
    """Capacity used by the closed walk start → visits → start."""
    walk = np.asarray([start_node, *visits, start_node], dtype=np.int64)
    return int(np.asarray(matrix)[walk[:-1], walk[1:]].astype(np.int64).sum())


def _reachable(problem: RoutingProblem) -> tuple[list[int], list[int]]:
    """Split visit nodes into those some vehicle can serve alone and those none can.

    One vector operation per kind of vehicle (profile, dock, capacity, duration
    limit), not one Python loop per visit and vehicle: 5 000 sites × 300 drones.
    """
    nodes = np.asarray(problem.visit_nodes, dtype=np.int64)
    ok = np.zeros(len(nodes), dtype=bool)
    kinds = sorted({(v.profile, v.start_node, v.capacity, v.max_duration_s or -1) for v in problem.vehicles})
    for profile, start, capacity, max_duration in kinds:
        m = problem.matrices[profile]
        fit = m[start, nodes].astype(np.int64) + m[nodes, start] <= capacity
        if max_duration >= 0 and problem.durations is not None:
            d = problem.durations[profile]
            fit &= d[start, nodes].astype(np.int64) + d[nodes, start] <= max_duration
        ok |= fit
    return nodes[ok].tolist(), nodes[~ok].tolist()


def _penalty(problem: RoutingProblem) -> int:
    if problem.drop_penalty is not None:
        return int(problem.drop_penalty)
    big = max(int(m.max()) for m in problem.matrices) if problem.matrices else 1
    return max(_MIN_PENALTY, 20 * max(big, 1))


def _pyvrp_iterations(n_visits: int, seconds: float) -> int:
    return nominal(min(_PYVRP_MAX_RATE, _PYVRP_WORK_PER_S / max(n_visits, 1)), seconds, _PYVRP_MIN_ITERATIONS)


def _pyvrp_runs(n_visits: int, iterations: int) -> int:
    """How many independent seeded runs share the iterations (restarts beat one long stall)."""
    per_run = _PYVRP_RUN_ITERATIONS_PER_VISIT * max(n_visits, 1)
    return max(1, min(_PYVRP_MAX_RUNS, iterations // per_run))


def _ils_limit(n_visits: int, seconds: float) -> int:
    """ILS solution count for a work budget: a pure function of (size, seconds), so runs repeat anywhere."""
    return nominal(min(_ILS_MAX_RATE, _ILS_WORK_PER_S / max(n_visits, 1)), seconds, _ILS_MIN_SOLUTIONS)


# ---------------------------------------------------------------- OR-Tools: the one routing model
def _model(problem: RoutingProblem, visits: list[int]) -> RouteModel:
    """The problem as ``planner.routing.model`` sees it: every visit its own disjunction."""
    wanted = set(visits)
    docks = {v.start_node for v in problem.vehicles}
    return RouteModel(
        costs=tuple(np.asarray(m) for m in problem.matrices),
        vehicles=tuple(
            ModelVehicle(v.start_node, v.start_node, int(v.capacity), v.profile, v.max_duration_s)
            for v in problem.vehicles
        ),
        groups=tuple((n,) for n in visits),
        penalty=_penalty(problem),
        durations=None if problem.durations is None else tuple(np.asarray(m) for m in problem.durations),
        # out-of-range visits, and nodes that are neither a visit nor a vehicle's dock (a dock with
        # no vehicle here): OR-Tools would otherwise make them mandatory stops
        excluded=tuple(n for n in range(problem.matrices[0].shape[0]) if n not in wanted and n not in docks),
    )


# ---------------------------------------------------------------- repair + public entry
def _as_budget(budget: Budget | float) -> Budget:
    if isinstance(budget, Budget):
        return budget
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not math.isfinite(budget) or budget <= 0:
        raise ValueError("a budget is a Budget or a positive number of seconds (a work budget)")
    return Budget.work(float(budget))


def solve_routing(
    problem: RoutingProblem,
    *,
    budget: Budget | float = 5.0,
    solver: Solver = "ortools",
    lanes: int = 1,
) -> RoutingSolution:
    """Route every visit node it can; report the rest with a reason. Never raises for infeasibility.

    ``budget``: a ``Budget`` (a deadline, or fixed work), or seconds of work (module
    docstring). ``lanes`` independent searches of the whole budget each (more lanes,
    better and costlier answers; with a deadline at most as many as the budget's runner
    runs side by side, ``Budget.workers``). In work mode the routes depend on ``lanes``,
    never on the runner.
    """
    budget = _as_budget(budget)
    n_vehicles = len(problem.vehicles)
    visits, out_of_range = _reachable(problem)
    unserved = {node: UNSERVED_OUT_OF_RANGE for node in out_of_range}
    if not visits or not n_vehicles:
        for node in visits:
            unserved[node] = UNSERVED_CAPACITY
        return RoutingSolution([[] for _ in range(n_vehicles)], unserved, 0, solver, 0, "trivial", "none", budget.elapsed_s())

    model = _model(problem, visits)
    required, coords = not problem.droppable, problem.coords
    if solver == "pyvrp":
        its = _pyvrp_iterations(len(visits), budget.seconds)
        out = search_pyvrp(model, budget, lanes, nominal_iterations=its, runs=_pyvrp_runs(len(visits), its),
                           required=required, coords=coords, restart_share=0.0)
        routes, engine = out.routes, ENGINE_PYVRP
    elif solver == "ortools":
        n_nodes = len(visits) + len({v.start_node for v in problem.vehicles})
        if len(visits) >= CITY_MIN_VISITS and coords is not None:
            its = _pyvrp_iterations(len(visits), budget.seconds)
            out = search_city(model, budget, max(1, min(lanes, budget.workers) if budget.timed else lanes), coords,
                              required=required, nominal_iterations=its)
            routes, engine = out.routes, ENGINE_REGIONS
        elif needs_start(_ils_limit(len(visits), budget.seconds), n_nodes):
            its = _pyvrp_iterations(len(visits), _PYVRP_START_SHARE * budget.seconds)
            runs = _pyvrp_runs(len(visits), its - int(its * RESTART_SHARE))
            out = search_pyvrp(model, budget, lanes, nominal_iterations=its, runs=runs,
                               required=required, coords=coords)
            routes, loaded = finish(model, out.routes, budget)
            engine = ENGINE_PYVRP_START if loaded else ENGINE_PYVRP
        else:
            out = search_ils(model, budget, lanes, _ils_limit(len(visits), budget.seconds))
            routes, engine = out.routes, ENGINE_ILS
    else:
        raise ValueError(f"unknown solver {solver!r}")

    routes, _dropped = drop_over_limits(model, routes)
    served = {n for r in routes for n in r}
    for node in visits:
        if node not in served:
            unserved[node] = UNSERVED_CAPACITY
    cost = sum(
        route_load(problem.matrices[v.profile], v.start_node, r) for v, r in zip(problem.vehicles, routes) if r
    )
    return RoutingSolution(
        routes=routes,
        unserved=dict(sorted(unserved.items())),
        cost=cost,
        solver=solver,
        iterations=out.work,
        engine=engine,
        stopped_by=out.stopped_by or STOPPED_BY_ITERATIONS,
        elapsed_s=budget.elapsed_s(),
    )
