"""Giant tours cut into load-limited sorties, every service's direction chosen: the memetic search's split.

Prins' split (2004) with two states a unit (entered at its start or its end): exact
for the tour's order, the best sorties and directions under the load limit over every
cut. HGS-CARP (Vidal 2017, ``Individu::generalSplit``) runs it in two forms, and so
does this module:

* **simple** (``Individu::splitSimple``): any number of sorties; one shortest path
  over the tour's positions.
* **limited fleet** (``Individu::splitLF``), when the simple split uses more sorties
  than the fleet: the same arcs, a shortest path with at most ``fleet`` of them (one
  layer of labels a sortie). HGS-CARP's fleet for CARP is ``VEHICULOS + 1``
  (``Params.cpp``: "more vehicles are allowed (here we put one more)") and its whole
  search stays within it: the split, and the local search's routes. A soft split (a
  load ``penalty``) may then have to carry more than its usual half load over the
  limit to fit the fleet; HGS-CARP's split reads up to twice the capacity
  (``Params::borne`` 2.0, widened when no cut fits): here the same, then the whole
  demand in one sortie if that is what it takes.

Pure; plain Python on lists where single entries are read (numpy's per-call cost is
larger than the work), one numpy array operation a layer for the limited fleet.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["CarpData", "Sortie", "orient", "plan_cost", "sortie_cost", "split_tour"]

Sortie = list[tuple[int, bool]]  # (unit, reversed?) in flight order
_BIG = 1 << 60  # no cut reaches this position (yet); two of them still fit an int64


@dataclass(frozen=True)
class CarpData:
    """What the split and the starts read: deadheads over unit ends (2u start, 2u+1 end) and the depot, loads.

    ``depot`` is the depot's row in ``deadhead`` (``2 × units``); service costs are not
    here: under a load limit alone they are the same in every plan.
    """

    deadhead: np.ndarray
    demand: np.ndarray
    capacity: int

    rows: list[list[int]] = field(init=False, repr=False, compare=False)
    demands: list[int] = field(init=False, repr=False, compare=False)
    deadhead_i64: np.ndarray = field(init=False, repr=False, compare=False)
    deadhead_t: np.ndarray = field(init=False, repr=False, compare=False)  # its transpose, rows contiguous
    demand_i64: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:  # plain lists: single entries are read fastest from lists (``orient``)
        object.__setattr__(self, "deadhead_i64", np.ascontiguousarray(self.deadhead, dtype=np.int64))
        object.__setattr__(self, "deadhead_t", np.ascontiguousarray(self.deadhead_i64.T))
        object.__setattr__(self, "demand_i64", np.asarray(self.demand, dtype=np.int64))
        object.__setattr__(self, "rows", self.deadhead_i64.tolist())
        object.__setattr__(self, "demands", [int(d) for d in self.demand])

    @property
    def units(self) -> int:
        return len(self.demand)

    @property
    def depot(self) -> int:
        return 2 * self.units


def sortie_cost(data: CarpData, sortie: Sortie) -> int:
    """Deadheads of one sortie, depot to depot."""
    D, at, total = data.rows, data.depot, 0
    for u, r in sortie:
        total += D[at][2 * u + r]
        at = 2 * u + 1 - r
    return total + D[at][data.depot]


def plan_cost(data: CarpData, sorties: Sequence[Sortie]) -> int:
    return sum(sortie_cost(data, s) for s in sorties)


def orient(data: CarpData, units: Sequence[int]) -> Sortie:
    """The best directions for units flown in this order (a two-state shortest path)."""
    D, dep = data.rows, data.depot  # plain lists (``CarpData.rows``): single entries, read fastest so
    c0, c1 = D[dep][2 * units[0]], D[dep][2 * units[0] + 1]  # ... ending the unit flown forward / reversed
    back: list[tuple[int, int]] = []
    for prev, u in zip(units, units[1:]):
        fwd, rev = D[2 * prev + 1], D[2 * prev]  # from prev flown forward (its end) / reversed (its start)
        a0, b0 = c0 + fwd[2 * u], c1 + rev[2 * u]
        a1, b1 = c0 + fwd[2 * u + 1], c1 + rev[2 * u + 1]
        c0, c1 = min(a0, b0), min(a1, b1)
        back.append((0 if a0 <= b0 else 1, 0 if a1 <= b1 else 1))
    last = units[-1]
    o = 0 if c0 + D[2 * last + 1][dep] <= c1 + D[2 * last][dep] else 1
    dirs = [o]
    for step in reversed(back):
        o = step[o]
        dirs.append(o)
    dirs.reverse()
    return [(int(u), bool(d)) for u, d in zip(units, dirs)]


def _flights(data: CarpData, tour: Sequence[int], limit: int, weight: float) -> np.ndarray:
    """Every sortie of consecutive tour units within ``limit``: ``arcs[i, k]`` the cost of units i..i+k (else ``_BIG``).

    A sortie's cost is its cheapest depot-to-depot flight in that order with free
    directions (two labels a start: the flight so far ending with the last unit flown
    forward / reversed), plus ``weight`` a unit of load over the capacity. One numpy step
    extends every start's sortie by one unit at once (the profile of egl-s2-B: the split
    unit by unit in Python was ~45 % of a memetic lane's CPU).
    """
    n = len(tour)
    D, dep, cap = data.deadhead_i64, data.depot, data.capacity
    t = np.asarray(tour, dtype=np.int64)
    start, end = 2 * t, 2 * t + 1
    load_to = np.concatenate([[0], np.cumsum(data.demand_i64[t])])  # load of units 0..j-1
    # between consecutive units p, u: from p flown forward (its end) / reversed (its start) to u's start / end
    ff, rf = D[end[:-1], start[1:]], D[start[:-1], start[1:]]
    fr, rr = D[end[:-1], end[1:]], D[start[:-1], end[1:]]
    home_f, home_r = D[end, dep], D[start, dep]
    f0, f1 = D[dep, start].copy(), D[dep, end].copy()  # every start i: its sortie so far, last unit forward / reversed
    cols: list[np.ndarray] = []
    for k in range(n):
        m = n - k  # starts whose k-th next unit exists
        load = load_to[k + 1 : n + 1] - load_to[:m]
        reach = load <= limit  # (loads only grow with k: a sortie that stopped fitting stays stopped)
        if k == 0:
            reach[:] = True  # a unit alone always flies (no demand is above the capacity)
        elif not reach.any():
            break
        close = np.minimum(f0[:m] + home_f[k:], f1[:m] + home_r[k:])
        if weight > 0:
            close = close + np.ceil(weight * np.maximum(load - cap, 0)).astype(np.int64)
        col = np.full(n, _BIG, dtype=np.int64)
        col[:m] = np.where(reach, close, _BIG)
        cols.append(col)
        if m > 1:
            f0, f1 = (np.minimum(f0[: m - 1] + ff[k:], f1[: m - 1] + rf[k:]),
                      np.minimum(f0[: m - 1] + fr[k:], f1[: m - 1] + rr[k:]))
    return np.stack(cols, axis=1)


def _simple(arcs: np.ndarray) -> tuple[int, list[int]]:
    """The cheapest path over the arcs, any number of them: (cost, cut positions) — Prins' split."""
    n = len(arcs)
    V = [0] + [_BIG] * n
    pred = [0] * (n + 1)
    for i, row in enumerate(arcs.tolist()):
        vi = V[i]
        for k, c in enumerate(row, start=i + 1):
            if c >= _BIG:
                break
            if vi + c < V[k]:
                V[k], pred[k] = vi + c, i
    cuts, j = [n], n
    while j > 0:
        j = pred[j]
        cuts.append(j)
    return V[n], cuts[::-1]


def _limited(arcs: np.ndarray, fleet: int) -> tuple[int, list[int]] | None:
    """The cheapest path over the arcs with at most ``fleet`` of them: (cost, cut positions), None if none.

    Layer k holds the best cost of reaching each position with at most k sorties
    (HGS-CARP's ``potentiels[cam]``; staying put is an empty sortie).
    """
    n, K = arcs.shape
    C = np.full((n + 1, n + 1), _BIG, dtype=np.int64)
    i, k = np.nonzero(arcs < _BIG)
    C[i, i + 1 + k] = arcs[i, k]
    V = np.full(n + 1, _BIG, dtype=np.int64)
    V[0] = 0
    cols = np.arange(n + 1)
    layers: list[np.ndarray] = []
    for _ in range(fleet):
        M = np.minimum(V[:, None] + C, _BIG)
        arg = M.argmin(axis=0)
        best = M[arg, cols]
        moved = best < V
        layers.append(np.where(moved, arg, -1))
        if not moved.any():
            break
        V = np.where(moved, best, V)
    if V[n] >= _BIG:
        return None
    cuts, j = [n], n
    for pred in reversed(layers):
        if j == 0:
            break
        if pred[j] >= 0:
            j = int(pred[j])
            cuts.append(j)
    return int(V[n]), cuts[::-1]


def split_tour(data: CarpData, tour: Sequence[int], penalty: float | None = None,
               fleet: int | None = None) -> tuple[int, list[Sortie]]:
    """The giant tour cut into sorties under the load limit, each unit's direction chosen: exact for the order.

    ``penalty``: HGS's soft split — a sortie may carry up to half a load more, each unit
    over costing ``penalty`` (the local search then repairs it); the cost returned is
    then the penalised one. ``fleet``: at most this many sorties (module docstring); a
    hard split (no ``penalty``) that cannot fit them returns the simple split's sorties
    (more than ``fleet``: the caller's to refuse).
    """
    n = len(tour)
    if n == 0:
        return 0, []
    cap = data.capacity
    limit = cap if penalty is None else cap + cap // 2
    weight = 0.0 if penalty is None else float(penalty)
    arcs = _flights(data, tour, limit, weight)
    cost, cuts = _simple(arcs)
    if fleet is not None and len(cuts) - 1 > fleet:
        widths = [limit] if penalty is None else [limit, 2 * cap, sum(data.demands)]  # HGS-CARP's borne 2, then all
        for k, width in enumerate(widths):
            if k > 0:
                arcs = _flights(data, tour, width, weight)
            found = _limited(arcs, fleet)
            if found is not None:
                cost, cuts = found
                break
    sorties = [orient(data, list(tour[i:j])) for i, j in zip(cuts, cuts[1:])]
    return cost, sorties
