"""No-fly polygons for one job: the geozones that block a flight in a time window and height band.

A zone blocks the job when all of these hold:

* it applies at some instant of the job's flight window ``[when, until]``
  (``Geozone.applies_during``; ``until`` defaults to ``when``, one instant).
  The rules judge each leg over its own window, so a zone that opens ten
  minutes after take-off must already be in the planner's way; callers get a
  sound window from ``flight_window``;
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
from datetime import datetime, timedelta

from shapely.geometry import MultiPolygon, Point, Polygon
from shapely.geometry.base import BaseGeometry

from planner.errors import InvalidArgument
from planner.geo.projection import LocalFrame
from planner.world.model import CircleArea, Drone, Geozone, Restriction, VerticalReference, World, ZoneVolume

__all__ = [
    "CIRCLE_SEGMENTS",
    "DEFAULT_SORTIE_S",
    "ROUNDING_PAD_M",
    "NoFlyZone",
    "blocking_zones",
    "circle_polygon_local",
    "flight_window",
    "longest_sortie_s",
    "no_fly_polygons",
    "no_fly_zones",
]

CIRCLE_SEGMENTS = 64
ROUNDING_PAD_M = 0.25  # > canonical lon/lat rounding (1e-7 deg <= 1.1 cm); see the module docstring
UTM_MAX_SCALE = 1.001  # largest UTM point scale factor inside a zone at the latitudes UTM serves
# The longest one sortie may last when no drone is named (geometry helpers without a fleet):
# one hour, above the spec endurance of every multirotor of the demo fleet (at most 3240 s).
DEFAULT_SORTIE_S = 3600.0


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
    return float(value_m) - ground_alt_m  # AMSL and WGS84 (geoid difference noted in planner.world.model)


def volume_overlaps(volume: ZoneVolume, bottom_agl_m: float, top_agl_m: float, ground_alt_m: float) -> bool:
    """Whether a zone volume's vertical band overlaps [bottom, top] AGL (touching counts as overlap)."""
    lower = _to_agl(volume.lower_m, volume.lower_ref, ground_alt_m, -math.inf)
    upper = _to_agl(volume.upper_m, volume.upper_ref, ground_alt_m, math.inf)
    return lower <= top_agl_m and upper >= bottom_agl_m


def longest_sortie_s(drones: Iterable[Drone] = ()) -> float:
    """The longest one sortie of any of ``drones`` can last: its spec endurance, cruising or hovering.

    A sortie cannot outlast a full battery at the drone's least hungry steady
    flight, which the spec gives as ``flight_time_s`` (cruise) or
    ``hover_time_s``. ``DEFAULT_SORTIE_S`` without drones.
    """
    times = [max(d.flight_time_s, d.hover_time_s) for d in drones]
    return max(times) if times else DEFAULT_SORTIE_S


def flight_window(
    start_at: datetime, drones: Iterable[Drone] = (), *, sorties: int = 1, turnaround_s: float = 0.0
) -> tuple[datetime, datetime]:
    """``(start_at, until)``: when the job's drones may be in the air, for the airspace check.

    ``until = start_at + sorties × (longest_sortie_s(drones) + turnaround_s)``:
    each drone flies at most ``sorties`` sorties back to back with
    ``turnaround_s`` on the dock between them, none longer than its endurance.
    A planner that schedules more must widen the window itself
    (``planner.mission`` does, when a later sortie lands after ``until``).
    """
    if start_at.tzinfo is None:
        raise InvalidArgument("the planned time must be timezone-aware")
    if sorties < 1:
        raise InvalidArgument(f"sorties must be >= 1, got {sorties}")
    if not (math.isfinite(turnaround_s) and turnaround_s >= 0):
        raise InvalidArgument(f"turnaround_s must be >= 0, got {turnaround_s}")
    horizon_s = sorties * (longest_sortie_s(drones) + turnaround_s)
    return start_at, start_at + timedelta(seconds=horizon_s)


def _blocks(zone: Geozone, authorised: frozenset[str]) -> bool:
    if zone.restriction is Restriction.PROHIBITED:
        return True
    return zone.restriction is Restriction.REQ_AUTHORISATION and zone.id not in authorised


def blocking_zones(
    world: World,
    when: datetime,
    altitude_m: float,
    *,
    until: datetime | None = None,
    authorised_zone_ids: Iterable[str] = (),
    ground_alt_m: float = 0.0,
) -> list[tuple[Geozone, list[ZoneVolume]]]:
    """Zones (sorted by id) that block a flight up to ``altitude_m`` AGL at some instant of
    ``[when, until]`` (just ``when`` without ``until``), with the volumes that do."""
    if when.tzinfo is None or (until is not None and until.tzinfo is None):
        raise InvalidArgument("the planned time must be timezone-aware")
    if until is not None and until < when:
        raise InvalidArgument(f"the flight window ends ({until.isoformat()}) before it starts ({when.isoformat()})")
    if not altitude_m > 0:
        raise InvalidArgument(f"altitude_m must be > 0, got {altitude_m}")
    end = when if until is None else until
    authorised = frozenset(authorised_zone_ids)
    out: list[tuple[Geozone, list[ZoneVolume]]] = []
    for zone in sorted(world.zones, key=lambda z: z.id):
        if not _blocks(zone, authorised) or not zone.applies_during(when, end):
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
    until: datetime | None = None,
    authorised_zone_ids: Iterable[str] = (),
    ground_alt_m: float = 0.0,
) -> list[NoFlyZone]:
    """Zones blocking at some instant of ``[when, until]`` as local polygons grown by ``margin_m``,
    one entry per volume footprint."""
    if not (math.isfinite(margin_m) and margin_m >= 0):
        raise InvalidArgument(f"margin_m must be >= 0, got {margin_m}")
    out: list[NoFlyZone] = []
    for zone, vols in blocking_zones(
        world, when, altitude_m, until=until, authorised_zone_ids=authorised_zone_ids, ground_alt_m=ground_alt_m
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
    until: datetime | None = None,
    ground_alt_m: float = 0.0,
) -> list[Polygon]:
    """Just the polygons of ``no_fly_zones`` (local metres, grown by ``margin_m``), in zone-id order."""
    return [
        z.polygon_local
        for z in no_fly_zones(
            world,
            when,
            altitude_m,
            frame,
            margin_m,
            until=until,
            authorised_zone_ids=authorised_zone_ids,
            ground_alt_m=ground_alt_m,
        )
    ]
