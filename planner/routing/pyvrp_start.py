"""Starting routes from PyVRP for the OR-Tools model, where OR-Tools' own search is too slow.

OR-Tools' iterated local search proves every local optimum over its whole
neighbourhood, so an iteration grows with the model: on this loaded 2-core
machine kind it stays 5-9 % off on 500 sites within 20 s, where PyVRP's
granular search (pinned ``pyvrp==0.14.1``) comes within 1 %. For such models
PyVRP searches the SAME ``RouteModel`` (same matrices, limits, disjunctions)
and its routes become the start that ``planner.routing.model`` loads with
``ReadAssignmentFromRoutes`` — which rejects routes breaking any dimension —
and searches on. PyVRP never decides feasibility alone.

Mapping: each vehicle start node is a depot; vehicles with the same start,
end, limits and profile are one vehicle type (``num_available`` = their count,
which removes their symmetry from the search); a group of one node is a
client, a larger group a mutually exclusive ``ClientGroup`` (at most one of
its nodes is visited: a lane piece flown in one direction). Unvisited nodes
cost ``model.penalty`` (the client's prize) unless ``required``.

Deterministic: fixed seeds and ``MaxIterations``; the wall clock is a net only.
"""

from __future__ import annotations

import numpy as np
import pyvrp
from pyvrp.search import NeighbourhoodParams
from pyvrp.stop import MaxIterations, MaxRuntime, MultipleCriteria

from planner.routing.model import RouteModel, Search, solve_model

__all__ = [
    "ILS_SOLUTIONS_PER_NODE", "ILS_MAX_SOLUTIONS_PER_NODE", "LANE_NEIGHBOURS", "NEIGHBOURS", "ils_cap", "map_lanes", "needs_start", "pyvrp_routes",
    "start_then_gls",
]

# PyVRP's granular neighbourhood: the moves tried for a visit are with its this many nearest.
# PyVRP's default is 50; HGS-CVRP's (Vidal) is 20. Measured on md_n500 (16 000 iterations, seeds
# 0 / 1, loaded machine): 50 → +1.17 / +0.50 % in 20-21 CPU s, 40 → +1.07 / +0.68 %, 30 → +0.60 /
# +0.47 %, 20 → +0.31 / +0.04 % in 14-15 CPU s. Lane models count two nodes per lane piece (one
# per direction) and keep PyVRP's 50 (``LANE_NEIGHBOURS``): 20 and 30 lost helsinki's two-sortie plan.
NEIGHBOURS = 20
LANE_NEIGHBOURS = 50

# Worker processes (bench only; plans run in-process): forked, so no re-imports. Only a
# single-threaded caller may ask for workers > 1 (forking a threaded process is unsafe).
_MP_CONTEXT = "fork"


def map_lanes(fn, jobs: list[tuple], workers: int) -> list:
    """``[fn(*job) for job in jobs]``, on up to ``workers`` forked processes; the results never depend on ``workers``."""
    if workers > 1 and len(jobs) > 1:
        import multiprocessing

        with multiprocessing.get_context(_MP_CONTEXT).Pool(min(workers, len(jobs))) as pool:
            return pool.starmap(fn, jobs)
    return [fn(*job) for job in jobs]


def _data(model: RouteModel, required: bool, coords: np.ndarray | None, pool: bool):
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
    for g in model.groups:
        if len(g) == 1:
            pyvrp_clients.append(
                pyvrp.Client(location=pos, prize=0 if required else int(model.penalty), required=required)
            )
            pos += 1
            continue
        members = list(range(pos - nd, pos - nd + len(g)))  # client indices
        for _ in g:
            pyvrp_clients.append(pyvrp.Client(location=pos, prize=int(model.penalty), required=False, group=len(groups)))
            pos += 1
        groups.append(pyvrp.ClientGroup(members, required=required))
    dpos = {n: i for i, n in enumerate(depot_nodes)}
    types: dict[tuple, list[int]] = {}
    for k, v in enumerate(model.vehicles):
        key = (v.start, v.end, v.capacity, v.profile, v.max_duration)
        types.setdefault(key if pool else (k, *key), []).append(k)
    vtypes = []
    for key, members in types.items():
        start, end, cap, profile, dur = key[-5:]
        kwargs = dict(
            num_available=len(members),
            start_depot=dpos[start],
            end_depot=dpos[end],
            max_distance=int(cap),
            profile=int(profile),
        )
        if dur is not None:
            kwargs["shift_duration"] = int(dur)
        vtypes.append(pyvrp.VehicleType(**kwargs))
    dist = [np.ascontiguousarray(np.asarray(m, dtype=np.int64)[np.ix_(idx, idx)]) for m in model.costs]
    if model.durations is not None:
        dur_m = [np.ascontiguousarray(np.asarray(m, dtype=np.int64)[np.ix_(idx, idx)]) for m in model.durations]
    else:
        dur_m = [np.zeros_like(d) for d in dist]
    for m in (*dist, *dur_m):  # self-arcs are never flown
        np.fill_diagonal(m, 0)
    data = pyvrp.ProblemData(locations, pyvrp_clients, depots, vtypes, dist, dur_m, groups)
    return data, order, list(types.values())


def pyvrp_routes(
    model: RouteModel,
    iterations: int,
    seeds: tuple[int, ...],
    net_s: float,
    required: bool = False,
    coords: np.ndarray | None = None,
    pool: bool = True,
    neighbours: int | None = None,
    start: list[list[int]] | None = None,
) -> tuple[list[list[int]], int]:
    """PyVRP's best routes over ``seeds`` (``iterations`` each) as one node list per model vehicle.

    ``start`` (one node list per model vehicle) is where every seed's search
    begins instead of a random solution: a restart from the best routes so far.

    ``coords`` (node positions) are given to PyVRP when nodes have them; ``pool``
    makes identical vehicles one type (lanes: many interchangeable sorties per
    dock), otherwise every vehicle is its own type (points: the measured setup).

    Returns (routes, iterations done). Module-level and plain-data in and out,
    so a worker process can run it.
    """
    data, order, members = _data(model, required, coords, pool)
    params = pyvrp.SolveParams(neighbourhood=NeighbourhoodParams(num_neighbours=int(neighbours or NEIGHBOURS)))
    nd = len(order) - sum(len(g) for g in model.groups)
    initial = None
    if start is not None:
        pos = {n: i - nd for i, n in enumerate(order)}  # model node → PyVRP client index (depots come first)
        type_of = {k: t for t, ks in enumerate(members) for k in ks}
        initial = pyvrp.Solution(data, [pyvrp.Route(data, [pos[n] for n in r], type_of[k]) for k, r in enumerate(start) if r])
    best, done = None, 0
    for seed in seeds:
        stop = MultipleCriteria([MaxIterations(int(iterations)), MaxRuntime(net_s / max(len(seeds), 1))])
        res = pyvrp.solve(
            data, stop, seed=seed, collect_stats=False, display=False, params=params, initial_solution=initial
        )
        done += int(res.num_iterations)
        key = (not res.is_feasible(), int(res.cost()) if res.is_feasible() else 0)
        if best is None or key < best[0]:
            found = [(int(r.vehicle_type()), [order[nd + int(a.idx)] for a in r.schedule() if a.is_client()]) for r in res.best.routes()]
            best = (key, found)
    assert best is not None
    routes: list[list[int]] = [[] for _ in model.vehicles]
    used = [0] * len(members)
    for t, nodes in best[1]:
        routes[members[t][used[t]]] = nodes
        used[t] += 1
    return routes, done


def start_then_gls(
    model: RouteModel, start: list[list[int]], gls_solutions: int, net_s: float
) -> tuple[list[list[int]], bool]:
    """Load ``start`` into the OR-Tools model and search on with GLS; (routes, whether it loaded).

    A start that does not load (it breaks a dimension) is returned unchanged for
    the caller to repair; GLS never returns worse than the start it loaded.
    """
    out = solve_model(model, Search("gls", gls_solutions, net_s), start_routes=start)
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
