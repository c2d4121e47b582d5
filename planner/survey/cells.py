"""Split a survey area into cells that each get their own sweep direction.

One sweep direction for a whole area is wrong for a bent corridor or an L:
sweeps slanted across a leg image triangles of nothing at both of its sides
and turn far more often. The cells here come from cuts at the sharp reflex
corners of the outer ring (the inner corner of a bend): from such a corner,
the continuation of one of its two edges runs across the area to the far
boundary; the shorter continuation is the cut. Cuts at holes are not made
(sweeps split around holes already). Neighbouring cells are then merged
whenever one direction for both is estimated no longer than two directions
(the estimate is the one ``planner.survey.coverage`` ranks directions with, plus a
fixed price per extra cell for the hop between them), so a rectangle or a
convex field stays one cell and only real bends keep their cut.

Pure geometry on shapely and numpy; ``estimate(cell) -> (cost, angle)`` is
given by the caller.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import shapely
from shapely.geometry import LineString, MultiPolygon, Polygon
from shapely.geometry.base import BaseGeometry

__all__ = ["reflex_cuts", "decompose", "MIN_TURN_DEG", "MAX_CUTS"]

MIN_TURN_DEG = 20.0  # reflex corners turning less than this are no bend
MAX_CUTS = 24  # at most this many cuts (the sharpest corners first)
CUT_GAP_M = 1e-4  # cells are separated by this much; pieces are extended across it
WORTH_TRYING = 0.02  # merging is tried when all the cuts together estimate at most this much over one cell


def _polygons(geom: BaseGeometry) -> list[Polygon]:
    return [g for g in shapely.get_parts(geom) if isinstance(g, Polygon) and not g.is_empty]


def reflex_cuts(free: Polygon | MultiPolygon, min_cell_m: float) -> list[tuple[float, LineString]]:
    """(turn in degrees, cut) for the sharp reflex corners of each outer ring, sharpest first.

    A cut runs from the corner along the continuation of one of its edges to the
    first boundary it meets; cuts shorter than ``min_cell_m`` are dropped.
    """
    out: list[tuple[float, LineString]] = []
    boundary = free.boundary
    for poly in _polygons(free):
        ring = shapely.geometry.polygon.orient(poly, 1.0).exterior  # counter-clockwise: reflex = right turn
        c = np.asarray(ring.coords)[:-1]
        n = len(c)
        if n < 4:
            continue
        reach = math.hypot(*(np.ptp(c, axis=0))) * 2.0
        for i in range(n):
            p, v, q = c[i - 1], c[i], c[(i + 1) % n]
            d1, d2 = v - p, q - v
            l1, l2 = math.hypot(*d1), math.hypot(*d2)
            if l1 < 1e-9 or l2 < 1e-9:
                continue
            cross = d1[0] * d2[1] - d1[1] * d2[0]
            turn = math.degrees(math.atan2(abs(cross), float(d1 @ d2)))
            if cross >= 0 or turn < MIN_TURN_DEG:
                continue
            best: LineString | None = None
            for u in (d1 / l1, -d2 / l2):
                ray = LineString([v + u * 1e-6, v + u * reach])
                hit = ray.intersection(boundary)
                if hit.is_empty:
                    continue
                pts = [g for g in shapely.get_parts(hit) for g in ([g] if g.geom_type == "Point" else [])]
                pts += [shapely.Point(xy) for g in shapely.get_parts(hit) if g.geom_type != "Point" for xy in g.coords]
                far = min(pts, key=lambda g: g.distance(shapely.Point(v)))
                cut = LineString([v, (far.x, far.y)])
                if not poly.buffer(1e-6).covers(cut):
                    continue
                if best is None or cut.length < best.length:
                    best = cut
            if best is not None and best.length >= min_cell_m:
                out.append((turn, best))
    out.sort(key=lambda t: -t[0])
    return out[:MAX_CUTS]


def decompose(
    free: Polygon | MultiPolygon,
    estimate: Callable[[BaseGeometry], tuple[float, float]],
    min_cell_m: float,
    cell_price_m: float,
) -> tuple[list[tuple[Polygon, float]], list[LineString]]:
    """Cells and their sweep directions: cut at the bends, then merge where one direction pays.

    Returns ``[(cell, angle)]`` and the cuts; no cells when no cut pays. ``estimate``
    gives (estimated path m, best angle) for a cell; ``cell_price_m`` is added
    per cell for the hop between cells.
    """
    cuts = reflex_cuts(free, min_cell_m)
    if not cuts:
        return [], []
    knife = shapely.union_all([c.buffer(CUT_GAP_M / 2, cap_style="flat") for _, c in cuts])
    cells = [g for g in _polygons(free.difference(knife)) if g.area > min_cell_m**2 / 4]
    if len(cells) < 2:
        return [], []
    # cells by id; merged pairs are estimated once (a merge only changes the pairs of the new cell)
    live: dict[int, tuple[Polygon, tuple[float, float]]] = {i: (c, estimate(c)) for i, c in enumerate(cells)}
    # When every cut together does not beat one direction for the whole, no subset of them is
    # likely to: the pairwise merging (cells² estimates, most of the time on a large field with a
    # wiggly outline) is skipped. A bent corridor or an L passes easily.
    split = sum(e[0] for _, e in live.values()) + cell_price_m * (len(live) - 1)
    if split > estimate(free)[0] * (1.0 + WORTH_TRYING):
        return [], []
    pair: dict[tuple[int, int], tuple[Polygon, tuple[float, float]] | None] = {}
    next_id = len(cells)
    while len(live) > 1:
        best = None
        ids = sorted(live)
        for a_i, i in enumerate(ids):
            for j in ids[a_i + 1 :]:
                if (i, j) not in pair:
                    ci, cj = live[i][0], live[j][0]
                    pair[(i, j)] = None
                    if ci.distance(cj) <= CUT_GAP_M * 2:
                        merged = shapely.union_all([ci, cj]).buffer(CUT_GAP_M, join_style="mitre")
                        parts = _polygons(merged.buffer(-CUT_GAP_M, join_style="mitre").intersection(free))
                        if len(parts) == 1:
                            pair[(i, j)] = (parts[0], estimate(parts[0]))
                got = pair[(i, j)]
                if got is None:
                    continue
                saving = live[i][1][0] + live[j][1][0] + cell_price_m - got[1][0]
                if saving >= 0 and (best is None or saving > best[0]):
                    best = (saving, i, j, got)
        if best is None:
            break
        _, i, j, got = best
        del live[i], live[j]
        live[next_id] = got
        next_id += 1
    cells = [live[k][0] for k in sorted(live)]
    est = [live[k][1] for k in sorted(live)]
    if len(cells) < 2:
        return [], []
    return [(c, e[1]) for c, e in zip(cells, est)], [c for _, c in cuts]
