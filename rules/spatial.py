"""Metric geometry for the rules: a sortie's segments and a spatial index of geozones.

Horizontal work happens in the job's local frame (``planner.geo.projection.LocalFrame``,
the UTM zone of the plan area's centroid), the same frame the planner builds
its paths in, so a path the planner keeps 30 m from a zone measures 30 m here.

The zone index projects every zone volume into the local frame once and keeps
STRtrees of the polygons and of the circle centres; a query is one vectorised
``dwithin`` over all of a sortie's segments, so the Python work is only for the
pairs that really are within the buffer. Built indexes are memoised by the
identity of the zones tuple and the frame, so re-evaluating against the same
``World`` (the alternatives loop, dispatch re-checks) does not rebuild it.

Vertical references: zone limits in AGL are compared with waypoint ``alt_m``
(AGL) directly; AMSL and WGS84 limits are converted to AGL by subtracting the
sortie's dock ``ground_alt_m`` — flat ground around the dock is assumed (no
terrain model); WGS84 is treated as AMSL (see ``planner.world.model.VerticalReference``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import shapely
from shapely.geometry import Point, Polygon
from shapely.strtree import STRtree

from planner.plan import Sortie
from planner.geo.projection import LocalFrame
from planner.world.model import CircleArea, Geozone, VerticalReference

__all__ = [
    "SortieSegments",
    "ZoneIndex",
    "ZonePairs",
    "segment_circle_range",
    "segment_polygon_range",
    "sortie_segments",
    "zone_index_for",
]


@dataclass(frozen=True)
class SortieSegments:
    """A sortie as straight segments a→b, each attributed to the leg of its end waypoint.

    The first waypoint of a sortie is a point segment (a = b). Arrays are
    parallel: ``lonlat_a``/``lonlat_b`` (n, 2) degrees, ``xy_a``/``xy_b`` (n, 2)
    local metres, ``alt_a``/``alt_b`` (n,) metres AGL, ``leg`` (n,) leg index.
    """

    lonlat_a: np.ndarray
    lonlat_b: np.ndarray
    xy_a: np.ndarray
    xy_b: np.ndarray
    alt_a: np.ndarray
    alt_b: np.ndarray
    leg: np.ndarray

    def __len__(self) -> int:
        return int(self.leg.shape[0])


def sortie_segments(sortie: Sortie, frame: LocalFrame) -> SortieSegments:
    pts: list[tuple[float, float, float, int]] = []
    for li, leg in enumerate(sortie.legs):
        for wp in leg.waypoints:
            pts.append((wp.lon, wp.lat, wp.alt_m, li))
    if not pts:
        empty2 = np.zeros((0, 2))
        empty1 = np.zeros((0,))
        return SortieSegments(empty2, empty2, empty2, empty2, empty1, empty1, np.zeros((0,), dtype=int))
    arr = np.asarray(pts, dtype=float)
    lonlat = arr[:, :2]
    xy = frame.forward_many(lonlat)
    idx_a = np.concatenate([[0], np.arange(len(pts) - 1)])
    idx_b = np.arange(len(pts))
    return SortieSegments(
        lonlat_a=lonlat[idx_a],
        lonlat_b=lonlat[idx_b],
        xy_a=xy[idx_a],
        xy_b=xy[idx_b],
        alt_a=arr[idx_a, 2],
        alt_b=arr[idx_b, 2],
        leg=arr[idx_b, 3].astype(int),
    )


@dataclass(frozen=True)
class ZonePairs:
    """Segment × zone-volume pairs within the buffer horizontally, with their distances (metres).

    ``seg``/``item`` index the segments and ``ZoneIndex.items``; ``distance_m`` is the
    distance from the segment to the volume's edge (0 when it enters), to the millimetre.
    """

    seg: np.ndarray
    item: np.ndarray
    distance_m: np.ndarray


@dataclass(frozen=True)
class ZoneIndex:
    """Every (zone, volume) of a world in one local frame, with STRtrees for range queries.

    Polygons are projected once (one vectorised pyproj call for all their
    vertices) and indexed as they are; circles are indexed by their centres and
    filtered by their own radius. ``items[k]`` = (zone index, volume index);
    per-item arrays hold the vertical limits for vectorised filtering.
    """

    zones: tuple[Geozone, ...]
    epsg: int
    items: tuple[tuple[int, int], ...]
    is_circle: np.ndarray  # (n,) bool
    shape_local: tuple[Polygon | None, ...]  # polygon in metres, None for circles
    circle_xyr: np.ndarray  # (n, 3) centre x, y and radius in metres (NaN for polygons)
    lower_m: np.ndarray  # (n,) -inf when unbounded
    lower_agl: np.ndarray  # (n,) bool: the limit is AGL (else AMSL/WGS84)
    upper_m: np.ndarray  # (n,) +inf when unbounded
    upper_agl: np.ndarray
    zone_of_item: np.ndarray  # (n,) zone index of each item
    _poly_tree: STRtree | None = field(repr=False, compare=False, hash=False, default=None)
    _poly_items: np.ndarray = field(repr=False, compare=False, hash=False, default_factory=lambda: np.zeros(0, int))
    _circle_tree: STRtree | None = field(repr=False, compare=False, hash=False, default=None)
    _circle_items: np.ndarray = field(repr=False, compare=False, hash=False, default_factory=lambda: np.zeros(0, int))
    _max_radius_m: float = 0.0
    _circle_points: np.ndarray = field(repr=False, compare=False, hash=False, default_factory=lambda: np.zeros(0, object))

    @classmethod
    def build(cls, zones: tuple[Geozone, ...], frame: LocalFrame) -> ZoneIndex:
        items: list[tuple[int, int]] = []
        polys_wgs84: list[Polygon] = []
        poly_items: list[int] = []
        circles: list[tuple[float, float, float]] = []
        circle_items: list[int] = []
        lower, lower_agl, upper, upper_agl = [], [], [], []
        for zi, z in enumerate(zones):
            for vi, v in enumerate(z.volumes):
                k = len(items)
                items.append((zi, vi))
                if isinstance(v.horizontal, CircleArea):
                    circles.append((v.horizontal.lon, v.horizontal.lat, float(v.horizontal.radius_m)))
                    circle_items.append(k)
                else:
                    polys_wgs84.append(v.horizontal)
                    poly_items.append(k)
                lower.append(-math.inf if v.lower_m is None else float(v.lower_m))
                lower_agl.append(v.lower_ref == VerticalReference.AGL)
                upper.append(math.inf if v.upper_m is None else float(v.upper_m))
                upper_agl.append(v.upper_ref == VerticalReference.AGL)
        n = len(items)
        shape_local: list[Polygon | None] = [None] * n
        circle_xyr = np.full((n, 3), np.nan)
        poly_tree = circle_tree = None
        if polys_wgs84:
            local = shapely.transform(np.asarray(polys_wgs84, dtype=object), frame.forward_many)
            shapely.prepare(local)
            for k, g in zip(poly_items, local):
                shape_local[k] = g
            poly_tree = STRtree(local)
        max_r = 0.0
        if circles:
            arr = np.asarray(circles, dtype=float)
            xy = frame.forward_many(arr[:, :2])
            circle_xyr[circle_items, 0:2] = xy
            circle_xyr[circle_items, 2] = arr[:, 2]
            circle_points = shapely.points(xy)
            circle_tree = STRtree(circle_points)
            max_r = float(arr[:, 2].max())
        all_points = np.full(n, None, dtype=object)
        if circles:
            all_points[circle_items] = circle_points
        is_circle = np.zeros(n, dtype=bool)
        is_circle[circle_items] = True
        return cls(
            zones=zones,
            epsg=frame.epsg,
            items=tuple(items),
            is_circle=is_circle,
            shape_local=tuple(shape_local),
            circle_xyr=circle_xyr,
            lower_m=np.asarray(lower, dtype=float),
            lower_agl=np.asarray(lower_agl, dtype=bool),
            upper_m=np.asarray(upper, dtype=float),
            upper_agl=np.asarray(upper_agl, dtype=bool),
            zone_of_item=np.asarray([zi for zi, _ in items], dtype=np.int64),
            _poly_tree=poly_tree,
            _poly_items=np.asarray(poly_items, dtype=int),
            _circle_tree=circle_tree,
            _circle_items=np.asarray(circle_items, dtype=int),
            _max_radius_m=max_r,
            _circle_points=all_points,
        )

    def vertical_agl(self, ground_alt_m: float) -> tuple[np.ndarray, np.ndarray]:
        """Every item's [lower, upper] in metres AGL for a dock at ``ground_alt_m`` (flat ground)."""
        lower = np.where(self.lower_agl, self.lower_m, self.lower_m - ground_alt_m)
        upper = np.where(self.upper_agl, self.upper_m, self.upper_m - ground_alt_m)
        return lower, upper

    def pairs_within(self, seg: SortieSegments, buffer_m: float) -> ZonePairs:
        """Every (segment, item) pair closer than ``buffer_m`` horizontally, or touching (to the millimetre).

        A path exactly ``buffer_m`` away is clear: that is where the planner's transit
        graph puts it (``planner.geo.transit`` flies along the zone grown by its margin).
        """
        if len(seg) == 0 or not self.items:
            z = np.zeros(0, dtype=int)
            return ZonePairs(z, z, np.zeros(0))
        lines = shapely.linestrings(np.stack([seg.xy_a, seg.xy_b], axis=1))
        # a zero-length line (a vertical climb) is invalid and STRtree's dwithin misses it: use a point
        flat = np.all(seg.xy_a == seg.xy_b, axis=1)
        if flat.any():
            lines[flat] = shapely.points(seg.xy_a[flat])
        segs: list[np.ndarray] = []
        its: list[np.ndarray] = []
        dists: list[np.ndarray] = []
        slack = 0.0005
        if self._poly_tree is not None:
            si, pj = self._poly_tree.query(lines, predicate="dwithin", distance=buffer_m + slack)
            if si.size:
                items = self._poly_items[pj]
                polys = np.asarray([self.shape_local[k] for k in items.tolist()], dtype=object)
                d = np.round(shapely.distance(lines[si], polys), 3)
                keep = (d < buffer_m) | (d <= 0.0)
                segs.append(si[keep])
                its.append(items[keep])
                dists.append(d[keep])
        if self._circle_tree is not None:
            si, cj = self._circle_tree.query(lines, predicate="dwithin", distance=buffer_m + self._max_radius_m + slack)
            if si.size:
                items = self._circle_items[cj]
                xyr = self.circle_xyr[items]
                d_centre = shapely.distance(lines[si], self._circle_points[items])
                d = np.maximum(np.round(d_centre - xyr[:, 2], 3), 0.0)
                keep = (d < buffer_m) | (d <= 0.0)
                segs.append(si[keep])
                its.append(items[keep])
                dists.append(d[keep])
        if not segs:
            z = np.zeros(0, dtype=int)
            return ZonePairs(z, z, np.zeros(0))
        return ZonePairs(np.concatenate(segs), np.concatenate(its), np.concatenate(dists))


_CACHE: list[tuple[tuple[Geozone, ...], int, ZoneIndex]] = []
_CACHE_SIZE = 4


def zone_index_for(zones: tuple[Geozone, ...], frame: LocalFrame) -> ZoneIndex:
    """The index of ``zones`` in ``frame``, memoised by identity of the tuple (a few recent ones)."""
    for key, epsg, idx in _CACHE:
        if key is zones and epsg == frame.epsg:
            return idx
    idx = ZoneIndex.build(zones, frame)
    _CACHE.insert(0, (zones, frame.epsg, idx))
    del _CACHE[_CACHE_SIZE:]
    return idx


def segment_circle_range(
    ax: float, ay: float, bx: float, by: float, cx: float, cy: float, radius_m: float
) -> tuple[float, float, float] | None:
    """(distance from the segment to the circle's edge (≤0 inside), t_min, t_max) of the part of
    segment a→b within ``radius_m`` of (cx, cy), or the distance and ``None`` range when apart.

    Returns ``(d, tmin, tmax)``; when the segment stays outside, tmin = tmax = the closest t.
    A segment without horizontal extent (a vertical climb) returns the full range [0, 1].
    """
    dx, dy = bx - ax, by - ay
    fx, fy = ax - cx, ay - cy
    a = dx * dx + dy * dy
    if a == 0.0:  # a vertical segment: every altitude of it is at this point
        d = math.hypot(fx, fy) - radius_m
        return d, 0.0, 1.0
    t_close = max(0.0, min(1.0, -(fx * dx + fy * dy) / a))
    d = math.hypot(fx + t_close * dx, fy + t_close * dy) - radius_m
    if d > 0:
        return d, t_close, t_close
    b = 2 * (fx * dx + fy * dy)
    c = fx * fx + fy * fy - radius_m * radius_m
    disc = max(b * b - 4 * a * c, 0.0)
    sq = math.sqrt(disc)
    t1, t2 = (-b - sq) / (2 * a), (-b + sq) / (2 * a)
    return d, max(0.0, t1), min(1.0, t2)


def segment_polygon_range(
    ax: float, ay: float, bx: float, by: float, poly: Polygon, buffer_m: float
) -> tuple[float, float, float]:
    """(distance from segment to polygon, t_min, t_max) of the part within ``buffer_m``.

    If the distance exceeds the buffer, t_min = t_max = 0 and the caller ignores them.
    """
    if ax == bx and ay == by:  # a vertical segment: every altitude of it is at this point
        p = Point(ax, ay)
        return float(poly.distance(p)), 0.0, 1.0
    line = shapely.linestrings([[ax, ay], [bx, by]])
    d = float(poly.distance(line))
    if d > buffer_m:
        return d, 0.0, 0.0
    region = poly if buffer_m <= 0 else poly.buffer(buffer_m, quad_segs=16)
    inter = line.intersection(region)
    coords = shapely.get_coordinates(inter)
    if coords.size == 0:  # touching a buffered corner the polygonal buffer cuts: take the whole segment
        return d, 0.0, 1.0
    length = math.hypot(bx - ax, by - ay)
    ts = ((coords[:, 0] - ax) * (bx - ax) + (coords[:, 1] - ay) * (by - ay)) / (length * length)
    return d, float(max(0.0, ts.min())), float(min(1.0, ts.max()))
