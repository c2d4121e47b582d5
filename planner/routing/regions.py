"""City-scale point routing: regions of the city searched side by side, in rounds, then the whole.

At a few thousand sites one PyVRP search of the whole city is slow twice over: an
iteration costs more (PyVRP copies and re-evaluates the whole solution each time:
~500 iterations a second at 2 000 sites against ~1 500 at 1 000), and each one
improves one neighbourhood while the rest waits. A second core searching the
same city with another seed mostly repeats the first. Routes start and end at
docks, so the city splits along them:

1. **Regions** (``partition``): the docks are cut in two, recursively, across the
   longer side of their spread (the other side in the next round, so no border
   stays a border), each part getting about half the sites; every vehicle goes with
   its dock. A site belongs to the region of the vehicle flying it, or, before any
   route exists, of the nearest dock with a vehicle that reaches it.
2. **A first plan** (``construct``): a site needing over ``FAR_RATIO`` of every
   reaching drone's range keeps such a drone (``reserve_far``: a region searched
   alone fills its drones with near sites first, and a 5 000-site city under a wall
   deadline ended with 2-4 far sites unserved); then every other site by cheapest
   insertion over every gap of every route at once, farthest first
   (``planner.routing.construct``: ~0.3 CPU s at 5 000 sites and 560 drones). A
   plan serving every site the fleet can serve exists within seconds; the search
   only improves it. (Before issue 29 part 2 the first plan was each region searched
   from scratch, whose first local search PyVRP runs before it looks at any stopping
   criterion: 21.5 s wall of a 12 s share on ``city_n5000`` at load 7, and the sites
   it left out were inserted by a Python loop over every drone: 3.6 s.)
3. **Rounds**: each region searched, on its own core, from its part of the best
   plan so far, the split turned every round; the parts are merged back. In the
   first round each region's part of the constructed plan is first taken to a local
   optimum by PyVRP's exhaustive local search (``pyvrp_run(descend=True)``, ~0.14 CPU s
   a region of 1 000 sites), as ``pyvrp.solve`` does with its random start: the
   iterated search alone cleans the construction up slowly (city_n2000 at 60 CPU s,
   two runs each: +1.99 / +1.81 % over the best known without the descent, +1.07 /
   +1.10 % with it; the search from scratch before issue 29 part 2: +0.79 / +0.50 %). What a
   round leaves out (a region stopped before PyVRP repaired its routes) is put back
   by the same insertion, a drone making room for a far site where nothing else
   works (``construct.insert_leftovers``); a last pass tries every drone.
4. **The whole city**: one search per core of the full model from the merged plan,
   for the routes across the last borders; the best kept.

Every phase ends at its share of the deadline (``Budget.share``), or, without a
clock, after its share of the iterations (reproducible); the search ends
``TAIL_SHARE`` of the deadline early, so the last insertion and the answer are on
time too, and a round is only started with ``MIN_ROUND_S`` left. Each phase tells
the shell when it ends (``Budget.mark``; the bench reports every phase's wall and
CPU seconds). Measured on
``bench/instances/city_n2000.json`` (2 000 sites, 20 docks, 120 drones; CPU seconds
per core on this loaded machine kind): PyVRP alone 679 746 m after 40 s; phase 0 as
one full search for 10 s, regions 20 s, whole 10 s: 667 824 m (-1.8 %). The README
has the figures at the bench's deadlines.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from planner.routing.budget import STOPPED_BY_DEADLINE, STOPPED_BY_ITERATIONS, Budget
from planner.routing.construct import ArcPool, farthest_first, insert_leftovers
from planner.routing.engines import Searched, drop_over_limits, key
from planner.routing.model import ModelVehicle, RouteModel
from planner.routing.pyvrp_start import pyvrp_instance, pyvrp_run

__all__ = ["CITY_MIN_VISITS", "FAR_RATIO", "MIN_ROUND_S", "Region", "TAIL_MIN_S", "TAIL_SHARE", "construct", "merge",
           "partition", "region_model", "reserve_far", "search_city"]

CITY_MIN_VISITS = 1000  # from this many visits on, the city search (measured: 2 000 sites)
REGION_SITES = 1000  # sites a region holds, about (regions are a multiple of the workers)
FAR_RATIO = 0.8  # a site needing more than this share of every reaching drone's range gets one kept for it
WHOLE_MAX_NODES = 3000  # the whole model's final search up to this many nodes (memory: 16 n² bytes)
_ROUNDS = 4  # regional rounds after the first (one more without the whole model's search)
TAIL_SHARE = 0.03  # of the deadline, kept after the search for the last insertion and the answer ...
TAIL_MIN_S = 0.5  # ... and at least this
MIN_ROUND_S = 1.0  # a regional round is started only with this much left
_WHOLE_SHARE = 0.05  # the final search of the whole model
_CITY_NEIGHBOURS = 50  # PyVRP's default: 20 left the 2 000-site city infeasible after 20 CPU s (50: feasible)


@dataclass(frozen=True)
class Region:
    """Part of a model: its docks, its visit groups (indices into ``model.groups``), its vehicles."""

    docks: tuple[int, ...]
    groups: tuple[int, ...]
    vehicles: tuple[int, ...]


def _home_docks(model: RouteModel, docks: list[int]) -> np.ndarray:
    """For each visit group (its first node), the nearest dock (there and back) with a vehicle that reaches it.

    A site only the long-range drones of a farther dock can reach belongs to that
    dock's region, or its own region could never serve it.
    """
    nodes = np.asarray([g[0] for g in model.groups], dtype=np.int64)
    d = np.asarray(docks, dtype=np.int64)
    big = np.iinfo(np.int64).max // 4
    best = np.full((len(d), len(nodes)), big, dtype=np.int64)
    reach = np.zeros((len(d), len(nodes)), dtype=bool)
    for v in model.vehicles:
        c = model.costs[v.profile]
        k = int(np.searchsorted(d, v.start))
        there_back = c[v.start, nodes].astype(np.int64) + c[nodes, v.start]
        best[k] = np.minimum(best[k], there_back)
        reach[k] |= there_back <= v.capacity
    return d[np.argmin(np.where(reach, best, big + best), axis=0)]


def reserve_far(model: RouteModel, ratio: float = FAR_RATIO) -> dict[int, list[int]]:
    """Drones kept for the far sites, and the sites each flies: vehicle → nodes in order.

    A site whose there-and-back takes more than ``ratio`` of the range of every drone
    that reaches it needs a drone almost to itself; a region searched alone fills
    those few drones with nearer sites first, and nothing afterwards frees one (a
    5 000-site city ended with four such sites unserved). So each (farthest first)
    goes where it adds least on a kept drone's way, or else to the free drone it
    fits most tightly; the regions of the first plan search without those drones.
    Deterministic (ties by vehicle index).
    """
    nodes = np.asarray([g[0] for g in model.groups], dtype=np.int64)
    least = np.full(len(nodes), np.inf)  # each site's least share of a reaching drone's range
    for profile, start, capacity in sorted({(v.profile, v.start, v.capacity) for v in model.vehicles}):
        c = model.costs[profile]
        share = (c[start, nodes].astype(np.int64) + c[nodes, start]) / max(capacity, 1)
        least = np.minimum(least, np.where(share <= 1.0, share, np.inf))
    far = sorted((-float(least[i]), i) for i in np.nonzero(np.isfinite(least) & (least > ratio))[0].tolist())
    kept: dict[int, list[int]] = {}
    loads: dict[int, int] = {}
    for _, i in far:
        n = model.groups[i][0]
        choice = None
        for k in sorted(kept):
            got = _cheapest(model, model.vehicles[k], kept[k], loads[k], n, True)
            if got is not None and (choice is None or (got[0], k) < choice[:2]):
                choice = (got[0], k, got[1])
        if choice is None:
            for k, v in enumerate(model.vehicles):
                c = model.costs[v.profile]
                there_back = int(c[v.start, n]) + int(c[n, v.start])
                if k not in kept and there_back <= v.capacity and (choice is None or (v.capacity - there_back, k) < choice[:2]):
                    choice = (v.capacity - there_back, k, 0)
            if choice is None:
                continue  # every drone that reaches it is kept and full: the search places it
            kept[choice[1]], loads[choice[1]] = [], 0
        _, k, pos = choice
        kept[k].insert(pos, n)
        loads[k] = _load(model, model.vehicles[k], kept[k])
    return kept


def partition(model: RouteModel, coords: np.ndarray, parts: int, turn: int = 0,
              routes: list[list[int]] | None = None, kept: dict[int, list[int]] | None = None) -> list[Region]:
    """Split ``model`` into ``parts`` regions along its docks (module docstring); deterministic.

    ``turn`` odd cuts across the shorter side first (the next round's borders lie
    elsewhere). With ``routes``, a site goes with the vehicle flying it. Vehicles in
    ``kept`` (``reserve_far``) and their sites belong to no region.
    """
    kept = kept or {}
    docks = sorted({v.start for v in model.vehicles})
    home = _home_docks(model, docks)
    if routes is not None:
        where = {n: model.vehicles[k].start for k, r in enumerate(routes) for n in r}
        home = np.asarray([where.get(g[0], h) for g, h in zip(model.groups, home.tolist())], dtype=np.int64)
    taken = {n for r in kept.values() for n in r}
    home = np.where(np.isin(np.asarray([g[0] for g in model.groups], dtype=np.int64), list(taken)), -1, home)
    load = {d: int((home == d).sum()) for d in docks}

    def split(ds: list[int], k: int, depth: int) -> list[list[int]]:
        if k <= 1 or len(ds) < 2:
            return [ds]
        spread = np.ptp(coords[ds], axis=0)
        axis = int(np.argmax(spread)) if (turn + depth) % 2 == 0 else int(np.argmin(spread))
        order = sorted(ds, key=lambda d: (float(coords[d][axis]), d))
        target = sum(load[d] for d in order) * (k // 2) / k
        acc, cut = 0, 1
        for i, d in enumerate(order[:-1]):
            acc += load[d]
            cut = i + 1
            if acc >= target:
                break
        return split(order[:cut], k // 2, depth + 1) + split(order[cut:], k - k // 2, depth + 1)

    regions = []
    for ds in split(docks, max(1, int(parts)), 0):
        members = set(ds)
        groups = tuple(i for i, h in enumerate(home.tolist()) if h in members)
        vehicles = tuple(k for k, v in enumerate(model.vehicles) if v.start in members and k not in kept)
        regions.append(Region(tuple(ds), groups, vehicles))
    return regions


def region_model(model: RouteModel, region: Region) -> tuple[RouteModel, np.ndarray]:
    """The region as its own model (docks first, then its visits) and sub node → model node."""
    nodes = list(region.docks) + [n for i in region.groups for n in model.groups[i]]
    idx = np.asarray(nodes, dtype=np.int64)
    local = {n: i for i, n in enumerate(nodes)}
    sub = RouteModel(
        costs=tuple(np.ascontiguousarray(c[np.ix_(idx, idx)]) for c in model.costs),
        vehicles=tuple(
            ModelVehicle(local[v.start], local[v.end], v.capacity, v.profile, v.max_duration)
            for v in (model.vehicles[k] for k in region.vehicles)
        ),
        groups=tuple(tuple(local[n] for n in model.groups[i]) for i in region.groups),
        penalty=model.penalty,
        durations=None if model.durations is None else tuple(np.ascontiguousarray(c[np.ix_(idx, idx)]) for c in model.durations),
        capacity_dimension=model.capacity_dimension,
    )
    return sub, idx


def merge(model: RouteModel, regions: list[Region], routes: list[list[list[int]]], maps: list[np.ndarray],
          kept: dict[int, list[int]] | None = None) -> list[list[int]]:
    """The regions' routes (and the kept vehicles' routes) as one node list per vehicle of ``model``."""
    out: list[list[int]] = [list((kept or {}).get(k, [])) for k in range(len(model.vehicles))]
    for region, rs, idx in zip(regions, routes, maps):
        for k, r in zip(region.vehicles, rs):
            out[k] = [int(idx[n]) for n in r]
    return out


# ---------------------------------------------------------------- leftovers
def _load(model: RouteModel, v: ModelVehicle, route: list[int]) -> int:
    if not route:
        return 0
    walk = np.asarray([v.start, *route, v.end], dtype=np.int64)
    return int(model.costs[v.profile][walk[:-1], walk[1:]].astype(np.int64).sum())


def _cheapest(model: RouteModel, v: ModelVehicle, route: list[int], load: int, n: int, fit: bool) -> tuple[int, int] | None:
    """(added cost, position) of ``n`` in ``route``; within the limit only when ``fit``."""
    c = model.costs[v.profile]
    walk = np.asarray([v.start, *route, v.end], dtype=np.int64)
    delta = c[walk[:-1], n].astype(np.int64) + c[n, walk[1:]] - c[walk[:-1], walk[1:]]
    ok = load + delta <= v.capacity if (fit and model.capacity_dimension) else np.ones(len(delta), bool)
    if not ok.any():
        return None
    pos = int(np.argmin(np.where(ok, delta, np.iinfo(np.int64).max)))
    return int(delta[pos]), pos


# ---------------------------------------------------------------- the city search
def _region_lane(inst, budget: Budget, iterations: int | None, seed: int, start: list[list[int]] | None,
                 part: int, parts_in_turn: int, descend: bool) -> tuple[list[list[int]], int, str]:
    """One region's search (module-level: a forked worker runs it); sequential parts share the phase."""
    b = budget.share(1.0 / parts_in_turn) if budget.timed and parts_in_turn > 1 else budget
    routes, done, why, _ = pyvrp_run(inst, b, iterations, seed, _CITY_NEIGHBOURS, start, descend)
    return routes, done, why


def _regional(model: RouteModel, coords: np.ndarray, regions: list[Region], phase: Budget, iterations: int | None,
              seed: int, lanes: int, required: bool, best: list[list[int]] | None,
              kept: dict[int, list[int]] | None = None, far: frozenset[int] = frozenset(),
              descend: bool = False) -> tuple[list[list[int]], int, str]:
    subs = [region_model(model, r) for r in regions]
    insts = [pyvrp_instance(sm, required, coords[idx], True,  # built before the fork: the lanes share them
                            frozenset(j for j, n in enumerate(idx.tolist()) if n in far)) for sm, idx in subs]
    phase.mark("city: regional models and PyVRP data built")
    starts: list[list[list[int]] | None] = []
    for r, (_, idx) in zip(regions, subs):
        if best is None:
            starts.append(None)
            continue
        local = {int(n): j for j, n in enumerate(idx)}
        starts.append([[local[n] for n in best[k]] for k in r.vehicles])
    slots = math.ceil(len(regions) / max(1, lanes))  # regions each lane searches one after the other
    jobs = [(inst, phase, iterations, seed + j, starts[j], j, slots - j // max(1, lanes), descend)
            for j, inst in enumerate(insts)]
    outs = phase.map_lanes(_region_lane, jobs)
    phase.mark("city: regional search")
    # a region the deadline stopped before its search repaired PyVRP's first solution answers over
    # some limit: those visits are dropped here and put back by insertion (never a plan over a limit)
    merged, _ = drop_over_limits(model, merge(model, regions, [o[0] for o in outs], [idx for _, idx in subs], kept))
    why = STOPPED_BY_DEADLINE if any(o[2] == STOPPED_BY_DEADLINE for o in outs) else STOPPED_BY_ITERATIONS
    return merged, sum(o[1] for o in outs), why


def _whole_lane(inst, budget: Budget, iterations: int | None, seed: int, start: list[list[int]]):
    routes, done, why, _ = pyvrp_run(inst, budget, iterations, seed, _CITY_NEIGHBOURS, start)
    return routes, done, why


def _whole(model: RouteModel, coords: np.ndarray, required: bool, phase: Budget, iterations: int | None, seed: int,
           lanes: int, best: list[list[int]]) -> tuple[list[list[int]], int, str]:
    """The whole model searched from ``best``, ``lanes`` lanes (seed + k); never worse than ``best``.

    Its PyVRP data (two n² int64 matrices: 400 MB at 5 000 sites) exists only for this phase.
    """
    whole = pyvrp_instance(model, required, coords, True)
    outs = phase.map_lanes(_whole_lane, [(whole, phase, iterations, seed + k, best) for k in range(lanes)])
    del whole
    why = STOPPED_BY_DEADLINE if any(o[2] == STOPPED_BY_DEADLINE for o in outs) else STOPPED_BY_ITERATIONS
    found = min([(key(model, best), -1, best)] + [(key(model, r), k, r) for k, (r, _, _) in enumerate(outs)])[2]
    found, _ = drop_over_limits(model, found)
    return found, sum(o[1] for o in outs), why


def construct(model: RouteModel, kept: dict[int, list[int]], expired: Callable[[], bool] | None = None) -> list[list[int]]:
    """The first plan: the kept drones' far sites (``reserve_far``), then every other site by cheapest insertion.

    ``construct.ArcPool`` over every route, farthest first (``construct.farthest_first``):
    O(n (n + vehicles)) vectorised work, ~0.3 CPU s at 5 000 sites and 560 drones, so a plan
    serving every site the fleet can exists within the first seconds of any deadline.
    """
    start = [list(kept.get(k, [])) for k in range(len(model.vehicles))]
    pool = ArcPool(model, start)
    taken = {n for r in start for n in r}
    todo = farthest_first(model, [g[0] for g in model.groups if g[0] not in taken])
    for n in todo:
        pool.insert(n)
    return insert_leftovers(model, pool.routes(), expired=expired)


def search_city(model: RouteModel, budget: Budget, lanes: int, coords: np.ndarray, *, required: bool,
                nominal_iterations: int) -> Searched:
    """The city search of the module docstring on ``model``; ``coords`` are the nodes' positions.

    ``parts``: a multiple of ``lanes`` (regions searched side by side) with about ``REGION_SITES`` sites a region (2 000 sites on
    two cores: two regions; 5 000: six, three after each other on each core). The whole model is
    searched last only up to ``WHOLE_MAX_NODES`` nodes (its PyVRP data alone is 16 n² bytes: 400 MB
    at 5 000); above, that time is one more regional round. A round whose start still lacks a site
    searches at a prize, not required (a required search never accepts an incomplete start).

    Deadline: the search phases end ``TAIL_SHARE`` of the budget (at least ``TAIL_MIN_S``) before
    it, for what follows (a last insertion, the answer); a round is started only with at least
    ``MIN_ROUND_S`` left (building its regions and forking costs ~0.2 s, loaded).
    """
    lanes = max(1, int(lanes))
    parts = lanes * max(1, math.ceil(len(model.groups) / (REGION_SITES * lanes)))
    parts = max(2, parts)
    whole = model.n_nodes <= WHOLE_MAX_NODES
    rounds = _ROUNDS + 1 + (0 if whole else 1)
    whole_share = _WHOLE_SHARE if whole else 0.0
    total = budget.iterations if budget.iterations is not None else (None if budget.timed else nominal_iterations)
    search = budget.share(1.0 - max(TAIL_SHARE, TAIL_MIN_S / max(budget.remaining_s(), 2 * TAIL_MIN_S))) if budget.timed else budget
    expired = search.expired if search.timed else None

    def its(share: float) -> int | None:
        return None if total is None else max(1, int(total * share))

    def complete(routes: list[list[int]]) -> bool:
        return sum(len(r) for r in routes) >= len(model.groups)

    def time_for_a_round() -> bool:
        return not search.timed or search.remaining_s() >= MIN_ROUND_S

    done, stopped = 0, STOPPED_BY_ITERATIONS
    rest = 1.0 - whole_share
    budget.mark("city: model built")
    kept = reserve_far(model)
    far = frozenset(n for r in kept.values() for n in r)  # required in every round searched at a prize
    best = construct(model, kept, expired)
    budget.mark("city: first complete plan (insertion)")
    for turn in range(rounds):
        if not time_for_a_round():
            stopped = STOPPED_BY_DEADLINE
            break
        left = rounds - turn
        phase = search.share((rest / rounds) / (rest / rounds * left + whole_share)) if search.timed else budget
        regions = partition(model, coords, parts, turn, best)
        merged, d, why = _regional(model, coords, regions, phase, its(rest / rounds), budget.seed * 1000 + 10 * turn,
                                   lanes, required and complete(best), best, None, far, turn == 0)
        merged = insert_leftovers(model, merged, expired=expired) if not complete(merged) else merged
        done, stopped = done + d, STOPPED_BY_DEADLINE if why == STOPPED_BY_DEADLINE else stopped
        if key(model, merged) <= key(model, best):
            best = merged
        budget.mark(f"city: round {turn}")
    if whole and time_for_a_round():
        phase = search.share(1.0) if search.timed else budget
        best, d, why = _whole(model, coords, required, phase, its(whole_share), budget.seed * 1000 + 900, lanes, best)
        done, stopped = done + d, STOPPED_BY_DEADLINE if why == STOPPED_BY_DEADLINE else stopped
        budget.mark("city: whole")
    if not complete(best):  # last resort: every drone that reaches a site left out may make room for it
        best = insert_leftovers(model, best, options=len(model.vehicles), expired=budget.expired if budget.timed else None)
        budget.mark("city: last insertion")
    return Searched(best, done, stopped)
