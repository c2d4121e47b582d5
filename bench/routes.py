"""``python -m bench routes INSTANCE.json [--budget-s S] [--seed K] [--iterations N] [--clock wall|cpu] [--solver sortie|pyvrp]``.

Reads the instance (section 2 of ``../shared/bench/README.md``), routes it with
``planner.routing.vrp.solve_routing`` (integer Euclidean legs, one sortie per vehicle,
``max_distance_m`` as the capacity) and returns the routes themselves plus the
total, the best-known figure and our ratio to it.

``--budget-s`` is a deadline (``bench/clocks.py``): planning starts after the instance is
read and the answer is there at the deadline, matrices and start-up included.
Every run reports ``wall_s``, ``cpu_s`` (this process and its search lanes),
``engine`` (what produced the routes: ``ortools-ils``, ``pyvrp-start+ortools`` or
``pyvrp``, see ``planner/routing/vrp.py``), ``iterations`` (the engine's work over
every lane), ``stopped_by``, the peak memory and ``phases``: each phase of the planning (the matrix,
the city search's first plan and rounds, the answer) with the wall and CPU seconds it took, as it
ended (``Budget.mark``; ``bench.clocks.PhaseLog``). ``--solver pyvrp`` runs PyVRP alone
with its defaults (``bench/pyvrp_alone.py``), for comparison in the same conditions.

Best-known totals: the public instances' from ``../shared/bench/README.md``; the
instances under ``bench/instances/`` from PyVRP alone given 600 CPU seconds
(``bench/instances/reference.json``, with the commands).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.clocks import PhaseLog, budget_from_args, cpu_s, max_rss_mb
from planner.routing.vrp import RoutingProblem, RoutingVehicle, euclidean_matrix, route_load, solve_routing

__all__ = ["BEST_KNOWN_M", "DEFAULT_BUDGET_S", "run"]

# Best-known totals: ../shared/bench/README.md section 5 (PyVRP, several seeds, ≤ 60 s), and
# bench/instances/reference.json (PyVRP alone, 600 CPU s, or 300 for city_n2000_fresh; seed 0; with the command).
BEST_KNOWN_M: dict[str, int] = {"md_n020": 23731, "md_n100": 60524, "md_n200_lines": 27656, "md_n500": 183343}
DEFAULT_BUDGET_S = 5.0
# Two independent search lanes (node renumberings / seeds 0.. and 1..), one per core of the
# 2-core machine.
SEARCH_LANES = 2
# From this many nodes the leg matrix is int32 (legs are metres below 2 147 km): half the memory of a
# 5 000-site city (100 MB instead of 200 MB; the planner sums in int64).
_INT32_FROM_NODES = 3000


def _best_known(name: str) -> int | None:
    if name in BEST_KNOWN_M:
        return BEST_KNOWN_M[name]
    table = Path(__file__).parent / "instances" / "reference.json"
    if table.is_file():
        entry = json.loads(table.read_text(encoding="utf-8"))["routes"].get(name)
        return int(entry["total_distance_m"]) if entry else None
    return None


def run(instance_path: str, args: argparse.Namespace) -> dict[str, Any]:
    """Plan the instance and return the output object of the bench contract."""
    inst = json.loads(Path(instance_path).read_text(encoding="utf-8"))
    solver = getattr(args, "solver", None) or "sortie"
    lanes = 1 if solver == "pyvrp" else SEARCH_LANES
    t0, c0 = time.perf_counter(), cpu_s()
    phases = PhaseLog()
    budget = budget_from_args(args, DEFAULT_BUDGET_S, lanes, phases)  # planning starts now: matrices included
    depots, sites, vehicles = inst["depots"], inst["sites"], inst["vehicles"]
    depot_index = {d["id"]: i for i, d in enumerate(depots)}
    xy = np.asarray([(d["x"], d["y"]) for d in depots] + [(s["x"], s["y"]) for s in sites], dtype=float)
    dist = euclidean_matrix(xy, np.int32 if len(xy) > _INT32_FROM_NODES else np.int64)
    n_depots = len(depots)
    budget.mark("matrix")
    if solver == "pyvrp":
        from bench.pyvrp_alone import solve_alone

        routes_nodes, iterations, stopped_by = solve_alone(inst, dist, budget)
        engine, unserved = "pyvrp-alone", {}
    else:
        problem = RoutingProblem(
            matrices=(dist,),
            vehicles=tuple(RoutingVehicle(depot_index[v["depot"]], int(v["max_distance_m"])) for v in vehicles),
            visit_nodes=tuple(range(n_depots, n_depots + len(sites))),
            coords=xy,
            droppable=False,  # the contract requires every site; a shortfall is still repaired, never "no solution"
        )
        sol = solve_routing(problem, budget=budget, lanes=SEARCH_LANES)
        budget.mark("solve_routing: the rest")
        routes_nodes, iterations, stopped_by = sol.routes, sol.iterations, sol.stopped_by
        engine, unserved = sol.engine, sol.unserved
    routes = []
    for v, route in zip(vehicles, routes_nodes):
        if route:
            routes.append(
                {
                    "vehicle": v["id"],
                    "sites": [sites[n - n_depots]["id"] for n in route],
                    "distance_m": route_load(dist, depot_index[v["depot"]], route),
                    "max_distance_m": int(v["max_distance_m"]),
                }
            )
    total = int(sum(r["distance_m"] for r in routes))
    budget.mark("output")
    wall_s = time.perf_counter() - t0
    cpu = cpu_s() - c0  # this process and its lane workers: wall time on a shared machine includes waiting
    best = _best_known(inst.get("name", ""))
    print(
        f"routes {inst.get('name')}: total {total} m, {len(routes)} sorties, {len(unserved)} unserved, "
        f"{iterations} iterations ({stopped_by}), engine {engine}, {wall_s:.2f} s wall, {cpu:.2f} s CPU",
        file=sys.stderr,
    )
    return {
        "instance": inst.get("name"),
        "routes": routes,
        "total_distance_m": total,
        "unserved": [{"site": sites[n - n_depots]["id"], "reason": r} for n, r in unserved.items()],
        "best_known_m": best,
        "ratio_to_best_known": round(total / best, 5) if best and not unserved else None,
        "budget_s": budget.seconds,
        "clock": getattr(args, "clock", "wall"),
        "seed": budget.seed,
        "iterations_cap": budget.iterations,
        "solver": solver,
        "engine": engine,
        "search_lanes": lanes,
        "iterations": iterations,
        "stopped_by": stopped_by,
        "seconds": round(wall_s, 3),
        "wall_s": round(wall_s, 3),
        "cpu_s": round(cpu, 3),
        "budget_clock_s": round(budget.elapsed_s(), 3),
        "max_rss_mb": max_rss_mb(),
        "phases": phases.phases,  # each phase's wall and CPU seconds, in order (``Budget.mark``)
    }
