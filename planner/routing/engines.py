"""The searches every routing model gets, under one ``Budget``: search lanes, ILS, PyVRP, the finish.

Point routes (``planner.routing.vrp``) and lane patrols (``planner.patrol.arc_routing``)
reduce their problem to one ``RouteModel`` and hand it here with a ``Budget``
(``planner.routing.budget``). Which search, measured on this 2-core machine kind:

* ``search_ils`` — OR-Tools' iterated local search (ruin-and-recreate), for models
  the budget buys at least ``ILS_SOLUTIONS_PER_NODE`` solutions a node
  (``needs_start``): it reaches the best-known there. Deadline: OR-Tools' native
  ``time_limit`` set to what is left, and a cap of ``ILS_MAX_SOLUTIONS_PER_NODE``
  solutions a node (more found nothing), fewer on a small patrol, which reaches its
  best sooner (``deadline_cap``), so a small model ends early.
* ``search_pyvrp`` — PyVRP's iterated local search (``planner.routing.pyvrp_start``)
  for larger models, in two phases: every lane from scratch with its own seed,
  then every lane from the best routes so far with a fresh seed. Deadline: each
  phase ends at its share of what is left (``Budget.share``), through PyVRP's own
  stopping-criterion protocol (``Budget.stop``).
* ``finish`` — the routes checked against every limit by plain arithmetic, and where
  the OR-Tools model is small enough to build (``LOAD_MAX_NODES``), loaded into it
  (``ReadAssignmentFromRoutes``: a second proof) and polished by a few guided-local-
  search moves. At city scale the dense OR-Tools model alone costs seconds and a
  Python list of n² integers (~39 bytes an entry: 1 GB at 5 000 sites), and GLS
  from PyVRP's routes found nothing (FACTS.md: +2.04 → +2.03 % on md_n500), so the
  arithmetic proof is the one used there (engine ``"pyvrp"``).

Search lanes: ``lanes`` independent searches (seed / node renumbering ``k`` for lane
``k``) of the whole budget each, the best kept; the shell's runner (``Budget.runner``,
e.g. the bench's forked processes) may run them side by side. The routes depend on
the lanes, never on the runner (work mode).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from planner.routing.budget import STOPPED_BY_DEADLINE, STOPPED_BY_ITERATIONS, Budget
from planner.routing.model import RouteModel, Search, route_fits, routes_fit, solve_model
from planner.routing.pyvrp_start import (
    ILS_MAX_SOLUTIONS_PER_NODE,
    NEIGHBOURS,
    PyvrpInstance,
    ils_cap,
    pyvrp_instance,
    pyvrp_run,
    start_then_gls,
)

__all__ = [
    "LOAD_MAX_NODES",
    "RESTART_SHARE",
    "Searched",
    "finish",
    "nominal",
    "drop_over_limits",
    "key",
    "routes_cost",
    "deadline_cap",
    "search_budget",
    "search_ils",
    "search_lanes",
    "search_pyvrp",
]

# Where the OR-Tools model is still cheap to build and load (measured: 0.3 s at 500 sites, and a
# Python list of n² integers beyond); above it the arithmetic proof alone (engine "pyvrp").
LOAD_MAX_NODES = 700
_GLS_POLISH_SOLUTIONS = 5  # GLS moves after the load: each scans the whole neighbourhood
RESTART_SHARE = 0.35  # of the search, for every lane's restart from the best so far
_TAIL_SHARE = 0.02  # of the budget kept for what follows the search (extract, check, answer) ...
_TAIL_MIN_S = 0.1  # ... and at least this
_SAFETY_FACTOR = 10.0  # work mode: OR-Tools' wall-clock net = factor × nominal seconds + 2 s
# ILS under a deadline on a model of lane pieces (every group an either-way pair): solutions a node,
# n / _CAP_NODES_PER_SOLUTION scaled down by n / _CAP_FULL_NODES below _CAP_FULL_NODES nodes (n² / 300), at
# least _CAP_MIN_PER_NODE, at most ILS_MAX_SOLUTIONS_PER_NODE; from 100 nodes n / 3 as before (those models
# reach the deadline before the cap: grid8_r35 stops at 2 600-3 150 of 3 401). Measured (issue 27, search1:
# the final best's solution over renumberings 0-3, 40 a node then n / 3 a node): the demo's 53-node patrol
# by 141 of 937 (2.7 a node), 59 nodes 4.3, 71 nodes 14.7 (renumbering 2; 0: 5.5), cut windows of
# 21 / 47 / 77 / 87 nodes 0.1 / 1.1 / 3.2 / 1.0; at 8 a node the same length on every one of them but the
# 71-node patrol's renumbering 2 (+0.06 %). Point models are not capped lower: they improve up to ~30 a node
# at any size (md_n020 8.2, random 34- and 54-node problems 26.7 and 29.6, md_n100 23.6; search1: random
# 32 / 52 / 73 nodes 13.5 / 16.5 / 27.5).
_CAP_NODES_PER_SOLUTION = 3.0
_CAP_FULL_NODES = 100.0
_CAP_MIN_PER_NODE = 8.0


@dataclass(frozen=True)
class Searched:
    """Routes (one node list per model vehicle), the work done (iterations/solutions), what stopped it."""

    routes: list[list[int]]
    work: int
    stopped_by: str


def routes_cost(model: RouteModel, routes: list[list[int]]) -> int:
    total = 0
    for v, r in zip(model.vehicles, routes):
        if r:
            walk = np.asarray([v.start, *r, v.end])
            total += int(model.costs[v.profile][walk[:-1], walk[1:]].sum())
    return total


def drop_over_limits(model: RouteModel, routes: list[list[int]]) -> tuple[list[list[int]], list[int]]:
    """Drop visits from any route over its limits (cheapest loss first) so every route fits; (routes, dropped).

    The searches work with penalties, so their best answer can exceed a limit on a tight
    fleet (or be a first solution the deadline left unrepaired); a plan must not. Ties
    are broken by position, so the result is deterministic.
    """
    dropped: list[int] = []
    fixed: list[list[int]] = []
    for v, route in zip(model.vehicles, routes):
        route = list(route)
        c = model.costs[v.profile]
        while route and not route_fits(model, v, route):
            walk = [v.start, *route, v.end]
            saving = [int(c[walk[i], walk[i + 1]]) + int(c[walk[i + 1], walk[i + 2]]) - int(c[walk[i], walk[i + 2]])
                      for i in range(len(route))]
            best = max(range(len(route)), key=lambda i: (saving[i], -i))
            dropped.append(route.pop(best))
        fixed.append(route)
    return fixed, dropped


def key(model: RouteModel, routes: list[list[int]]) -> tuple[bool, int, int]:
    """Order results: within every limit first, then most visits, then cheapest."""
    return (not routes_fit(model, routes), -sum(len(r) for r in routes), routes_cost(model, routes))


def search_lanes(budget: Budget, lanes: int) -> int:
    """Search lanes to run: with a deadline, only as many as run side by side (more would share its seconds)."""
    lanes = max(1, int(lanes))
    return min(lanes, budget.workers) if budget.timed else lanes


def deadline_cap(model: RouteModel) -> int:
    """ILS solutions a search lane may go through under a deadline: where more search stops paying.

    A small patrol reaches its best within a few solutions a node and then only spends
    the deadline (the demo's 53-node patrol: its best by solution 141 of 937, ~0.15 of
    ~1.2 CPU s under load), so on a model of lane pieces the cap a node grows with the
    model, as n² / 300 (at least 8) up to 100 nodes and n / 3 beyond, up to
    ``ILS_MAX_SOLUTIONS_PER_NODE`` (reached at 120 nodes). Point models keep
    ``ILS_MAX_SOLUTIONS_PER_NODE`` a node: they still improve there (constants above).
    A count, not a clock: the search still repeats (STYLE.md 7). It also sets the pace of
    OR-Tools' annealing (its temperature falls with the share of the cap done), so a lower
    cap is a different search, not a prefix of the longer one: measured, not inferred.
    """
    n = max(model.n_nodes, 1)
    per_node = float(ILS_MAX_SOLUTIONS_PER_NODE)
    if model.groups and all(len(g) == 2 for g in model.groups):
        scaled = n / _CAP_NODES_PER_SOLUTION * min(1.0, n / _CAP_FULL_NODES)
        per_node = min(per_node, max(_CAP_MIN_PER_NODE, scaled))
    return max(1, int(math.ceil(per_node * n)))


def search_budget(budget: Budget) -> Budget:
    """The part of ``budget`` the search may use: what follows it needs a tail."""
    if not budget.timed:
        return budget
    return budget.share(1.0 - _TAIL_SHARE - _TAIL_MIN_S / max(budget.remaining_s(), _TAIL_MIN_S * 2))


# ---------------------------------------------------------------- OR-Tools' iterated local search
def _ils_lane(model: RouteModel, budget: Budget, permutation: int, limit: int, first: str, stall: int = 0
              ) -> tuple[list[list[int]], int]:
    """One ILS search under one node renumbering (module-level: a worker runs it)."""
    net_s = budget.engine_time_limit_s(_SAFETY_FACTOR * budget.seconds + 2.0)
    out = solve_model(model, Search("ils", limit, net_s, permutation, first=first, stall=stall))
    return out.routes, out.solutions


def search_ils(
    model: RouteModel, budget: Budget, lanes: int, nominal_limit: int,
    first: str = "LOCAL_CHEAPEST_INSERTION", stall: int = 0,
) -> Searched:
    """ILS on ``model``: ``lanes`` renumberings (``seed × lanes + k``), the best kept.

    Work mode: ``budget.iterations`` or ``nominal_limit`` solutions a lane. Deadline:
    until the deadline, capped at ``budget.iterations`` or ``deadline_cap`` solutions
    (a small model ends early, and repeats). ``stall``: ``model.Search.stall``.
    """
    lanes = search_lanes(budget, lanes)
    if budget.iterations is not None:
        limit = int(budget.iterations)
    elif budget.timed:
        limit = deadline_cap(model)
    else:
        limit = ils_cap(nominal_limit, model.n_nodes)
    b = search_budget(budget)
    jobs = [(model, b, budget.seed * lanes + k, limit, first, stall) for k in range(lanes)]
    outs = budget.map_lanes(_ils_lane, jobs)
    best = min(range(len(outs)), key=lambda k: (key(model, outs[k][0])[1:], k))
    done = sum(w for _, w in outs)
    stopped = STOPPED_BY_ITERATIONS if all(w >= limit for _, w in outs) or not budget.timed else STOPPED_BY_DEADLINE
    return Searched(outs[best][0], done, stopped)


# ---------------------------------------------------------------- PyVRP
def _pyvrp_lane(
    inst: PyvrpInstance, budget: Budget, iterations: int | None, seeds: tuple[int, ...], neighbours: int,
    model: RouteModel, start: list[list[int]] | None,
) -> tuple[list[list[int]], int, str]:
    """PyVRP runs over ``seeds`` in turn (each ``iterations``, or its share of the deadline); the best."""
    best, done, stopped = None, 0, STOPPED_BY_ITERATIONS
    for i, seed in enumerate(seeds):
        b = budget.share(1.0 / (len(seeds) - i)) if budget.timed else budget
        routes, it, why, _ = pyvrp_run(inst, b, iterations, seed, neighbours, start)
        done += it
        stopped = why or stopped
        if best is None or key(model, routes) < key(model, best):
            best = routes
    assert best is not None
    return best, done, stopped


def search_pyvrp(
    model: RouteModel,
    budget: Budget,
    lanes: int,
    *,
    nominal_iterations: int,
    runs: int = 1,
    required: bool = False,
    coords: np.ndarray | None = None,
    pool: bool = False,
    neighbours: int = NEIGHBOURS,
    restart_share: float = RESTART_SHARE,
    start: list[list[int]] | None = None,
) -> Searched:
    """PyVRP on ``model`` in two phases (module docstring); the best routes of every lane and phase.

    Work mode: ``budget.iterations`` or ``nominal_iterations`` a lane, spread over
    ``runs`` seeds in phase one, ``restart_share`` of them in phase two (0: no
    restart). Deadline: the phases share what is left the same way, each lane
    capped at ``budget.iterations`` when given. ``start`` (routes within every limit,
    e.g. a construction) is where lane 0 begins instead of a random solution, and
    the answer is never worse than it.
    """
    lanes = search_lanes(budget, lanes)
    inst = pyvrp_instance(model, required, coords, pool)  # once, before the lanes fork: they share it
    b = search_budget(budget)
    total = budget.iterations if budget.iterations is not None else (None if budget.timed else nominal_iterations)
    if total is not None:
        second = int(total * restart_share)
        runs = max(1, min(int(runs), total - second))
        each: int | None = (total - second) // runs
    else:
        second, each = None, None
        runs = 1
    phase1 = b.share(1.0 - restart_share) if b.timed else b
    jobs = [(inst, phase1, each, tuple(range(k * runs, (k + 1) * runs)), neighbours, model, start if k == 0 else None)
            for k in range(lanes)]
    outs = budget.map_lanes(_pyvrp_lane, jobs)
    best = outs[min((key(model, r), k) for k, (r, _, _) in enumerate(outs))[1]][0]
    if start is not None and key(model, start) < key(model, best):
        best = start
    done = sum(d for _, d, _ in outs)
    stopped = STOPPED_BY_DEADLINE if any(s == STOPPED_BY_DEADLINE for _, _, s in outs) else STOPPED_BY_ITERATIONS
    if (b.timed and restart_share > 0) or (second or 0) > 0:
        phase2 = b.share(1.0) if b.timed else b
        restart = [(inst, phase2, second, (lanes * runs + k,), neighbours, model, best) for k in range(lanes)]
        again = budget.map_lanes(_pyvrp_lane, restart)
        done += sum(d for _, d, _ in again)
        if any(s == STOPPED_BY_DEADLINE for _, _, s in again):
            stopped = STOPPED_BY_DEADLINE
        best = min([(key(model, best), -1, best)] + [(key(model, r), k, r) for k, (r, _, _) in enumerate(again)])[2]
    return Searched(best, done, stopped)


def finish(model: RouteModel, routes: list[list[int]], budget: Budget) -> tuple[list[list[int]], bool]:
    """PyVRP's routes proven and polished on the OR-Tools model where it is small enough; (routes, loaded?).

    Above ``LOAD_MAX_NODES`` (or with no time left) the routes are returned as they
    are: the caller checks them against every limit by arithmetic and repairs them.
    """
    if model.n_nodes > LOAD_MAX_NODES:
        return routes, False
    if budget.timed and budget.expired():
        return routes, False
    net_s = budget.engine_time_limit_s(_SAFETY_FACTOR * budget.seconds + 2.0)
    return start_then_gls(model, routes, _GLS_POLISH_SOLUTIONS, net_s, budget.expired if budget.timed else None)


def nominal(rate_per_s: float, seconds: float, minimum: int) -> int:
    """Work a nominal budget buys: ``rate_per_s × seconds``, at least ``minimum`` (work mode only)."""
    return max(int(minimum), int(math.floor(seconds * rate_per_s)))
