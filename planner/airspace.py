"""No-fly polygons for one job: the geozones that block a flight at a time and height.

A zone blocks the job when all of these hold:

* it applies at the planned time (``Geozone.applies_at``);
* its restriction is PROHIBITED, or REQ_AUTHORISATION and the operator holds no
  authorisation for it (``authorised_zone_ids``); CONDITIONAL and
  NO_RESTRICTION zones are the rules' business, not geometry's;
* one of its volumes overlaps the flight's vertical extent. A sortie occupies the
  whole column from the ground (take-off, landing) to ``altitude_m`` AGL, so that
  is the interval compared. AMSL/WGS84 limits are turned into AGL with
  ``ground_alt_m`` (flat ground; a DEM would give it per point later).

Each blocking volume becomes a polygon in the job's local frame: circles as a
64-gon *circumscribed* about the circle (so the polygon contains the whole
circle), everything grown by ``margin_m`` plus ``ROUNDING_PAD_M`` with mitred
joins (which contain the round buffer and keep few vertices for the visibility
graph). The pad exists because the plan is stored at 7 decimal degrees (up to
~6 mm of rounding): a lane clipped exactly at the margin would otherwise come
back a few millimetres inside the rules' buffer of the same size, and a hard
rule is never loosened to let it pass.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from shapely.geometry import MultiPolygon, Point, Polygon
from shapely.geometry.base import BaseGeometry

from planner.errors import InvalidArgument
from planner.projection import LocalFrame
from planner.world import CircleArea, Geozone, Restriction, VerticalReference, World, ZoneVolume

__all__ = ["CIRCLE_SEGMENTS", "ROUNDING_PAD_M", "NoFlyZone", "blocking_zones", "no_fly_zones", "no_fly_polygons", "circle_polygon_local"]

CIRCLE_SEGMENTS = 64
ROUNDING_PAD_M = 0.25  # > canonical lon/lat rounding (1e-7 deg <= 1.1 cm); see the module docstring
UTM_MAX_SCALE = 1.001  # largest UTM point scale factor inside a zone at the latitudes UTM serves


@dataclass(frozen=True)
class NoFlyZone:
    """A blocking zone's footprint in the local frame (already grown by the margin)."""

    zone_id: str
    name: str
    restriction: Restriction
    polygon_local: Polygon


def circle_polygon_local(frame: LocalFrame, circle: CircleArea, segments: int = CIRCLE_SEGMENTS) -> Polygon:
    """A regular ``segments``-gon that contains the circle (vertices at r / cos(π/n)).

    The radius is on the ground; UTM grid distances differ from ground ones by the
    zone's scale factor (0.9996 .. 1.001), so the radius is also grown by 0.1 % to
    contain the circle anywhere in the zone.
    """
    cx, cy = frame.forward(circle.lon, circle.lat)
    r = circle.radius_m * UTM_MAX_SCALE / math.cos(math.pi / segments)
    pts = [
        (cx + r * math.cos(2.0 * math.pi * k / segments), cy + r * math.sin(2.0 * math.pi * k / segments))
        for k in range(segments)
    ]
    return Polygon(pts)


def _to_agl(value_m: float | None, ref: VerticalReference, ground_alt_m: float, default: float) -> float:
    if value_m is None:
        return default
    if ref is VerticalReference.AGL:
        return float(value_m)
    return float(value_m) - ground_alt_m  # AMSL and WGS84 (geoid difference noted in planner.world)


def volume_overlaps(volume: ZoneVolume, bottom_agl_m: float, top_agl_m: float, ground_alt_m: float) -> bool:
    """Whether a zone volume's vertical band overlaps [bottom, top] AGL (touching counts as overlap)."""
    lower = _to_agl(volume.lower_m, volume.lower_ref, ground_alt_m, -math.inf)
    upper = _to_agl(volume.upper_m, volume.upper_ref, ground_alt_m, math.inf)
    return lower <= top_agl_m and upper >= bottom_agl_m


def _blocks(zone: Geozone, authorised: frozenset[str]) -> bool:
    if zone.restriction is Restriction.PROHIBITED:
        return True
    return zone.restriction is Restriction.REQ_AUTHORISATION and zone.id not in authorised


def blocking_zones(
    world: World,
    when: datetime,
    altitude_m: float,
    *,
    authorised_zone_ids: Iterable[str] = (),
    ground_alt_m: float = 0.0,
) -> list[tuple[Geozone, list[ZoneVolume]]]:
    """Zones (sorted by id) that block a flight up to ``altitude_m`` AGL at ``when``, with the volumes that do."""
    if when.tzinfo is None:
        raise InvalidArgument("the planned time must be timezone-aware")
    if not altitude_m > 0:
        raise InvalidArgument(f"altitude_m must be > 0, got {altitude_m}")
    authorised = frozenset(authorised_zone_ids)
    out: list[tuple[Geozone, list[ZoneVolume]]] = []
    for zone in sorted(world.zones, key=lambda z: z.id):
        if not _blocks(zone, authorised) or not zone.applies_at(when):
            continue
        vols = [v for v in zone.volumes if volume_overlaps(v, 0.0, altitude_m, ground_alt_m)]
        if vols:
            out.append((zone, vols))
    return out


def _polygons(geom: BaseGeometry) -> list[Polygon]:
    if isinstance(geom, Polygon):
        return [] if geom.is_empty else [geom]
    if isinstance(geom, MultiPolygon):
        return [g for g in geom.geoms if not g.is_empty]
    return [g for g in getattr(geom, "geoms", []) if isinstance(g, Polygon) and not g.is_empty]


def no_fly_zones(
    world: World,
    when: datetime,
    altitude_m: float,
    frame: LocalFrame,
    margin_m: float = 0.0,
    *,
    authorised_zone_ids: Iterable[str] = (),
    ground_alt_m: float = 0.0,
) -> list[NoFlyZone]:
    """Blocking zones as local polygons grown by ``margin_m``, one entry per volume footprint."""
    if not (math.isfinite(margin_m) and margin_m >= 0):
        raise InvalidArgument(f"margin_m must be >= 0, got {margin_m}")
    out: list[NoFlyZone] = []
    for zone, vols in blocking_zones(
        world, when, altitude_m, authorised_zone_ids=authorised_zone_ids, ground_alt_m=ground_alt_m
    ):
        for vol in vols:
            if isinstance(vol.horizontal, CircleArea):
                poly = circle_polygon_local(frame, vol.horizontal)
            else:
                poly = frame.to_local(vol.horizontal)
                if not poly.is_valid:
                    poly = poly.buffer(0)
            poly = poly.buffer(margin_m + ROUNDING_PAD_M, join_style="mitre", mitre_limit=2.0)
            for p in _polygons(poly):
                out.append(NoFlyZone(zone.id, zone.name, zone.restriction, p))
    return out


def no_fly_polygons(
    world: World,
    when: datetime,
    altitude_m: float,
    frame: LocalFrame,
    margin_m: float = 0.0,
    authorised_zone_ids: Iterable[str] = (),
    *,
    ground_alt_m: float = 0.0,
) -> list[Polygon]:
    """Just the polygons of ``no_fly_zones`` (local metres, grown by ``margin_m``), in zone-id order."""
    return [
        z.polygon_local
        for z in no_fly_zones(
            world, when, altitude_m, frame, margin_m, authorised_zone_ids=authorised_zone_ids, ground_alt_m=ground_alt_m
        )
    ]
