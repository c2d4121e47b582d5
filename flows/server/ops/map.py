"""The operations page's map, drawn from the server's world itself: regions, lanes, geozones and docks as plain
lon/lat data for one person's tenants. Pure: no clock but the one passed in, no I/O.

Why from the world and not from tiles: a control room must see the same regions, lanes and zones the planner
and the rules used (a tile server's map is another map, and the page works offline). The page projects these
coordinates itself (``static/ops.js``, a local equirectangular projection: at a city's scale it is within
centimetres of the planner's).

What a person sees: the regions and docks of their tenants, the lanes that lie in or near those regions, and
every geozone (airspace is public; whether it applies now is said per zone). An admin (tenant ``*``) sees all.
Coordinates are rounded to 6 decimals (~0.1 m): the page needs no more, and the answer stays small.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from shapely.geometry import mapping
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

from planner.world.model import CircleArea, World

__all__ = ["ops_map", "LANE_NEAR_DEG"]

#: A lane within this distance of a person's regions is drawn (~150 m at Helsinki's latitude, in degrees).
LANE_NEAR_DEG = 0.0015
_DIGITS = 6


def _round(coords: Any) -> Any:
    if isinstance(coords, (list, tuple)) and coords and isinstance(coords[0], (int, float)):
        return [round(float(c), _DIGITS) for c in coords[:2]]
    return [_round(c) for c in coords]


def _polygons(geom: BaseGeometry) -> list[Any]:
    """A Polygon or MultiPolygon as a list of polygons, each a list of rings of [lon, lat]."""
    g = mapping(geom)
    if g["type"] == "Polygon":
        return [_round(g["coordinates"])]
    if g["type"] == "MultiPolygon":
        return [_round(p) for p in g["coordinates"]]
    return []


def _sees(tenants: frozenset[str], tenant: str) -> bool:
    return "*" in tenants or tenant in tenants


def _zone(zone: Any, now: datetime) -> dict[str, Any]:
    shapes: list[dict[str, Any]] = []
    for v in zone.volumes:
        h = v.horizontal
        limits = {"lower_m": v.lower_m, "lower_ref": v.lower_ref.value, "upper_m": v.upper_m,
                  "upper_ref": v.upper_ref.value}
        if isinstance(h, CircleArea):
            shapes.append({"circle": {"lon": round(h.lon, _DIGITS), "lat": round(h.lat, _DIGITS),
                                      "radius_m": h.radius_m}, **limits})
        else:
            shapes.append({"polygons": _polygons(h), **limits})
    return {"id": zone.id, "name": zone.name, "restriction": zone.restriction.value, "message": zone.message,
            "applies_now": zone.applies_at(now), "shapes": shapes}


def ops_map(world: World, tenants: Iterable[str], now: datetime) -> dict[str, Any]:
    """The map of ``world`` for a person of ``tenants`` at ``now``: regions, lanes, zones, docks and the bounds to
    show first (the person's regions and docks)."""
    seen = frozenset(tenants)
    regions = [r for r in world.regions if _sees(seen, r.tenant)]
    docks = [d for d in world.docks if _sees(seen, d.tenant)]
    near = unary_union([r.area for r in regions]).buffer(LANE_NEAR_DEG) if regions else None
    lanes = [ln for ln in world.lanes if near is not None and ln.line.intersects(near)]
    xs = [c for r in regions for c in (r.area.bounds[0], r.area.bounds[2])] + [d.lon for d in docks]
    ys = [c for r in regions for c in (r.area.bounds[1], r.area.bounds[3])] + [d.lat for d in docks]
    bounds = None if not xs else [round(min(xs), _DIGITS), round(min(ys), _DIGITS), round(max(xs), _DIGITS),
                                  round(max(ys), _DIGITS)]
    return {
        "world": world.name,
        "attribution": world.attribution,
        "bounds": bounds,  # [west, south, east, north]
        "regions": [{"id": r.id, "name": r.name, "tenant": r.tenant, "polygons": _polygons(r.area),
                     "label": _round(list(r.area.representative_point().coords)[0])} for r in regions],
        "lanes": [{"id": ln.id, "name": ln.name, "kind": ln.kind, "line": _round(list(ln.line.coords))}
                  for ln in lanes],
        "zones": [_zone(z, now) for z in world.zones],
        "docks": [{"id": d.id, "name": d.name, "tenant": d.tenant, "lon": d.lon, "lat": d.lat} for d in docks],
    }
