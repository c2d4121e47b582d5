"""``python -m bench carp INSTANCE.dat [--budget-s S]``: a literature CARP instance, planned by the lane planner's room.

Reads a CARPLIB file (``bench/carp_file.py``; the instances, bounds and checker are in
``../shared/bench/carp/``), turns it into the arc-routing problem the lane patrols are
planned as (``planner.patrol.arc_search.ArcProblem``: each required edge a unit served
once either way, deadheads the shortest paths of the graph, every sortie limited by
load — CARP's capacity — and not by length), plans it with ``solve_arcs`` under a wall
deadline (``--budget-s``, default 60 s, from the moment the file has been read; two
search lanes, one per core) and prints one JSON object: ``verify_carp.py``'s solution
(``instance``, ``routes`` as serve sequences) plus ``cost`` (every traversal, served and
deadheaded), ``seconds`` (wall), and the figures of the run (``engine``, ``iterations``,
``stopped_by``, ``cpu_s``, ``best_known`` and ``gap_pct`` from ``bks.json`` beside the
instance's folder when it is there).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.carp_file import CarpInstance, read_carplib
from bench.clocks import budget_from_args, cpu_s
from planner.patrol.arc_search import ArcProblem, SortieLimit, solve_arcs

__all__ = ["DEFAULT_BUDGET_S", "HGS_FLEET_SPARE", "SEARCH_LANES", "carp_problem", "plan_cost", "run", "shortest_paths"]

DEFAULT_BUDGET_S = 60.0  # the figure: 60 s wall on the 2-core machine
SEARCH_LANES = 2  # one per core (the budget's runner forks them, bench/lane_pool.py)
# HGS-CARP's search fleet: VEHICULOS (the fewest routes the demand needs) plus one (``Params.cpp``: "more
# vehicles are allowed (here we put one more)"). ``--fleet-spare K`` keeps the search within VEHICULOS + K
# routes; by default it is free (``_fleet_per_depot``): measured in session 5 (docs/carp.md), V + 1 left gdb23
# at 235 and lost on egl-s4-C
HGS_FLEET_SPARE = 1


def shortest_paths(inst: CarpInstance) -> np.ndarray:
    """Every vertex to every vertex along the graph's edges (Floyd–Warshall in numpy; vertices 1..n, row 0 unused)."""
    n = inst.vertices
    big = np.iinfo(np.int64).max // 4
    D = np.full((n + 1, n + 1), big, dtype=np.int64)
    np.fill_diagonal(D, 0)
    for e in inst.edges:
        D[e.u, e.v] = min(D[e.u, e.v], e.cost)
        D[e.v, e.u] = min(D[e.v, e.u], e.cost)
    for k in range(1, n + 1):
        np.minimum(D, D[:, k : k + 1] + D[k : k + 1, :], out=D)
    return D


def carp_problem(inst: CarpInstance, sp: np.ndarray, fleet_spare: int | None = None) -> ArcProblem:
    """The instance as an arc-routing problem: unit k is required edge k (start u, end v), one depot, a load limit.

    ``fleet_spare``: the search flies at most ``VEHICULOS + fleet_spare`` routes (HGS-CARP: ``HGS_FLEET_SPARE``).
    """
    ends = [x for e in inst.required for x in (e.u, e.v)] + [inst.depot]
    idx = np.asarray(ends, dtype=np.int64)
    return ArcProblem(
        deadhead=sp[np.ix_(idx, idx)],
        service=np.asarray([e.cost for e in inst.required], dtype=np.int64),
        limits=(SortieLimit(load=inst.capacity),),
        demand=np.asarray([e.demand for e in inst.required], dtype=np.int64),
        scale=1.0,
        fleet=None if fleet_spare is None else inst.vehicles + int(fleet_spare),
    )


def _served(inst: CarpInstance, unit: int, reverse: bool) -> tuple[int, int]:
    e = inst.required[unit]
    return (e.v, e.u) if reverse else (e.u, e.v)


def plan_cost(inst: CarpInstance, sp: np.ndarray, routes: list[list[tuple[int, int]]]) -> int:
    """Total traversal cost of serve sequences: each service plus the shortest deadheads around it."""
    service = {frozenset((e.u, e.v)): e.cost for e in inst.required}
    total = 0
    for seq in routes:
        at = inst.depot
        for u, v in seq:
            total += int(sp[at, u]) + service[frozenset((u, v))]
            at = v
        total += int(sp[at, inst.depot])
    return total


def _best_known(path: Path, name: str) -> int | None:
    table = path.resolve().parent.parent / "bks.json"
    if not table.is_file():
        return None
    entry = json.loads(table.read_text(encoding="utf-8")).get(name)
    return int(entry["ub"]) if entry else None


def run(instance_path: str, args: argparse.Namespace) -> dict[str, Any]:
    """Plan the instance and return ``verify_carp.py``'s solution object with the run's figures."""
    inst = read_carplib(instance_path)
    t0, c0 = time.monotonic(), cpu_s()
    budget = budget_from_args(args, DEFAULT_BUDGET_S, SEARCH_LANES)  # planning starts now: shortest paths included
    sp = shortest_paths(inst)
    spare = getattr(args, "fleet_spare", None)
    plan = solve_arcs(carp_problem(inst, sp, spare), budget, SEARCH_LANES)
    routes = [[_served(inst, t, r) for t, r in seq] for _, seq in plan.sorties]
    seconds = time.monotonic() - t0
    cost = plan_cost(inst, sp, routes)
    best = _best_known(Path(instance_path), inst.name)
    print(f"carp {inst.name}: cost {cost} in {len(routes)} routes, engine {plan.engine}, {plan.work} iterations "
          f"({plan.stopped_by}), {seconds:.2f} s wall, {cpu_s() - c0:.2f} s CPU", file=sys.stderr)
    return {
        "instance": inst.name,
        "routes": [{"serve_sequence": [list(p) for p in seq]} for seq in routes],
        "cost": cost,
        "seconds": round(seconds, 3),
        "best_known": best,
        "gap_pct": round(100.0 * (cost - best) / best, 3) if best else None,
        "engine": plan.engine,
        "iterations": plan.work,
        "stopped_by": plan.stopped_by,
        "budget_s": budget.seconds,
        "clock": getattr(args, "clock", "wall"),
        "seed": budget.seed,
        "iterations_cap": budget.iterations,
        "search_lanes": SEARCH_LANES,
        "fleet_spare": spare,
        "cpu_s": round(cpu_s() - c0, 3),
    }
