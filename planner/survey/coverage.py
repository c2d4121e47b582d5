"""Boustrophedon survey coverage of a free area, in local metres.

Given the free area (the survey area minus the no-fly holes, already grown by
the safety margin) and the swath (camera footprint across track after side
overlap), plan straight camera-on sweeps and the connections between them as one
polyline that never leaves the free area.

The stages, each a small function:

1. **Sweep placement** for a direction θ: rotate the area so sweeps run along x,
   put ``n = ceil(height / swath)`` lines from ``swath/2`` above the lowest point
   to ``swath/2`` below the highest, evenly spaced (spacing <= swath), so the
   strips reach both far edges (Fields2Cover leaves up to half a swath open at
   the far edge; we do not).
2. **Pieces**: each line clipped to the free area, split where it crosses a hole
   or a concave notch; every piece runs from boundary to boundary, because the
   coverage figure counts nothing beyond a sweep's ends.
3. **Distances** between piece ends: straight where the segment stays inside the
   free area (tested for each end's nearest ends), otherwise the shortest path
   inside it through the reflex corners (``planner.geo.transit.InsideGraph``;
   sparse min-plus products over the corner distance matrix, chunked). Parts
   of a MultiPolygon no inside path joins are connected by ``bridge`` (the
   transit graph around the zone between them).
4. **Order**: the pieces form an open travelling-salesman path where each piece
   may be flown either way, solved as one OR-Tools routing problem
   (``planner.survey.order``, in the manner of Fields2Cover's route
   planner): first the boustrophedon cells, each flown as a snake in one of
   four ways, then the pieces themselves from that order; guided local search
   bounded by a solution count, so deterministic.
5. **Direction** θ: candidates are every edge direction of the area and its
   holes plus a 2° grid. A cheap estimate (sweep length + spacing per turn + a
   detour per extra piece) ranks them; the best few and always 0° and 90° are
   built and ordered by construction, the best ``POLISH_DIRECTIONS`` of those
   by the routing model; the shortest plan that reaches the coverage target
   wins (else the shortest close to the best coverage seen).
6. **Edge sweeps**: a connection that runs along the boundary (the turn between
   two sweeps ending on the same edge) keeps the camera on: it images the band
   along a slanted edge that flat-ended sweeps leave as triangles, for no extra
   flight.

Coverage is measured like the benchmark: the union of the sweeps buffered by
half a swath with flat ends, intersected with the free area, over its area.

Every search is bounded (``MAX_*`` and ``*_SOLUTIONS`` constants): candidate
directions, full evaluations, pieces, routing-model solutions.

Measured on ``../shared/bench/coverage`` (swath 40 m, default target 0.99, CPU
seconds on this machine kind under load): 01 rectangle 3 360.0 m (= Fields2Cover,
1.120 × LB), 03 U 5 691.7 m (F2C 5 960.0), 04 two holes 6 100.6 m (F2C 6 847.9),
06 2 km² 51 395.8 m at coverage 0.9946 (F2C 51 558.7 at 0.9898); 0.07–0.9 s.
Stages 3b (a direction per cell) and 7 (extra passes) live in
``planner.survey.cells`` and ``planner.survey.repair``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import shapely
from shapely.geometry import LineString, MultiPolygon, Polygon
from shapely.geometry.base import BaseGeometry

from planner.errors import InvalidArgument
from planner.job import DEFAULT_COVERAGE_TARGET
from planner.survey.cells import CUT_GAP_M, decompose
from planner.survey.repair import MIN_RATE, repair_passes, unimaged_area
from planner.survey.order import ENGINE, order_pieces, solve_open_tour, tour_cost
from planner.geo.transit import InsideGraph

__all__ = [
    "DEFAULT_COVERAGE_TARGET",
    "CoverageResult",
    "plan_coverage",
    "coverage_fraction",
    "candidate_angles",
    "MAX_CANDIDATE_ANGLES",
    "MAX_FULL_EVALUATIONS",
    "MAX_PIECES",
]

XY = tuple[float, float]
Segment = tuple[XY, XY]

MAX_CANDIDATE_ANGLES = 120
MAX_FULL_EVALUATIONS = 5
MAX_PIECES = 1500
GRID_STEP_DEG = 2.0
MIN_PIECE_M = 1e-3
MAX_COVERAGE_CHECKS = 5
POLISH_DIRECTIONS = 3  # the best few directions (by their construction) get the routing model's search
PIECE_DIRECTIONS = 2  # ... and of those the best two get a search over the pieces
PIECE_SOLUTIONS = 8  # then the pieces: guided local search solutions (each a full descent, ~10 ms)
LOSS_WEIGHT = 2.0  # cells: a metre of sweep per swath-width of unimaged area, twice over (coverage first)
DARK_PRICE = 2.0 / MIN_RATE  # choosing a plan: dark area priced as extra passes at the least rate flown
COT_CAP = 4.0  # a sweep nearly parallel to an edge loses at most this × (w/2)² / 2 at its end
CELL_GRID_DEG = 6.0  # ... edge directions first, then a grid this coarse
CELL_ANGLES = 45  # candidate directions per cell when decomposing
CELL_PRICE_SWATHS = 1.0  # a cell of its own costs about one swath of extra hop
CELL_SOLUTIONS = 30  # the cell order: a small model (four variants per cell), cheap to search well
COVERAGE_SLACK = 0.003  # when no plan reaches the target: shortest within this of the best coverage
DETOUR_FACTOR = 0.35  # estimate: extra pieces cost this fraction of a mean piece (calibrated)
CONNECTION_GAIN = 0.02  # a connection keeps the camera on when it images this × swath m² of new area per metre
EDGE_TOL_M = 1e-5  # a connection within this of the boundary runs along it
Bridge = Callable[[XY, XY], Sequence[XY]]
CHUNK_ELEMENTS = 2_000_000  # largest temporary array in the distance products (16 MB)
_UNREACHABLE = 1e9  # cost of a connection between disconnected parts of the area


@dataclass(frozen=True)
class CoverageResult:
    """A planned survey: sweeps in flight order and direction, and the whole path.

    ``path`` runs from the first sweep's start to the last sweep's end and
    contains every sweep and connection. ``lower_bound_m`` is free area / swath:
    no path of that swath can image more per metre.
    """

    sweeps: tuple[Segment, ...]
    path: tuple[XY, ...]
    path_length_m: float
    coverage_fraction: float
    angle_deg: float
    swath_m: float
    free_area_m2: float
    lower_bound_m: float
    sweep_length_m: float
    # (angle, path length) of every plan made in full, shortest first
    candidates: tuple[tuple[float, float], ...] = field(default=(), compare=False)
    coverage_target: float = DEFAULT_COVERAGE_TARGET
    # the free area no swath strip reaches (local metres): what the operator must know is left dark
    unimaged_local: BaseGeometry | None = field(default=None, compare=False)
    direction_cells: int = 1  # cells swept in their own direction (1: one direction throughout)
    extra_passes: int = 0  # passes added along edges and over dark patches (``planner.survey.repair``)
    engine: str = ENGINE  # what ordered the sweeps

    @property
    def target_met(self) -> bool:
        """Whether ``coverage_fraction`` reaches the requested ``coverage_target``."""
        return self.coverage_fraction >= self.coverage_target

    @property
    def ratio_to_lower_bound(self) -> float:
        return self.path_length_m / self.lower_bound_m if self.lower_bound_m > 0 else math.inf


# --------------------------------------------------------------------------- helpers
def _polygons(geom: BaseGeometry) -> list[Polygon]:
    if isinstance(geom, Polygon):
        return [] if geom.is_empty else [geom]
    if isinstance(geom, MultiPolygon):
        return [g for g in geom.geoms if not g.is_empty]
    return [g for g in getattr(geom, "geoms", []) if isinstance(g, Polygon) and not g.is_empty]


def _rot(theta_deg: float) -> tuple[float, float]:
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
    for poly in _polygons(free_area_local):
        for ring in [poly.exterior, *poly.interiors]:
            c = np.asarray(ring.coords, float)
            d = c[1:] - c[:-1]
            lengths = np.hypot(d[:, 0], d[:, 1])
            ang = np.degrees(np.arctan2(d[:, 1], d[:, 0])) % 180.0
            edges.extend(zip((-lengths).tolist(), ang.tolist()))
    edges.sort()
    chosen: list[float] = []

    def add(a: float) -> None:
        a = round(a % 180.0, 6) % 180.0
        for b in chosen:
            diff = abs(a - b) % 180.0
            if min(diff, 180.0 - diff) < 0.25:
                return
        chosen.append(a)

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


def _pieces(free_rot: BaseGeometry, swath_m: float) -> tuple[np.ndarray, float, int]:
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
    for poly in _polygons(free_rot):
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
            f"the survey needs {len(out)} sweep pieces, more than the {MAX_PIECES} allowed: "
            "use a wider swath or a smaller area"
        )
    return np.asarray(out, float).reshape(-1, 2, 2), spacing, n


def _ring_segments(geom: BaseGeometry) -> np.ndarray:
    """Every ring edge of a (multi)polygon as rows x1, y1, x2, y2."""
    segs = []
    for poly in _polygons(geom):
        for ring in [poly.exterior, *poly.interiors]:
            c = np.asarray(ring.coords, float)
            segs.append(np.hstack([c[:-1], c[1:]]))
    return np.vstack(segs)


def _estimate(segs_c: np.ndarray, angle: float, swath_m: float, loss_weight: float = 0.0) -> tuple[float, int]:
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
    c, s = _rot(angle)
    x1 = segs_c[:, 0] * c + segs_c[:, 1] * s
    y1 = -segs_c[:, 0] * s + segs_c[:, 1] * c
    x2 = segs_c[:, 2] * c + segs_c[:, 3] * s
    y2 = -segs_c[:, 2] * s + segs_c[:, 3] * c
    ys, spacing = _line_offsets(float(min(y1.min(), y2.min())), float(max(y1.max(), y2.max())), swath_m)
    Y = ys[:, None]
    dy = np.where(y2 != y1, y2 - y1, 1.0)
    X = x1[None] + (Y - y1[None]) * (x2 - x1)[None] / dy[None]
    mask = (y1[None] <= Y) != (y2[None] <= Y)
    X = np.sort(np.where(mask, X, np.inf), axis=1)
    k = mask.sum(axis=1)
    width = X.shape[1] - X.shape[1] % 2
    a, b = X[:, 0:width:2], X[:, 1:width:2]
    ok = np.isfinite(b)
    lengths = np.where(ok, np.where(ok, b, 0.0) - np.where(ok, a, 0.0), 0.0)
    total = float(lengths.sum())
    pieces = int((k // 2).sum())
    n_lines = int((k > 0).sum())
    if pieces == 0:
        return math.inf, 0
    mean = total / pieces
    cost = total + spacing * (pieces - 1) + DETOUR_FACTOR * (pieces - n_lines) * mean
    if loss_weight > 0:
        cot = np.minimum(np.abs((x2 - x1) / dy), COT_CAP)
        loss = float((mask * cot[None]).sum()) * swath_m**2 / 8.0
        cost += loss_weight * loss / swath_m
    return cost, pieces


# --------------------------------------------------------------------------- stage 3: distances
class _Connector:
    """Distances and paths between sweep ends inside the free area.

    Straight visibility is tested for each end's ``NEAREST_CHECKED`` nearest
    ends (the connections a good order uses); every other pair is priced by its
    shortest path through the reflex corners, a legal upper bound. The final
    path re-tests any connection it uses, so a straight hop is never missed.
    """

    NEAREST_CHECKED = 12

    def __init__(self, graph: InsideGraph, pts: np.ndarray, bridge: Bridge | None = None) -> None:
        self.bridge = bridge
        self.g = graph
        self.pts = pts
        m = len(pts)
        diff = pts[:, None, :] - pts[None, :, :]
        euclid = np.hypot(diff[..., 0], diff[..., 1])
        self.euclid = euclid
        nodes = graph.node_xy()
        self.convex = len(nodes) == 0 and isinstance(graph.free_area_local, Polygon)
        self.V = np.ones((m, m), bool)
        self.checked = np.ones((m, m), bool)
        self.via: np.ndarray | None = None
        if self.convex:  # a convex area: every straight hop is inside
            self.D = euclid
            return
        if len(nodes) == 0:  # convex parts of a MultiPolygon: straight inside a part, never between parts
            iu, ju = np.triu_indices(m, k=1)
            V = np.eye(m, dtype=bool)
            if len(iu):
                vis = graph.visible_pairs(pts[iu], pts[ju])
                V[iu[vis], ju[vis]] = V[ju[vis], iu[vis]] = True
            self.V = V
            self.D = np.where(V, euclid, _UNREACHABLE + euclid)
            return
        k = min(m - 1, self.NEAREST_CHECKED)
        near = np.argsort(euclid, axis=1, kind="stable")[:, : k + 1]
        checked = np.zeros((m, m), bool)
        checked[np.repeat(np.arange(m), k + 1), near.ravel()] = True
        checked |= checked.T
        np.fill_diagonal(checked, False)
        iu, ju = np.nonzero(np.triu(checked, 1))
        V = np.zeros((m, m), bool)
        if len(iu):
            vis = graph.visible_pairs(pts[iu], pts[ju])
            V[iu[vis], ju[vis]] = True
            V[ju[vis], iu[vis]] = True
        np.fill_diagonal(V, True)
        np.fill_diagonal(checked, True)
        # paths through the corners
        Dn, self.nxt = graph.node_distances()
        # which corners each end sees (tangentially): a sparse list, padded with a dummy corner R
        R = len(nodes)
        vis_pn = np.zeros((m, R), bool)
        ii, kk = np.nonzero(graph.tangent_mask(pts))
        if len(ii):
            vis_pn[ii, kk] = graph.visible_pairs(pts[ii], nodes[kk])
        dist_pn = np.hypot(*(pts[:, None, :] - nodes[None, :, :]).transpose(2, 0, 1))
        counts = vis_pn.sum(axis=1)
        K = max(1, int(counts.max()))
        order_k = np.argsort(~vis_pn, axis=1, kind="stable")[:, :K]  # visible corners first
        Vidx = np.where(np.take_along_axis(vis_pn, order_k, axis=1), order_k, R)
        Aval = np.where(Vidx < R, np.take_along_axis(dist_pn, np.minimum(Vidx, R - 1), axis=1), np.inf)
        Dn_ext = np.full((R + 1, R + 1), np.inf)
        Dn_ext[:R, :R] = Dn
        # M[r, f] = min over corners s seen from f of Dn[r, s] + |s f|
        step = max(1, CHUNK_ELEMENTS // max(1, (R + 1) * K))
        M = np.empty((R + 1, m))
        self.M_arg = np.empty((R + 1, m), int)
        for f0 in range(0, m, step):
            T = Dn_ext[:, Vidx[f0 : f0 + step]] + Aval[None, f0 : f0 + step, :]  # (r, f, k)
            kbest = np.argmin(T, axis=2)
            M[:, f0 : f0 + step] = np.take_along_axis(T, kbest[:, :, None], axis=2)[:, :, 0]
            self.M_arg[:, f0 : f0 + step] = np.take_along_axis(
                np.broadcast_to(Vidx[None, f0 : f0 + step], T.shape), kbest[:, :, None], axis=2
            )[:, :, 0]
        # via[e, f] = min over corners r seen from e of |e r| + M[r, f]
        via = np.empty((m, m))
        self.via_arg = np.empty((m, m), int)
        step = max(1, CHUNK_ELEMENTS // max(1, K * m))
        for e0 in range(0, m, step):
            tot = Aval[e0 : e0 + step, :, None] + M[Vidx[e0 : e0 + step]]  # (e, k, f)
            kbest = np.argmin(tot, axis=1)
            via[e0 : e0 + step] = np.take_along_axis(tot, kbest[:, None, :], axis=1)[:, 0, :]
            self.via_arg[e0 : e0 + step] = np.take_along_axis(Vidx[e0 : e0 + step], kbest, axis=1)
        self.via = via
        D = np.where(V, euclid, via)
        # pairs never checked and with no corner path: check them now (rare)
        todo = ~checked & ~np.isfinite(via)
        ti, tj = np.nonzero(np.triu(todo, 1))
        if len(ti):
            vis = graph.visible_pairs(pts[ti], pts[tj])
            V[ti[vis], tj[vis]] = V[tj[vis], ti[vis]] = True
            D[ti[vis], tj[vis]] = D[tj[vis], ti[vis]] = euclid[ti[vis], tj[vis]]
            checked[ti, tj] = checked[tj, ti] = True
        self.V, self.checked = V, checked
        self.D = np.where(np.isfinite(D), D, _UNREACHABLE + euclid)

    def path(self, i: int, j: int) -> list[XY]:
        """Polyline from point i to point j (both included)."""
        p, q = self.pts[i], self.pts[j]
        straight = [(float(p[0]), float(p[1])), (float(q[0]), float(q[1]))]
        if self.convex or self.V[i, j]:
            return straight
        if not self.checked[i, j] and self.g.visible_pairs(p[None], q[None])[0]:
            return straight
        if self.via is None or not np.isfinite(self.via[i, j]):
            if self.bridge is not None:  # disconnected parts: fly around whatever separates them
                return [straight[0], *self.bridge(straight[0], straight[1])[1:-1], straight[1]]
            return straight
        r = int(self.via_arg[i, j])
        s = int(self.M_arg[r, j])
        nodes = self.g.node_xy()
        seq = [r]
        for _ in range(len(nodes)):
            if seq[-1] == s:
                break
            seq.append(int(self.nxt[seq[-1], s]))
        return [straight[0], *((float(nodes[k][0]), float(nodes[k][1])) for k in seq), straight[1]]


# --------------------------------------------------------------------------- stage 4: order
# Pieces p = 0..n-1 have end points 2p and 2p+1; an oriented piece (p, d) starts at 2p+d.
# The tour matrix X has two extra nodes: START (row 2n) and END (column 2n+1) carry the
# distances to the optional start/end points (0 when absent), so every move is uniform.
def _augmented(D: np.ndarray, dstart: np.ndarray | None, dend: np.ndarray | None) -> np.ndarray:
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


def _cells(pieces_rot: np.ndarray) -> list[list[int]]:
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


def _order_cells(X: np.ndarray, cells: list[list[int]], solution_limit: int) -> tuple[np.ndarray, np.ndarray]:
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
    if C > 1 and solution_limit > 0:
        seq = solve_open_tour(
            X[np.ix_(ex, en)] + it[None, :], X[m, en] + it, X[ex, m + 1],
            [[4 * c + v for v in range(4)] for c in range(C)], initial, solution_limit,
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


def _order_pieces(
    X: np.ndarray, n: int, has_start: bool, cells: list[list[int]] | None, solution_limit: int,
    prefix: int | None = None, cell_limit: int = 0,
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
        inits.append(_order_cells(X, cells, cell_limit))
    k = int(np.argmin(X[m, :m])) if has_start else 0
    inits.append(_nearest_neighbour(k // 2, k % 2, X, n))
    best = min(inits, key=lambda od: tour_cost(od[0], od[1], X))
    if solution_limit <= 0 or n < 3:
        return best
    return order_pieces(X, best, solution_limit)


# --------------------------------------------------------------------------- one direction, in full
@dataclass(eq=False)
class _Planned:
    angle: float
    path: list[XY]
    camera: list[bool]  # per path segment
    length: float
    source: "_Routing | None" = None  # the pieces and distances it was ordered from
    cells: int = 1  # cells with their own direction (1: one direction for the whole area)
    order: tuple[np.ndarray, np.ndarray] | None = None  # (pieces, directions) as flown


def _direction_pieces(free_c: BaseGeometry, angle: float, swath_m: float) -> tuple[np.ndarray, list[list[int]]]:
    """Sweep pieces (n, 2, 2) in the area frame for direction ``angle``, and their boustrophedon cells."""
    c, s = _rot(angle)
    # rotate by -angle: sweeps along x
    fwd = lambda a: np.column_stack([a[:, 0] * c + a[:, 1] * s, -a[:, 0] * s + a[:, 1] * c])  # noqa: E731
    back = lambda a: np.column_stack([a[:, 0] * c - a[:, 1] * s, a[:, 0] * s + a[:, 1] * c])  # noqa: E731
    free_rot = shapely.transform(free_c, fwd)
    pieces, _spacing, _n = _pieces(free_rot, swath_m)
    if len(pieces) == 0:
        return pieces, []
    return back(pieces.reshape(-1, 2)).reshape(-1, 2, 2), _cells(pieces)


def _cell_estimate(swath_m: float) -> Callable[[BaseGeometry], tuple[float, float]]:
    """(estimated path m, best angle) of one cell swept in one direction (the ranking estimate)."""

    def est(cell: BaseGeometry) -> tuple[float, float]:
        segs = _ring_segments(cell)
        return min((_estimate(segs, a, swath_m, LOSS_WEIGHT)[0], a) for a in candidate_angles(cell, CELL_ANGLES, CELL_GRID_DEG))

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


def _multi_cell_pieces(
    free_c: BaseGeometry, swath_m: float
) -> tuple[np.ndarray, list[list[int]], float, int] | None:
    """Pieces of every cell in its own direction (``planner.survey.cells``), or None when one cell is best.

    Returns pieces, their boustrophedon cells, the direction of the largest cell and the cell count.
    """
    cells, cuts = decompose(free_c, _cell_estimate(swath_m), min_cell_m=swath_m, cell_price_m=CELL_PRICE_SWATHS * swath_m)
    if len(cells) < 2:
        return None
    all_pieces: list[np.ndarray] = []
    all_cells: list[list[int]] = []
    offset = 0
    for cell, angle in cells:
        pieces, sub = _direction_pieces(cell, angle, swath_m)
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
class _Routing:
    """What one piece set needs to be ordered: the pieces, their cells and the inside distances."""

    pieces: np.ndarray  # (n, 2, 2), area frame; end 2p = pieces[p, 0], 2p+1 = pieces[p, 1]
    cells: list[list[int]]
    conn: _Connector
    X: np.ndarray
    n_direction_cells: int = 1
    prefix: int | None = None  # pieces 0..prefix-1 come already ordered (a re-plan with extra passes)


def _prepare(
    free_c: BaseGeometry,
    pieces: np.ndarray,
    cells: list[list[int]],
    start_c: XY | None,
    end_c: XY | None,
    graph: InsideGraph,
    bridge: Bridge | None,
) -> _Routing:
    pts = pieces.reshape(-1, 2)
    conn = _Connector(graph, pts, bridge)
    dstart = np.hypot(*(pts - np.asarray(start_c)).T) if start_c is not None else None
    dend = np.hypot(*(pts - np.asarray(end_c)).T) if end_c is not None else None
    return _Routing(pieces, cells, conn, _augmented(conn.D, dstart, dend))


def _route(
    r: _Routing, angle: float, has_start: bool, solution_limit: int, cell_limit: int = 0,
    start: tuple[np.ndarray, np.ndarray] | None = None,
) -> _Planned:
    """Order the pieces (construction or the given ``start``, then the routing model) and build the polyline."""
    pts = r.pieces.reshape(-1, 2)
    if start is not None:
        order, dirs = order_pieces(r.X, start, solution_limit) if solution_limit > 0 else start
    else:
        order, dirs = _order_pieces(r.X, len(r.pieces), has_start, r.cells, solution_limit, r.prefix, cell_limit)
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
    return _Planned(angle, path, camera, length, r, r.n_direction_cells, (order, dirs))


def _edge_sweeps(free_c: BaseGeometry, planned: _Planned, swath_m: float) -> list[bool]:
    """Camera flags with the connections that image new area switched on.

    A turn from one sweep's end to the next sweep's start often runs along or
    near a boundary edge; keeping the camera on there images the band along
    the edge that straight sweeps ending on a slanted boundary leave as small
    triangles. Any connection (it lies inside the free area, flown at survey
    height and speed) whose strip images at least ``CONNECTION_GAIN`` × swath
    m² per metre of area no sweep images keeps the camera on; runs along the
    boundary always do. It costs no extra flight.
    """
    flags = list(planned.camera)
    conn_idx = [i for i, on in enumerate(flags) if not on]
    if not conn_idx:
        return flags
    band = free_c.boundary.buffer(EDGE_TOL_M, quad_segs=1)
    shapely.prepare(band)
    P = np.asarray(planned.path)
    segs = shapely.linestrings(np.stack([P[conn_idx], P[np.asarray(conn_idx) + 1]], axis=1))
    along = shapely.covers(band, segs)
    sweeps = [(planned.path[i], planned.path[i + 1]) for i, on in enumerate(flags) if on]
    dark = unimaged_area(free_c, sweeps, swath_m)
    lengths = shapely.length(segs)
    gain = np.zeros(len(conn_idx))
    if not dark.is_empty:
        shapely.prepare(dark)
        strips = shapely.buffer(segs, swath_m / 2.0, cap_style="flat")
        gain = shapely.area(shapely.intersection(strips, dark))
    inside_area = free_c.buffer(EDGE_TOL_M, quad_segs=1)
    shapely.prepare(inside_area)
    inside = shapely.covers(inside_area, segs)  # a hop bridged around a zone between parts is not
    for i, on, g, L, ok in zip(conn_idx, along.tolist(), gain.tolist(), lengths.tolist(), inside.tolist()):
        if on or (ok and L > 0 and g >= CONNECTION_GAIN * swath_m * L):
            flags[i] = True
    return flags


# --------------------------------------------------------------------------- entry point
def plan_coverage(
    free_area_local: Polygon | MultiPolygon,
    swath_m: float,
    *,
    coverage_target: float = DEFAULT_COVERAGE_TARGET,
    start: XY | None = None,
    end: XY | None = None,
    angles_deg: Sequence[float] | None = None,
    max_candidates: int = MAX_CANDIDATE_ANGLES,
    max_full: int = MAX_FULL_EVALUATIONS,
    edge_sweeps: bool = True,
    polish: bool = True,
    decompose_cells: bool = True,
    repair: bool = True,
    bridge: Bridge | None = None,
) -> CoverageResult:
    """Plan a boustrophedon survey of ``free_area_local`` with sweeps ``swath_m`` apart.

    ``start``/``end`` (local metres, e.g. the dock) make the order prefer to
    begin and finish near them (straight-line distance; the caller plans the
    real transit). ``angles_deg`` gives the exact directions to try (default:
    edge directions and a grid, with 0° and 90° always planned in full).
    ``edge_sweeps`` keeps the camera on along connections that run along the
    boundary (free extra coverage, see ``_edge_sweeps``). ``polish`` re-plans
    the best few directions with a stronger (seeded, bounded) order search.
    ``bridge(a, b) -> polyline`` connects parts of a MultiPolygon free area that
    no inside path joins (e.g. ``TransitGraph.path`` around the zone between
    them); without it such a hop is straight and leaves the free area.

    ``coverage_target`` picks among directions: the shortest plan reaching it
    wins; when none does (a boundary not parallel to the sweeps leaves small
    triangles no straight sweep inside the area can image), the shortest within
    ``COVERAGE_SLACK`` of the best coverage seen. ``coverage_fraction`` in the
    result says what was reached.

    Raises ``InvalidArgument`` for an empty or degenerate area, a swath <= 0 or
    a survey that would need more than ``MAX_PIECES`` sweep pieces.
    """
    if not isinstance(swath_m, (int, float)) or not math.isfinite(swath_m) or swath_m <= 0:
        raise InvalidArgument(f"swath_m must be > 0 m, got {swath_m!r}")
    if not 0 < coverage_target <= 1:
        raise InvalidArgument(f"coverage_target must be in (0, 1], got {coverage_target}")
    if free_area_local is None or free_area_local.is_empty:
        raise InvalidArgument("the free area is empty: the area is wholly inside no-fly zones or was not given")
    if not isinstance(free_area_local, (Polygon, MultiPolygon)):
        raise InvalidArgument(f"the free area must be a Polygon or MultiPolygon, got {free_area_local.geom_type}")
    if not free_area_local.is_valid:
        free_area_local = shapely.make_valid(free_area_local)
        polys = _polygons(free_area_local)
        free_area_local = polys[0] if len(polys) == 1 else MultiPolygon(polys)
    area = free_area_local.area
    if area < 1.0:
        raise InvalidArgument(f"the free area is degenerate ({area:.3g} m²)")
    minx, miny, maxx, maxy = free_area_local.bounds
    approx_lines = (math.hypot(maxx - minx, maxy - miny)) / swath_m
    if approx_lines > MAX_PIECES:
        raise InvalidArgument(
            f"a swath of {swath_m:g} m needs about {approx_lines:.0f} sweeps across this area, "
            f"more than the {MAX_PIECES} allowed: use a wider swath or a smaller area"
        )
    # work centred on the centroid for numerical headroom
    cx, cy = free_area_local.centroid.x, free_area_local.centroid.y
    free_c = shapely.transform(free_area_local, lambda a: a - np.array([cx, cy]))
    start_c = (start[0] - cx, start[1] - cy) if start is not None else None
    end_c = (end[0] - cx, end[1] - cy) if end is not None else None
    bridge_c: Bridge | None = None
    if bridge is not None:
        outer = bridge

        def bridge_c(a: XY, b: XY) -> list[XY]:
            pts = outer((a[0] + cx, a[1] + cy), (b[0] + cx, b[1] + cy))
            return [(p[0] - cx, p[1] - cy) for p in pts]

    if angles_deg is None:
        cands = candidate_angles(free_c, max_candidates)
        always = [0.0, 90.0]
    else:
        cands = []
        for a in list(angles_deg)[: max(1, max_candidates)]:
            a = float(a) % 180.0
            if not math.isfinite(a):
                raise InvalidArgument(f"sweep angles must be finite, got {angles_deg!r}")
            if a not in cands:
                cands.append(a)
        if not cands:
            raise InvalidArgument("angles_deg is empty")
        always = []
    segs_c = _ring_segments(free_c)
    ranked = sorted((*_estimate(segs_c, a, swath_m), i, a) for i, a in enumerate(cands))
    full = [a for *_, a in ranked[: max(1, max_full)]]
    for a in always:
        if a not in full:
            full.append(a)
    graph = InsideGraph(free_c)
    has_start = start_c is not None
    planned_all: list[_Planned] = []
    for a in full:  # constructions only: enough to rank directions
        pieces, cells = _direction_pieces(free_c, a, swath_m)
        if len(pieces) == 0:
            continue
        planned_all.append(_route(_prepare(free_c, pieces, cells, start_c, end_c, graph, bridge_c), a, has_start, 0))
    if decompose_cells and angles_deg is None:  # a direction per cell, where the area bends
        multi = _multi_cell_pieces(free_c, swath_m)
        if multi is not None:
            pieces, cells, a, k = multi
            r = _prepare(free_c, pieces, cells, start_c, end_c, graph, bridge_c)
            r.n_direction_cells = k
            planned_all.append(_route(r, a, has_start, 0))
    if not planned_all:
        raise InvalidArgument("no sweep fits in the free area")
    planned_all.sort(key=lambda p: (p.length, p.angle))
    cov_of: dict[int, tuple[float, list[bool], _Planned]] = {}  # id(plan) → (coverage, flags, the plan: kept alive)

    def coverage_of(p: _Planned) -> float:
        if id(p) not in cov_of:
            flags = _edge_sweeps(free_c, p, swath_m) if edge_sweeps else p.camera
            segs = [(p.path[i], p.path[i + 1]) for i, on in enumerate(flags) if on]
            cov_of[id(p)] = (coverage_fraction(free_c, segs, swath_m), flags, p)
        return cov_of[id(p)][0]

    # the best few directions again, ordered by the routing model
    # (the cell order for the best few, then the pieces of the best of those)
    polished: list[_Planned] = []
    for cand in list(planned_all[: POLISH_DIRECTIONS if polish else 0]):
        assert cand.source is not None
        routed = _route(cand.source, cand.angle, has_start, 0, CELL_SOLUTIONS)
        polished.append(routed if routed.length < cand.length - 1e-6 else cand)
    for top in sorted(polished, key=lambda p: (p.length, p.angle))[:PIECE_DIRECTIONS]:
        assert top.source is not None
        polished.append(_route(top.source, top.angle, has_start, PIECE_SOLUTIONS, start=top.order))
    planned_all += [p for p in polished if all(p is not q for q in planned_all)]
    planned_all.sort(key=lambda p: (p.length, p.angle))
    # the shortest plan that reaches the coverage target; if none does, the shortest
    # within COVERAGE_SLACK of the best coverage seen (a bounded number of coverage checks)
    checked = planned_all[:MAX_COVERAGE_CHECKS]
    checked += [p for p in planned_all[MAX_COVERAGE_CHECKS:] if p.cells > 1]  # the per-cell plan is always a candidate
    reach = [p for p in checked if coverage_of(p) >= coverage_target]
    tried = tuple((p.angle, p.length) for p in planned_all)

    def score(p: _Planned) -> tuple[float, float]:
        """Path + the price of the area left dark (what extra passes would have to image)."""
        return (p.length + DARK_PRICE * (1.0 - coverage_of(p)) * area / swath_m, p.angle)

    def with_passes(p: _Planned) -> tuple[_Planned, int]:
        """``p`` with extra passes where its sweeps leave the area dark, ordered again with the sweeps."""
        if not repair or coverage_of(p) >= coverage_target or p.source is None:
            return p, 0
        flags = cov_of[id(p)][1]
        segs = [(p.path[i], p.path[i + 1]) for i, on in enumerate(flags) if on]
        passes = repair_passes(free_c, segs, swath_m, coverage_target, p.path)
        if not passes:
            return p, 0
        # the camera-on segments flown so far (sweeps and edge runs) in flight order, then the passes
        pieces = np.concatenate([np.asarray(segs, float).reshape(-1, 2, 2), np.asarray(passes, float).reshape(-1, 2, 2)])
        r = _prepare(free_c, pieces, [], start_c, end_c, graph, bridge_c)
        r.n_direction_cells = p.source.n_direction_cells
        r.prefix = len(segs)
        repaired = _route(r, p.angle, has_start, PIECE_SOLUTIONS if polish else 0)
        return (repaired, len(passes)) if coverage_of(repaired) > coverage_of(p) else (p, 0)

    if reach:
        best, n_passes = reach[0], 0
    else:
        # two candidates: the least path + price of the dark area, and the shortest close to the best
        # coverage; each gets its extra passes, and the better score after them wins
        top_cov = max(coverage_of(p) for p in checked)
        short = next(p for p in checked if coverage_of(p) >= top_cov - COVERAGE_SLACK)
        lead = min(checked, key=score)
        bases = [lead] if lead is short else [lead, short]
        options = [(p, 0) for p in bases] + [with_passes(p) for p in bases]
        best, n_passes = min(options, key=lambda o: score(o[0]))
    coverage_of(best)
    flags = cov_of[id(best)][1]
    path = tuple((p[0] + cx, p[1] + cy) for p in best.path)
    sweeps = tuple((path[i], path[i + 1]) for i, on in enumerate(flags) if on)
    length = float(np.hypot(*np.diff(np.asarray(path), axis=0).T).sum()) if len(path) > 1 else 0.0
    cov = coverage_fraction(free_area_local, sweeps, swath_m)
    dark = unimaged_area(free_area_local, sweeps, swath_m)
    return CoverageResult(
        sweeps=sweeps,
        path=path,
        path_length_m=length,
        coverage_fraction=cov,
        angle_deg=best.angle,
        swath_m=float(swath_m),
        free_area_m2=float(area),
        lower_bound_m=float(area / swath_m),
        sweep_length_m=float(sum(math.dist(a, b) for a, b in sweeps)),
        candidates=tried,
        coverage_target=float(coverage_target),
        unimaged_local=dark,
        direction_cells=best.cells,
        extra_passes=n_passes,
        engine=ENGINE,
    )


