"""Survey sweeps for one direction: where the lines go, how they are cut, what they image.

Stages 1-2 of ``planner.survey.coverage`` (sweep placement and pieces), the candidate
directions and the cheap length estimate that ranks them, and the coverage figure.
They share the rotated frame (sweeps along x) and nothing else of the search, so they
live apart from the connections, the order and the choice of plan.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

import numpy as np
import shapely
from shapely.geometry import LineString, MultiPolygon, Polygon
from shapely.geometry.base import BaseGeometry

from planner.errors import InvalidArgument

__all__ = [
    "XY",
    "Segment",
    "MAX_CANDIDATE_ANGLES",
    "MAX_PIECES",
    "MAX_LINES",
    "GRID_STEP_DEG",
    "MIN_PIECE_M",
    "COT_CAP",
    "DETOUR_FACTOR",
    "MAX_ESTIMATE_LINES",
    "polygons_of",
    "rotation",
    "coverage_fraction",
    "candidate_angles",
    "sweep_pieces",
    "ring_segments",
    "estimate_length",
    "estimate_lengths",
]

XY = tuple[float, float]
Segment = tuple[XY, XY]
MAX_CANDIDATE_ANGLES = 120
# Sizes one survey plans. Large areas are planned band by band (planner.survey.bands) in time
# linear in the area, so these only refuse the absurd, with a reason: 20 000 lines are 800 km at a
# 40 m swath; 400 km² at 40 m is about 700 lines and 1 000-3 000 pieces.
MAX_LINES = 20_000
MAX_PIECES = 200_000
GRID_STEP_DEG = 2.0
MIN_PIECE_M = 1e-3
COT_CAP = 4.0  # a sweep nearly parallel to an edge loses at most this × (w/2)² / 2 at its end
DETOUR_FACTOR = 0.35  # estimate: extra pieces cost this fraction of a mean piece (calibrated)
MAX_ESTIMATE_LINES = 96  # the estimate samples at most this many lines per direction (large areas)
_ESTIMATE_ELEMENTS = 4_000_000  # largest (directions × lines × edges) array of one estimate chunk


def polygons_of(geom: BaseGeometry) -> list[Polygon]:
    if isinstance(geom, Polygon):
        return [] if geom.is_empty else [geom]
    if isinstance(geom, MultiPolygon):
        return [g for g in geom.geoms if not g.is_empty]
    return [g for g in getattr(geom, "geoms", []) if isinstance(g, Polygon) and not g.is_empty]


def rotation(theta_deg: float) -> tuple[float, float]:
    """(cos, sin) with exact values at multiples of 90° (no 6e-17 noise on axis-aligned areas)."""
    t = theta_deg % 360.0
    exact = {0.0: (1.0, 0.0), 90.0: (0.0, 1.0), 180.0: (-1.0, 0.0), 270.0: (0.0, -1.0)}
    if t in exact:
        return exact[t]
    r = math.radians(t)
    return math.cos(r), math.sin(r)


def coverage_fraction(free_area_local: BaseGeometry, sweeps: Sequence[Segment], swath_m: float) -> float:
    """Area of the flat-ended swath strips ∩ free area, over the free area (the benchmark's figure)."""
    area = free_area_local.area
    lines = [LineString(s) for s in sweeps if math.dist(s[0], s[1]) > 1e-9]
    if not lines or area <= 0:
        return 0.0
    strips = shapely.union_all(shapely.buffer(lines, swath_m / 2.0, cap_style="flat"))
    return float(strips.intersection(free_area_local).area / area)


def candidate_angles(
    free_area_local: BaseGeometry, max_angles: int = MAX_CANDIDATE_ANGLES, grid_step_deg: float = GRID_STEP_DEG
) -> list[float]:
    """Sweep directions to try, degrees in [0, 180): edge directions (longest edges first) and a grid.

    0° and 90° are always included. Near-duplicates (within 0.25°) are merged.
    """
    edges: list[tuple[float, float]] = []  # (-length, angle)
    for poly in polygons_of(free_area_local):
        for ring in [poly.exterior, *poly.interiors]:
            c = np.asarray(ring.coords, float)
            d = c[1:] - c[:-1]
            lengths = np.hypot(d[:, 0], d[:, 1])
            ang = np.degrees(np.arctan2(d[:, 1], d[:, 0])) % 180.0
            edges.extend(zip((-lengths).tolist(), ang.tolist()))
    edges.sort()
    chosen: list[float] = []
    srt: list[float] = []  # the same, sorted: a new angle is compared with its two circular neighbours only

    def add(a: float) -> None:
        a = round(a % 180.0, 6) % 180.0
        if srt:
            pos = bisect.bisect_left(srt, a)
            for b in (srt[pos - 1], srt[pos % len(srt)]):
                diff = abs(a - b) % 180.0
                if min(diff, 180.0 - diff) < 0.25:
                    return
        chosen.append(a)
        bisect.insort(srt, a)

    add(0.0)
    add(90.0)
    for neg_len, a in edges:
        if len(chosen) >= max_angles // 3 + 2 or -neg_len <= 1e-6:
            break
        add(a)
    k = 0.0
    while k < 180.0 and len(chosen) < max_angles:
        add(k)
        k += grid_step_deg
    return chosen


# --------------------------------------------------------------------------- stage 1-2: pieces
def _line_offsets(miny: float, maxy: float, swath_m: float) -> tuple[np.ndarray, float]:
    height = maxy - miny
    n = max(1, math.ceil(height / swath_m - 1e-9))
    if n == 1:
        return np.array([(miny + maxy) / 2.0]), swath_m
    spacing = (height - swath_m) / (n - 1)
    ys = miny + swath_m / 2.0 + spacing * np.arange(n)
    ys[-1] = maxy - swath_m / 2.0
    return ys, spacing


def sweep_pieces(free_rot: BaseGeometry, swath_m: float) -> tuple[np.ndarray, float, int]:
    """Sweep pieces (m, 2, 2) of the rotated area (sweeps along x, low x first), the spacing, the line count.

    Pieces come from the even-odd crossings of each line with every ring edge,
    evaluated just below and just above the line and united, so a line running
    exactly along a boundary edge (the bottom of a hole, of a notch) stays one
    piece on that edge instead of being cut. Pieces are ordered by line, then x.
    """
    minx, miny, maxx, maxy = free_rot.bounds
    ys, spacing = _line_offsets(miny, maxy, swath_m)
    n = len(ys)
    segs = []
    for poly in polygons_of(free_rot):
        for ring in [poly.exterior, *poly.interiors]:
            c = np.asarray(ring.coords, float)
            segs.append(np.hstack([c[:-1], c[1:]]))
    S = np.vstack(segs)
    x1, y1, x2, y2 = S[:, 0][None], S[:, 1][None], S[:, 2][None], S[:, 3][None]
    Y = ys[:, None]
    dy = np.where(y2 != y1, y2 - y1, 1.0)
    X = x1 + (Y - y1) * (x2 - x1) / dy  # (lines, edges)
    out: list[tuple[float, float, float, float]] = []
    below = (y1 <= Y) != (y2 <= Y)  # the line seen from just above
    above = (y1 < Y) != (y2 < Y)  # ... and from just below
    for li in range(n):
        spans: list[tuple[float, float]] = []
        for mask in (below[li], above[li]):
            xs = np.sort(X[li, mask])
            spans.extend(zip(xs[0::2].tolist(), xs[1::2].tolist()))
        spans.sort()
        merged: list[list[float]] = []
        for a, b in spans:
            if merged and a <= merged[-1][1] + 1e-7:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        y = float(ys[li])
        out.extend((a, y, b, y) for a, b in merged if b - a >= MIN_PIECE_M)
    if len(out) > MAX_PIECES:
        raise InvalidArgument(
            f"the survey needs {len(out)} sweep pieces, more than the {MAX_PIECES} one survey plans: "
            "split the area into several surveys, or use a wider swath"
        )
    return np.asarray(out, float).reshape(-1, 2, 2), spacing, n


def ring_segments(geom: BaseGeometry) -> np.ndarray:
    """Every ring edge of a (multi)polygon as rows x1, y1, x2, y2."""
    segs = []
    for poly in polygons_of(geom):
        for ring in [poly.exterior, *poly.interiors]:
            c = np.asarray(ring.coords, float)
            segs.append(np.hstack([c[:-1], c[1:]]))
    return np.vstack(segs)


def estimate_length(segs_c: np.ndarray, angle: float, swath_m: float, loss_weight: float = 0.0) -> tuple[float, int]:
    """Cheap path estimate for one direction, to rank directions before planning the best in full.

    Sweep length + one spacing per turn + a detour per extra piece (a line split
    by a hole or notch costs about a third of a typical piece to come back for,
    calibrated on planned paths). Pure numpy over the ring edges. Also returns
    the piece count, which sizes the search effort.

    ``loss_weight`` > 0 adds the area flat sweep ends leave unimaged, in metres
    of sweep it would take to image it (× the weight): where a sweep ends on an
    edge at angle φ, a triangle of w²·|cot φ|/8 beside its end stays dark. It
    makes a direction across a corridor's slanted sides dear, as it is.
    """
    costs, pieces = estimate_lengths(segs_c, [angle], swath_m, loss_weight)
    return float(costs[0]), int(pieces[0])


def estimate_lengths(
    segs_c: np.ndarray, angles: Sequence[float], swath_m: float, loss_weight: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """``estimate_length`` for many directions at once: (costs, piece counts), one per angle.

    Directions go in chunks so the (directions, lines, edges) arrays stay below
    ``_ESTIMATE_ELEMENTS`` elements (a field with hundreds of holes has thousands of edges).
    """
    angles = [float(a) for a in angles]
    per = max(1, _ESTIMATE_ELEMENTS // max(1, MAX_ESTIMATE_LINES * len(segs_c)))
    if len(angles) <= per:
        return _estimate_chunk(segs_c, angles, swath_m, loss_weight)
    parts = [_estimate_chunk(segs_c, angles[i : i + per], swath_m, loss_weight) for i in range(0, len(angles), per)]
    return np.concatenate([c for c, _ in parts]), np.concatenate([n for _, n in parts])


def _estimate_chunk(
    segs_c: np.ndarray, angles: Sequence[float], swath_m: float, loss_weight: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """One chunk of ``estimate_lengths``.

    Why one array operation: the cell decomposition ranks some forty directions
    for every cell and every merge it considers (thousands of calls on a parcel
    with notches); per-call overhead, not arithmetic, was most of the planning
    time. Lines are padded to the most any direction needs and masked.
    """
    rot = np.asarray([rotation(float(a)) for a in angles], float).reshape(-1, 2)
    c, s = rot[:, :1], rot[:, 1:]  # (A, 1)
    x1 = segs_c[None, :, 0] * c + segs_c[None, :, 1] * s  # (A, E)
    y1 = -segs_c[None, :, 0] * s + segs_c[None, :, 1] * c
    x2 = segs_c[None, :, 2] * c + segs_c[None, :, 3] * s
    y2 = -segs_c[None, :, 2] * s + segs_c[None, :, 3] * c
    lo = np.minimum(y1.min(axis=1), y2.min(axis=1))
    hi = np.maximum(y1.max(axis=1), y2.max(axis=1))
    n_of = np.maximum(1, np.ceil((hi - lo) / swath_m - 1e-9)).astype(int)
    many = n_of > 1
    spacing = np.where(many, (hi - lo - swath_m) / np.maximum(n_of - 1, 1), swath_m)
    # a large area is sampled: at most MAX_ESTIMATE_LINES lines evenly across it, the sums scaled up
    # (the estimate ranks directions; its cost then stays linear in the boundary, not in the area)
    n_eval = np.minimum(n_of, MAX_ESTIMATE_LINES)
    scale = n_of / n_eval
    L = int(n_eval.max())
    k_idx = np.arange(L)[None, :]
    step = np.where(n_eval > 1, (hi - lo - swath_m) / np.maximum(n_eval - 1, 1), 0.0)
    ys = np.where(many[:, None], lo[:, None] + swath_m / 2.0 + step[:, None] * k_idx, ((lo + hi) / 2.0)[:, None])
    ys = np.where(many[:, None] & (k_idx == n_eval[:, None] - 1), (hi - swath_m / 2.0)[:, None], ys)
    n_of_eval = n_eval
    valid = k_idx < n_of_eval[:, None]  # (A, L)
    Y = ys[:, :, None]  # (A, L, 1)
    dy = np.where(y2 != y1, y2 - y1, 1.0)
    X = x1[:, None] + (Y - y1[:, None]) * ((x2 - x1) / dy)[:, None]
    mask = ((y1[:, None] <= Y) != (y2[:, None] <= Y)) & valid[:, :, None]
    X = np.sort(np.where(mask, X, np.inf), axis=2)
    k = mask.sum(axis=2)  # (A, L)
    width = X.shape[2] - X.shape[2] % 2
    a, b = X[:, :, 0:width:2], X[:, :, 1:width:2]
    ok = np.isfinite(b)
    lengths = np.where(ok, np.where(ok, b, 0.0) - np.where(ok, a, 0.0), 0.0)
    total = lengths.sum(axis=(1, 2)) * scale
    pieces = np.rint((k // 2).sum(axis=1) * scale)
    n_lines = np.rint((k > 0).sum(axis=1) * scale)
    mean = total / np.maximum(pieces, 1)
    cost = total + spacing * (pieces - 1) + DETOUR_FACTOR * (pieces - n_lines) * mean
    if loss_weight > 0:
        cot = np.minimum(np.abs((x2 - x1) / dy), COT_CAP)  # (A, E)
        loss = (mask * cot[:, None, :]).sum(axis=(1, 2)) * swath_m**2 / 8.0 * scale
        cost = cost + loss_weight * loss / swath_m
    cost = np.where(pieces > 0, cost, np.inf)
    return cost, pieces.astype(int)
