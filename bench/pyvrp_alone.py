"""PyVRP alone on a routes instance: the comparison the issue asks for, and the best-known figures.

``python -m bench routes INSTANCE --solver pyvrp --budget-s S [--seed K] [--clock cpu]``
runs PyVRP 0.14.1 exactly as its documentation shows it (``pyvrp.solve`` with the default
``SolveParams``: iterated local search, 50 granular neighbours), one process, one seed,
stopped at the deadline (start-up included, ``planner.routing.budget.DeadlineStop``) —
nothing of sortie's engine choice, restarts or parallel lanes. Vehicles with the same
depot and range are one vehicle type, as in ``../shared/bench/gen_vrp.py``'s witness.

This is how the best-known totals of the instances under ``bench/instances/`` were
computed (600 s, ``--clock cpu``: 600 CPU seconds of one core, as an idle machine would
give them; the commands are in the README). Bench only: the planner never calls this.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyvrp

from planner.routing.budget import Budget

__all__ = ["solve_alone"]


def solve_alone(inst: dict[str, Any], dist: np.ndarray, budget: Budget) -> tuple[list[list[int]], int, str]:
    """PyVRP's best routes as one node list per instance vehicle (node = index into ``dist``).

    Returns (routes, iterations, what stopped it). ``dist`` is the integer leg matrix
    over depots then sites, as ``bench.routes`` builds it.
    """
    depots, sites, vehicles = inst["depots"], inst["sites"], inst["vehicles"]
    nd = len(depots)
    dep = {d["id"]: i for i, d in enumerate(depots)}
    xy = [(float(d["x"]), float(d["y"])) for d in depots] + [(float(s["x"]), float(s["y"])) for s in sites]
    kinds: dict[tuple[int, int], list[int]] = {}
    for k, v in enumerate(vehicles):
        kinds.setdefault((dep[v["depot"]], int(v["max_distance_m"])), []).append(k)
    keys = sorted(kinds)
    data = pyvrp.ProblemData(
        [pyvrp.Location(x, y) for x, y in xy],
        [pyvrp.Client(location=nd + i) for i in range(len(sites))],
        [pyvrp.Depot(location=i) for i in range(nd)],
        [pyvrp.VehicleType(num_available=len(kinds[k]), start_depot=k[0], end_depot=k[0], max_distance=k[1]) for k in keys],
        [np.ascontiguousarray(dist, dtype=np.int64)],
        [np.zeros(dist.shape, dtype=np.int64)],
    )
    stop = budget.stop(budget.iterations)
    res = pyvrp.solve(data, stop, seed=budget.seed, collect_stats=False, display=False)
    routes: list[list[int]] = [[] for _ in vehicles]
    used = {k: 0 for k in keys}
    for r in res.best.routes():
        key = keys[int(r.vehicle_type())]
        routes[kinds[key][used[key]]] = [nd + int(a.idx) for a in r.schedule() if a.is_client()]
        used[key] += 1
    return routes, int(res.num_iterations), stop.stopped_by
