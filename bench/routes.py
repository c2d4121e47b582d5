"""``python -m bench routes INSTANCE.json [--budget-s S]``: multi-depot point routing.

Reads the instance (section 2 of ``../shared/bench/README.md``), routes it with
``planner.routing.vrp.solve_routing`` (integer Euclidean legs, one sortie per vehicle,
``max_distance_m`` as the capacity) and returns the routes themselves plus the
total, the best-known figure and our ratio to it. Same instance and budget →
same routes (the budget sets an iteration count, not a deadline).

``"engine"`` says what produced the routes: ``"ortools-ils"`` (OR-Tools' iterated
local search on the one routing model) or ``"pyvrp-start+ortools"`` (PyVRP's routes
loaded into that model and searched on, when the budget buys ILS too few solutions
for the size; see ``planner/routing/vrp.py``).

Measured at ``--budget-s 20`` (2 search lanes, 2026-12-01, under load: load average 4-9 on the
2 cores; CPU = ``cpu_seconds``, both lanes and the parent):

    instance        total    gap        engine                CPU     wall
    md_n020         23731   +0.00 %     ortools-ils            1.5 s    5 s
    md_n100         60524   +0.00 %     ortools-ils           34 s    116 s
    md_n200_lines   27656   +0.00 %     pyvrp-start+ortools   23 s     57 s
    md_n500        183343   +0.00 %     pyvrp-start+ortools   32 s    160 s

Lane 0 is the one-lane search; a second lane can only lower a total. Repeated runs
gave identical routes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from planner.routing.vrp import RoutingProblem, RoutingVehicle, euclidean_matrix, route_load, solve_routing

__all__ = ["BEST_KNOWN_M", "DEFAULT_BUDGET_S", "run"]

# Best-known totals from ../shared/bench/README.md section 5 (PyVRP, several seeds, ≤ 60 s).
BEST_KNOWN_M: dict[str, int] = {"md_n020": 23731, "md_n100": 60524, "md_n200_lines": 27656, "md_n500": 183343}
DEFAULT_BUDGET_S = 5.0
# Two independent search lanes (node renumberings / seeds 0.. and 1..), one per core of the 2-core
# machine: the routes depend on the lanes, not on how many processes ran them.
SEARCH_LANES = 2
WORKERS = 2


def _cpu_s() -> float:
    """CPU seconds of this process and of its finished child processes (the search lanes' workers)."""
    import resource

    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def run(instance_path: str, args: argparse.Namespace) -> dict[str, Any]:
    """Plan the instance and return the output object of the bench contract."""
    inst = json.loads(Path(instance_path).read_text(encoding="utf-8"))
    budget_s = float(getattr(args, "budget_s", None) or DEFAULT_BUDGET_S)
    solver = getattr(args, "solver", None) or "ortools"
    t0 = time.perf_counter()
    c0 = _cpu_s()
    depots, sites, vehicles = inst["depots"], inst["sites"], inst["vehicles"]
    depot_index = {d["id"]: i for i, d in enumerate(depots)}
    xy = np.asarray([(d["x"], d["y"]) for d in depots] + [(s["x"], s["y"]) for s in sites], dtype=float)
    dist = euclidean_matrix(xy)
    n_depots = len(depots)
    problem = RoutingProblem(
        matrices=(dist,),
        vehicles=tuple(RoutingVehicle(depot_index[v["depot"]], int(v["max_distance_m"])) for v in vehicles),
        visit_nodes=tuple(range(n_depots, n_depots + len(sites))),
        coords=xy,
        droppable=False,  # the contract requires every site; a shortfall is still repaired, never "no solution"
    )
    sol = solve_routing(problem, budget_s=budget_s, solver=solver, lanes=SEARCH_LANES, workers=WORKERS)
    seconds = time.perf_counter() - t0
    cpu_seconds = _cpu_s() - c0  # this process and its lane workers: wall time on a shared machine includes waiting
    routes = []
    for v, rv, route in zip(vehicles, problem.vehicles, sol.routes):
        if route:
            routes.append(
                {
                    "vehicle": v["id"],
                    "sites": [sites[n - n_depots]["id"] for n in route],
                    "distance_m": route_load(dist, rv.start_node, route),
                    "max_distance_m": int(v["max_distance_m"]),
                }
            )
    total = int(sol.cost)
    best = BEST_KNOWN_M.get(inst.get("name", ""))
    print(
        f"routes {inst.get('name')}: total {total} m, {len(routes)} sorties, {len(sol.unserved)} unserved, "
        f"{sol.iterations} iterations ({sol.stopped_by}), engine {sol.engine}, {seconds:.2f} s",
        file=sys.stderr,
    )
    return {
        "instance": inst.get("name"),
        "routes": routes,
        "total_distance_m": total,
        "unserved": [{"site": sites[n - n_depots]["id"], "reason": r} for n, r in sol.unserved.items()],
        "best_known_m": best,
        "ratio_to_best_known": round(total / best, 5) if best and not sol.unserved else None,
        "budget_s": budget_s,
        "solver": sol.solver,
        "engine": sol.engine,
        "search_lanes": SEARCH_LANES,
        "iterations": sol.iterations,
        "stopped_by": sol.stopped_by,
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu_seconds, 3),
    }
