"""Ground-station files: round trips through third-party parsers, structure, and golden files."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest
from lxml import etree
from shapely.geometry import Polygon

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil, mavwp  # noqa: E402

from planner.export_files import (  # noqa: E402
    dji_wpml,
    export_files,
    mission_planner_waypoints,
    plan_geojson,
    plan_kml,
    qgc_plan,
)
from planner.mission_items import mission_set  # noqa: E402
from planner.plan import Leg, Plan, Sortie, Waypoint  # noqa: E402
from planner.world import (  # noqa: E402
    Applicability, Camera, CircleArea, Dock, Drone, Geozone, Restriction, VerticalReference,
    Weather, World, WorldDefaults, ZoneVolume,
)

M = mavutil.mavlink
T0 = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)


def _zone(zid: str, restriction: Restriction, horizontal, lower_m=None, applicability=()) -> Geozone:
    vol = ZoneVolume(horizontal=horizontal, lower_m=lower_m, lower_ref=VerticalReference.AGL, upper_m=120.0, upper_ref=VerticalReference.AGL)
    return Geozone(id=zid, name=zid, restriction=restriction, volumes=(vol,), applicability=applicability, message="", source="test")


def small_world(autopilot: str = "ardupilot", link: str = "udpout:127.0.0.1:9") -> World:
    drone = Drone(
        id="M30T-01", model="DJI Matrice 30T", dock_id="DOCK-A", tenant="city-fire",
        capabilities=frozenset({"RGB_CAMERA"}), battery_wh=263.2, battery_pct=96.0,
        flight_time_s=2460.0, hover_time_s=2160.0, cruise_speed_mps=12.0, inspection_speed_mps=7.0,
        max_wind_mps=12.0, min_temp_c=-20.0, max_temp_c=50.0, ip_rating="IP55",
        camera=Camera(hfov_deg=84.0, vfov_deg=66.0), status="ONLINE", last_telemetry_at=T0,
        autopilot=autopilot, link=link,
    )
    docks = (
        Dock("DOCK-A", "Fire station roof", "city-fire", 24.9410, 60.1700, 12.0, 3000.0, 12.0),
        Dock("DOCK-B", "Depot", "city-fire", 24.9600, 60.1750, 4.0, 3000.0, 12.0),
        Dock("DOCK-X", "Elsewhere", "other", 24.9420, 60.1710, 5.0, 3000.0, 12.0),
        Dock("DOCK-Z", "Far away", "city-fire", 25.5000, 60.4000, 5.0, 3000.0, 12.0),
    )
    zones = (
        _zone("NFZ-POLY", Restriction.PROHIBITED, Polygon([(24.945, 60.171), (24.947, 60.171), (24.947, 60.172), (24.945, 60.172)])),
        _zone("NFZ-CIRCLE", Restriction.PROHIBITED, CircleArea(24.935, 60.168, 150.0)),
        _zone("NFZ-FAR", Restriction.PROHIBITED, CircleArea(25.5, 60.5, 500.0)),
        _zone("AUTH", Restriction.REQ_AUTHORISATION, CircleArea(24.941, 60.170, 500.0)),
        _zone("NFZ-HIGH", Restriction.PROHIBITED, CircleArea(24.950, 60.172, 100.0), lower_m=200.0),
        _zone("NFZ-LATER", Restriction.PROHIBITED, CircleArea(24.952, 60.172, 100.0),
              applicability=(Applicability(permanent=False, start=datetime(2027, 1, 1, tzinfo=timezone.utc)),)),
    )
    return World(
        name="dispatch-test", timezone="Europe/Helsinki", defaults=WorldDefaults(), attribution="test",
        drones=(drone,), docks=docks, zones=zones, lanes=(), regions=(), pois=(), weather=Weather(()), users=(),
    )


def small_plan(n_sweep: int = 4) -> Plan:
    dock_lon, dock_lat = 24.9410, 60.1700
    sweep = [Waypoint(24.9430 + 0.0004 * (i // 2), 60.1710 + 0.0006 * (i % 2 if (i // 2) % 2 == 0 else 1 - i % 2), 50.0,
                      "WAYPOINT", 7.0) for i in range(n_sweep)]
    sweep[0] = replace(sweep[0], action="CAMERA_ON")
    sweep[-1] = replace(sweep[-1], action="CAMERA_OFF")
    legs = (
        Leg("takeoff", (Waypoint(dock_lon, dock_lat, 50.0, "TAKEOFF"),), 50.0, 10.0, 1.0),
        Leg("transit", (Waypoint(dock_lon, dock_lat, 50.0, "TAKEOFF"), Waypoint(24.9425, 60.1705, 50.0, "WAYPOINT", 12.0)), 120.0, 10.0, 1.0),
        Leg("sweep", tuple(sweep), 300.0, 45.0, 5.0, target_id="AREA-1"),
        Leg("inspect", (Waypoint(24.9440, 60.1702, 40.0, "INSPECT", 7.0, hold_s=10.5, target_id="POI-1"),), 50.0, 20.0, 2.0, target_id="POI-1"),
        Leg("landing", (Waypoint(dock_lon, dock_lat, 40.0, "WAYPOINT", 12.0), Waypoint(dock_lon, dock_lat, 0.0, "LAND")), 200.0, 30.0, 3.0),
    )
    sortie = Sortie(index=0, drone_id="M30T-01", dock_id="DOCK-A", start_at=T0, legs=legs,
                    distance_m=720.0, duration_s=115.0, energy_wh=12.0, battery_fraction=0.05)
    area = Polygon([(24.9428, 60.1708), (24.9448, 60.1708), (24.9448, 60.1718), (24.9428, 60.1718)])
    return Plan(mission_type="survey", planned_for=T0, area_wgs84=area, altitude_m=50.0, sorties=(sortie,),
                coverage_fraction=0.98, parameters={"front_overlap": 0.7})


KML = "{http://www.opengis.net/kml/2.2}"


@pytest.mark.parametrize("dialect", ["ardupilot", "px4"])
def test_waypoints_file_reads_back_with_pymavlinks_strict_loader(dialect: str, tmp_path: Path) -> None:
    world, plan = small_world(dialect), small_plan()
    text = mission_planner_waypoints(plan, world)
    path = tmp_path / "m.waypoints"
    path.write_text(text)
    loader = mavwp.MAVWPLoader()
    assert loader.load(str(path)) == len(text.splitlines()) - 1
    ms = mission_set(plan, 0, world)
    rows = ms.mission[1:] if dialect == "ardupilot" else ms.mission
    home = loader.wp(0)
    dock = world.dock("DOCK-A")
    assert (home.x, home.y, home.z, home.current) == (dock.lat, dock.lon, dock.ground_alt_m, 1)
    assert loader.count() == len(rows) + 1
    for n, item in enumerate(rows, start=1):
        wp = loader.wp(n)
        assert (wp.seq, wp.command, wp.frame, wp.autocontinue) == (n, item.command, item.frame, 1)
        assert abs(wp.x - item.lat) < 1e-9 and abs(wp.y - item.lon) < 1e-9 and abs(wp.z - item.alt_m) < 1e-6
        assert [wp.param1, wp.param2, wp.param3, wp.param4] == pytest.approx(list(item.params), abs=1e-8)
    first = text.splitlines()[2].split("\t")
    assert first[8].split(".")[1] == "17000000", "lat/lon keep 8 decimals"


@pytest.mark.parametrize("dialect", ["ardupilot", "px4"])
def test_qgc_plan_has_the_shape_qgroundcontrol_and_mavsdk_expect(dialect: str) -> None:
    world, plan = small_world(dialect), small_plan()
    doc = json.loads(qgc_plan(plan, world))
    assert (doc["fileType"], doc["version"], doc["groundStation"]) == ("Plan", 1, "QGroundControl")
    mission = doc["mission"]
    assert mission["version"] == 2 and mission["vehicleType"] == 2
    assert mission["firmwareType"] == {"ardupilot": 3, "px4": 12}[dialect]
    assert (mission["cruiseSpeed"], mission["hoverSpeed"]) == (12.0, 7.0)
    assert mission["plannedHomePosition"] == [60.17, 24.941, 12.0]
    ms = mission_set(plan, 0, world)
    rows = ms.mission[1:] if dialect == "ardupilot" else ms.mission
    assert len(mission["items"]) == len(rows), "no home slot in a .plan: QGC adds it on upload"
    for n, (si, item) in enumerate(zip(mission["items"], rows), start=1):
        assert si["type"] == "SimpleItem" and si["doJumpId"] == n and si["autoContinue"] is True
        assert (si["command"], si["frame"]) == (item.command, item.frame)
        assert len(si["params"]) == 7 and si["params"][:4] == list(item.params)
        if "Altitude" in si:
            assert si["params"][4:] == [item.lat, item.lon, item.alt_m] and si["AltitudeMode"] == 1
    fence = doc["geoFence"]
    assert fence["version"] == 2
    assert [(c["inclusion"], c["circle"]["radius"]) for c in fence["circles"]] == [(True, 3000.0), (False, 150.0)]
    assert [(p["inclusion"], len(p["polygon"])) for p in fence["polygons"]] == [(False, 4)]
    assert doc["rallyPoints"] == {"points": [[60.17, 24.941, 50.0], [60.175, 24.96, 42.0]], "version": 2}


def test_qgc_plan_keeps_empty_fence_keys() -> None:
    world = small_world()
    bare = replace(world, zones=())
    fence = json.loads(qgc_plan(small_plan(), bare))["geoFence"]
    assert fence["polygons"] == [] and len(fence["circles"]) == 1
    assert set(json.loads(qgc_plan(small_plan(), bare))) == {"fileType", "geoFence", "groundStation", "mission", "rallyPoints", "version"}


def test_kml_parses_with_lxml_and_carries_the_route() -> None:
    plan = small_plan()
    root = etree.fromstring(plan_kml(plan))
    assert root.tag == f"{KML}kml"
    lines = root.findall(f".//{KML}LineString/{KML}coordinates")
    assert len(lines) == 1
    coords = [tuple(map(float, c.split(","))) for c in lines[0].text.split()]
    wps = plan.sorties[0].waypoints
    assert len(coords) == len(wps)
    assert all(abs(c[0] - w.lon) < 1e-7 and abs(c[1] - w.lat) < 1e-7 and abs(c[2] - w.alt_m) < 1e-2 for c, w in zip(coords, wps))
    points = root.findall(f".//{KML}Folder/{KML}Placemark/{KML}Point")
    assert len(points) == len(wps)
    names = [p.findtext(f"{KML}name") for p in root.iter(f"{KML}Placemark")]
    assert "6 INSPECT POI-1" in " | ".join(n for n in names if n)
    assert root.find(f".//{KML}Polygon/{KML}outerBoundaryIs") is not None


def test_geojson_is_the_plans_feature_collection() -> None:
    doc = json.loads(plan_geojson(small_plan()))
    assert doc["type"] == "FeatureCollection"
    roles = [f["properties"]["role"] for f in doc["features"]]
    assert roles.count("area") == 1 and roles.count("sortie") == 1
    assert roles.count("waypoint") == len(small_plan().sorties[0].waypoints)


def test_export_files_are_deterministic_and_named_per_sortie() -> None:
    a = export_files(small_plan(), small_world())
    b = export_files(small_plan(), small_world())
    assert a == b
    assert sorted(a) == ["plan.geojson", "plan.kml", "sortie-0-M30T-01.kmz", "sortie-0-M30T-01.plan", "sortie-0-M30T-01.waypoints"]
    assert isinstance(a["plan.kml"], bytes) and isinstance(a["sortie-0-M30T-01.plan"], str)


@pytest.mark.parametrize("dialect", ["ardupilot", "px4"])
def test_golden_files(dialect: str, golden) -> None:  # noqa: ANN001 - the conftest fixture
    files = export_files(small_plan(), small_world(dialect))
    case = f"export_{dialect}"
    golden.check(case, "mission.plan", files["sortie-0-M30T-01.plan"])
    golden.check(case, "mission.waypoints", files["sortie-0-M30T-01.waypoints"])
    golden.check(case, "plan.geojson", files["plan.geojson"])
    golden.check(case, "plan.kml", files["plan.kml"].decode("utf-8"))  # type: ignore[union-attr]
    wpml = dji_wpml(small_plan(), small_world(dialect))
    golden.check(case, "template.kml", wpml["wpmz/template.kml"].decode("utf-8"))
    golden.check(case, "waylines.wpml", wpml["wpmz/waylines.wpml"].decode("utf-8"))


WPML = "{http://www.dji.com/wpmz/1.0.2}"


def test_dji_kmz_holds_template_and_waylines_that_lxml_parses() -> None:
    import io
    import zipfile

    from planner.export_files import dji_kmz

    world, plan = small_world(), small_plan()
    blob = dji_kmz(plan, world)
    assert blob == dji_kmz(plan, world), "reproducible bytes"
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        assert sorted(zf.namelist()) == ["wpmz/template.kml", "wpmz/waylines.wpml"]
        waylines = etree.fromstring(zf.read("wpmz/waylines.wpml"))
        template = etree.fromstring(zf.read("wpmz/template.kml"))
    info = waylines.find(f".//{WPML}droneInfo")
    assert (info.findtext(f"{WPML}droneEnumValue"), info.findtext(f"{WPML}droneSubEnumValue")) == ("67", "1")  # M30T
    assert waylines.findtext(f".//{WPML}finishAction") == "goHome"
    marks = waylines.findall(f".//{KML}Folder/{KML}Placemark")
    flight = [w for w in plan.sorties[0].waypoints if w.action not in ("TAKEOFF", "LAND")]
    assert len(marks) == len(flight) == len(template.findall(f".//{KML}Folder/{KML}Placemark"))
    assert [int(m.findtext(f"{WPML}index")) for m in marks] == list(range(len(flight)))
    for m, w in zip(marks, flight):
        lon, lat = map(float, m.findtext(f"{KML}Point/{KML}coordinates").split(","))
        assert abs(lon - w.lon) < 1e-7 and abs(lat - w.lat) < 1e-7
        assert float(m.findtext(f"{WPML}executeHeight")) == w.alt_m
    groups = waylines.findall(f".//{WPML}actionGroup")
    triggers = [(g.findtext(f"{WPML}actionTrigger/{WPML}actionTriggerType"), g.findtext(f"{WPML}actionGroupStartIndex"),
                 g.findtext(f"{WPML}actionGroupEndIndex")) for g in groups]
    on = next(i for i, w in enumerate(flight) if w.action == "CAMERA_ON")
    off = next(i for i, w in enumerate(flight) if w.action == "CAMERA_OFF")
    inspect = next(i for i, w in enumerate(flight) if w.action == "INSPECT")
    assert triggers == [("multipleDistance", str(on), str(off)), ("reachPoint", str(inspect), str(inspect))]
    assert groups[1].findtext(f".//{WPML}hoverTime") == "10.5"


def test_dji_files_only_for_dji_drones() -> None:
    from planner.errors import InvalidArgument
    from planner.export_files import dji_kmz

    world = small_world()
    other = replace(world, drones=(replace(world.drones[0], model="Holybro X500"),))
    assert "sortie-0-M30T-01.kmz" in export_files(small_plan(), world)
    assert "sortie-0-M30T-01.kmz" not in export_files(small_plan(), other)
    with pytest.raises(InvalidArgument):
        dji_kmz(small_plan(), other)
