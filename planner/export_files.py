"""Ground-station files from a plan: QGroundControl ``.plan``, Mission Planner ``.waypoints``, GeoJSON, KML.

Operators open these in the tools they already use; the mission rows are the
same ``MissionItem``s the vehicle receives (``planner.mission_items``), so a
file and an upload never disagree. Functions return text or bytes and write
nothing; ``flows`` decides where files go.

- ``.plan`` (QGroundControl JSON, fileType Plan, version 1): mission items as
  SimpleItems without ArduPilot's home slot (QGC keeps home in
  ``plannedHomePosition`` and adds the slot itself on upload); ``geoFence``
  and ``rallyPoints`` are always present, even empty (MAVSDK's importer
  rejects a file without them).
- ``.waypoints`` (``QGC WPL 110``, tab separated): line 0 is home, as Mission
  Planner expects, for both dialects; 8 decimals for lat/lon and params
  (pymavlink's own writer rounds to 6, ~0.1 m).
- GeoJSON (RFC 7946): ``planner.plan.plan_to_geojson``.
- KML 2.2: the area, per sortie a route LineString and a placemark per
  waypoint, altitudes relative to ground.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from typing import Any

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil  # noqa: E402
from shapely.geometry import MultiPolygon, Polygon  # noqa: E402
from shapely.geometry.base import BaseGeometry  # noqa: E402

from planner.errors import InvalidArgument  # noqa: E402
from planner.mission_items import FRAME_GLOBAL, EndAction, MissionItem, MissionSet, mission_set  # noqa: E402
from planner.plan import Plan, Sortie, plan_to_geojson  # noqa: E402
from planner.world import World  # noqa: E402

__all__ = [
    "qgc_plan",
    "qgc_plan_dict",
    "mission_planner_waypoints",
    "plan_geojson",
    "plan_kml",
    "export_files",
]

_M = mavutil.mavlink
QGC_FIRMWARE = {"ardupilot": int(_M.MAV_AUTOPILOT_ARDUPILOTMEGA), "px4": int(_M.MAV_AUTOPILOT_PX4)}
QGC_VEHICLE_TYPE = int(_M.MAV_TYPE_QUADROTOR)
QGC_ALTITUDE_MODE_RELATIVE = 1
KML_NS = "http://www.opengis.net/kml/2.2"

_NAV_WITH_POSITION = {
    int(_M.MAV_CMD_NAV_WAYPOINT),
    int(_M.MAV_CMD_NAV_TAKEOFF),
    int(_M.MAV_CMD_NAV_LAND),
    int(_M.MAV_CMD_NAV_LOITER_TIME),
}


def _r(x: float, nd: int) -> float:
    v = round(float(x), nd)
    return 0.0 if v == 0 else v


def _sortie_of(plan: Plan, sortie: int) -> Sortie:
    for s in plan.sorties:
        if s.index == sortie:
            return s
    raise InvalidArgument(f"the plan has no sortie {sortie}; it has {[s.index for s in plan.sorties]}")


def _simple_item(item: MissionItem, jump_id: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    has_position = item.command in _NAV_WITH_POSITION
    if has_position:
        out["AMSLAltAboveTerrain"] = None
        out["Altitude"] = _r(item.alt_m, 2)
        out["AltitudeMode"] = QGC_ALTITUDE_MODE_RELATIVE
    out["autoContinue"] = bool(item.autocontinue)
    out["command"] = item.command
    out["doJumpId"] = jump_id
    out["frame"] = item.frame
    out["params"] = [
        _r(item.param1, 6),
        _r(item.param2, 6),
        _r(item.param3, 6),
        _r(item.param4, 6),
        _r(item.lat, 8) if has_position else 0,
        _r(item.lon, 8) if has_position else 0,
        _r(item.alt_m, 2) if has_position else 0,
    ]
    out["type"] = "SimpleItem"
    return out


def _fence_shapes(ms: MissionSet) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Group fence rows back into QGC polygons (runs of ``param1`` vertices) and circles."""
    polygons: list[dict[str, Any]] = []
    circles: list[dict[str, Any]] = []
    rows = list(ms.fence)
    i = 0
    vertex_cmds = {
        int(_M.MAV_CMD_NAV_FENCE_POLYGON_VERTEX_INCLUSION): True,
        int(_M.MAV_CMD_NAV_FENCE_POLYGON_VERTEX_EXCLUSION): False,
    }
    circle_cmds = {
        int(_M.MAV_CMD_NAV_FENCE_CIRCLE_INCLUSION): True,
        int(_M.MAV_CMD_NAV_FENCE_CIRCLE_EXCLUSION): False,
    }
    while i < len(rows):
        row = rows[i]
        if row.command in vertex_cmds:
            n = max(int(row.param1), 1)
            run = rows[i : i + n]
            polygons.append(
                {
                    "inclusion": vertex_cmds[row.command],
                    "polygon": [[_r(v.lat, 8), _r(v.lon, 8)] for v in run],
                    "version": 1,
                }
            )
            i += n
            continue
        if row.command in circle_cmds:
            circles.append(
                {
                    "circle": {"center": [_r(row.lat, 8), _r(row.lon, 8)], "radius": _r(row.param1, 2)},
                    "inclusion": circle_cmds[row.command],
                    "version": 1,
                }
            )
        i += 1
    return polygons, circles


def qgc_plan_dict(plan: Plan, world: World, sortie: int = 0, *, end: EndAction = "land") -> dict[str, Any]:
    """The QGroundControl plan of one sortie as a dict (``qgc_plan`` serialises it)."""
    s = _sortie_of(plan, sortie)
    ms = mission_set(plan, s, world, end=end)
    drone = world.drone(s.drone_id)
    dock = world.dock(s.dock_id)
    items = ms.mission[1:] if ms.dialect == "ardupilot" else ms.mission
    polygons, circles = _fence_shapes(ms)
    return {
        "fileType": "Plan",
        "geoFence": {"circles": circles, "polygons": polygons, "version": 2},
        "groundStation": "QGroundControl",
        "mission": {
            "cruiseSpeed": _r(drone.cruise_speed_mps, 2),
            "firmwareType": QGC_FIRMWARE[ms.dialect],
            "hoverSpeed": _r(drone.inspection_speed_mps, 2),
            "items": [_simple_item(item, n) for n, item in enumerate(items, start=1)],
            "plannedHomePosition": [_r(dock.lat, 8), _r(dock.lon, 8), _r(dock.ground_alt_m, 2)],
            "vehicleType": QGC_VEHICLE_TYPE,
            "version": 2,
        },
        "rallyPoints": {"points": [[_r(p.lat, 8), _r(p.lon, 8), _r(p.alt_m, 2)] for p in ms.rally], "version": 2},
        "version": 1,
    }


def qgc_plan(plan: Plan, world: World, sortie: int = 0, *, end: EndAction = "land") -> str:
    """QGroundControl ``.plan`` JSON for one sortie (4-space indent, as QGC writes it)."""
    return json.dumps(qgc_plan_dict(plan, world, sortie, end=end), indent=4, ensure_ascii=False) + "\n"


def _wpl_line(seq: int, current: int, item: MissionItem) -> str:
    fields = [
        str(seq),
        str(current),
        str(item.frame),
        str(item.command),
        f"{item.param1:.8f}",
        f"{item.param2:.8f}",
        f"{item.param3:.8f}",
        f"{item.param4:.8f}",
        f"{item.lat:.8f}",
        f"{item.lon:.8f}",
        f"{item.alt_m:.6f}",
        str(item.autocontinue),
    ]
    return "\t".join(fields)


def mission_planner_waypoints(plan: Plan, world: World, sortie: int = 0, *, end: EndAction = "land") -> str:
    """Mission Planner ``QGC WPL 110`` text for one sortie: home on line 0, then the mission."""
    s = _sortie_of(plan, sortie)
    ms = mission_set(plan, s, world, end=end)
    dock = world.dock(s.dock_id)
    home = MissionItem(
        seq=0, command=int(_M.MAV_CMD_NAV_WAYPOINT), frame=FRAME_GLOBAL, lat=dock.lat, lon=dock.lon, alt_m=dock.ground_alt_m
    )
    rows = list(ms.mission[1:] if ms.dialect == "ardupilot" else ms.mission)
    lines = ["QGC WPL 110", _wpl_line(0, 1, home)]
    lines += [_wpl_line(n, 0, item) for n, item in enumerate(rows, start=1)]
    return "\n".join(lines) + "\n"


def plan_geojson(plan: Plan) -> str:
    """RFC 7946 FeatureCollection text (sorted keys, 2-space indent)."""
    return json.dumps(plan_to_geojson(plan), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _k(parent: ET.Element, tag: str, text: str | None = None) -> ET.Element:
    el = ET.SubElement(parent, f"{{{KML_NS}}}{tag}")
    if text is not None:
        el.text = text
    return el


def _ring_text(coords: Any) -> str:
    return " ".join(f"{x:.7f},{y:.7f},0" for x, y, *_ in coords)


def _kml_polygon(parent: ET.Element, poly: Polygon) -> None:
    p = _k(parent, "Polygon")
    _k(p, "tessellate", "1")
    _k(_k(_k(p, "outerBoundaryIs"), "LinearRing"), "coordinates", _ring_text(poly.exterior.coords))
    for hole in poly.interiors:
        _k(_k(_k(p, "innerBoundaryIs"), "LinearRing"), "coordinates", _ring_text(hole.coords))


def _kml_area(parent: ET.Element, geom: BaseGeometry) -> None:
    if isinstance(geom, Polygon):
        _kml_polygon(parent, geom)
    elif isinstance(geom, MultiPolygon):
        multi = _k(parent, "MultiGeometry")
        for poly in geom.geoms:
            _kml_polygon(multi, poly)


def _style(doc: ET.Element, style_id: str, line_color: str | None = None, poly_color: str | None = None) -> None:
    st = _k(doc, "Style")
    st.set("id", style_id)
    if line_color:
        ls = _k(st, "LineStyle")
        _k(ls, "color", line_color)
        _k(ls, "width", "3")
    if poly_color:
        _k(_k(st, "PolyStyle"), "color", poly_color)


def plan_kml(plan: Plan) -> bytes:
    """KML 2.2 (UTF-8 bytes): the area, and per sortie its route and waypoint placemarks."""
    ET.register_namespace("", KML_NS)
    root = ET.Element(f"{{{KML_NS}}}kml")
    doc = _k(root, "Document")
    _k(doc, "name", f"sortie {plan.mission_type} {plan.planned_for.isoformat()}")
    _style(doc, "area", line_color="ff0000ff", poly_color="330000ff")
    _style(doc, "route", line_color="ff00a5ff")
    area = _k(doc, "Placemark")
    _k(area, "name", "area")
    _k(area, "styleUrl", "#area")
    _kml_area(area, plan.area_wgs84)
    for s in plan.sorties:
        folder = _k(doc, "Folder")
        _k(folder, "name", f"sortie {s.index} {s.drone_id} from {s.dock_id}")
        _k(
            folder,
            "description",
            f"start {s.start_at.isoformat()}, {s.distance_m:.0f} m, {s.duration_s:.0f} s, "
            f"{s.energy_wh:.1f} Wh ({s.battery_fraction:.0%} of the battery)",
        )
        wps = s.waypoints
        if len(wps) >= 2:
            route = _k(folder, "Placemark")
            _k(route, "name", f"route {s.index}")
            _k(route, "styleUrl", "#route")
            line = _k(route, "LineString")
            _k(line, "altitudeMode", "relativeToGround")
            _k(line, "coordinates", " ".join(f"{w.lon:.7f},{w.lat:.7f},{w.alt_m:.2f}" for w in wps))
        for n, w in enumerate(wps):
            pm = _k(folder, "Placemark")
            _k(pm, "name", f"{n} {w.action}" + (f" {w.target_id}" if w.target_id else ""))
            desc = f"alt {w.alt_m:.1f} m AGL, speed {w.speed_mps:.1f} m/s" + (f", hold {w.hold_s:.0f} s" if w.hold_s else "")
            _k(pm, "description", desc)
            pt = _k(pm, "Point")
            _k(pt, "altitudeMode", "relativeToGround")
            _k(pt, "coordinates", f"{w.lon:.7f},{w.lat:.7f},{w.alt_m:.2f}")
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def export_files(plan: Plan, world: World, *, end: EndAction = "land") -> dict[str, str | bytes]:
    """Every file for a plan by name: one ``.plan`` and ``.waypoints`` per sortie, the GeoJSON and KML."""
    out: dict[str, str | bytes] = {}
    for s in plan.sorties:
        stem = f"sortie-{s.index}-{s.drone_id}"
        out[f"{stem}.plan"] = qgc_plan(plan, world, s.index, end=end)
        out[f"{stem}.waypoints"] = mission_planner_waypoints(plan, world, s.index, end=end)
    out["plan.geojson"] = plan_geojson(plan)
    out["plan.kml"] = plan_kml(plan)
    return out
