"""Surveys flown by several sorties or drones: split the sweeps, spread them, finish soonest.

A survey's sweeps come from ``planner.survey.coverage.plan_coverage`` in flight order.
Each sortie flies a contiguous run of them: dock → (transit) → first sweep → …
→ last sweep → (transit) → dock, within the drone's usable energy. The runs are
spread over the drones so the job ends soonest (makespan): each drone takes one
contiguous block of the flight order and splits it into the fewest-time
sorties (dynamic programme); the block boundaries come from a binary search on
the makespan with a greedy fill, over every order of the drones (up to
``MAX_PERMUTED_DRONES`` drones, else docks along the sweep order).

Anytime under a deadline (``expired``): each order's bisection is a complete, feasible
split; the other orders can only shorten the makespan, so they are tried only until
``expired()`` says the plan's deadline has come (``SurveyAssignment.cut``). The first
order's bisection always runs to its end: cut after a few steps, its makespan was twice
the best (8 043 → 16 264 s on a 157-piece survey with four drones), which pushed the plan's
window into hours no drone could fly. With four drones the 24 orders were 0.4-0.5 CPU s of
that survey's plan, run after the coverage deadline; one order is ~0.03 s. Without
``expired`` the work and the result are exactly those of before.

Sweeps longer than a quarter of the longest-range drone's reach are cut into
equal pieces first, so one sweep never makes a survey impossible; a piece no
drone can fly to and back is unserved (reported, not raised).

Everything here is plain numbers: a drone is a ``SurveyDrone`` with its dock
position and flight rates; distances dock ↔ sweep ends come from a callable
(straight or around no-fly zones, the caller decides).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "SurveyDrone",
    "SurveyPiece",
    "SurveySortie",
    "SurveyAssignment",
    "MAX_PERMUTED_DRONES",
    "split_long_sweeps",
    "connections_from_path",
    "assign_survey",
]

XY = tuple[float, float]
MAX_PERMUTED_DRONES = 4
_BISECT_STEPS = 40
UNSERVED_OUT_OF_RANGE = "out_of_range"


@dataclass(frozen=True)
class SurveyDrone:
    """A drone as the survey split sees it: where it lives and what a metre costs.

    ``work_*`` apply along sweeps and their connections, ``transit_*`` to and
    from the dock; ``fixed_*`` are per sortie (take-off, climb, landing);
    ``swap_s`` is the ground time between two sorties of this drone.
    """

    dock_xy: XY
    usable_wh: float
    transit_wh_per_m: float
    work_wh_per_m: float
    transit_s_per_m: float
    work_s_per_m: float
    fixed_wh: float = 0.0
    fixed_s: float = 0.0
    swap_s: float = 0.0


@dataclass(frozen=True)
class SurveyPiece:
    """A sweep (or a piece of one) in flight order, and the connection flown after it."""

    start: XY
    end: XY
    sweep_index: int  # which sweep of the coverage result it belongs to
    length_m: float
    gap_after_m: float  # connection to the next piece (0 for the last)


@dataclass(frozen=True)
class SurveySortie:
    drone: int  # index into the drones given
    first: int  # piece indices, inclusive
    last: int
    start_offset_s: float  # from the job's start
    duration_s: float
    energy_wh: float
    distance_m: float


@dataclass(frozen=True)
class SurveyAssignment:
    sorties: tuple[SurveySortie, ...]  # by drone, then time
    unserved: tuple[int, ...]  # piece indices
    makespan_s: float
    cut: bool = False  # the deadline stopped the makespan search early (the split is complete and feasible)


def connections_from_path(sweeps: Sequence[tuple[XY, XY]], path: Sequence[XY]) -> list[list[XY]]:
    """The connection polylines between consecutive sweeps, cut out of the coverage path.

    The path contains every sweep end point as a vertex in flight order; the
    connection after sweep i runs from its end to the next sweep's start.
    """
    pts = np.asarray(path, dtype=float)
    out: list[list[XY]] = []
    pos = 0
    for k in range(len(sweeps) - 1):
        end = np.asarray(sweeps[k][1], float)
        start = np.asarray(sweeps[k + 1][0], float)
        i = pos + int(np.argmin(np.hypot(*(pts[pos:] - end).T)))
        j = i + int(np.argmin(np.hypot(*(pts[i:] - start).T)))
        seg = [tuple(map(float, p)) for p in pts[i : j + 1]]
        if len(seg) < 2:
            seg = [tuple(map(float, end)), tuple(map(float, start))]
        out.append(seg)
        pos = j
    return out


def _polylen(p: Sequence[XY]) -> float:
    a = np.asarray(p, dtype=float)
    return float(np.hypot(*np.diff(a, axis=0).T).sum()) if len(a) > 1 else 0.0


def split_long_sweeps(
    sweeps: Sequence[tuple[XY, XY]], connections: Sequence[Sequence[XY]], max_piece_m: float
) -> list[SurveyPiece]:
    """Pieces in flight order: each sweep cut into equal parts no longer than ``max_piece_m``."""
    pieces: list[SurveyPiece] = []
    for k, (a, b) in enumerate(sweeps):
        length = math.dist(a, b)
        n = max(1, math.ceil(length / max_piece_m)) if max_piece_m > 0 else 1
        for q in range(n):
            t0, t1 = q / n, (q + 1) / n
            p0 = (a[0] + (b[0] - a[0]) * t0, a[1] + (b[1] - a[1]) * t0)
            p1 = (a[0] + (b[0] - a[0]) * t1, a[1] + (b[1] - a[1]) * t1)
            gap = 0.0 if q < n - 1 else (_polylen(connections[k]) if k < len(connections) else 0.0)
            pieces.append(SurveyPiece(p0, p1, k, length / n, gap))
    return pieces


class _Costs:
    """Per drone: the energy/time of a sortie over pieces i..j, vectorised over j."""

    def __init__(self, pieces: Sequence[SurveyPiece], drones: Sequence[SurveyDrone], transit_m: Callable[[XY, XY], float]):
        self.n = len(pieces)
        work = np.asarray([p.length_m for p in pieces])
        gaps = np.asarray([p.gap_after_m for p in pieces])
        # along[j+1] - along[i] - gaps[j] = sweeps i..j plus the connections between them
        self.along = np.concatenate([[0.0], np.cumsum(work + gaps)])
        self.gaps = gaps
        self.drones = drones
        self.out_m = np.asarray([[transit_m(d.dock_xy, p.start) for p in pieces] for d in drones]).reshape(len(drones), -1)
        self.back_m = np.asarray([[transit_m(p.end, d.dock_xy) for p in pieces] for d in drones]).reshape(len(drones), -1)

    def sortie(self, d: int, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(energy_wh, duration_s, distance_m) of sorties i..j for every j >= i."""
        dr = self.drones[d]
        j = np.arange(i, self.n)
        work = self.along[j + 1] - self.along[i] - self.gaps[j]
        transit = self.out_m[d, i] + self.back_m[d, j]
        duration = dr.fixed_s + dr.transit_s_per_m * transit + dr.work_s_per_m * work
        return self._energy_wh(d, transit, work), duration, transit + work

    def alone_wh(self, d: int) -> np.ndarray:
        """energy_wh of the sortie of drone d that flies one piece, for every piece (``sortie(d, i)[0][0]`` for
        every i, without a call a piece)."""
        i = np.arange(self.n)
        return self._energy_wh(d, self.out_m[d] + self.back_m[d], self.along[i + 1] - self.along[i] - self.gaps)

    def _energy_wh(self, d: int, transit_m: np.ndarray, work_m: np.ndarray) -> np.ndarray:
        dr = self.drones[d]
        return dr.fixed_wh + dr.transit_wh_per_m * transit_m + dr.work_wh_per_m * work_m


def _splits_from(costs: _Costs, d: int, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Fewest-time splits of pieces i..j into sorties of drone d, for every j at once.

    Returns (best, back): ``best[m]`` is the time of pieces i..i+m-1 (swap time
    between sorties included, ``inf`` when impossible), ``back[m]`` where its last
    sortie starts (relative to i).
    """
    dr = costs.drones[d]
    n = costs.n - i
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    back = np.full(n + 1, -1, dtype=np.int64)
    for s in range(n):
        if not math.isfinite(best[s]):
            continue
        e, t, _ = costs.sortie(d, i + s)
        ok = e <= dr.usable_wh
        if not ok.any():
            continue
        cand = np.where(ok, best[s] + t + (dr.swap_s if s > 0 else 0.0), np.inf)
        seg = best[s + 1 :]
        upd = cand < seg - 1e-9
        best[s + 1 :] = np.where(upd, cand, seg)
        back[s + 1 :] = np.where(upd, s, back[s + 1 :])
    return best, back


def assign_survey(
    pieces: Sequence[SurveyPiece],
    drones: Sequence[SurveyDrone],
    transit_m: Callable[[XY, XY], float],
    expired: Callable[[], bool] | None = None,
) -> SurveyAssignment:
    """Spread the pieces over the drones in contiguous blocks, minimising the makespan.

    ``expired`` (the plan's deadline; module docstring): once it says so, the search for a
    shorter makespan stops with the best complete split found (``cut``); never before the
    first order's.
    """
    if not drones or not pieces:
        return SurveyAssignment((), tuple(range(len(pieces))), 0.0)
    costs = _Costs(pieces, drones, transit_m)
    # pieces no drone can fly alone are unserved; the rest keep their order
    alone_ok = np.zeros(len(pieces), bool)
    for d, dr in enumerate(drones):
        alone_ok |= costs.alone_wh(d) <= dr.usable_wh
    keep = [i for i in range(len(pieces)) if alone_ok[i]]
    unserved = tuple(i for i in range(len(pieces)) if not alone_ok[i])
    if not keep:
        return SurveyAssignment((), unserved, 0.0)
    if len(keep) != len(pieces):
        sub = [pieces[i] for i in keep]
        res = assign_survey(sub, drones, transit_m, expired)
        return SurveyAssignment(
            tuple(
                SurveySortie(s.drone, keep[s.first], keep[s.last], s.start_offset_s, s.duration_s, s.energy_wh, s.distance_m)
                for s in res.sorties
            ),
            unserved + tuple(keep[i] for i in res.unserved),
            res.makespan_s,
            res.cut,
        )

    n = len(pieces)
    cache: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

    def block(d: int, i: int, j: int) -> tuple[float, list[tuple[int, int]]] | None:
        """Time and sorties (piece ranges) of drone d flying pieces i..j, or None."""
        if (d, i) not in cache:
            cache[(d, i)] = _splits_from(costs, d, i)
        best, back = cache[(d, i)]
        m = j - i + 1
        if not math.isfinite(best[m]):
            return None
        parts = []
        while m > 0:
            s = int(back[m])
            parts.append((i + s, i + m - 1))
            m = s
        return float(best[j - i + 1]), parts[::-1]

    def fill(order: Sequence[int], limit: float) -> list[tuple[int, int, int]] | None:
        """Greedy: each drone in order takes the longest prefix it finishes within ``limit``."""
        i, out = 0, []
        for d in order:
            if i >= n:
                break
            lo, hi, best_j = i, n - 1, -1
            while lo <= hi:  # block time grows with j: bisect the last j within the limit
                mid = (lo + hi) // 2
                b = block(d, i, mid)
                if b is not None and b[0] <= limit:
                    best_j, lo = mid, mid + 1
                else:
                    hi = mid - 1
            if best_j >= i:
                out.append((d, i, best_j))
                i = best_j + 1
        return out if i >= n else None

    if len(drones) <= MAX_PERMUTED_DRONES:
        orders = list(itertools.permutations(range(len(drones))))
    else:  # docks in the order the sweeps pass them
        first = np.asarray(pieces[0].start)
        orders = [tuple(sorted(range(len(drones)), key=lambda d: (math.dist(drones[d].dock_xy, first), d)))]

    def out_of_time() -> bool:
        return expired is not None and expired()

    best: tuple[float, list[tuple[int, int, int]]] | None = None
    cut = False
    for order in orders:
        if best is not None and out_of_time():  # the orders not tried yet could only shorten it
            cut = True
            break
        single = None
        for d in order:  # upper bound: the first drone able to do everything alone, or a generous guess
            b = block(d, 0, n - 1)
            if b is not None:
                single = b[0] if single is None else min(single, b[0])
        hi = single if single is not None else 1e9
        lo = 0.0
        plan = fill(order, hi)
        if plan is None:
            continue
        for _ in range(_BISECT_STEPS):  # never cut: one order's bisection is cheap, a cut one can double the makespan
            mid = (lo + hi) / 2
            p = fill(order, mid)
            if p is None:
                lo = mid
            else:
                hi, plan = mid, p
            if hi - lo < 1.0:
                break
        span = max(block(d, i, j)[0] for d, i, j in plan)  # type: ignore[index]
        if best is None or span < best[0] - 1e-9:
            best = (span, plan)
    if best is None:  # every piece fits some drone alone, so one drone per piece run always works
        raise RuntimeError("survey assignment found no split although every piece fits a sortie")
    span, plan = best
    sorties: list[SurveySortie] = []
    for d, i, j in sorted(plan):
        t = 0.0
        _, parts = block(d, i, j)  # type: ignore[misc]
        for k, (a, b) in enumerate(parts):
            e, dur, dist = costs.sortie(d, a)
            sorties.append(
                SurveySortie(d, a, b, t, float(dur[b - a]), float(e[b - a]), float(dist[b - a]))
            )
            t += float(dur[b - a]) + drones[d].swap_s
    return SurveyAssignment(tuple(sorties), (), span, cut)
