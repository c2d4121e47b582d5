"""The routing model as PyVRP sees it, and PyVRP's searches of it.

OR-Tools' iterated local search proves every local optimum over its whole
neighbourhood, so an iteration grows with the model: on this 2-core machine kind
it stays 5-9 % off on 500 sites within 20 s, where PyVRP's granular search (pinned
``pyvrp==0.14.1``) comes within 1 %. For such models PyVRP searches the SAME
``RouteModel`` (same matrices, limits, disjunctions); its routes are checked
against every limit by plain arithmetic (``planner.routing.model.routes_fit``)
and, where the OR-Tools model is small enough to build, loaded into it with
``ReadAssignmentFromRoutes`` (which rejects routes breaking any dimension) and
searched on. PyVRP never decides feasibility alone.

Mapping (``PyvrpInstance``): each vehicle start node is a depot; vehicles with
the same start, end, limits and profile are one vehicle type (``num_available`` =
their count, which removes their symmetry from the search); a group of one node
is a client, a larger group a mutually exclusive ``ClientGroup`` (at most one of
its nodes is visited: a lane piece flown in one direction). Unvisited nodes cost
``model.penalty`` (the client's prize) unless ``required``.

Memory: the instance is built once, in the process that searches (before any
search lane is forked, so the lanes share it); PyVRP keeps its own distance and
duration matrices (int64, n² each: 200 MB each at 5 000 nodes), so no copy of
the model's matrix is made when the node order is already PyVRP's (depots first).

Deterministic: a fixed seed and an iteration cap (``Budget`` without a clock)
give the same routes; with a deadline the stop is ``Budget.stop``.

PyVRP is imported where a model is handed to it (``pyvrp_instance``, before any lane is forked): most plans never
are (a small patrol, a few points), and importing it cost every ``sortie plan`` ~0.04 CPU s (issue 27).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from planner.routing.budget import Budget
from planner.routing.model import RouteModel, Search, solve_model

if TYPE_CHECKING:
    import pyvrp

__all__ = [
    "ILS_SOLUTIONS_PER_NODE", "ILS_MAX_SOLUTIONS_PER_NODE", "LANE_NEIGHBOURS", "NEIGHBOURS", "PyvrpInstance",
    "ils_cap", "needs_start", "pyvrp_instance", "pyvrp_run", "start_then_gls",
]

# PyVRP's granular neighbourhood: the moves tried for a visit are with its this many nearest.
# PyVRP's default is 50; HGS-CVRP's (Vidal) is 20. Measured on md_n500 (16 000 iterations, seeds
# 0 / 1, loaded machine): 50 → +1.17 / +0.50 % in 20-21 CPU s, 40 → +1.07 / +0.68 %, 30 → +0.60 /
# +0.47 %, 20 → +0.31 / +0.04 % in 14-15 CPU s. Lane models count two nodes per lane piece (one
# per direction) and keep PyVRP's 50 (``LANE_NEIGHBOURS``): 20 and 30 lost helsinki's two-sortie plan.
NEIGHBOURS = 20
LANE_NEIGHBOURS = 50


@dataclass(frozen=True)
class PyvrpInstance:
    """A ``RouteModel`` in PyVRP's terms: the data, PyVRP location → model node, vehicle types' members."""

    data: pyvrp.ProblemData
    order: tuple[int, ...]  # PyVRP location index → model node (depots first, then clients)
    members: tuple[tuple[int, ...], ...]  # vehicle type → the model vehicles it stands for
    n_depots: int


def pyvrp_instance(model: RouteModel, required: bool, coords: np.ndarray | None, pool: bool,
                   required_nodes: frozenset[int] = frozenset()) -> PyvrpInstance:
    """``model`` as PyVRP data. ``pool``: identical vehicles become one type (lanes: many sorties per dock).

    ``required_nodes``: visits required even when the others are at a prize (a far site that a
    search at a prize would drop for a handful of nearer ones).
    """
    import pyvrp

    depot_nodes = sorted({v.start for v in model.vehicles} | {v.end for v in model.vehicles})
    clients = [n for g in model.groups for n in g]
    order = depot_nodes + clients  # pyvrp location index → model node
    idx = np.asarray(order, dtype=np.int64)
    if coords is not None:
        locations = [pyvrp.Location(float(coords[n][0]), float(coords[n][1])) for n in order]
    else:  # lane nodes have no single position; PyVRP's neighbourhoods come from the matrices
        locations = [pyvrp.Location(0, 0) for _ in order]
    depots = [pyvrp.Depot(location=i) for i in range(len(depot_nodes))]
    nd = len(depot_nodes)
    pyvrp_clients, groups = [], []
    pos = nd
    loads = model.demands is not None

    def delivery(node: int) -> list[int]:
        return [int(model.demands[node])] if loads else []

    for g in model.groups:
        if len(g) == 1:
            must = required or g[0] in required_nodes
            pyvrp_clients.append(pyvrp.Client(location=pos, delivery=delivery(g[0]), prize=0 if must else int(model.penalty),
                                              required=must))
            pos += 1
            continue
        members = list(range(pos - nd, pos - nd + len(g)))  # client indices
        for n in g:
            pyvrp_clients.append(pyvrp.Client(location=pos, delivery=delivery(n), prize=int(model.penalty), required=False,
                                              group=len(groups)))
            pos += 1
        groups.append(pyvrp.ClientGroup(members, required=required))
    dpos = {n: i for i, n in enumerate(depot_nodes)}
    types: dict[tuple, list[int]] = {}
    for k, v in enumerate(model.vehicles):
        key = (v.start, v.end, v.capacity, v.profile, v.max_duration, v.load)
        types.setdefault(key if pool else (k, *key), []).append(k)
    vtypes = []
    for key, members in types.items():
        start, end, cap, profile, dur, load = key[-6:]
        kwargs = dict(num_available=len(members), start_depot=dpos[start], end_depot=dpos[end], profile=int(profile))
        if model.capacity_dimension:
            kwargs["max_distance"] = int(cap)
        if dur is not None:
            kwargs["shift_duration"] = int(dur)
        if loads:
            kwargs["capacity"] = [int(load) if load is not None else int(np.asarray(model.demands).sum())]
        vtypes.append(pyvrp.VehicleType(**kwargs))
    dist = [_pyvrp_matrix(m, idx) for m in model.costs]
    if model.durations is not None:
        dur_m = [_pyvrp_matrix(m, idx) for m in model.durations]
    else:
        dur_m = [np.zeros(d.shape, dtype=np.int64) for d in dist[:1]] * len(dist)
    data = pyvrp.ProblemData(locations, pyvrp_clients, depots, vtypes, dist, dur_m, groups)
    return PyvrpInstance(data, tuple(order), tuple(tuple(m) for m in types.values()), nd)


def _pyvrp_matrix(m: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The model's matrix in PyVRP's node order, zero on the diagonal; no copy when nothing changes."""
    m = np.asarray(m)
    same = len(idx) == m.shape[0] and bool((idx == np.arange(len(idx))).all())
    out = m if same else m[np.ix_(idx, idx)]
    if out.dtype != np.int64 or not out.flags.c_contiguous:
        out = np.ascontiguousarray(out, dtype=np.int64)
    if np.diagonal(out).any():  # self-arcs are never flown
        out = out.copy() if out is m else out
        np.fill_diagonal(out, 0)
    return out


def pyvrp_run(
    inst: PyvrpInstance,
    budget: Budget,
    iterations: int | None,
    seed: int,
    neighbours: int = NEIGHBOURS,
    start: list[list[int]] | None = None,
    descend: bool = False,
) -> tuple[list[list[int]], int, str, bool]:
    """One PyVRP search: until ``budget``'s deadline or ``iterations`` (whichever first).

    ``start`` (one node list per model vehicle) is where the search begins instead
    of a random solution: a restart from the best routes so far. ``descend``: the start
    is first taken to a local optimum by PyVRP's exhaustive local search, as
    ``pyvrp.solve`` does with its random start (``_solve``) — for a constructed start,
    which the iterated search alone, perturbing a few visits at a time, cleans up slowly.
    Returns (routes as one node list per model vehicle, iterations done, what stopped it,
    feasible?). Module-level and plain-data out, so a forked worker can run it.
    """
    import pyvrp
    from pyvrp.search import NeighbourhoodParams

    data, order, members, nd = inst.data, inst.order, inst.members, inst.n_depots
    params = pyvrp.SolveParams(neighbourhood=NeighbourhoodParams(num_neighbours=int(neighbours)))
    initial = None
    if start is not None:
        pos = {n: i - nd for i, n in enumerate(order)}  # model node → PyVRP client index (depots come first)
        type_of = {k: t for t, ks in enumerate(members) for k in ks}
        initial = pyvrp.Solution(data, [pyvrp.Route(data, [pos[n] for n in r], type_of[k]) for k, r in enumerate(start) if r])
    stop = budget.stop(iterations)
    if descend and initial is not None:
        res = _solve(data, stop, int(seed), params, initial)
    else:
        res = pyvrp.solve(data, stop, seed=int(seed), collect_stats=False, display=False, params=params,
                          initial_solution=initial)
    found = [(int(r.vehicle_type()), [order[nd + int(a.idx)] for a in r.schedule() if a.is_client()]) for r in res.best.routes()]
    n_vehicles = sum(len(m) for m in members)
    routes: list[list[int]] = [[] for _ in range(n_vehicles)]
    used = [0] * len(members)
    for t, nodes in found:
        routes[members[t][used[t]]] = nodes
        used[t] += 1
    return routes, int(res.num_iterations), stop.stopped_by, bool(res.is_feasible())


def _solve(data: pyvrp.ProblemData, stop: Callable[[float], bool], seed: int, params: pyvrp.SolveParams,
           start: pyvrp.Solution) -> pyvrp.Result:
    """``pyvrp.solve`` (0.14.1, ``pyvrp/solve.py``) with ``start`` taken to a local optimum first.

    The same steps as ``solve``: neighbourhoods, local search with the parameters'
    operators, the penalty manager at its midpoint penalties; then, where ``solve`` runs
    ``ls(random, pm.max_cost_evaluator(), exhaustive=True)`` on a random solution, the
    same on ``start``. Measured on a 1 070-client region of city_n2000: 0.14 CPU s, the
    cheapest-insertion start 782 225 → 497 282 (a random start's descent: 522 382, 0.26 s).
    The descent is not cut by the deadline; the iterated search after it is.
    """
    import pyvrp
    from pyvrp.IteratedLocalSearch import IteratedLocalSearch
    from pyvrp.PenaltyManager import PenaltyManager
    from pyvrp.search import LocalSearch, PerturbationManager, compute_neighbours

    rng = pyvrp.RandomNumberGenerator(seed=seed)
    ls = LocalSearch(data, rng, compute_neighbours(data, params.neighbourhood), PerturbationManager(params.perturbation))
    for op in params.operators:
        if op.supports(data):
            ls.add_operator(op(data))
    pm = PenaltyManager(params.penalty.midpoint_penalties(data), params.penalty)
    init = ls(start, pm.max_cost_evaluator(), exhaustive=True)
    return IteratedLocalSearch(data, pm, ls, init, params.ils).run(stop, False, False)


def start_then_gls(
    model: RouteModel, start: list[list[int]], gls_solutions: int, net_s: float,
    expired: Callable[[], bool] | None = None,
) -> tuple[list[list[int]], bool]:
    """Load ``start`` into the OR-Tools model and search on with GLS; (routes, whether it loaded).

    A start that does not load (it breaks a dimension) is returned unchanged for
    the caller to repair; GLS never returns worse than the start it loaded.
    """
    out = solve_model(model, Search("gls", gls_solutions, net_s, expired=expired), start_routes=start)
    if not out.start_accepted:
        return start, False
    return out.routes, True


# OR-Tools' ILS reached the best-known on md_n100 with ~29 improving solutions per node (3 000 for
# 104 nodes) and on md_n200_lines with ~7, but stayed +1.2 % above PyVRP on a random 150-site
# instance with ~13, and 5-9 % off on md_n500 with ~1. Below this many per node a PyVRP start is used.
ILS_SOLUTIONS_PER_NODE = 15.0
# and gained nothing beyond ~30 per node: searches are capped there (small models finish early)
ILS_MAX_SOLUTIONS_PER_NODE = 40


def ils_cap(solutions: int, n_nodes: int) -> int:
    """The solution count actually searched: at most ``ILS_MAX_SOLUTIONS_PER_NODE`` per node."""
    return max(1, min(int(solutions), ILS_MAX_SOLUTIONS_PER_NODE * max(n_nodes, 1)))


def needs_start(ils_solutions: int, n_nodes: int) -> bool:
    """Whether the budget buys ILS too few solutions for this model size (then: a PyVRP start)."""
    return ils_solutions < ILS_SOLUTIONS_PER_NODE * n_nodes
