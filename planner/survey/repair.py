"""Extra camera passes for what the boustrophedon sweeps leave unimaged.

Straight sweeps with flat ends leave triangles where they meet a slanted edge,
the tips of sharp corners and the strips beside small holes dark. Measured on
the test parcels (``tests/planner/parcels``), most of that area lies in a band
along the boundary of the outer ring and of the holes. A pass along an edge,
half a swath inside it (a piece of a perimeter / headland pass), images that
band; a short pass along the long axis of a dark patch images a patch the edge
passes miss. Candidates are both kinds, each clipped to the free area.

A pass is worth the new area it images per metre *including the detour to reach
it* (a sweep of the boustrophedon images one swath per metre at best). Passes are
chosen greedily, best rate first, until the coverage target is met, down to
``TARGET_RATE`` × swath m² per m (the target is the operator's: on parcels with dozens
of buildings the passes above ``MIN_RATE``, the floor before, stopped at 0.944-0.985 of a
0.99 target, and the ones between reached it for 5-20 % more path); ``MIN_RATE`` now
prices the dark area when plans that miss the target are compared
(``planner.survey.coverage.DARK_PRICE``). The gain of a pass only shrinks as others are
chosen, so a lazy priority queue (re-score the top, accept it if it stays on top) picks
the same passes as a full re-scoring. The routing model then orders them with the sweeps.

Pure geometry on shapely and numpy; deterministic (ties broken by index).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence

import numpy as np
import shapely
from shapely.geometry import LineString, MultiPolygon, Polygon
from shapely.geometry.base import BaseGeometry

__all__ = ["repair_passes", "unimaged_area", "reportable_unimaged", "shortfall", "MIN_RATE", "TARGET_RATE", "MAX_PASSES"]

MIN_RATE = 0.15  # a pass imaging this × swath m² per metre flown (detour included) is worth it on its own merit
TARGET_RATE = 0.03  # ... and at least this while the coverage target is not met (below: slivers, a few m² per m)
MAX_PASSES = 80  # at most this many extra passes
MIN_PASS_M = 1.0  # shorter candidate passes are not worth a turn
MIN_PATCH_FRACTION = 0.02  # dark patches smaller than this × swath² get no axis pass of their own
MAX_CANDIDATES = 600
REPORT_TOLERANCE_M = 0.5
REPORT_MIN_M2 = 1.0

XY = tuple[float, float]
Segment = tuple[XY, XY]


def _polygons(geom: BaseGeometry) -> list[Polygon]:
    return [g for g in shapely.get_parts(geom) if isinstance(g, Polygon) and not g.is_empty]


def unimaged_area(free: BaseGeometry, sweeps: Sequence[Segment], swath_m: float) -> BaseGeometry:
    """The free area no flat-ended swath strip reaches (what the coverage figure leaves out)."""
    lines = [LineString(s) for s in sweeps if math.dist(s[0], s[1]) > 1e-9]
    if not lines:
        return free
    strips = shapely.union_all(shapely.buffer(lines, swath_m / 2.0, cap_style="flat"))
    return free.difference(strips)


def reportable_unimaged(dark: BaseGeometry) -> MultiPolygon:
    """An unimaged area as a layer for the plan: simplified to 0.5 m, slivers under 1 m² dropped."""
    parts = [g.simplify(REPORT_TOLERANCE_M) for g in _polygons(dark) if g.area >= REPORT_MIN_M2]
    parts = [g for g in parts if isinstance(g, Polygon) and not g.is_empty and g.area > 0]
    return MultiPolygon(parts) if parts else MultiPolygon()


def shortfall(free: BaseGeometry, dark: BaseGeometry, swath_m: float, target: float) -> dict | None:
    """Why a plan images less than ``target`` of ``free``: where the dark area lies, in m², and a sentence.

    ``at_edges_m2``: within half a swath of the boundary (of the area or of a hole) —
    triangles beside flat sweep ends on slanted edges and the tips of sharp corners,
    which no straight pass that stays inside the area images. ``inside_m2``: the rest,
    patches an extra pass would image at less than ``TARGET_RATE`` swath m² per metre
    flown (worth less than the flight). None when the target is met.
    """
    area = free.area
    if area <= 0 or 1.0 - dark.area / area >= target:
        return None
    edge = dark.intersection(free.boundary.buffer(swath_m / 2.0)).area if not dark.is_empty else 0.0
    inside = max(0.0, dark.area - edge)
    return {
        "unimaged_m2": round(dark.area, 1),
        "at_edges_m2": round(edge, 1),
        "inside_m2": round(inside, 1),
        "reason": (
            f"{edge:.0f} m² lie within half a swath ({swath_m / 2:.1f} m) of an edge or a hole, in corners and "
            f"beside slanted edges no straight pass inside the area reaches; {inside:.0f} m² inside would cost "
            f"extra passes imaging less than {TARGET_RATE:g} swath m² per metre flown"
        ),
    }


def _clip_longest(free: BaseGeometry, line: LineString) -> LineString | None:
    """The longest straight part of ``line`` inside ``free``."""
    return _longest_part(line.intersection(free))


def _longest_part(inside: BaseGeometry) -> LineString | None:
    """The longest straight part (end to end) of a clipped line, if it is worth a pass."""
    best = None
    for g in shapely.get_parts(inside):
        if g.geom_type == "LineString" and g.length >= MIN_PASS_M:
            c = list(g.coords)
            seg = LineString([c[0], c[-1]])
            if best is None or seg.length > best.length:
                best = seg
    return best


def _clip_locally(lines: np.ndarray, area: BaseGeometry) -> np.ndarray:
    """Each line ∩ ``area``, the area first cut to the line's box (a metre wider).

    Why: an overlay costs the size of both inputs, and a parcel with dozens of buildings is a
    large polygon; overlaid with each of hundreds of edge lines it was most of the extra passes'
    time (0.16 CPU s on parcel_held_sw's 660 edges; 0.04 s cut to the boxes). The box cut is
    GEOS's fast rectangle clip, whose output is not promised valid: where it is not, the whole area.
    """
    if len(lines) == 0:
        return lines
    boxes = shapely.bounds(lines) + np.asarray([-1.0, -1.0, 1.0, 1.0])
    local = np.asarray([shapely.clip_by_rect(area, *b) for b in boxes.tolist()], dtype=object)
    bad = ~shapely.is_valid(local)
    local[bad] = area
    return shapely.intersection(lines, local)


def _edge_candidates(free: BaseGeometry, swath_m: float, dark: BaseGeometry | None = None) -> list[LineString]:
    """Every ring edge offset half a swath into the free area (or a quarter, where half leaves it).

    The offset lines of every edge are clipped in one vectorised call (a parcel with
    many buildings has hundreds of edges; one call per line was most of this step).
    With ``dark``, only edges whose offset lines pass within half a swath of it are
    kept: a pass farther away images nothing new (its gain is 0, it is never chosen),
    and on a parcel with dozens of buildings most edges are such (and they crowded
    the useful candidates out of the first ``MAX_CANDIDATES``).
    """
    inner = free.buffer(-1e-6)
    shapely.prepare(inner)
    heads, tails = [], []
    for poly in _polygons(free):
        oriented = shapely.geometry.polygon.orient(poly, 1.0)
        for ring in [oriented.exterior, *oriented.interiors]:
            c = np.asarray(ring.coords)
            heads.append(c[:-1])
            tails.append(c[1:])
    if not heads:
        return []
    a, b = np.vstack(heads), np.vstack(tails)
    d = b - a
    L = np.asarray([math.hypot(x, y) for x, y in d.tolist()])
    keep = L >= MIN_PASS_M
    a, b, d, L = a[keep], b[keep], d[keep], L[keep][:, None]
    # the free area is on the left of an oriented exterior ring and of its (clockwise) holes
    nrm = np.column_stack([-d[:, 1], d[:, 0]]) / L
    # (half-swath offset, quarter-swath offset) per edge, made as arrays (a LineString each cost more
    # than the clipping on a parcel with dozens of buildings)
    half_l, quarter_l = (
        shapely.linestrings(np.stack([a + nrm * off - d / L * swath_m, b + nrm * off + d / L * swath_m], axis=1))
        for off in (swath_m / 2.0, swath_m / 4.0)
    )
    if dark is not None and len(half_l):
        shapely.prepare(dark)
        near = shapely.dwithin(dark, half_l, swath_m / 2.0) | shapely.dwithin(dark, quarter_l, swath_m / 2.0)
        half_l, quarter_l = half_l[near], quarter_l[near]
    if not len(half_l):
        return []
    # a line wholly inside is its own longest part: only the others are clipped (an overlay each)
    whole = shapely.covers(inner, half_l)
    half = half_l.copy()
    half[~whole] = _clip_locally(half_l[~whole], inner)
    out: list[LineString] = []
    for k in range(len(half_l)):
        seg = half[k] if whole[k] and half[k].length >= MIN_PASS_M else _longest_part(half[k])
        if seg is None:
            seg = _clip_longest(inner, quarter_l[k])
        if seg is not None:
            out.append(seg)
    return out


def _patch_candidates(dark: BaseGeometry, free: BaseGeometry, swath_m: float) -> list[LineString]:
    """For each dark patch, a pass along its long axis through its middle, clipped to the free area."""
    out: list[LineString] = []
    inner = free.buffer(-1e-6)
    for patch in _polygons(dark):
        if patch.area < MIN_PATCH_FRACTION * swath_m**2:
            continue
        rect = np.asarray(patch.minimum_rotated_rectangle.exterior.coords)[:4]
        e1, e2 = rect[1] - rect[0], rect[2] - rect[1]
        axis = e1 if math.hypot(*e1) >= math.hypot(*e2) else e2
        L = math.hypot(*axis)
        if L < 1e-6:
            continue
        u = axis / L
        centre = np.asarray(patch.representative_point().coords[0])
        seg = _clip_longest(inner, LineString([centre - u * (L + swath_m), centre + u * (L + swath_m)]))
        if seg is None:
            continue
        # keep only the stretch beside the patch (plus half a swath), not the whole chord
        c = np.asarray(seg.coords)
        t = (np.asarray(patch.exterior.coords) - c[0]) @ u
        lo, hi = max(0.0, t.min() - swath_m / 2), min(seg.length, t.max() + swath_m / 2)
        if hi - lo >= MIN_PASS_M:
            out.append(LineString([c[0] + u * lo, c[0] + u * hi]))
    return out


def repair_passes(
    free: Polygon | MultiPolygon,
    sweeps: Sequence[Segment],
    swath_m: float,
    target: float,
    path: Sequence[XY],
    expired: Callable[[], bool] | None = None,
) -> list[Segment]:
    """Extra passes (in no particular order) that lift the coverage towards ``target``.

    ``path`` is the planned flight: a pass's detour is priced as the distance
    from each of its ends to it (leave the path, fly the pass, rejoin it).
    ``expired`` (the plan's deadline) is asked after the candidates are made and
    before each pass is chosen: once it says so, the passes chosen so far are the answer.
    """
    area = free.area
    if area <= 0:
        return []
    dark = unimaged_area(free, sweeps, swath_m)
    covered = 1.0 - dark.area / area
    if covered >= target or dark.area < 1e-6:
        return []
    cands = _edge_candidates(free, swath_m, dark) + _patch_candidates(dark, free, swath_m)
    cands = cands[:MAX_CANDIDATES]
    if not cands or (expired is not None and expired()):
        return []
    strips = shapely.buffer(cands, swath_m / 2.0, cap_style="flat")
    flown = LineString(path) if len(path) > 1 else shapely.Point(path[0])
    tips = shapely.points(np.asarray([np.asarray(c.coords)[[0, -1]] for c in cands]).reshape(-1, 2))
    detour = shapely.distance(tips, flown).reshape(-1, 2).sum(axis=1)
    cost = np.asarray([c.length for c in cands]) + detour
    shapely.prepare(dark)
    gains = np.zeros(len(cands))
    near = shapely.intersects(dark, strips)  # prepared: only the strips that touch the dark area are overlaid
    gains[near] = shapely.area(shapely.intersection(strips[near], dark))
    heap = [(-g / cst, i) for i, (g, cst) in enumerate(zip(gains, cost)) if g / cst >= TARGET_RATE * swath_m]
    heapq.heapify(heap)
    chosen: list[Segment] = []
    dark_area = dark.area
    while heap and len(chosen) < MAX_PASSES and 1.0 - dark_area / area < target:
        if expired is not None and expired():
            break
        neg, i = heapq.heappop(heap)
        g = float(strips[i].intersection(dark).area)
        rate = g / cost[i]
        if rate < TARGET_RATE * swath_m:
            continue
        if heap and rate < -heap[0][0] - 1e-9:
            heapq.heappush(heap, (-rate, i))  # no longer the best: re-queue with its true rate
            continue
        c = np.asarray(cands[i].coords)
        chosen.append(((float(c[0][0]), float(c[0][1])), (float(c[-1][0]), float(c[-1][1]))))
        dark = dark.difference(strips[i])
        dark_area = dark.area
    return chosen
