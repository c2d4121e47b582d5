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
3. The chains, their deadheads and each dock's sortie limit are one ``ArcProblem``
   (``planner.patrol.arc_search``, the arc-routing model the literature's CARP
   instances are planned with too): each chain a pair of directed nodes in one
   disjunction, the sortie limit the length dimension, searched under the
   ``budget`` (``planner.routing.budget``: a deadline, or a fixed amount of work) by
   OR-Tools' iterated local search or, on a model the budget buys too few solutions
   for, by PyVRP with OR-Tools' proof and polish. ``ArcRoutingResult.engine`` says
   which, ``work`` and ``stopped_by`` how much it searched and why it stopped.
   ``lanes`` independent searches (seed / renumbering k for lane k) may run side by
   side; the best is kept.

A line that no depot can serve alone within ``max_sortie_m`` is reported as
unserved (``out_of_range``) rather than raising.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from planner.geo.deadheads import Deadheads
from planner.patrol.arc_search import (
    ENGINE,
    ENGINE_PYVRP,
    ENGINE_PYVRP_START,
    ENGINE_START,
    ArcProblem,
    SortieLimit,
    solve_arcs,
)
from planner.patrol.line_tour import MM, line_tour_split
from planner.routing.budget import Budget

__all__ = [
    "ArcDepot",
    "ArcSortie",
    "ArcRoutingResult",
    "ENGINE",
    "ENGINE_PYVRP",
    "ENGINE_PYVRP_START",
    "ENGINE_TOUR",
    "UNSERVED_OUT_OF_RANGE",
    "route_lanes",
]

UNSERVED_OUT_OF_RANGE = "out_of_range"
_KEY_DECIMALS = 3  # end points closer than 1 mm are one node
_CAP_SLACK_M = 0.25  # keep planned sorties this far below the limit (geometry round-off)
_CHAIN_FRACTION = 0.1  # chains merged through degree-2 nodes up to this share of a sortie
ENGINE_TOUR = ENGINE_START  # the tour-and-split start itself, when no search beat it
DEFAULT_BUDGET_S = 4.0

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


# ------------------------------------------------------------------ public entry
def route_lanes(
    lines_local: Sequence[Sequence[XY]],
    depots: Sequence[ArcDepot],
    transit=None,
    *,
    budget: Budget | float = DEFAULT_BUDGET_S,
    lanes: int = 1,
) -> ArcRoutingResult:
    """Plan sorties flying along every line of ``lines_local`` (metres, local frame).

    ``transit`` is a ``planner.geo.transit.TransitGraph`` (or ``None`` when nothing is
    forbidden); deadheads go around its obstacles. Returns the sorties in a fixed
    order (by depot, then by first line), the indices of lines no depot can
    reach within its limit, and the total length. ``budget`` is a ``Budget`` or
    seconds of work (reproducible). ``lanes`` independent searches
    of the whole budget each (the best kept), side by side on the budget's runner
    where the shell gives one; the sorties depend on ``lanes``, never on the runner.
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
    caps_mm = [int(math.floor((c - _CAP_SLACK_M) * MM)) for c in caps]
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
    problem = ArcProblem(dh.D, chain_len, tuple(SortieLimit(length=c) for c in caps), scale=MM, slack=_CAP_SLACK_M)
    plan = solve_arcs(problem, budget, lanes, _chain_sorties(line_plan, chains))
    sorties, engine, work, stopped_by = plan.sorties, plan.engine, plan.work, plan.stopped_by

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
