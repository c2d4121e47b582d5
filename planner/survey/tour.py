"""The flight order of a direction's sweep pieces (stage 4 of the survey).

Builds the tour matrix and the starting orders (boustrophedon cells flown as snakes,
the rest inserted, nearest neighbour) that ``planner.survey.order``'s routing model
improves. Kept apart from the geometry: it sees only distance matrices and indices.
"""

from __future__ import annotations

import numpy as np

from planner.survey.order import OrderControl, order_pieces, solve_open_tour, tour_cost

__all__ = [
    "augmented",
    "boustrophedon_cells",
    "order_all_pieces",
]

# Pieces p = 0..n-1 have end points 2p and 2p+1; an oriented piece (p, d) starts at 2p+d.
# The tour matrix X has two extra nodes: START (row 2n) and END (column 2n+1) carry the
# distances to the optional start/end points (0 when absent), so every move is uniform.
# the routing model searches the order of at most this many cells (four variants each); beyond, the
# nearest-first construction stands (a guided-local-search step over 400+ variants cost seconds here)
MAX_SEARCHED_CELLS = 60


def augmented(D: np.ndarray, dstart: np.ndarray | None, dend: np.ndarray | None) -> np.ndarray:
    m = len(D)
    X = np.zeros((m + 2, m + 2))
    X[:m, :m] = D
    if dstart is not None:
        X[m, :m] = dstart
        X[:m, m] = dstart
    if dend is not None:
        X[:m, m + 1] = dend
        X[m + 1, :m] = dend
    return X


def _nearest_neighbour(first: int, first_dir: int, X: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    order = [first]
    dirs = [first_dir]
    left = np.ones(n, bool)
    left[first] = False
    cur_end = 2 * first + 1 - first_dir
    for _ in range(n - 1):
        cand = np.nonzero(left)[0]
        d0 = X[cur_end, 2 * cand]
        d1 = X[cur_end, 2 * cand + 1]
        k0, k1 = int(np.argmin(d0)), int(np.argmin(d1))
        if d0[k0] <= d1[k1]:
            p, d = int(cand[k0]), 0
        else:
            p, d = int(cand[k1]), 1
        order.append(p)
        dirs.append(d)
        left[p] = False
        cur_end = 2 * p + 1 - d
    return np.asarray(order), np.asarray(dirs)


def boustrophedon_cells(pieces_rot: np.ndarray) -> list[list[int]]:
    """Boustrophedon cells: maximal chains of pieces on consecutive lines that overlap one-to-one.

    ``pieces_rot`` are in the rotated frame (sweeps along x), ordered by line then x.
    A piece continues its cell into the next line when it overlaps exactly one piece
    there and that piece overlaps only it.
    """
    n = len(pieces_rot)
    ys = pieces_rot[:, 0, 1]
    lo, hi = pieces_rot[:, 0, 0], pieces_rot[:, 1, 0]
    line_of = np.unique(ys, return_inverse=True)[1]
    by_line: dict[int, list[int]] = {}
    for p in range(n):
        by_line.setdefault(int(line_of[p]), []).append(p)
    down: dict[int, list[int]] = {p: [] for p in range(n)}
    up: dict[int, list[int]] = {p: [] for p in range(n)}
    for li, ps in by_line.items():
        for p in ps:
            for q in by_line.get(li + 1, []):
                if min(hi[p], hi[q]) - max(lo[p], lo[q]) > 0:
                    down[p].append(q)
                    up[q].append(p)
    cells: list[list[int]] = []
    seen = np.zeros(n, bool)
    for p in range(n):
        if seen[p]:
            continue
        chain = [p]
        seen[p] = True
        while len(down[chain[-1]]) == 1:
            q = down[chain[-1]][0]
            if seen[q] or len(up[q]) != 1:
                break
            chain.append(q)
            seen[q] = True
        cells.append(chain)
    return cells


def _cell_variant(cell: list[int], v: int) -> tuple[list[int], list[int]]:
    """Pieces and directions of a cell flown as variant v: bit 1 = from the last line, bit 0 = first direction."""
    ps = cell[::-1] if v & 2 else cell
    d0 = v & 1
    return ps, [d0 ^ (k & 1) for k in range(len(ps))]


def _order_cells(X: np.ndarray, cells: list[list[int]], solution_limit: int,
                 control: OrderControl | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A start for the piece order: whole cells, each flown as a snake, ordered by the routing model.

    A cell can be flown four ways (from its first or its last line, starting
    left or right): the four variants form one disjunction, and a variant's
    own turns are folded into the arcs that reach it. The first solution
    chains the cells nearest-first (a construction; the model improves it).
    """
    m = len(X) - 2
    C = len(cells)
    entry = np.zeros((C, 4), int)
    exit_ = np.zeros((C, 4), int)
    internal = np.zeros((C, 4))
    for c, cell in enumerate(cells):
        for v in range(4):
            ps, ds = _cell_variant(cell, v)
            entry[c, v] = 2 * ps[0] + ds[0]
            exit_[c, v] = 2 * ps[-1] + 1 - ds[-1]
            internal[c, v] = sum(X[2 * a + 1 - da, 2 * b + db] for a, da, b, db in zip(ps, ds, ps[1:], ds[1:]))
    left = np.ones(C, bool)
    cur = m  # the start row
    initial: list[int] = []
    for _ in range(C):
        cost = np.where(left[:, None], X[cur, entry] + internal, np.inf)
        k = int(np.argmin(cost))
        initial.append(k)
        left[k // 4] = False
        cur = int(exit_[k // 4, k % 4])
    en, ex, it = entry.ravel(), exit_.ravel(), internal.ravel()
    seq = initial
    if 1 < C <= MAX_SEARCHED_CELLS and solution_limit > 0:
        seq = solve_open_tour(
            X[np.ix_(ex, en)] + it[None, :], X[m, en] + it, X[ex, m + 1],
            [[4 * c + v for v in range(4)] for c in range(C)], initial, solution_limit, control,
        )
    order: list[int] = []
    dirs: list[int] = []
    for k in seq:
        ps, ds = _cell_variant(cells[k // 4], k % 4)
        order += ps
        dirs += ds
    return np.asarray(order), np.asarray(dirs)


def _insert_rest(X: np.ndarray, n: int, prefix: int) -> tuple[np.ndarray, np.ndarray]:
    """Pieces ``0..prefix-1`` in that order and direction, the others each put where it adds least.

    The start for a plan with extra passes: the order already found for the
    sweeps, the passes inserted cheapest-first (a construction).
    """
    m = 2 * n
    order, dirs = list(range(prefix)), [0] * prefix
    for p in range(prefix, n):
        tails = np.asarray([m] + [2 * o + 1 - d for o, d in zip(order, dirs)])  # end before each gap
        heads = np.asarray([2 * o + d for o, d in zip(order, dirs)] + [m + 1])  # start after each gap
        base = X[tails, heads]
        best = None
        for d in (0, 1):
            a, b = 2 * p + d, 2 * p + 1 - d
            delta = X[tails, a] + X[b, heads] - base
            k = int(np.argmin(delta))
            if best is None or delta[k] < best[0]:
                best = (float(delta[k]), k, d)
        assert best is not None
        order.insert(best[1], p)
        dirs.insert(best[1], best[2])
    return np.asarray(order), np.asarray(dirs)


def order_all_pieces(
    X: np.ndarray, n: int, has_start: bool, cells: list[list[int]] | None, solution_limit: int,
    prefix: int | None = None, cell_limit: int = 0, control: OrderControl | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The cheapest construction (cell snakes, nearest-neighbour, or the given ``prefix`` order with the
    rest inserted), then the routing model's search.

    ``solution_limit`` 0 returns the construction alone (used to rank directions).
    """
    m = 2 * n
    inits: list[tuple[np.ndarray, np.ndarray]] = []
    if prefix is not None:
        inits.append(_insert_rest(X, n, prefix))
    if cells is not None and len(cells) > 1:
        inits.append(_order_cells(X, cells, cell_limit, control))
    k = int(np.argmin(X[m, :m])) if has_start else 0
    inits.append(_nearest_neighbour(k // 2, k % 2, X, n))
    best = min(inits, key=lambda od: tour_cost(od[0], od[1], X))
    if solution_limit <= 0 or n < 3:
        return best
    return order_pieces(X, best, solution_limit, control)
