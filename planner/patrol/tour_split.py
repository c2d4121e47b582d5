"""The exact split of a closed tour into depot sorties, at its best rotation (route first, cluster second).

A giant tour (the rural postman's Euler circuit over the lane chains) is cut into
consecutive runs, each flown as one sortie from the depot that makes it cheapest
within that depot's limit (Beasley 1983). On a closed tour the cut points are free:
the split is optimal over every rotation, not only from position 0, because an
early tour split "a metre inside each limit" and from 16 sampled rotations needed
4 sorties where the baseline's split of its own tour needs 3 (hel_paths_fresh).

Exact in the routing model's own arithmetic: the costs are the model's integer arc
costs (millimetres rounded up) and the limits its vehicles' integer capacities, so
every sortie the split keeps loads into the model (``routes_fit``), and no sortie the
model would accept is refused.

Which rotations: every sortie of any split holds a run whose tour length ("body": the
arcs between its first and last visit) is at most the largest limit. So the sortie
that covers position ``a`` starts no earlier than ``lo(a)``, the first position from
which the body up to ``a`` is within that limit, and some optimal split of the closed
tour has a cut in ``[lo(a), a]``. The window is taken at the ``a`` where it is
narrowest and every rotation in it is split at once (one dynamic programme per
position, vectorised over the rotations): the best of them is the optimum over all
rotations. Pure and deterministic (ties: the earlier rotation, the earlier cut, the
lower depot).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["TourSplit", "split_closed_tour"]


@dataclass(frozen=True)
class TourSplit:
    """The optimal split: total model cost, and each sortie as (depot, tour nodes in flight order)."""

    cost: int
    sorties: tuple[tuple[int, tuple[int, ...]], ...]
    every_rotation: bool = True  # False: ``max_work`` let only evenly spaced rotations of the window be split


def _rotation_window(acc: np.ndarray, n: int, max_cap: int) -> tuple[int, int]:
    """(first, count) of the rotations that hold an optimal cut: the narrowest ``[lo(a), a]`` (module docstring)."""
    a = np.arange(n, 2 * n)
    # lo(a): the first s >= a - n + 1 with acc[a] - acc[s] <= max_cap
    lo = np.searchsorted(acc, acc[a] - max_cap, side="left")
    lo = np.maximum(lo, a - n + 1)
    width = a - lo + 1
    k = int(np.argmin(width))
    return int(lo[k]), int(width[k])


def _sortie_costs(s: int, last: int, acc: np.ndarray, out: np.ndarray, back: np.ndarray, cap: np.ndarray,
                  inf: int) -> tuple[np.ndarray, np.ndarray]:
    """Cost of the sorties from position ``s`` to each end ``s .. last`` (``inf`` if no depot fits), and their depot."""
    e = np.arange(s, last + 1)
    each = out[:, s][:, None] + (acc[e] - acc[s])[None, :] + back[:, e]  # (depot, end)
    each = np.where(each <= cap[:, None], each, inf)
    d = np.argmin(each, axis=0)
    return each[d, np.arange(len(e))], d


def _best_costs(rot: np.ndarray, first: int, n: int, reach: np.ndarray, acc, out, back, cap, inf: int) -> np.ndarray:
    """The optimal split's cost from each rotation ``first + rot[k]`` (values only: one row per rotation)."""
    count, span = len(rot), int(rot[-1]) + n
    best = np.full((count, span + 1), inf, dtype=np.int64)
    best[np.arange(count), rot] = 0
    for i in range(span):
        # the rotations whose tour holds position first + i: a contiguous run of rows
        k0, k1 = int(np.searchsorted(rot + n, i, side="right")), int(np.searchsorted(rot, i, side="right"))
        if k0 >= k1:
            continue
        last = min(int(reach[first + i]), first + span - 1)
        w, _ = _sortie_costs(first + i, last, acc, out, back, cap, inf)
        view = best[k0:k1, i + 1 : i + 1 + len(w)]
        np.minimum(view, best[k0:k1, i : i + 1] + w[None, :], out=view)
    return best[np.arange(count), rot + n]


def split_closed_tour(nodes: Sequence[int], cost: np.ndarray, capacities: Sequence[int], max_work: int | None = None
                      ) -> TourSplit | None:
    """The cheapest split of the closed tour ``nodes`` into sorties, over every rotation; None if none fits.

    ``cost``: the model's integer arc costs, depots ``0 .. len(capacities) - 1`` first;
    a sortie ``d → nodes[s] → … → nodes[e] → d`` costs its arcs and fits when that sum is
    at most ``capacities[d]`` (the model's capacity dimension counts the same arcs).
    ``max_work``: at most this many (rotation, sortie) pairs are weighed — the rotations
    of the window evenly spaced when all of them would cost more (None: every rotation).
    """
    n, nd = len(nodes), len(capacities)
    if n == 0:
        return TourSplit(0, ())
    cap = np.asarray(capacities, dtype=np.int64)
    q = np.asarray(list(nodes) * 3, dtype=np.int64)  # the tour three times over: any rotation's run is inside
    arc = cost[q[:-1], q[1:]].astype(np.int64)
    acc = np.concatenate([[0], np.cumsum(arc)])  # acc[e] - acc[s]: the arcs from position s to position e
    out = cost[:nd][:, q].astype(np.int64)  # depot → node at each position
    back = cost[q][:, :nd].astype(np.int64).T  # node at each position → depot
    first, width = _rotation_window(acc, n, int(cap.max()))
    # last position a sortie starting at s may reach: its body alone is within the largest limit
    reach = np.minimum(np.searchsorted(acc, acc + cap.max(), side="right") - 1, np.arange(len(acc)) + n - 1)
    per_rotation = int((reach[first : first + n] - np.arange(first, first + n) + 1).sum())
    count = width if max_work is None else max(1, min(width, max_work // max(per_rotation, 1)))
    rot = np.asarray(sorted({(i * width) // count for i in range(count)}), dtype=np.int64)  # offsets in the window
    inf = int(np.iinfo(np.int64).max // 4)
    ends = _best_costs(rot, first, n, reach, acc, out, back, cap, inf)
    k = int(np.argmin(ends))
    if ends[k] >= inf:
        return None
    # the winning rotation again, keeping each position's best cut and depot
    start = first + int(rot[k])
    best = np.full(n + 1, inf, dtype=np.int64)
    prev = np.full(n + 1, -1, dtype=np.int64)
    depot = np.full(n + 1, -1, dtype=np.int64)
    best[0] = 0
    for i in range(n):
        if best[i] >= inf:
            continue
        w, d = _sortie_costs(start + i, min(int(reach[start + i]), start + n - 1), acc, out, back, cap, inf)
        cand = best[i] + w
        cols = np.arange(i + 1, i + 1 + len(w))
        better = cand < best[cols]
        best[cols] = np.where(better, cand, best[cols])
        prev[cols] = np.where(better, i, prev[cols])
        depot[cols] = np.where(better, d, depot[cols])
    assert best[n] == ends[k]
    sorties, j = [], n
    while j > 0:
        i = int(prev[j])
        sorties.append((int(depot[j]), tuple(int(x) for x in q[start + i : start + j])))
        j = i
    return TourSplit(int(best[n]), tuple(sorties[::-1]), len(rot) == width)
