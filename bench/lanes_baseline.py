"""Bench-only comparison: the hand-written lane planner that ``planner.patrol.arc_routing`` replaced.

Kept here (never imported by ``planner/``) so the OR-Tools model can be measured against it on
instances without a published baseline: ``python -m bench lanes X --baseline``. Unchanged
from its last version in ``planner/patrol/arc_routing.py`` except this paragraph and the
deadhead matrix, which it now imports from ``planner.geo.deadheads`` (the same code, moved there).

Lane patrol as capacitated arc routing: required lines → depot-to-depot sorties.

Every required line must be flown along once (either direction). Between lines
the drone flies straight, except around no-fly polygons (shortest paths through
``planner.geo.transit.TransitGraph``). Each sortie starts and ends at the same depot
and is at most that depot's ``max_sortie_m`` long. Objective: total length.

Method (route first, cluster second, then improve), all deterministic:

1. Lines meeting at a node of required degree 2 are merged into chains (up to a
   length cap), so a road is not cut where nothing branches.
2. All deadheads are one matrix over the chain end points and depots: straight
   when legal, otherwise the shortest path through the obstacles' corners
   (visibility graph + Floyd–Warshall, min-plus in numpy).
3. A giant tour: nearest-neighbour over chain ends (either direction) from a
   depot, improved by 2-opt (segment reversal, which also flips directions)
   and or-opt (move 1–3 chains, reversed or not).
4. The tour is split optimally (dynamic programme over the tour order, each
   sortie from its cheapest depot within capacity), trying several rotations
   of the tour in both orientations.
5. Each sortie is improved by the same 2-opt / or-opt with its depot fixed, and
   chains are relocated between sorties when that shortens the total.
   Steps 3-5 run from up to ``_MAX_STARTS`` giant tours (one per depot); the
   shortest total is kept.

A line that no depot can serve alone within ``max_sortie_m`` is reported as
unserved (``out_of_range``) rather than raising.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from planner.geo.deadheads import Deadheads, deadhead_matrix

__all__ = [
    "ArcDepot",
    "ArcSortie",
    "ArcRoutingResult",
    "UNSERVED_OUT_OF_RANGE",
    "route_lanes",
    "deadhead_matrix",
]

UNSERVED_OUT_OF_RANGE = "out_of_range"
_KEY_DECIMALS = 3  # end points closer than 1 mm are one node
_MAX_LS_PASSES = 50
_SPLIT_ROTATIONS = 12
_MAX_STARTS = 3  # giant tours tried (nearest neighbour from each of the first depots)
_CAP_SLACK_M = 0.25  # keep planned sorties this far below the limit (geometry round-off)
_EPS_DELTA = 1e-6

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


# ------------------------------------------------------------------ sequence local search
class _Seq:
    """Chains in order with directions; S/E are the start/end point ids of each position."""

    def __init__(self, D: np.ndarray, n_tasks: int) -> None:
        self.D = D
        self.n_tasks = n_tasks

    @staticmethod
    def start(t: int, rev: bool) -> int:
        return 2 * t + (1 if rev else 0)

    @staticmethod
    def end(t: int, rev: bool) -> int:
        return 2 * t + (0 if rev else 1)

    def cost(self, depot_pt: int, seq: Sequence[tuple[int, bool]]) -> float:
        """Deadhead length of depot → seq → depot."""
        if not seq:
            return 0.0
        pts = [depot_pt]
        for t, r in seq:
            pts += [self.start(t, r), self.end(t, r)]
        pts.append(depot_pt)
        a = np.asarray(pts[0::2])
        b = np.asarray(pts[1::2])
        return float(self.D[a, b].sum())

    def improve(self, depot_pt: int, seq: list[tuple[int, bool]]) -> list[tuple[int, bool]]:
        """2-opt and or-opt on depot → seq → depot until no move helps (bounded passes)."""
        if not seq:
            return []
        T = np.asarray([t for t, _ in seq], dtype=np.int64)
        R = np.asarray([r for _, r in seq], dtype=bool)
        for _ in range(_MAX_LS_PASSES):
            a, T, R = self._two_opt(depot_pt, T, R)
            b, T, R = self._or_opt(depot_pt, T, R)
            if not (a or b):
                break
        return [(int(t), bool(r)) for t, r in zip(T, R)]

    @staticmethod
    def _arrays(depot_pt: int, T: np.ndarray, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Start / end point ids per position, the depot at position 0 and n + 1."""
        d = np.asarray([depot_pt])
        S = np.concatenate([d, 2 * T + R, d])
        E = np.concatenate([d, 2 * T + 1 - R, d])
        return S, E

    def _two_opt(self, depot_pt: int, T: np.ndarray, R: np.ndarray):
        D = self.D
        n = len(T)
        improved = False
        S, E = self._arrays(depot_pt, T, R)
        i = 1
        while i <= n:
            j = np.arange(i, n + 1)
            delta = D[E[i - 1], E[j]] + D[S[i], S[j + 1]] - D[E[i - 1], S[i]] - D[E[j], S[j + 1]]
            k = int(np.argmin(delta))
            if delta[k] < -_EPS_DELTA:
                jj = int(j[k])
                T = T.copy()
                R = R.copy()
                T[i - 1 : jj] = T[i - 1 : jj][::-1]
                R[i - 1 : jj] = ~R[i - 1 : jj][::-1]
                S, E = self._arrays(depot_pt, T, R)
                improved = True
                continue
            i += 1
        return improved, T, R

    def _or_opt(self, depot_pt: int, T: np.ndarray, R: np.ndarray):
        D = self.D
        improved = False
        S, E = self._arrays(depot_pt, T, R)
        for length in (1, 2, 3):
            i = 1
            while i + length - 1 <= len(T):
                n = len(T)
                first, last = i, i + length - 1
                gain = D[E[first - 1], S[first]] + D[E[last], S[last + 1]] - D[E[first - 1], S[last + 1]]
                # the sequence without the segment: positions 0..first-1 and last+1..n+1
                keep = np.concatenate([np.arange(0, first), np.arange(last + 1, n + 2)])
                pa, pb = keep[:-1], keep[1:]
                base = D[E[pa], S[pb]]
                fwd = D[E[pa], S[first]] + D[E[last], S[pb]] - base
                rev = D[E[pa], E[last]] + D[S[first], S[pb]] - base
                same = pa == first - 1  # putting it back where it was is no move (reversed: a flip)
                fwd = np.where(same, np.inf, fwd)
                rev = np.where(same & (length == 1), np.inf, rev)
                kf, kr = int(np.argmin(fwd)), int(np.argmin(rev))
                best, use_rev, k = (fwd[kf], False, kf) if fwd[kf] <= rev[kr] else (rev[kr], True, kr)
                if best - gain < -_EPS_DELTA:
                    seg_t, seg_r = T[first - 1 : last], R[first - 1 : last]
                    if use_rev:
                        seg_t, seg_r = seg_t[::-1], ~seg_r[::-1]
                    after = int(pa[k])  # insert after position `after` of the original numbering
                    rest_t = np.concatenate([T[: first - 1], T[last:]])
                    rest_r = np.concatenate([R[: first - 1], R[last:]])
                    pos = after if after < first else after - length
                    T = np.concatenate([rest_t[:pos], seg_t, rest_t[pos:]])
                    R = np.concatenate([rest_r[:pos], seg_r, rest_r[pos:]])
                    S, E = self._arrays(depot_pt, T, R)
                    improved = True
                    continue
                i += 1
        return improved, T, R


def _nearest_neighbour_tour(D: np.ndarray, T: int, depot_pt: int) -> list[tuple[int, bool]]:
    """Chains in nearest-neighbour order from a depot, each entered at its nearer end."""
    unvisited = np.ones(T, bool)
    cur = depot_pt
    tour: list[tuple[int, bool]] = []
    for _ in range(T):
        cand = np.where(np.repeat(unvisited, 2), D[cur, : 2 * T], np.inf)
        p = int(np.argmin(cand))
        t, rev = divmod(p, 2)
        tour.append((t, bool(rev)))
        unvisited[t] = False
        cur = _Seq.end(t, bool(rev))
    return tour


# ------------------------------------------------------------------ split
def _split(
    tour: list[tuple[int, bool]],
    D: np.ndarray,
    task_len: np.ndarray,
    depot_pts: list[int],
    caps: list[float],
) -> tuple[float, list[tuple[int, int, int]]] | None:
    """Optimal split of a tour into sorties (DP). Returns (total, [(i, j, depot)]) or None."""
    n = len(tour)
    S = np.asarray([_Seq.start(t, r) for t, r in tour])
    E = np.asarray([_Seq.end(t, r) for t, r in tour])
    L = task_len[[t for t, _ in tour]]
    inner = np.concatenate([[0.0], np.cumsum(L + np.concatenate([D[E[:-1], S[1:]], [0.0]]))])
    # inner[j+1]-inner[i] = tasks i..j plus deadheads i..j (one extra deadhead j→j+1 removed below)
    dh_next = np.concatenate([D[E[:-1], S[1:]], [0.0]])
    dp = np.array(D[np.ix_(depot_pts, S)])  # depot → start, (nd, n)
    de = np.array(D[np.ix_(E, depot_pts)]).T  # end → depot, (nd, n)
    cap = np.asarray(caps)[:, None]
    V = np.full(n + 1, np.inf)
    V[0] = 0.0
    back_i = np.full(n + 1, -1, dtype=np.int64)
    back_d = np.full(n + 1, -1, dtype=np.int64)
    max_cap = float(np.max(cap))
    for i in range(n):
        if not np.isfinite(V[i]):
            continue
        # chains i..j alone already exceed every limit once inner[j] - inner[i] > max_cap
        j_end = max(i + 1, min(n, int(np.searchsorted(inner, inner[i] + max_cap, side="right"))))
        j = np.arange(i, j_end)
        body = inner[j + 1] - inner[i] - dh_next[j]
        cost = dp[:, i : i + 1] + body[None, :] + de[:, j]  # (nd, len j)
        cost = np.where(cost <= cap - _CAP_SLACK_M, cost, np.inf)
        best_d = np.argmin(cost, axis=0)
        best = cost[best_d, np.arange(len(j))]
        cand = V[i] + best
        better = cand < V[j + 1] - 1e-9
        idx = j[better] + 1
        V[idx] = cand[better]
        back_i[idx] = i
        back_d[idx] = best_d[better]
    if not np.isfinite(V[n]):
        return None
    parts = []
    j = n
    while j > 0:
        i, d = int(back_i[j]), int(back_d[j])
        parts.append((i, j - 1, d))
        j = i
    return float(V[n]), parts[::-1]


# ------------------------------------------------------------------ public entry
def route_lanes(
    lines_local: Sequence[Sequence[XY]],
    depots: Sequence[ArcDepot],
    transit=None,
) -> ArcRoutingResult:
    """Plan sorties flying along every line of ``lines_local`` (metres, local frame).

    ``transit`` is a ``planner.geo.transit.TransitGraph`` (or ``None`` when nothing is
    forbidden); deadheads go around its obstacles. Returns the sorties in a fixed
    order (by depot, then by first line), the indices of lines no depot can
    reach within its limit, and the total length.
    """
    if not depots:
        raise ValueError("at least one depot is needed")
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

    # 1. chains (cap: a third of the smallest sortie, so a chain always fits with room to spare)
    chain_cap = max(min(caps) / 3.0, float(lengths[keep].max()))
    chains_local = _merge_chains([lines[k] for k in keep], lengths[keep], chain_cap)
    chains = [[(keep[j], r) for j, r in c] for c in chains_local]
    T = len(chains)
    chain_geom: list[np.ndarray] = []
    for c in chains:
        parts = []
        for k, r in c:
            a = lines[k][::-1] if r else lines[k]
            parts.append(a if not parts else a[1:])
        chain_geom.append(np.vstack(parts))
    chain_len = np.asarray([sum(float(lengths[k]) for k, _ in c) for c in chains])

    # 2. deadhead matrix over chain ends + depots (a subset of the line ends already measured)
    idx = []
    for c in chains:
        (k0, r0), (k1, r1) = c[0], c[-1]
        idx += [2 * k0 + (1 if r0 else 0), 2 * k1 + (0 if r1 else 1)]
    dh = dh0.subset(idx + [2 * nl + d for d in range(len(depots))])
    D = dh.D
    depot_pts = [2 * T + d for d in range(len(depots))]
    seqs = _Seq(D, T)

    def sortie_len(d: int, seq) -> float:
        return seqs.cost(depot_pts[d], seq) + float(sum(chain_len[t] for t, _ in seq))

    # 3-5 from several giant tours (nearest neighbour from each depot, at most _MAX_STARTS):
    # local search, best split over rotations of both orientations, per-sortie search and
    # relocation; the shortest total wins (ties: the earlier start)
    best_plan = None
    for start_depot in range(min(len(depots), _MAX_STARTS)):
        tour = seqs.improve(depot_pts[start_depot], _nearest_neighbour_tour(D, T, depot_pts[start_depot]))
        best_split = None
        rotations = sorted({(r * T) // _SPLIT_ROTATIONS for r in range(_SPLIT_ROTATIONS)})
        backward = [(t, not r) for t, r in reversed(tour)]
        for base in (tour, backward):
            for rot in rotations:
                rt = base[rot:] + base[:rot]
                res = _split(rt, D, chain_len, depot_pts, caps)
                if res is not None and (best_split is None or res[0] < best_split[0] - 1e-9):
                    best_split = (res[0], rt, res[1])
        if best_split is None:  # cannot happen: every chain fits alone
            raise RuntimeError("split failed although every line fits a sortie")
        _, rt, parts = best_split
        sorties = [(d, seqs.improve(depot_pts[d], list(rt[i : j + 1]))) for i, j, d in parts]
        sorties = _relocate(sorties, seqs, depot_pts, caps, sortie_len, chain_len)
        total = sum(sortie_len(d, q) for d, q in sorties)
        if best_plan is None or total < best_plan[0] - 1e-6:
            best_plan = (total, sorties)
    sorties = best_plan[1]

    # 6. geometry
    out: list[ArcSortie] = []
    for d, seq in sorties:
        if not seq:
            continue
        path: list[XY] = []
        prev = depot_pts[d]
        for t, r in seq:
            s_pt = seqs.start(t, r)
            for p in dh.path(prev, s_pt):
                if not path or path[-1] != p:
                    path.append(p)
            g = chain_geom[t][::-1] if r else chain_geom[t]
            for p in map(tuple, g.tolist()):
                if path[-1] != p:
                    path.append(p)
            prev = seqs.end(t, r)
        for p in dh.path(prev, depot_pts[d]):
            if path[-1] != p:
                path.append(p)
        flown = [(k, rr != r) for t, r in seq for k, rr in (chains[t][::-1] if r else chains[t])]
        length = float(np.hypot(*np.diff(np.asarray(path), axis=0).T).sum())
        out.append(ArcSortie(depot=d, lines=tuple(flown), path=tuple(path), length_m=length))
    out.sort(key=lambda s: (s.depot, s.lines[0][0]))
    return ArcRoutingResult(tuple(out), unserved, float(sum(s.length_m for s in out)))


def _relocate(sorties, seqs: _Seq, depot_pts, caps, sortie_len, chain_len: np.ndarray):
    """Move single chains between sorties (best insertion) while the total drops; empties vanish."""
    D = seqs.D
    sorties = [(d, list(s)) for d, s in sorties]
    lengths = [sortie_len(d, s) for d, s in sorties]

    def ends(d: int, seq) -> tuple[np.ndarray, np.ndarray]:
        S = np.asarray([depot_pts[d]] + [seqs.start(x, y) for x, y in seq] + [depot_pts[d]])
        E = np.asarray([depot_pts[d]] + [seqs.end(x, y) for x, y in seq] + [depot_pts[d]])
        return S, E

    for _ in range(_MAX_LS_PASSES):
        moved = False
        for a in range(len(sorties)):
            da, sa = sorties[a]
            i = 0
            while i < len(sa):
                t, r = sa[i]
                Sa, Ea = ends(da, sa)
                # position i + 1 in the depot-padded arrays; removing it joins its neighbours
                gain = (
                    D[Ea[i], Sa[i + 1]] + float(chain_len[t]) + D[Ea[i + 1], Sa[i + 2]] - D[Ea[i], Sa[i + 2]]
                    if len(sa) > 1
                    else lengths[a]
                )
                best = None
                for b in range(len(sorties)):
                    if b == a:
                        continue
                    db, sb = sorties[b]
                    S, E = ends(db, sb)
                    base = D[E[:-1], S[1:]]
                    for rr in (False, True):
                        arr = D[E[:-1], seqs.start(t, rr)] + D[seqs.end(t, rr), S[1:]] - base
                        k = int(np.argmin(arr))
                        add = float(arr[k]) + float(chain_len[t])
                        if lengths[b] + add <= caps[db] - _CAP_SLACK_M and add < gain - _EPS_DELTA:
                            if best is None or add < best[0] - 1e-9:
                                best = (add, b, k, rr)
                if best is None:
                    i += 1
                    continue
                add, b, k, rr = best
                sorties[b][1].insert(k, (t, rr))
                lengths[b] += add
                del sa[i]
                lengths[a] = sortie_len(da, sa) if sa else 0.0
                moved = True
        if not moved:
            break
    return [(d, s) for d, s in sorties if s]
