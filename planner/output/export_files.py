"""Ground-station files from a plan: QGroundControl ``.plan``, Mission Planner ``.waypoints``, GeoJSON, KML.

Operators open these in the tools they already use; the mission rows are the
same ``MissionItem``s the vehicle receives (``planner.output.mission_items``), so a
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
- DJI WPML (a KMZ: ``wpmz/template.kml`` and ``wpmz/waylines.wpml``, namespace
  ``wpmz/1.0.2``) for the DJI dock drones: the flight waypoints without
  take-off and landing (the dock does those: ``takeOffSecurityHeight``, finish
  ``goHome``), heights relative to the start point, distance-interval photos
  (``multipleDistance``) from CAMERA_ON to CAMERA_OFF, hover + photo at each
  inspection point. The zip is built in memory with fixed timestamps, so the
  bytes are reproducible.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
import zipfile
from typing import Any

from pymavlink.dialects.v20 import common as _M  # constants only (mavutil would load every dialect)
from shapely.geometry import MultiPolygon, Polygon
from shapely.geometry.base import BaseGeometry

from planner.errors import InvalidArgument
from planner.output.mission_items import FRAME_GLOBAL, EndAction, MissionItem, MissionSet, mission_set, trigger_distance_m
from planner.plan import Plan, Sortie, plan_to_geojson
from planner.world.model import Drone, World

__all__ = [
    "qgc_plan",
    "qgc_plan_dict",
    "mission_planner_waypoints",
    "plan_geojson",
    "plan_kml",
    "dji_wpml",
    "dji_kmz",
    "dji_drone_enum",
    "export_files",
]

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


# --- DJI WPML -----------------------------------------------------------------------------------

WPML_NS = "http://www.dji.com/wpmz/1.0.2"
DJI_DRONE_ENUMS: dict[str, tuple[int, int]] = {
    # model (lower case, without "dji ") → (droneEnumValue, droneSubEnumValue), DJI Cloud API device keys 0-X-Y
    "matrice 30": (67, 0),
    "matrice 30t": (67, 1),
    "matrice 3d": (91, 0),
    "matrice 3td": (91, 1),
    "matrice 4d": (100, 0),
    "matrice 4td": (100, 1),
}
DJI_DOCK_MIN_TAKEOFF_HEIGHT_M = 8.0


def dji_drone_enum(drone: Drone) -> tuple[int, int] | None:
    """``(droneEnumValue, droneSubEnumValue)`` for a DJI dock drone's model, or None for other drones."""
    key = drone.model.lower().removeprefix("dji ").strip()
    return DJI_DRONE_ENUMS.get(key)


def _w(parent: ET.Element, tag: str, text: object | None = None) -> ET.Element:
    el = ET.SubElement(parent, f"{{{WPML_NS}}}{tag}")
    if text is not None:
        el.text = _num(text) if isinstance(text, float) else str(text)
    return el


def _num(x: float) -> str:
    v = round(float(x), 3)
    return f"{v:g}" if abs(v) < 1e6 else f"{v:.3f}"


def _mission_config(doc: ET.Element, drone: Drone, enum: tuple[int, int], takeoff_m: float, rth_m: float) -> None:
    mc = _w(doc, "missionConfig")
    _w(mc, "flyToWaylineMode", "safely")
    _w(mc, "finishAction", "goHome")
    _w(mc, "exitOnRCLost", "executeLostAction")
    _w(mc, "executeRCLostAction", "goBack")
    _w(mc, "takeOffSecurityHeight", float(max(takeoff_m, DJI_DOCK_MIN_TAKEOFF_HEIGHT_M)))
    _w(mc, "globalTransitionalSpeed", float(drone.cruise_speed_mps))
    _w(mc, "globalRTHHeight", float(rth_m))
    info = _w(mc, "droneInfo")
    _w(info, "droneEnumValue", enum[0])
    _w(info, "droneSubEnumValue", enum[1])


def _action(group: ET.Element, action_id: int, func: str, params: dict[str, object]) -> None:
    a = _w(group, "action")
    _w(a, "actionId", action_id)
    _w(a, "actionActuatorFunc", func)
    p = _w(a, "actionActuatorFuncParam")
    for k, v in params.items():
        _w(p, k, v)


def _action_group(
    pm: ET.Element, group_id: int, start: int, end: int, trigger: str, trigger_param: float | None, actions: list[tuple[str, dict[str, object]]]
) -> None:
    g = _w(pm, "actionGroup")
    _w(g, "actionGroupId", group_id)
    _w(g, "actionGroupStartIndex", start)
    _w(g, "actionGroupEndIndex", end)
    _w(g, "actionGroupMode", "sequence")
    t = _w(g, "actionTrigger")
    _w(t, "actionTriggerType", trigger)
    if trigger_param is not None:
        _w(t, "actionTriggerParam", float(trigger_param))
    for n, (func, params) in enumerate(actions):
        _action(g, n, func, params)


def _wpml_doc(plan: Plan, world: World, s: Sortie, *, template: bool) -> bytes:
    drone = world.drone(s.drone_id)
    enum = dji_drone_enum(drone)
    if enum is None:
        raise InvalidArgument(f"drone {drone.id} ({drone.model}) is not a DJI dock drone; no WPML for it")
    wps = [w for w in s.waypoints if w.action not in ("TAKEOFF", "LAND")]
    if not wps:
        raise InvalidArgument(f"sortie {s.index} has no flight waypoints for WPML")
    heights = [w.alt_m for w in wps]
    trig = trigger_distance_m(plan, drone, max(heights))
    ET.register_namespace("", KML_NS)
    ET.register_namespace("wpml", WPML_NS)
    root = ET.Element(f"{{{KML_NS}}}kml")
    doc = _k(root, "Document")
    if template:
        stamp_ms = int(plan.planned_for.timestamp() * 1000)
        _w(doc, "author", "sortie")
        _w(doc, "createTime", stamp_ms)
        _w(doc, "updateTime", stamp_ms)
    _mission_config(doc, drone, enum, heights[0], max(heights))
    folder = _k(doc, "Folder")
    if template:
        _w(folder, "templateType", "waypoint")
    _w(folder, "templateId", 0)
    if template:
        cs = _w(folder, "waylineCoordinateSysParam")
        _w(cs, "coordinateMode", "WGS84")
        _w(cs, "heightMode", "relativeToStartPoint")
        _w(folder, "autoFlightSpeed", float(drone.cruise_speed_mps))
        _w(folder, "globalHeight", float(heights[0]))
        _w(folder, "caliFlightEnable", 0)
        _w(folder, "gimbalPitchMode", "manual")
        gh = _w(folder, "globalWaypointHeadingParam")
        _w(gh, "waypointHeadingMode", "followWayline")
        _w(folder, "globalWaypointTurnMode", "toPointAndStopWithDiscontinuityCurvature")
        _w(folder, "globalUseStraightLine", 1)
    else:
        _w(folder, "executeHeightMode", "relativeToStartPoint")
        _w(folder, "waylineId", 0)
        _w(folder, "distance", float(s.distance_m))
        _w(folder, "duration", float(s.duration_s))
        _w(folder, "autoFlightSpeed", float(drone.cruise_speed_mps))
    photo_runs: dict[int, int] = {}  # CAMERA_ON index → CAMERA_OFF index: photos every ``trig`` metres between
    camera_on: int | None = None
    for i, w in enumerate(wps):
        if w.action == "CAMERA_ON":
            camera_on = i
        elif w.action == "CAMERA_OFF" and camera_on is not None:
            photo_runs[camera_on] = i
            camera_on = None
    if camera_on is not None:
        photo_runs[camera_on] = len(wps) - 1
    group_id = 0
    for i, w in enumerate(wps):
        pm = _k(folder, "Placemark")
        _k(_k(pm, "Point"), "coordinates", f"{w.lon:.7f},{w.lat:.7f}")
        _w(pm, "index", i)
        if template:
            _w(pm, "useGlobalHeight", 0)
            _w(pm, "ellipsoidHeight", float(w.alt_m))
            _w(pm, "height", float(w.alt_m))
            _w(pm, "useGlobalSpeed", 0)
            _w(pm, "waypointSpeed", float(w.speed_mps or drone.cruise_speed_mps))
            _w(pm, "useGlobalHeadingParam", 1)
            _w(pm, "useGlobalTurnParam", 1)
            _w(pm, "useStraightLine", 1)
        else:
            _w(pm, "executeHeight", float(w.alt_m))
            _w(pm, "waypointSpeed", float(w.speed_mps or drone.cruise_speed_mps))
            hp = _w(pm, "waypointHeadingParam")
            _w(hp, "waypointHeadingMode", "followWayline")
            tp = _w(pm, "waypointTurnParam")
            _w(tp, "waypointTurnMode", "toPointAndStopWithDiscontinuityCurvature")
            _w(tp, "waypointTurnDampingDist", 0.0)
            _w(pm, "useStraightLine", 1)
        if i in photo_runs:
            _action_group(pm, group_id, i, photo_runs[i], "multipleDistance", trig, [("takePhoto", {"payloadPositionIndex": 0})])
            group_id += 1
        if w.action == "INSPECT" or w.hold_s > 0:
            _action_group(
                pm, group_id, i, i, "reachPoint", None,
                [("hover", {"hoverTime": float(max(w.hold_s, 1.0))}), ("takePhoto", {"payloadPositionIndex": 0})],
            )
            group_id += 1
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def dji_wpml(plan: Plan, world: World, sortie: int = 0) -> dict[str, bytes]:
    """``{"wpmz/template.kml": …, "wpmz/waylines.wpml": …}`` for one sortie of a DJI dock drone."""
    s = _sortie_of(plan, sortie)
    return {
        "wpmz/template.kml": _wpml_doc(plan, world, s, template=True),
        "wpmz/waylines.wpml": _wpml_doc(plan, world, s, template=False),
    }


def dji_kmz(plan: Plan, world: World, sortie: int = 0) -> bytes:
    """The DJI KMZ (zip) of one sortie, built in memory with fixed timestamps (reproducible bytes)."""
    parts = dji_wpml(plan, world, sortie)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(parts):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, parts[name])
    return buf.getvalue()


def export_files(plan: Plan, world: World, *, end: EndAction = "land") -> dict[str, str | bytes]:
    """Every file for a plan by name: per sortie a ``.plan`` and ``.waypoints`` (and a DJI
    ``.kmz`` when the drone is a DJI dock drone), then the GeoJSON and KML of the whole plan."""
    out: dict[str, str | bytes] = {}
    for s in plan.sorties:
        stem = f"sortie-{s.index}-{s.drone_id}"
        out[f"{stem}.plan"] = qgc_plan(plan, world, s.index, end=end)
        out[f"{stem}.waypoints"] = mission_planner_waypoints(plan, world, s.index, end=end)
        if dji_drone_enum(world.drone(s.drone_id)) is not None:
            out[f"{stem}.kmz"] = dji_kmz(plan, world, s.index)
    out["plan.geojson"] = plan_geojson(plan)
    out["plan.kml"] = plan_kml(plan)
    return out
