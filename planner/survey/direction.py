"""One sweep direction planned in full: pieces, connections, order, camera-on turns.

``planner.survey.coverage`` compares a few directions (and per-cell directions); this
module turns one of them into a flown path, so the choice between plans reads apart
from the making of each.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import LineString
from shapely.geometry.base import BaseGeometry

from planner.geo.transit import InsideGraph
from planner.survey.cells import CUT_GAP_M, decompose
from planner.survey.connector import Bridge, Connector
from planner.survey.order import OrderControl, order_pieces
from planner.survey.repair import unimaged_area
from planner.survey.sweeps import XY, candidate_angles, estimate_lengths, ring_segments, rotation, sweep_pieces
from planner.survey.tour import augmented, boustrophedon_cells, order_all_pieces

__all__ = [
    "LOSS_WEIGHT",
    "CELL_GRID_DEG",
    "CELL_ANGLES",
    "CELL_PRICE_SWATHS",
    "CONNECTION_GAIN",
    "EDGE_TOL_M",
    "DirectionPlan",
    "direction_pieces",
    "cell_estimate",
    "multi_cell_pieces",
    "DirectionRouting",
    "prepare_routing",
    "route_direction",
    "search_pieces",
    "PIECE_ROUND",
    "camera_on_connections",
]

LOSS_WEIGHT = 2.0  # cells: a metre of sweep per swath-width of unimaged area, twice over (coverage first)
CELL_GRID_DEG = 6.0  # ... edge directions first, then a grid this coarse
CELL_ANGLES = 45  # candidate directions per cell when decomposing
CELL_PRICE_SWATHS = 1.0  # a cell of its own costs about one swath of extra hop
CONNECTION_GAIN = 0.02  # a connection keeps the camera on when it images this × swath m² of new area per metre
EDGE_TOL_M = 1e-5  # a connection within this of the boundary runs along it


@dataclass(eq=False)
class DirectionPlan:
    angle: float
    path: list[XY]
    camera: list[bool]  # per path segment
    length: float
    source: DirectionRouting | None = None  # the pieces and distances it was ordered from
    cells: int = 1  # cells with their own direction (1: one direction for the whole area)
    order: tuple[np.ndarray, np.ndarray] | None = None  # (pieces, directions) as flown


def direction_pieces(free_c: BaseGeometry, angle: float, swath_m: float) -> tuple[np.ndarray, list[list[int]]]:
    """Sweep pieces (n, 2, 2) in the area frame for direction ``angle``, and their boustrophedon cells."""
    c, s = rotation(angle)
    # rotate by -angle: sweeps along x
    fwd = lambda a: np.column_stack([a[:, 0] * c + a[:, 1] * s, -a[:, 0] * s + a[:, 1] * c])  # noqa: E731
    back = lambda a: np.column_stack([a[:, 0] * c - a[:, 1] * s, a[:, 0] * s + a[:, 1] * c])  # noqa: E731
    free_rot = shapely.transform(free_c, fwd)
    pieces, _spacing, _n = sweep_pieces(free_rot, swath_m)
    if len(pieces) == 0:
        return pieces, []
    return back(pieces.reshape(-1, 2)).reshape(-1, 2, 2), boustrophedon_cells(pieces)


def cell_estimate(swath_m: float) -> Callable[[BaseGeometry], tuple[float, float]]:
    """(estimated path m, best angle) of one cell swept in one direction (the ranking estimate)."""

    def est(cell: BaseGeometry) -> tuple[float, float]:
        angles = candidate_angles(cell, CELL_ANGLES, CELL_GRID_DEG)
        costs, _ = estimate_lengths(ring_segments(cell), angles, swath_m, LOSS_WEIGHT)
        return min(zip(costs.tolist(), angles))

    return est


def _extend_across_cuts(
    free_c: BaseGeometry, pieces: np.ndarray, cuts: list[LineString], swath_m: float
) -> np.ndarray:
    """Pieces that end on a cut between cells, lengthened past it so their flat ends leave no triangle.

    A sweep meeting a cut at angle φ images nothing in the triangle of legs
    w/2 and (w/2)·|cot φ| beside its end; lengthening it by that much (at most
    one swath, never out of the free area) closes the gap.
    """
    if not cuts:
        return pieces
    out = pieces.copy()
    bnd = free_c.boundary
    knife = shapely.union_all(cuts)
    for p in range(len(pieces)):
        for k in (0, 1):
            e = pieces[p, k]
            other = pieces[p, 1 - k]
            u = e - other
            L = math.hypot(*u)
            if L < 1e-9:
                continue
            u = u / L
            pt = shapely.Point(e)
            if pt.distance(bnd) < 1e-3 or pt.distance(knife) > 1e-2:
                continue
            cut = min(cuts, key=lambda c: c.distance(pt))
            cc = np.asarray(cut.coords)
            dv = cc[-1] - cc[0]
            dv = dv / max(1e-12, math.hypot(*dv))
            sin_phi = abs(u[0] * dv[1] - u[1] * dv[0])
            cos_phi = abs(u @ dv)
            # at least across the hair-line gap between the cells
            ext = max(2 * CUT_GAP_M, min(swath_m, swath_m / 2.0 * cos_phi / max(sin_phi, 1e-6)))
            seg = LineString([e, e + u * ext])
            hit = seg.intersection(bnd)
            if not hit.is_empty:
                ext = min(ext, max(0.0, pt.distance(hit) - 1e-6))
            out[p, k] = e + u * ext
    return out


def multi_cell_pieces(
    free_c: BaseGeometry, swath_m: float
) -> tuple[np.ndarray, list[list[int]], float, int] | None:
    """Pieces of every cell in its own direction (``planner.survey.cells``), or None when one cell is best.

    Returns pieces, their boustrophedon cells, the direction of the largest cell and the cell count.
    """
    cells, cuts = decompose(free_c, cell_estimate(swath_m), min_cell_m=swath_m, cell_price_m=CELL_PRICE_SWATHS * swath_m)
    if len(cells) < 2:
        return None
    all_pieces: list[np.ndarray] = []
    all_cells: list[list[int]] = []
    offset = 0
    for cell, angle in cells:
        pieces, sub = direction_pieces(cell, angle, swath_m)
        if len(pieces) == 0:
            continue
        all_pieces.append(_extend_across_cuts(free_c, pieces, cuts, swath_m))
        all_cells += [[offset + i for i in c] for c in sub]
        offset += len(pieces)
    if not all_pieces:
        return None
    largest = max(cells, key=lambda t: t[0].area)[1]
    return np.concatenate(all_pieces), all_cells, largest, len(cells)


@dataclass
class DirectionRouting:
    """What one piece set needs to be ordered: the pieces, their cells and the inside distances."""

    pieces: np.ndarray  # (n, 2, 2), area frame; end 2p = pieces[p, 0], 2p+1 = pieces[p, 1]
    cells: list[list[int]]
    conn: Connector
    X: np.ndarray
    n_direction_cells: int = 1
    prefix: int | None = None  # pieces 0..prefix-1 come already ordered (a re-plan with extra passes)
    control: OrderControl | None = None  # the plan's deadline and the order searches' work


def prepare_routing(
    free_c: BaseGeometry,
    pieces: np.ndarray,
    cells: list[list[int]],
    start_c: XY | None,
    end_c: XY | None,
    graph: InsideGraph,
    bridge: Bridge | None,
    control: OrderControl | None = None,
) -> DirectionRouting:
    pts = pieces.reshape(-1, 2)
    conn = Connector(graph, pts, bridge)
    dstart = np.hypot(*(pts - np.asarray(start_c)).T) if start_c is not None else None
    dend = np.hypot(*(pts - np.asarray(end_c)).T) if end_c is not None else None
    return DirectionRouting(pieces, cells, conn, augmented(conn.D, dstart, dend), control=control)


def route_direction(
    r: DirectionRouting, angle: float, has_start: bool, solution_limit: int, cell_limit: int = 0,
    start: tuple[np.ndarray, np.ndarray] | None = None,
) -> DirectionPlan:
    """Order the pieces (construction or the given ``start``, then the routing model) and build the polyline."""
    pts = r.pieces.reshape(-1, 2)
    if start is not None:
        order, dirs = order_pieces(r.X, start, solution_limit, r.control) if solution_limit > 0 else start
    else:
        order, dirs = order_all_pieces(r.X, len(r.pieces), has_start, r.cells, solution_limit, r.prefix, cell_limit,
                                       r.control)
    path: list[XY] = []
    camera: list[bool] = []  # per path segment: a sweep (camera on) or a connection

    def go(q: XY, on: bool) -> None:
        if path and path[-1] == q:
            return
        if path:
            camera.append(on)
        path.append(q)

    for k, (p, d) in enumerate(zip(order.tolist(), dirs.tolist())):
        a_idx, b_idx = 2 * p + d, 2 * p + 1 - d
        a = (float(pts[a_idx][0]), float(pts[a_idx][1]))
        b = (float(pts[b_idx][0]), float(pts[b_idx][1]))
        if k > 0:
            prev_end = 2 * order[k - 1] + 1 - dirs[k - 1]
            for q in r.conn.path(int(prev_end), a_idx)[1:-1]:
                go(q, False)
        go(a, False)
        if path[-1] == b:  # a zero-length piece cannot happen (MIN_PIECE_M) but keep the invariant
            continue
        go(b, True)
    length = float(np.hypot(*np.diff(np.asarray(path), axis=0).T).sum()) if len(path) > 1 else 0.0
    return DirectionPlan(angle, path, camera, length, r, r.n_direction_cells, (order, dirs))


PIECE_ROUND = 2  # solutions per round of the piece search; a round that finds nothing shorter ends it


def search_pieces(plan: DirectionPlan, has_start: bool, budget: int) -> DirectionPlan:
    """``plan`` with its pieces re-ordered by the routing model, in rounds, at most ``budget`` solutions.

    Why rounds: from an order that is already a local optimum, guided local search
    spends a full neighbourhood scan per solution (~0.1 s at 130 end points) and
    most often finds nothing; an order that still improves does so within a round
    or two. Each round starts from the best order so far, and the first round that
    finds nothing shorter ends the search. On the 2 km² bench instance this finds
    the same orders as one search of eight solutions in two thirds of the time.
    Deterministic: each round is a solution-bounded search from a given order.
    """
    assert plan.source is not None and plan.order is not None
    best, used = plan, 0
    control = plan.source.control
    while used < budget and not (control is not None and control.out_of_time()):
        k = min(PIECE_ROUND, budget - used)
        used += k
        nxt = route_direction(plan.source, plan.angle, has_start, k, start=best.order)
        if nxt.length >= best.length - 1e-6:
            break
        best = nxt
    return best


def _dark_gain(strips: np.ndarray, dark: BaseGeometry) -> np.ndarray:
    """Area of ``dark`` inside each strip.

    Why by parts: overlaying each strip with the whole dark area costs the strips × the dark
    area's size, which on a large field (thousands of turns, a dark sliver beside every edge)
    grew with the square of the area (3.5 of 6.4 CPU s at 400 km²). The dark parts are
    disjoint, so a strip's gain is the sum over the parts it meets (an index finds them).
    """
    gain = np.zeros(len(strips))
    parts = shapely.get_parts(dark)
    if len(strips) == 0 or len(parts) == 0:
        return gain
    si, pi = shapely.STRtree(parts).query(strips, predicate="intersects")
    if len(si):
        np.add.at(gain, si, shapely.area(shapely.intersection(strips[si], parts[pi])))
    return gain


def camera_on_connections(
    free_c: BaseGeometry, planned: DirectionPlan, swath_m: float, dark: BaseGeometry | None = None
) -> tuple[list[bool], BaseGeometry]:
    """Camera flags with the connections that image new area switched on, and what stays dark then.

    A turn from one sweep's end to the next sweep's start often runs along or
    near a boundary edge; keeping the camera on there images the band along
    the edge that straight sweeps ending on a slanted boundary leave as small
    triangles. Any connection (it lies inside the free area, flown at survey
    height and speed) whose strip images at least ``CONNECTION_GAIN`` × swath
    m² per metre of area no sweep images keeps the camera on; runs along the
    boundary always do. It costs no extra flight.

    ``dark`` is the area the plan's sweeps leave unimaged when the caller has it
    already (plans ordered from the same pieces share it: the union of the strips
    is the costly part); the returned area is ``dark`` minus the connections'
    strips, so the coverage figure needs no second union.
    """
    flags = list(planned.camera)
    if dark is None:
        sweeps = [(planned.path[i], planned.path[i + 1]) for i, on in enumerate(flags) if on]
        dark = unimaged_area(free_c, sweeps, swath_m)
    conn_idx = [i for i, on in enumerate(flags) if not on]
    if not conn_idx:
        return flags, dark
    band = free_c.boundary.buffer(EDGE_TOL_M, quad_segs=1)
    shapely.prepare(band)
    P = np.asarray(planned.path)
    segs = shapely.linestrings(np.stack([P[conn_idx], P[np.asarray(conn_idx) + 1]], axis=1))
    along = shapely.covers(band, segs)
    lengths = shapely.length(segs)
    strips = shapely.buffer(segs, swath_m / 2.0, cap_style="flat")
    gain = _dark_gain(strips, dark)
    inside_area = free_c.buffer(EDGE_TOL_M, quad_segs=1)
    shapely.prepare(inside_area)
    inside = shapely.covers(inside_area, segs)  # a hop bridged around a zone between parts is not
    on_now: list[int] = []
    for k, (i, on, g, L, ok) in enumerate(zip(conn_idx, along.tolist(), gain.tolist(), lengths.tolist(), inside.tolist())):
        if on or (ok and L > 0 and g >= CONNECTION_GAIN * swath_m * L):
            flags[i] = True
            if L > 1e-9:
                on_now.append(k)
    if on_now and not dark.is_empty:
        dark = dark.difference(shapely.union_all(strips[on_now]))
    return flags, dark
