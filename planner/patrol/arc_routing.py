"""Lane patrol as capacitated arc routing: required lines → depot-to-depot sorties.

Every required line must be flown along once (either direction). Between lines
the drone flies straight, except around no-fly polygons (shortest paths through
``planner.geo.transit.TransitGraph``). Each sortie starts and ends at the same depot
and is at most that depot's ``max_sortie_m`` long. Objective: total length.

Method (capacitated arc routing as node routing on the one OR-Tools model of
``planner.routing.model``), deterministic:

0. The bench baseline's plan, exact (``planner.patrol.line_tour``): the rural postman
   tour over the single lines, split at its best rotation in the model's arithmetic.
   It is the search's start, and the answer is never longer than it.
1. Lines meeting at a node of required degree 2 are merged into chains (up to
   ``_CHAIN_FRACTION`` of the shortest sortie limit, so a sortie can still end
   between pieces), so a road is not cut where nothing branches; a chain is cut
   where the start's sorties do not fly its lines one after the other, so the start
   is a set of chain routes.
2. All deadheads are one matrix over the chain end points and depots: straight
   when legal, otherwise the shortest path through the obstacles' corners
   (visibility graph + Floyd–Warshall, min-plus in numpy).
3. Each chain becomes a pair of directed nodes (entered at its start, or at its
   end) in ONE disjunction: flown once, in either direction. An arc a → b costs
   the deadhead from a's exit to b's entry plus b's length; the same figure is
   the capacity dimension (the sortie limit). Every dock is a depot with as many
   sorties as could be useful (``_fleet_per_depot``).
4. OR-Tools' iterated local search (ruin-and-recreate) searches it under the
   ``budget`` (``planner.routing.budget``: a deadline, or a fixed amount of work).
   When a budget of that many seconds buys it too few solutions for the model's
   size (``planner.routing.pyvrp_start.needs_start``), PyVRP searches the same model
   and its routes are loaded into the OR-Tools model (which proves them within
   every limit) and polished there, or on a model too large for that
   (``planner.routing.engines.LOAD_MAX_NODES``) checked by arithmetic.
   ``ArcRoutingResult.engine`` says which, ``work`` and ``stopped_by`` how much
   it searched and why it stopped. ``lanes`` independent searches (seed /
   renumbering k for lane k) may run side by side; the best is kept.

A line that no depot can serve alone within ``max_sortie_m`` is reported as
unserved (``out_of_range``) rather than raising.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from planner.geo.deadheads import Deadheads
from planner.routing.budget import Budget
from planner.patrol.rpp_start import tour_orders
from planner.patrol.line_tour import MM, arc_cost_matrix, line_tour_split
from planner.routing.engines import finish, key, search_ils, search_pyvrp
from planner.routing.model import ModelVehicle, RouteModel, Search, routes_fit, solve_model
from planner.routing.pyvrp_start import LANE_NEIGHBOURS, needs_start

__all__ = [
    "ArcDepot",
    "ArcSortie",
    "ArcRoutingResult",
    "UNSERVED_OUT_OF_RANGE",
    "route_lanes",
]

UNSERVED_OUT_OF_RANGE = "out_of_range"
_KEY_DECIMALS = 3  # end points closer than 1 mm are one node
_CAP_SLACK_M = 0.25  # keep planned sorties this far below the limit (geometry round-off)
_CHAIN_FRACTION = 0.1  # chains merged through degree-2 nodes up to this share of a sortie
_MM = MM  # the routing model counts millimetres
_PENALTY_FACTOR = 100  # an unflown chain costs 100 sortie limits: never worth it while it fits
ENGINE = "ortools-ils"
ENGINE_PYVRP_START = "pyvrp-start+ortools"
ENGINE_TOUR = "rpp-tour"  # the tour-and-split start itself, when no search beat it
ENGINE_PYVRP = "pyvrp"  # models too large for the dense OR-Tools model (planner.routing.engines.LOAD_MAX_NODES)
# When the budget buys ILS too few solutions for the model's size (``needs_start``; e.g.
# helsinki_service_nofly, 310 nodes: ~20 s for a few hundred solutions, still above the
# baseline), PyVRP searches the same model and OR-Tools loads and polishes its routes.
_FIRST = "PARALLEL_CHEAPEST_INSERTION"  # first solution: the best of four tried on the lane models
_PYVRP_START_SHARE = 0.8  # of the budget for PyVRP; the parent spends ~1 s on deadheads, the model, load and polish
# ILS under a deadline on a model below _STALL_MAX_NODES: local search ends after this many solutions a
# node (at least _STALL_MIN) without a shorter plan (``_stall``). Measured with ``python -m bench.ils_stall``
# and ``bench.ils_trace``, renumberings 0-3: the longest run without improvement before the final best was
# 84 on the demo's 53 nodes, up to 91 on 19 nodes and 64 on 29 (so 2 a node alone lost 0.4 % and 3.3 % there),
# and 2 a node kept every length on 89 nodes but lost ~1 % on three of four renumberings at 105 nodes.
_STALL_PER_NODE = 2.0
_STALL_MIN = 150
_STALL_MAX_NODES = 100
# CPU seconds of one PyVRP iteration on a lane model: a fixed part plus a part per node (measured on
# this machine kind: 0.48-0.62 ms at 101 nodes, grid8_r35; 1.0-1.33 ms at 310, helsinki_service_nofly;
# the higher figures under heavy load). The count is a pure function of (size, budget): the same
# budget gives the same sorties anywhere.
_PYVRP_S_PER_ITERATION = 0.2e-3
_PYVRP_S_PER_ITERATION_NODE = 3.0e-6
_MIN_ITERATIONS = 200
DEFAULT_BUDGET_S = 4.0
# ILS solutions per CPU second × model nodes (measured ~18 000 on the grid, loaded 2-core
# machine); sets the deterministic solution_limit from the budget
_SOLUTIONS_PER_S_X_NODES = 18_000
_MIN_SOLUTIONS = 50

XY = tuple[float, float]


@dataclass(frozen=True)
class ArcDepot:
    """A place sorties start and end, and the longest sortie flown from it (metres)."""

    x: float
    y: float
    max_sortie_m: float


@dataclass(frozen=True)
class ArcSortie:
    """One sortie: depot index, the required lines flown in order with direction, its path."""

    depot: int
    lines: tuple[tuple[int, bool], ...]  # (line index, reversed?) in flight order
    path: tuple[XY, ...]
    length_m: float


@dataclass(frozen=True)
class ArcRoutingResult:
    sorties: tuple[ArcSortie, ...]
    unserved: dict[int, str]
    total_length_m: float
    engine: str = ""  # what produced the sorties, e.g. "ortools-ils"
    work: int = field(default=0, compare=False)  # the engine's iterations / solutions, over every lane
    stopped_by: str = field(default="", compare=False)  # "iterations" (the work cap) or "deadline"


# ------------------------------------------------------------------ chains
def _merge_chains(lines: list[np.ndarray], lengths: np.ndarray, cap_m: float) -> list[list[tuple[int, bool]]]:
    """Group lines into chains through nodes of required degree 2 (each at most ``cap_m``)."""
    key = lambda p: (round(float(p[0]), _KEY_DECIMALS), round(float(p[1]), _KEY_DECIMALS))  # noqa: E731
    ends = [(key(a[0]), key(a[-1])) for a in lines]
    incident: dict[XY, list[int]] = {}
    for k, (u, v) in enumerate(ends):
        incident.setdefault(u, []).append(k)
        if v != u:
            incident.setdefault(v, []).append(k)
    used = [False] * len(lines)
    chains: list[list[tuple[int, bool]]] = []

    def extend(chain: list[tuple[int, bool]], node: XY, total: float) -> float:
        while True:
            nxt = [k for k in incident.get(node, []) if not used[k]]
            if len(incident.get(node, [])) != 2 or len(nxt) != 1:
                return total
            k = nxt[0]
            if total + lengths[k] > cap_m:
                return total
            u, v = ends[k]
            rev = v == node and u != node
            used[k] = True
            chain.append((k, rev))
            total += float(lengths[k])
            node = u if rev else v

    for k in range(len(lines)):
        if used[k]:
            continue
        used[k] = True
        fwd: list[tuple[int, bool]] = [(k, False)]
        total = extend(fwd, ends[k][1], float(lengths[k]))
        back: list[tuple[int, bool]] = []
        extend(back, ends[k][0], total)
        # `back` walks away from the start: flip it in front of the chain
        chain = [(j, not r) for j, r in reversed(back)] + fwd
        chains.append(chain)
    return chains


def _cut_chains(chains: list[list[tuple[int, bool]]], plan: list[tuple[int, list[tuple[int, bool]]]]
                ) -> list[list[tuple[int, bool]]]:
    """Chains cut wherever ``plan`` (line sorties) does not fly their lines one after the other, so it reads as chains."""
    succ = {a: b for _, seq in plan for a, b in zip(seq[:-1], seq[1:])}
    out: list[list[tuple[int, bool]]] = []
    for c in chains:
        piece = [c[0]]
        for (a, ra), (b, rb) in zip(c[:-1], c[1:]):
            if succ.get((a, ra)) == (b, rb) or succ.get((b, not rb)) == (a, not ra):
                piece.append((b, rb))
            else:
                out.append(piece)
                piece = [(b, rb)]
        out.append(piece)
    return out


# ------------------------------------------------------------------ the routing model
def _entry(t: int, rev: bool) -> int:
    """Point id (in the chain-end numbering: 2t start, 2t+1 end) where chain t is entered."""
    return 2 * t + (1 if rev else 0)


def _exit(t: int, rev: bool) -> int:
    return 2 * t + (0 if rev else 1)


def _fleet_per_depot(chain_len: np.ndarray, caps: Sequence[float]) -> int:
    """Sorties each depot may fly: enough for every chain from one depot, with room to spare.

    Unused sorties cost nothing; too few would force lines out. A sortie flies at
    most its limit, at least half of it on lines in any sensible plan beyond the
    first few, so 2 × required / limit + 2 is generous.
    """
    need = 2.0 * float(chain_len.sum()) / max(min(caps), 1.0)
    return int(min(len(chain_len), math.ceil(need) + 2))


def _as_routes(model: RouteModel, sorties: Sequence[tuple[int, Sequence[tuple[int, bool]]]], per_depot: int
               ) -> list[list[int]] | None:
    """Sorties ``[(depot, [(chain, reversed?)])]`` as one route per model vehicle, if they fit the model."""
    nd = len(model.vehicles) // per_depot
    routes: list[list[int]] = [[] for _ in model.vehicles]
    used = [0] * nd
    for d, seq in sorties:
        if used[d] >= per_depot:
            return None
        routes[d * per_depot + used[d]] = [nd + 2 * t + (1 if r else 0) for t, r in seq]
        used[d] += 1
    return routes if sorties and routes_fit(model, routes) else None


def _chain_sorties(line_sorties, chains: list[list[tuple[int, bool]]]) -> list[tuple[int, list[tuple[int, bool]]]] | None:
    """Line sorties re-read as chain sorties, when every chain's lines are flown together in its order."""
    where = {k: (t, i, r) for t, c in enumerate(chains) for i, (k, r) in enumerate(c)}
    out = []
    for d, seq in line_sorties:
        run, i = [], 0
        while i < len(seq):
            k, rev = seq[i]
            t, pos, r = where[k]
            flown = rev != r  # the chain is flown backwards
            want = chains[t][::-1] if flown else chains[t]
            if [(kk, rr != flown) for kk, rr in want] != [(kk, bool(rr)) for kk, rr in seq[i : i + len(want)]]:
                return None
            run.append((t, flown))
            i += len(want)
        out.append((d, run))
    return out


def _solve_sorties(
    D: np.ndarray, chain_len: np.ndarray, caps: Sequence[float], budget: Budget, lanes: int = 1, workers: int = 1,
    line_start: list[tuple[int, list[tuple[int, bool]]]] | None = None,
) -> tuple[list[tuple[int, list[tuple[int, bool]]]], str, int, str]:
    """Sorties as (depot, [(chain, reversed?)]) from one OR-Tools model, the engine, its work, what stopped it.

    Nodes: one per depot, then two per chain (entered at its start, or at its
    end), the pair in one disjunction so each chain is flown once, either way.
    Arc a → b costs the deadhead from a's exit to b's entry plus b's own length
    (millimetres, rounded up so planned sorties never exceed the true limit);
    the same figure fills the capacity dimension, the sortie limit.

    ``lanes`` independent searches (PyVRP seed / ILS node renumbering ``k`` for
    lane ``k``) of the whole budget each, the best kept: the lane search is
    trapped by its start more than it is short of iterations (helsinki: one seed
    ends with three sorties, another with two and 2 % less flight).
    """
    T, nd = len(chain_len), len(caps)
    cost = arc_cost_matrix(D, chain_len, nd)  # the model numbers depots first, then chain t as nd + 2t (+1 reversed)
    per_depot = _fleet_per_depot(chain_len, caps)
    vehicles = tuple(
        ModelVehicle(d, d, int(math.floor((caps[d] - _CAP_SLACK_M) * _MM))) for d in range(nd) for _ in range(per_depot)
    )
    groups = tuple((nd + 2 * t, nd + 2 * t + 1) for t in range(T))
    penalty = int(_PENALTY_FACTOR * max(v.capacity for v in vehicles))
    model = RouteModel((cost,), vehicles, groups, penalty)
    # (work mode: the exact expressions the golden files were made with)
    limit = max(_MIN_SOLUTIONS, int(budget.seconds * _SOLUTIONS_PER_S_X_NODES / model.n_nodes))

    start = _as_routes(model, line_start, per_depot) if line_start else None
    if needs_start(limit, model.n_nodes):
        per_iteration = _PYVRP_S_PER_ITERATION + _PYVRP_S_PER_ITERATION_NODE * model.n_nodes
        iterations = max(_MIN_ITERATIONS, int(budget.seconds * _PYVRP_START_SHARE / per_iteration))
        out = search_pyvrp(model, budget, lanes, workers, nominal_iterations=iterations, pool=True,
                           neighbours=LANE_NEIGHBOURS, start=start)
        routes, loaded = finish(model, out.routes, budget)
        if not loaded and not _fits(model, routes):  # PyVRP kept every limit; else the model's own search
            routes = solve_model(model, Search("ils", _MIN_SOLUTIONS, max(budget.remaining_s(), 1.0), first=_FIRST)).routes
        engine = ENGINE_PYVRP_START if loaded else ENGINE_PYVRP
    else:
        out = search_ils(model, budget, lanes, workers, limit, first=_FIRST, stall=_stall(model, budget))
        routes, engine = out.routes, ENGINE
    if start is not None and key(model, start) < key(model, routes):  # never worse than the tour
        routes, engine = start, ENGINE_TOUR
    sorties = []
    for v, route in zip(vehicles, routes):
        if route:
            sorties.append((v.start, [divmod(q - nd, 2) for q in route]))
    return [(d, [(int(t), bool(r)) for t, r in seq]) for d, seq in sorties], engine, out.work, out.stopped_by


def _stall(model: RouteModel, budget: Budget) -> int:
    """Solutions without a shorter plan after which a deadline's ILS stops searching locally (0: never).

    Under a deadline a small patrol finds its best early and then spends CPU on nothing (the demo's
    53-node patrol: its best at solution 141 of 497, the longest run without improvement before it 84; 150
    stop it at 291, the same plan, ~0.6 of the search's CPU). Work mode (the golden files, a seed with an
    iteration cap) and models of 100 nodes or more (still improving late; the bench's grid8_r35 has 101) search in
    full. ``model.Search.stall``: how it stops.
    """
    if not budget.timed or budget.iterations is not None or model.n_nodes >= _STALL_MAX_NODES:
        return 0
    return max(int(math.ceil(_STALL_PER_NODE * model.n_nodes)), _STALL_MIN)


def _fits(model: RouteModel, routes: list[list[int]]) -> bool:
    return routes_fit(model, routes) and len({n for r in routes for n in r}) == sum(len(r) for r in routes)


def _route_cost(model: RouteModel, v: ModelVehicle, route: list[int]) -> int:
    if not route:
        return 0
    walk = np.asarray([v.start, *route, v.end])
    return int(model.costs[v.profile][walk[:-1], walk[1:]].sum())


# ------------------------------------------------------------------ public entry
def route_lanes(
    lines_local: Sequence[Sequence[XY]],
    depots: Sequence[ArcDepot],
    transit=None,
    *,
    budget: Budget | float = DEFAULT_BUDGET_S,
    lanes: int = 1,
    workers: int = 1,
) -> ArcRoutingResult:
    """Plan sorties flying along every line of ``lines_local`` (metres, local frame).

    ``transit`` is a ``planner.geo.transit.TransitGraph`` (or ``None`` when nothing is
    forbidden); deadheads go around its obstacles. Returns the sorties in a fixed
    order (by depot, then by first line), the indices of lines no depot can
    reach within its limit, and the total length. ``budget`` is a ``Budget`` or
    seconds of work (reproducible). ``lanes`` independent searches
    of the whole budget each (the best kept) run on up to ``workers`` forked
    processes (a single-threaded caller only); the sorties depend on ``lanes``,
    never on ``workers``.
    """
    if not depots:
        raise ValueError("at least one depot is needed")
    budget = budget if isinstance(budget, Budget) else Budget.work(float(budget))
    lines = [np.asarray(l, dtype=float) for l in lines_local]
    lengths = np.asarray([float(np.hypot(*np.diff(a, axis=0).T).sum()) if len(a) > 1 else 0.0 for a in lines])
    depot_xy = np.asarray([(d.x, d.y) for d in depots], dtype=float)
    caps = [float(d.max_sortie_m) for d in depots]

    # 0. lines no depot can serve alone
    ends = np.asarray([[a[0], a[-1]] for a in lines]) if lines else np.zeros((0, 2, 2))
    pts0 = np.vstack([ends.reshape(-1, 2), depot_xy]) if lines else depot_xy
    dh0 = Deadheads(pts0, transit)
    nl = len(lines)
    unserved: dict[int, str] = {}
    keep: list[int] = []
    for k in range(nl):
        best = min(
            min(dh0.D[2 * nl + d, 2 * k] + dh0.D[2 * k + 1, 2 * nl + d], dh0.D[2 * nl + d, 2 * k + 1] + dh0.D[2 * k, 2 * nl + d])
            + lengths[k]
            - caps[d]
            for d in range(len(depots))
        )
        if best > -_CAP_SLACK_M:
            unserved[k] = UNSERVED_OUT_OF_RANGE
        else:
            keep.append(k)
    if not keep:
        return ArcRoutingResult((), unserved, 0.0)

    # 1. the baseline's tour over single lines, split exactly: the plan is never longer than it
    nd = len(depots)
    dh_lines = dh0.subset([2 * k + e for k in keep for e in (0, 1)] + [2 * nl + d for d in range(nd)])
    caps_mm = [int(math.floor((c - _CAP_SLACK_M) * _MM)) for c in caps]
    plan_local = line_tour_split(dh_lines.D, dh_lines.points, lengths[keep], caps_mm) or []
    line_plan = [(d, [(keep[j], bool(r)) for j, r in seq]) for d, seq in plan_local]

    # 2. chains (cap: a tenth of the smallest sortie), cut where the line plan leaves them
    chain_cap = max(min(caps) * _CHAIN_FRACTION, float(lengths[keep].max()))
    chains_local = _merge_chains([lines[k] for k in keep], lengths[keep], chain_cap)
    chains = _cut_chains([[(keep[j], r) for j, r in c] for c in chains_local], line_plan)
    T = len(chains)
    chain_geom: list[np.ndarray] = []
    for c in chains:
        parts = []
        for k, r in c:
            a = lines[k][::-1] if r else lines[k]
            parts.append(a if not parts else a[1:])
        chain_geom.append(np.vstack(parts))
    chain_len = np.asarray([sum(float(lengths[k]) for k, _ in c) for c in chains])

    # 3. deadhead matrix over chain ends + depots (a subset of the line ends already measured)
    idx = []
    for c in chains:
        (k0, r0), (k1, r1) = c[0], c[-1]
        idx += [2 * k0 + (1 if r0 else 0), 2 * k1 + (0 if r1 else 1)]
    dh = dh0.subset(idx + [2 * nl + d for d in range(len(depots))])

    # 4. the routing model: OR-Tools searches it, every sortie limit is a dimension there
    sorties, engine, work, stopped_by = _solve_sorties(dh.D, chain_len, caps, budget, lanes, workers,
                                                       _chain_sorties(line_plan, chains))

    # 5. geometry; the line tour's split where the search did not beat it
    out = _geometry(sorties, chains, chain_geom, dh)
    if line_plan:
        local = {k: j for j, k in enumerate(keep)}
        plan = [(d, [(local[k], r) for k, r in seq]) for d, seq in line_plan]
        tour = _geometry(plan, [[(k, False)] for k in keep], [lines[k] for k in keep], dh_lines)
        if sum(s.length_m for s in tour) < sum(s.length_m for s in out) - 1e-6:
            out, engine = tour, ENGINE_TOUR
    return ArcRoutingResult(tuple(out), unserved, float(sum(s.length_m for s in out)), engine, work, stopped_by)


def _geometry(sorties, units: list[list[tuple[int, bool]]], unit_geom: list[np.ndarray], dh: Deadheads
              ) -> list[ArcSortie]:
    """Each sortie's path: deadheads (``dh``, over the units' ends then the depots) and the units' own lines.

    ``sorties``: [(depot, [(unit, reversed?)])]; ``units``: the lines [(line, reversed?)] each unit flies.
    """
    depot0 = 2 * len(units)
    out: list[ArcSortie] = []
    for d, seq in sorties:
        if not seq:
            continue
        path: list[XY] = []
        prev = depot0 + d
        for t, r in seq:
            for p in dh.path(prev, _entry(t, r)):
                if not path or path[-1] != p:
                    path.append(p)
            g = unit_geom[t][::-1] if r else unit_geom[t]
            for p in map(tuple, g.tolist()):
                if path[-1] != p:
                    path.append(p)
            prev = _exit(t, r)
        for p in dh.path(prev, depot0 + d):
            if path[-1] != p:
                path.append(p)
        flown = [(k, rr != r) for t, r in seq for k, rr in (units[t][::-1] if r else units[t])]
        length = float(np.hypot(*np.diff(np.asarray(path), axis=0).T).sum())
        out.append(ArcSortie(depot=d, lines=tuple(flown), path=tuple(path), length_m=length))
    out.sort(key=lambda s: (s.depot, s.lines[0][0]))
    return out
