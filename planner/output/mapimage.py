"""The map picture of a plan: one PNG an approver can judge at a glance.

It shows the area (blue), what a survey leaves unimaged (magenta, hatched), the geozones active at any moment of the sorties
(red prohibited, orange authorisation required, yellow conditional), each
labelled with its id and height band, the lanes (fire lanes in brown),
each sortie as a line coloured by its drone, the docks, a scale bar and the
map data attribution. The CLI writes it next to the draft; the Prefect
artifact embeds it as a data URI.

Pure: returns bytes, writes no file, reads no clock. The same input gives the
same bytes: fixed DPI and size, no metadata in the PNG, colours assigned by
sorted drone id. Drawn with Pillow (``planner.output.raster``), not matplotlib,
whose import alone cost a quarter of a ``sortie plan`` (issue 27). Coordinates are
drawn in an equirectangular frame around the view's centre (x scaled by
cos(latitude)), which at the scale of one job is indistinguishable from a
proper projection and needs no pyproj here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from shapely.affinity import scale
from shapely.geometry import MultiPolygon, Point, Polygon, box
from shapely.geometry.base import BaseGeometry

from planner.errors import InvalidArgument
from planner.output.raster import DPI, Canvas, rgba
from planner.plan import Plan
from planner.world.model import CircleArea, Geozone, Restriction, World, ZoneVolume

__all__ = ["render_plan_png", "DPI", "DRONE_COLOURS", "METRES_PER_DEG_LAT", "UNIMAGED_COLOUR"]

METRES_PER_DEG_LAT = 111_320.0
DRONE_COLOURS = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#17becf",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
)
UNIMAGED_COLOUR = "#c51b7d"  # magenta: no zone, lane or drone uses it
_ZONE_STYLE = {
    Restriction.PROHIBITED: ("#d62728", 0.25),
    Restriction.REQ_AUTHORISATION: ("#ff7f0e", 0.20),
    Restriction.CONDITIONAL: ("#e6c700", 0.18),
    Restriction.NO_RESTRICTION: ("#7f7f7f", 0.08),
}


def _polygons(geom: BaseGeometry) -> list[Polygon]:
    if geom.is_empty:
        return []
    if isinstance(geom, Polygon):
        return [geom]
    if isinstance(geom, MultiPolygon):
        return list(geom.geoms)
    return [g for part in getattr(geom, "geoms", ()) for g in _polygons(part)]


def _zone_label(zone: Geozone, vol: ZoneVolume) -> str:
    """``HELX002 authorisation 50–∞ m AGL``: what the approver needs to read off the map."""
    kind = {
        Restriction.PROHIBITED: "prohibited",
        Restriction.REQ_AUTHORISATION: "authorisation",
        Restriction.CONDITIONAL: "conditional",
    }.get(zone.restriction, zone.restriction.value.lower())
    low = "0" if vol.lower_m is None else f"{vol.lower_m:g}"
    high = "∞" if vol.upper_m is None else f"{vol.upper_m:g}"
    ref = vol.upper_ref.value if vol.upper_m is not None else vol.lower_ref.value
    return f"{zone.id} {kind} {low}–{high} m {ref}"


def _nice_length_m(span_m: float) -> float:
    """A round scale-bar length near a fifth of the view width."""
    target = max(span_m / 5.0, 1.0)
    exp = 10 ** math.floor(math.log10(target))
    for step in (5, 2, 1):
        if step * exp <= target:
            return float(step * exp)
    return float(exp)


def render_plan_png(
    plan: Plan,
    world: World,
    *,
    width_px: int = 1000,
    height_px: int | None = None,
    flown_wgs84: Mapping[str, Sequence[tuple[float, float]]] | None = None,
) -> bytes:
    """Draw ``plan`` over ``world`` and return the PNG bytes.

    ``width_px`` (and ``height_px``, default 3/4 of the width) set the image size.
    ``flown_wgs84`` (drone id → (lon, lat) track actually flown) is drawn over
    the plan as a black dashed line, for the flight report; without it the
    picture is the plan alone.
    """
    if not 200 <= width_px <= 4000:
        raise InvalidArgument(f"width_px must be within 200..4000, got {width_px}")
    height_px = height_px or int(width_px * 0.75)
    if not 150 <= height_px <= 4000:
        raise InvalidArgument(f"height_px must be within 150..4000, got {height_px}")

    # ---- the view: area, flown waypoints and the docks used, with a margin
    points: list[tuple[float, float]] = []
    if not plan.area_wgs84.is_empty:
        minx, miny, maxx, maxy = plan.area_wgs84.bounds
        points += [(minx, miny), (maxx, maxy)]
    for s in plan.sorties:
        points += [(w.lon, w.lat) for w in s.waypoints]
    for track in (flown_wgs84 or {}).values():
        points += [(float(p[0]), float(p[1])) for p in track]
    used_docks = sorted({s.dock_id for s in plan.sorties})
    docks = [d for d in world.docks if d.id in used_docks] or list(world.docks)
    if not points:
        points += [(d.lon, d.lat) for d in docks]
    if not points:
        raise InvalidArgument("nothing to draw: the plan has no area, no sorties and the world no docks")
    lon0 = (min(p[0] for p in points) + max(p[0] for p in points)) / 2.0
    lat0 = (min(p[1] for p in points) + max(p[1] for p in points)) / 2.0
    kx = math.cos(math.radians(lat0))

    def xy(lon: float, lat: float) -> tuple[float, float]:
        return ((lon - lon0) * kx * METRES_PER_DEG_LAT, (lat - lat0) * METRES_PER_DEG_LAT)

    pts_xy = [xy(*p) for p in points]
    xs, ys = [p[0] for p in pts_xy], [p[1] for p in pts_xy]
    span_x = max(max(xs) - min(xs), 100.0)
    span_y = max(max(ys) - min(ys), 100.0)
    aspect = width_px / height_px
    if span_x / span_y < aspect:
        span_x = span_y * aspect
    else:
        span_y = span_x / aspect
    cx, cy = (max(xs) + min(xs)) / 2.0, (max(ys) + min(ys)) / 2.0
    half_x, half_y = span_x * 0.56, span_y * 0.56
    x_lim = (cx - half_x, cx + half_x)
    y_lim = (cy - half_y, cy + half_y)
    view_wgs84 = box(
        lon0 + x_lim[0] / (kx * METRES_PER_DEG_LAT),
        lat0 + y_lim[0] / METRES_PER_DEG_LAT,
        lon0 + x_lim[1] / (kx * METRES_PER_DEG_LAT),
        lat0 + y_lim[1] / METRES_PER_DEG_LAT,
    )

    c = Canvas(width_px, height_px, x_lim, y_lim, "#f4f4f0")

    def ring(coords: Iterable[tuple[float, ...]]) -> list[tuple[float, float]]:
        return [xy(c[0], c[1]) for c in coords]

    # ---- zones active at any moment of the sorties (what the planner avoided), labelled on top at the end
    labels: list[tuple[tuple[float, float], str, str]] = []
    start = min((so.start_at for so in plan.sorties), default=plan.planned_for)
    end = max((so.end_at for so in plan.sorties), default=plan.planned_for)
    for zone in sorted(world.zones_active_during(start, end), key=lambda z: z.id):
        colour, alpha = _ZONE_STYLE.get(zone.restriction, ("#7f7f7f", 0.1))
        for vol in zone.volumes:
            h = vol.horizontal
            if isinstance(h, CircleArea):
                dy = h.radius_m / METRES_PER_DEG_LAT
                footprint = scale(Point(h.lon, h.lat).buffer(dy, 32), xfact=1.0 / kx)  # the circle in degrees
                if not view_wgs84.intersects(footprint):
                    continue
                c.circle(xy(h.lon, h.lat), h.radius_m, rgba(colour, alpha), colour, 1.2)
            else:
                footprint = h
                for poly in _polygons(h):
                    if view_wgs84.intersects(poly):
                        c.polygon(ring(poly.exterior.coords), rgba(colour, alpha), colour, 1.2)
            inside = footprint.intersection(view_wgs84)
            if not inside.is_empty:
                at = inside.representative_point()
                labels.append((xy(at.x, at.y), _zone_label(zone, vol), colour))

    # ---- lanes in view: fire lanes stand out, other linear features are context
    for lane in world.lanes:
        if not view_wgs84.intersects(lane.line):
            continue
        fire = lane.kind == "fire_lane"
        c.line(ring(lane.line.coords), rgba("#b15928" if fire else "#9a9a9a", 0.8), 1.4 if fire else 1.0)

    # ---- the area
    for poly in _polygons(plan.area_wgs84):
        c.polygon(ring(poly.exterior.coords), rgba("#1f77b4", 0.10), "#1f77b4", 1.6, dashed=True)
        for hole in poly.interiors:
            c.polygon(ring(hole.coords), rgba("#f4f4f0"), "#1f77b4", 1.0, dashed=True)

    # ---- what a survey leaves unimaged: the operator must see it before the flight, not in the orthophoto
    dark = plan.unimaged_wgs84
    notes: list[tuple[str, str]] = []
    if dark is not None and not dark.is_empty:
        for poly in _polygons(dark):
            c.polygon(ring(poly.exterior.coords), rgba(UNIMAGED_COLOUR, 0.55), UNIMAGED_COLOUR, 0.8)
            c.hatch(ring(poly.exterior.coords), UNIMAGED_COLOUR)
        share = "" if plan.coverage_fraction is None else f" ({1.0 - plan.coverage_fraction:.1%} of the free area)"
        target = plan.parameters.get("coverage_target")
        if plan.coverage_fraction is not None and isinstance(target, (int, float)):
            met = "met" if plan.coverage_fraction >= target else "NOT met"
            share += f"; imaged {plan.coverage_fraction:.1%}, target {target:.1%} {met}"
        notes.append((f"■ unimaged{share}", UNIMAGED_COLOUR))

    # ---- sorties, coloured by drone
    drones = sorted({s.drone_id for s in plan.sorties})
    colour_of = {d: DRONE_COLOURS[i % len(DRONE_COLOURS)] for i, d in enumerate(drones)}
    for s in plan.sorties:
        if len(s.waypoints) >= 2:
            c.line([xy(w.lon, w.lat) for w in s.waypoints], rgba(colour_of[s.drone_id]), 1.8, round_caps=True)
    for s in plan.sorties:
        if len(s.waypoints) >= 2:
            for w in s.waypoints:
                if w.action == "INSPECT":
                    c.dot(xy(w.lon, w.lat), 18, colour_of[s.drone_id], edge="white", edge_pt=0.6)

    # ---- the flown tracks (flight report)
    for _drone, track in sorted((flown_wgs84 or {}).items()):
        if len(track) >= 2:
            c.line([xy(float(p[0]), float(p[1])) for p in track], rgba("black"), 1.3, dashes_pt=(4 / 1.3, 2 / 1.3))

    # ---- docks
    for d in docks:
        c.triangle(xy(d.lon, d.lat), 90, "black")

    # ---- labels, legend, scale bar, attribution (on top of every shape)
    for at, text, colour in labels:
        c.text(c.px(*at), text, 7, colour, "mm", box_alpha=0.7)
    for d in docks:
        x, y = c.px(*xy(d.lon, d.lat))
        c.text((x + c.pt(6), y - c.pt(6)), d.id, 8, "black", "ld")
    for i, d in enumerate(drones):
        c.text(c.axes(0.012, 0.975 - i * 0.035), f"■ {d}", 9, colour_of[d], "la", box_alpha=0.75, pad_pt=1.5)
    if flown_wgs84:
        c.text(c.axes(0.012, 0.975 - len(drones) * 0.035), "- - flown", 9, "black", "la", box_alpha=0.75, pad_pt=1.5)
    for text, colour in notes:
        c.text(c.axes(0.012, 0.11), text, 9, colour, "ld", box_alpha=0.75, pad_pt=1.5)
    bar_m = _nice_length_m(x_lim[1] - x_lim[0])
    bx = x_lim[0] + (x_lim[1] - x_lim[0]) * 0.04
    by = y_lim[0] + (y_lim[1] - y_lim[0]) * 0.05
    c.line([(bx, by), (bx + bar_m, by)], rgba("black"), 3)
    label = f"{bar_m / 1000:g} km" if bar_m >= 1000 else f"{bar_m:g} m"
    c.text(c.px(bx + bar_m / 2, by + (y_lim[1] - y_lim[0]) * 0.012), label, 8, "black", "md")
    attribution = world.attribution or "© OpenStreetMap contributors"
    if "OpenStreetMap" not in attribution:
        attribution = f"{attribution}; © OpenStreetMap contributors"
    c.text(c.axes(0.99, 0.01), attribution, 7, "#333333", "rd", box_alpha=0.7)
    c.text(c.axes(0.99, 0.985), f"{plan.mission_type}  {plan.planned_for.isoformat(timespec='minutes')}", 8, "black",
           "ra", box_alpha=0.75, pad_pt=1.5)
    return c.png()
