"""Local search whose moves re-choose every service direction of the routes they touch (HGS-CARP's evaluation).

PyVRP's local search, on oriented services (a unit is a group of its two directions),
keeps the direction of every service a move does not pick: relocating one service into
a route is priced with that route's other services as they are flown. Vidal (2017),
"Node, edge, arc routing and turn penalties: multiple problems — one neighborhood
extension", prices a move with the best directions of the whole resulting route:
HGS-CARP's ``SeqData`` keeps, for every prefix and suffix of a route, the least cost
for each direction of its end service (``bestCost00/01/10/11``), and a move is the
concatenation of a prefix, the moved services and a suffix, each joined over their two
directions — a DP over the services, O(1) a move. Where routes are packed to their last
unit of load (gdb23's optimum: 10 routes, 266 of 270) a newcomer often fits only if the
services around it turn to meet it: with these moves the memetic lane reaches gdb23's
233, without them it ended at 235 in every configuration tried (docs/carp.md).

Here the same on ``CarpData`` (deadheads over unit ends, a load limit; service costs
are the same in every plan and left out), every move of a kind priced at once in numpy:

* each gap of a route (between two services, or at a depot end) has its left side
  ``(cost to here, node)`` for each direction of the service before it, and its right
  side ``(cost from here to the depot, node)`` for each direction of the one after;
* **relocate** one service into a gap of another route, **swap** two services of two
  routes, **2-opt*** (a route's head with another's tail) and, the deadheads symmetric,
  **2-opt* reversed** (a head with another's head reversed, tail with tail) — all with
  the best directions of both new routes.

The best improving move is made, with every other improving one on routes no chosen move touches (ties: the
scan's order, so a run repeats), then every prefix and suffix again, up to ``rounds`` times. Pure; no randomness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from planner.patrol.carp_split import CarpData, Sortie, orient

__all__ = ["improve_oriented"]

HARD = 1e12  # the load penalty that keeps plans within the limit (no move's saving comes near it)
_EPS = 1e-6  # a move saves more than this (penalised costs are floats)


@dataclass
class _Gaps:
    """Every gap of the plan: its route, the load before it, and both sides' costs and nodes by direction."""

    route: np.ndarray  # (G,) the gap's route
    pre: np.ndarray  # (G,) load of the route's services before the gap
    left: np.ndarray  # (G, 2) least cost depot -> the service before the gap, flown forward / reversed (0 at the depot)
    left_node: np.ndarray  # (G, 2) where that service ends, by its direction (the depot at the start)
    right: np.ndarray  # (G, 2) least cost from the service after the gap, entered forward / reversed, to the depot
    right_node: np.ndarray  # (G, 2) where that service is entered, by its direction (the depot at the end)
    before: np.ndarray  # (U,) each unit's gap before it (the one after is +1)
    cost: np.ndarray  # (R,) each route's least cost
    load: np.ndarray  # (R,) each route's load


def _gaps(data: CarpData, routes: Sequence[Sequence[int]]) -> _Gaps:
    """Prefix and suffix least costs of every route (two directions a service: HGS-CARP's ``SeqData``)."""
    D, dep, dem = data.rows, data.depot, data.demands
    route, pre, left, lnode, right, rnode = [], [], [], [], [], []
    before = [0] * data.units
    cost, load = [], []
    for k, units in enumerate(routes):
        n = len(units)
        P: list[tuple[int, int]] = []  # P[j][b]: depot -> units[0..j], units[j] flown b (0: entered at 2u, left at 2u+1)
        for j, u in enumerate(units):
            if j == 0:
                P.append((D[dep][2 * u], D[dep][2 * u + 1]))
            else:
                p, (c0, c1) = units[j - 1], P[-1]
                fwd, rev = D[2 * p + 1], D[2 * p]
                P.append((min(c0 + fwd[2 * u], c1 + rev[2 * u]), min(c0 + fwd[2 * u + 1], c1 + rev[2 * u + 1])))
        S: list[tuple[int, int]] = [(0, 0)] * n  # S[j][a]: units[j] entered a (0: at 2u) .. the depot
        for j in range(n - 1, -1, -1):
            u = units[j]
            if j == n - 1:
                S[j] = (D[2 * u + 1][dep], D[2 * u][dep])
            else:
                v, (c0, c1) = units[j + 1], S[j + 1]
                fwd, rev = D[2 * u + 1], D[2 * u]
                S[j] = (min(fwd[2 * v] + c0, fwd[2 * v + 1] + c1), min(rev[2 * v] + c0, rev[2 * v + 1] + c1))
        running = 0
        for j in range(n + 1):
            route.append(k)
            pre.append(running)
            if j == 0:
                left.append((0, 0))
                lnode.append((dep, dep))
            else:
                p = units[j - 1]
                left.append(P[j - 1])
                lnode.append((2 * p + 1, 2 * p))
            if j == n:
                right.append((0, 0))
                rnode.append((dep, dep))
            else:
                u = units[j]
                before[u] = len(route) - 1
                right.append(S[j])
                rnode.append((2 * u, 2 * u + 1))
                running += dem[u]
        cost.append(min(P[-1][0] + D[2 * units[-1] + 1][dep], P[-1][1] + D[2 * units[-1]][dep]) if n else 0)
        load.append(running)
    i64 = np.int64
    return _Gaps(np.asarray(route), np.asarray(pre, dtype=i64), np.asarray(left, dtype=i64),
                 np.asarray(lnode), np.asarray(right, dtype=i64), np.asarray(rnode), np.asarray(before),
                 np.asarray(cost, dtype=i64), np.asarray(load, dtype=i64))


def _join(D: np.ndarray, lc: np.ndarray, ln: np.ndarray, rc: np.ndarray, rn: np.ndarray) -> np.ndarray:
    """Least cost of a left side (rows) joined to a right side (columns), over both directions of each.

    (Four row-then-column takes: numpy's broadcast fancy indexing over all four directions
    at once was 5× slower on egl-s4-A.)
    """
    out = None
    for b in (0, 1):
        rows = D[ln[:, b]]
        for a in (0, 1):
            c = lc[:, b, None] + rows[:, rn[:, a]] + rc[None, :, a]
            out = c if out is None else np.minimum(out, c)
    assert out is not None
    return out


def _to_units(D: np.ndarray, node: np.ndarray, side: np.ndarray) -> np.ndarray:
    """``(G, U, 2)``: a side's cost plus the deadhead from its node (by direction) to each unit end, the better direction."""
    U2 = D.shape[0] - 1
    a = side[:, 0, None] + D[node[:, 0], :U2]
    b = side[:, 1, None] + D[node[:, 1], :U2]
    return np.minimum(a, b).reshape(len(node), U2 // 2, 2)


Move = tuple[float, int, str, int, int]  # (delta, its rank in the scan, kind, x, y)


def _best_moves(data: CarpData, g: _Gaps, symmetric: bool, penalty: float) -> list[Move]:
    """Improving moves on disjoint pairs of routes, the best first (load over the limit at ``penalty`` a unit).

    A move's delta depends on its two routes alone, so moves on routes no other chosen
    move touches are made together from one evaluation (egl-s4-A: ~18 moves a local
    search, each evaluation of every move ~10 ms).
    """
    D, cap = data.deadhead_i64, data.capacity
    dem = data.demand_i64

    def over(load: np.ndarray) -> np.ndarray:
        return penalty * np.maximum(load - cap, 0)

    # A[g, u, c]: the left side of gap g, then unit u entered c (at 2u + c); B[g, u, c]: unit u flown c (so
    # left at 2u + 1 - c), then gap g's right side
    A = _to_units(D, g.left_node, g.left)
    B = _to_units(data.deadhead_t, g.right_node, g.right)[:, :, ::-1]
    J = _join(D, g.left, g.left_node, g.right, g.right_node)  # (G, G): left of one gap, right of another
    value = g.cost + over(g.load)  # (R,) each route as it is
    ru = g.route[g.before]  # (U,) each unit's route
    lu = g.load[ru]
    after = g.before + 1
    moves: list[Move] = []
    pairs: list[tuple[int, int]] = []

    def best(delta: np.ndarray, same: np.ndarray, kind: str, routes_x: np.ndarray, routes_y: np.ndarray) -> None:
        delta = np.where(same, np.inf, delta)
        xs, ys = np.nonzero(delta < -_EPS)
        for x, y, d in zip(xs.tolist(), ys.tolist(), delta[xs, ys].tolist()):
            moves.append((d, len(moves), kind, x, y))
            pairs.append((int(routes_x[x]), int(routes_y[y])))

    # relocate u into gap x of another route
    through = (A + B).min(axis=2).T  # (U, G): u put in gap x
    rl = g.load[g.route]
    rel = (through + over(rl[None, :] + dem[:, None]) - value[g.route][None, :]
           + (J[g.before, after] + over(lu - dem) - value[ru])[:, None])
    best(rel, g.route[None, :] == ru[:, None], "relocate", ru, g.route)

    # swap u and v of two routes: X[u, v] is u's route with v in u's place
    X = np.minimum(A[g.before][:, :, 0] + B[after][:, :, 0], A[g.before][:, :, 1] + B[after][:, :, 1])
    swapped = lu[:, None] - dem[:, None] + dem[None, :]  # u's route's load with v for u
    swap = X + over(swapped) + X.T + over(swapped.T) - value[ru][:, None] - value[ru][None, :]
    best(swap, ru[:, None] == ru[None, :], "swap", ru, ru)

    # 2-opt*: x's head with y's tail, y's head with x's tail
    rv = value[g.route]
    suf = rl - g.pre
    same = g.route[:, None] == g.route[None, :]
    head_tail = g.pre[:, None] + suf[None, :]
    best(J + over(head_tail) + J.T + over(head_tail.T) - rv[:, None] - rv[None, :], same, "star", g.route, g.route)
    if symmetric:  # x's head with y's head reversed, x's tail reversed with y's tail
        heads = _join(D, g.left, g.left_node, g.left, g.left_node)
        tails = _join(D, g.right, g.right_node, g.right, g.right_node)
        rev = (heads + over(g.pre[:, None] + g.pre[None, :]) + tails + over(suf[:, None] + suf[None, :])
               - rv[:, None] - rv[None, :])
        best(rev, same, "star_reversed", g.route, g.route)
    chosen: list[Move] = []
    used: set[int] = set()
    for m in sorted(moves):  # (equal deltas: the scan's order, so a run repeats)
        a, b = pairs[m[1]]
        if a not in used and b not in used:
            chosen.append(m)
            used.update((a, b))
    return chosen


def _apply(routes: list[list[int]], g: _Gaps, kind: str, x: int, y: int) -> None:
    """Make the move on the unit orders (directions are chosen afresh by ``orient``)."""
    first = np.searchsorted(g.route, np.arange(len(routes)))  # each route's first gap (gaps are in route order)
    if kind == "relocate":
        k, r = int(g.route[g.before[x]]), int(g.route[y])
        routes[k].remove(x)
        routes[r].insert(y - int(first[r]), x)
        return
    if kind == "swap":
        k, m = int(g.route[g.before[x]]), int(g.route[g.before[y]])
        i, j = int(g.before[x] - first[k]), int(g.before[y] - first[m])
        routes[k][i], routes[m][j] = y, x
        return
    k, m = int(g.route[x]), int(g.route[y])
    i, j = x - int(first[k]), y - int(first[m])
    head_k, tail_k, head_m, tail_m = routes[k][:i], routes[k][i:], routes[m][:j], routes[m][j:]
    if kind == "star":
        routes[k], routes[m] = head_k + tail_m, head_m + tail_k
    else:
        routes[k], routes[m] = head_k + head_m[::-1], tail_k[::-1] + tail_m


def improve_oriented(data: CarpData, sorties: Sequence[Sortie], penalty: float = HARD,
                     rounds: int = 200) -> list[Sortie]:
    """Sorties improved by moves priced with every touched route's best directions, load over at ``penalty`` a unit.

    At ``HARD`` (the default) a plan within the limit stays within it. The result is no
    dearer at ``penalty``, with at most as many sorties; each sortie's directions are the
    best for its order.
    """
    routes = [[u for u, _ in s] for s in sorties if s]
    symmetric = bool(np.array_equal(data.deadhead_i64, data.deadhead_i64.T))
    for _ in range(rounds):
        g = _gaps(data, routes)
        moves = _best_moves(data, g, symmetric, float(penalty))
        if not moves:
            break
        for _, _, kind, x, y in moves:
            _apply(routes, g, kind, x, y)
        routes = [r for r in routes if r]
    return [orient(data, r) for r in routes]
