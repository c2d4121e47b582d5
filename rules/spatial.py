"""Metric geometry for the rules: a sortie's segments and a spatial index of geozones.

Horizontal work happens in the job's local frame (``planner.projection.LocalFrame``,
the UTM zone of the plan area's centroid), the same frame the planner builds
its paths in, so a path the planner keeps 30 m from a zone measures 30 m here.

The zone index is an STRtree over each zone volume's lon/lat envelope (a
circle's envelope is its bounding box). Queries are envelope-only and
conservative (the metre → degree conversion errs on the large side); the exact
test happens afterwards in metres on the few candidates. Built indexes are
memoised by the identity of the zones tuple, so re-evaluating against the same
``World`` does not rebuild it.

Vertical references: zone limits in AGL are compared with waypoint ``alt_m``
(AGL) directly; AMSL and WGS84 limits are converted to AGL by subtracting the
sortie's dock ``ground_alt_m`` — flat ground around the dock is assumed (no
terrain model); WGS84 is treated as AMSL (see ``planner.world.VerticalReference``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import shapely
from shapely.geometry import Point, Polygon
from shapely.strtree import STRtree

from planner.plan import Sortie
from planner.projection import LocalFrame
from planner.world import CircleArea, Geozone, VerticalReference, ZoneVolume

__all__ = [
    "SortieSegments",
    "sortie_segments",
    "ZoneIndex",
    "zone_index_for",
    "vertical_interval_agl",
    "metres_to_degrees",
    "segment_circle_range",
    "segment_polygon_range",
]

_M_PER_DEG_LAT_MIN = 110_000.0  # true value 110 574–111 694 m: smaller → wider query box (conservative)


def metres_to_degrees(distance_m: float, lat_deg: float) -> tuple[float, float]:
    """(dlon, dlat) degrees that cover at least ``distance_m`` at ``lat_deg``."""
    dlat = distance_m / _M_PER_DEG_LAT_MIN
    cos = max(math.cos(math.radians(min(abs(lat_deg) + dlat, 89.9))), 1e-6)
    return dlat / cos, dlat


def vertical_interval_agl(volume: ZoneVolume, ground_alt_m: float) -> tuple[float, float]:
    """The volume's [lower, upper] in metres AGL; unbounded ends are ∓inf."""

    def conv(value: float | None, ref: VerticalReference, default: float) -> float:
        if value is None:
            return default
        return value if ref == VerticalReference.AGL else value - ground_alt_m

    return conv(volume.lower_m, volume.lower_ref, -math.inf), conv(volume.upper_m, volume.upper_ref, math.inf)


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


def _envelope(h: Polygon | CircleArea) -> Polygon:
    if isinstance(h, CircleArea):
        dlon, dlat = metres_to_degrees(h.radius_m, h.lat)
        return shapely.box(h.lon - dlon, h.lat - dlat, h.lon + dlon, h.lat + dlat)
    return shapely.envelope(h)


@dataclass(frozen=True)
class ZoneIndex:
    """STRtree over every (zone, volume) envelope; ``items[k]`` = (zone index, volume index)."""

    zones: tuple[Geozone, ...]
    items: tuple[tuple[int, int], ...]
    tree: STRtree | None
    _local: dict[tuple[int, int, int], Polygon | tuple[float, float, float]] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    @classmethod
    def build(cls, zones: tuple[Geozone, ...]) -> ZoneIndex:
        items: list[tuple[int, int]] = []
        envs: list[Polygon] = []
        for zi, z in enumerate(zones):
            for vi, v in enumerate(z.volumes):
                items.append((zi, vi))
                envs.append(_envelope(v.horizontal))
        tree = STRtree(envs) if envs else None
        return cls(zones=zones, items=tuple(items), tree=tree)

    def candidates(self, seg: SortieSegments, buffer_m: float) -> np.ndarray:
        """(2, k) int array of (segment index, item index) whose envelopes may be within ``buffer_m``."""
        if self.tree is None or len(seg) == 0:
            return np.zeros((2, 0), dtype=int)
        lo = np.minimum(seg.lonlat_a, seg.lonlat_b)
        hi = np.maximum(seg.lonlat_a, seg.lonlat_b)
        lat_max = float(np.max(np.abs(np.concatenate([lo[:, 1], hi[:, 1]]))))
        dlon, dlat = metres_to_degrees(buffer_m + 1.0, lat_max)
        boxes = shapely.box(lo[:, 0] - dlon, lo[:, 1] - dlat, hi[:, 0] + dlon, hi[:, 1] + dlat)
        return self.tree.query(boxes)

    def local_shape(self, item: int, frame: LocalFrame) -> Polygon | tuple[float, float, float]:
        """An item's horizontal shape in ``frame`` metres: a Polygon, or (x, y, radius_m) for a circle."""
        key = (frame.epsg, *self.items[item])
        hit = self._local.get(key)
        if hit is None:
            zi, vi = self.items[item]
            h = self.zones[zi].volumes[vi].horizontal
            if isinstance(h, CircleArea):
                x, y = frame.forward(h.lon, h.lat)
                hit = (x, y, float(h.radius_m))
            else:
                hit = frame.to_local(h)
                shapely.prepare(hit)
            self._local[key] = hit
        return hit


_CACHE: list[tuple[tuple[Geozone, ...], ZoneIndex]] = []
_CACHE_SIZE = 4


def zone_index_for(zones: tuple[Geozone, ...]) -> ZoneIndex:
    """The index of ``zones``, memoised by identity of the tuple (a few recent ones)."""
    for key, idx in _CACHE:
        if key is zones:
            return idx
    idx = ZoneIndex.build(zones)
    _CACHE.insert(0, (zones, idx))
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
