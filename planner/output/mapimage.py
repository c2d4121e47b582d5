"""The map picture of a plan: one PNG an approver can judge at a glance.

It shows the area (blue), what a survey leaves unimaged (magenta, hatched), the geozones active at any moment of the sorties
(red prohibited, orange authorisation required, yellow conditional), each
labelled with its id and height band, the lanes (fire lanes in brown),
each sortie as a line coloured by its drone, the docks, a scale bar and the
map data attribution. The CLI writes it next to the draft; the Prefect
artifact embeds it as a data URI.

Pure: returns bytes, writes no file, reads no clock. Deterministic enough for
a test to compare two renderings: fixed DPI and size, the Agg backend, no
``Software`` metadata, colours assigned by sorted drone id. Coordinates are
drawn in an equirectangular frame around the view's centre (x scaled by
cos(latitude)), which at the scale of one job is indistinguishable from a
proper projection and needs no pyproj here.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Mapping, Sequence

from shapely.affinity import scale
from shapely.geometry import MultiPolygon, Point, Polygon, box
from shapely.geometry.base import BaseGeometry

from planner.errors import InvalidArgument
from planner.plan import Plan
from planner.world.model import CircleArea, Geozone, Restriction, World, ZoneVolume

__all__ = ["render_plan_png", "DRONE_COLOURS", "METRES_PER_DEG_LAT", "UNIMAGED_COLOUR"]

METRES_PER_DEG_LAT = 111_320.0
DPI = 100
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
    # matplotlib takes about a second to import: only a picture being drawn pays for it
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import to_rgba
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle, Polygon as MplPolygon

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

    fig = Figure(figsize=(width_px / DPI, height_px / DPI), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(*x_lim)
    ax.set_ylim(*y_lim)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.add_patch(
        MplPolygon(
            [(x_lim[0], y_lim[0]), (x_lim[1], y_lim[0]), (x_lim[1], y_lim[1]), (x_lim[0], y_lim[1])],
            closed=True,
            facecolor="#f4f4f0",
            edgecolor="none",
            zorder=0,
        )
    )

    def ring(coords: Iterable[tuple[float, ...]]) -> list[tuple[float, float]]:
        return [xy(c[0], c[1]) for c in coords]

    # ---- zones active at any moment of the sorties (what the planner avoided), labelled
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
                ax.add_patch(
                    Circle(xy(h.lon, h.lat), h.radius_m, facecolor=to_rgba(colour, alpha), edgecolor=colour, lw=1.2, zorder=1)
                )
            else:
                footprint = h
                for poly in _polygons(h):
                    if view_wgs84.intersects(poly):
                        ax.add_patch(
                            MplPolygon(ring(poly.exterior.coords), closed=True, facecolor=to_rgba(colour, alpha),
                                       edgecolor=colour, lw=1.2, zorder=1)
                        )
            inside = footprint.intersection(view_wgs84)
            if not inside.is_empty:
                at = inside.representative_point()
                ax.annotate(_zone_label(zone, vol), xy(at.x, at.y), ha="center", va="center", fontsize=7,
                            color=colour, zorder=7,
                            bbox={"facecolor": "white", "alpha": 0.7, "edgecolor": "none", "pad": 1.0})

    # ---- lanes in view: fire lanes stand out, other linear features are context
    for lane in world.lanes:
        if not view_wgs84.intersects(lane.line):
            continue
        lx, ly = zip(*ring(lane.line.coords))
        fire = lane.kind == "fire_lane"
        ax.plot(lx, ly, color="#b15928" if fire else "#9a9a9a", lw=1.4 if fire else 1.0, alpha=0.8, zorder=2)

    # ---- the area
    for poly in _polygons(plan.area_wgs84):
        ax.add_patch(
            MplPolygon(ring(poly.exterior.coords), closed=True, facecolor=to_rgba("#1f77b4", 0.10),
                       edgecolor="#1f77b4", lw=1.6, ls="--", zorder=3)
        )
        for hole in poly.interiors:
            ax.add_patch(MplPolygon(ring(hole.coords), closed=True, facecolor="#f4f4f0", edgecolor="#1f77b4",
                                    lw=1.0, ls="--", zorder=3))

    # ---- what a survey leaves unimaged: the operator must see it before the flight, not in the orthophoto
    dark = plan.unimaged_wgs84
    if dark is not None and not dark.is_empty:
        for poly in _polygons(dark):
            ax.add_patch(MplPolygon(ring(poly.exterior.coords), closed=True, facecolor=to_rgba(UNIMAGED_COLOUR, 0.55),
                                    edgecolor=UNIMAGED_COLOUR, lw=0.8, hatch="////", zorder=3.5))
        share = "" if plan.coverage_fraction is None else f" ({1.0 - plan.coverage_fraction:.1%} of the free area)"
        target = plan.parameters.get("coverage_target")
        if plan.coverage_fraction is not None and isinstance(target, (int, float)):
            met = "met" if plan.coverage_fraction >= target else "NOT met"
            share += f"; imaged {plan.coverage_fraction:.1%}, target {target:.1%} {met}"
        ax.text(0.012, 0.11, f"■ unimaged{share}", transform=ax.transAxes, color=UNIMAGED_COLOUR, fontsize=9,
                va="bottom", ha="left", zorder=8,
                bbox={"facecolor": "white", "alpha": 0.75, "edgecolor": "none", "pad": 1.5})

    # ---- sorties, coloured by drone
    drones = sorted({s.drone_id for s in plan.sorties})
    colour_of = {d: DRONE_COLOURS[i % len(DRONE_COLOURS)] for i, d in enumerate(drones)}
    for s in plan.sorties:
        wps = s.waypoints
        if len(wps) < 2:
            continue
        sx, sy = zip(*[xy(w.lon, w.lat) for w in wps])
        ax.plot(sx, sy, color=colour_of[s.drone_id], lw=1.8, zorder=4, solid_capstyle="round")
        inspect = [xy(w.lon, w.lat) for w in wps if w.action == "INSPECT"]
        if inspect:
            ix, iy = zip(*inspect)
            ax.scatter(ix, iy, s=18, color=colour_of[s.drone_id], edgecolors="white", linewidths=0.6, zorder=5)

    # ---- the flown tracks (flight report)
    for drone_id, track in sorted((flown_wgs84 or {}).items()):
        if len(track) < 2:
            continue
        fx, fy = zip(*[xy(float(p[0]), float(p[1])) for p in track])
        ax.plot(fx, fy, color="black", lw=1.3, ls=(0, (4, 2)), zorder=5.5)
    if flown_wgs84:
        ax.text(0.012, 0.975 - len(drones) * 0.035, "- - flown", transform=ax.transAxes, color="black", fontsize=9,
                va="top", ha="left", zorder=8,
                bbox={"facecolor": "white", "alpha": 0.75, "edgecolor": "none", "pad": 1.5})

    # ---- docks
    for d in docks:
        dx_, dy_ = xy(d.lon, d.lat)
        ax.scatter([dx_], [dy_], marker="^", s=90, color="black", zorder=6)
        ax.annotate(d.id, (dx_, dy_), xytext=(6, 6), textcoords="offset points", fontsize=8, zorder=7)

    # ---- legend, scale bar, attribution
    for i, d in enumerate(drones):
        ax.text(0.012, 0.975 - i * 0.035, f"■ {d}", transform=ax.transAxes, color=colour_of[d], fontsize=9,
                va="top", ha="left", zorder=8,
                bbox={"facecolor": "white", "alpha": 0.75, "edgecolor": "none", "pad": 1.5})
    bar_m = _nice_length_m(x_lim[1] - x_lim[0])
    bx = x_lim[0] + (x_lim[1] - x_lim[0]) * 0.04
    by = y_lim[0] + (y_lim[1] - y_lim[0]) * 0.05
    ax.plot([bx, bx + bar_m], [by, by], color="black", lw=3, zorder=8, solid_capstyle="butt")
    label = f"{bar_m / 1000:g} km" if bar_m >= 1000 else f"{bar_m:g} m"
    ax.text(bx + bar_m / 2, by + (y_lim[1] - y_lim[0]) * 0.012, label, ha="center", va="bottom", fontsize=8, zorder=8)
    attribution = world.attribution or "© OpenStreetMap contributors"
    if "OpenStreetMap" not in attribution:
        attribution = f"{attribution}; © OpenStreetMap contributors"
    ax.text(0.99, 0.01, attribution, transform=ax.transAxes, ha="right", va="bottom", fontsize=7, color="#333333",
            zorder=8, bbox={"facecolor": "white", "alpha": 0.7, "edgecolor": "none", "pad": 1.0})
    ax.text(0.99, 0.985, f"{plan.mission_type}  {plan.planned_for.isoformat(timespec='minutes')}",
            transform=ax.transAxes, ha="right", va="top", fontsize=8, zorder=8,
            bbox={"facecolor": "white", "alpha": 0.75, "edgecolor": "none", "pad": 1.5})

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()
