"""Ground-station files: round trips through third-party parsers, structure, and golden files."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from lxml import etree

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil, mavwp  # noqa: E402

from planner.output.export_files import (  # noqa: E402
    dji_wpml,
    export_files,
    mission_planner_waypoints,
    plan_geojson,
    plan_kml,
    qgc_plan,
)
from planner.output.mission_items import mission_set  # noqa: E402
from testkit import dispatch_plan, dispatch_world  # noqa: E402

M = mavutil.mavlink


KML = "{http://www.opengis.net/kml/2.2}"


@pytest.mark.parametrize("dialect", ["ardupilot", "px4"])
def test_waypoints_file_reads_back_with_pymavlinks_strict_loader(dialect: str, tmp_path: Path) -> None:
    world, plan = dispatch_world(dialect), dispatch_plan()
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
    world, plan = dispatch_world(dialect), dispatch_plan()
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
    world = dispatch_world()
    bare = replace(world, zones=())
    fence = json.loads(qgc_plan(dispatch_plan(), bare))["geoFence"]
    assert fence["polygons"] == [] and len(fence["circles"]) == 1
    assert set(json.loads(qgc_plan(dispatch_plan(), bare))) == {"fileType", "geoFence", "groundStation", "mission", "rallyPoints", "version"}


def test_kml_parses_with_lxml_and_carries_the_route() -> None:
    plan = dispatch_plan()
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
    doc = json.loads(plan_geojson(dispatch_plan()))
    assert doc["type"] == "FeatureCollection"
    roles = [f["properties"]["role"] for f in doc["features"]]
    assert roles.count("area") == 1 and roles.count("sortie") == 1
    assert roles.count("waypoint") == len(dispatch_plan().sorties[0].waypoints)


def test_export_files_are_deterministic_and_named_per_sortie() -> None:
    a = export_files(dispatch_plan(), dispatch_world())
    b = export_files(dispatch_plan(), dispatch_world())
    assert a == b
    assert sorted(a) == ["plan.geojson", "plan.kml", "sortie-0-M30T-01.kmz", "sortie-0-M30T-01.plan", "sortie-0-M30T-01.waypoints"]
    assert isinstance(a["plan.kml"], bytes) and isinstance(a["sortie-0-M30T-01.plan"], str)


@pytest.mark.parametrize("dialect", ["ardupilot", "px4"])
def test_golden_files(dialect: str, golden) -> None:  # noqa: ANN001 - the conftest fixture
    files = export_files(dispatch_plan(), dispatch_world(dialect))
    case = f"export_{dialect}"
    golden.check(case, "mission.plan", files["sortie-0-M30T-01.plan"])
    golden.check(case, "mission.waypoints", files["sortie-0-M30T-01.waypoints"])
    golden.check(case, "plan.geojson", files["plan.geojson"])
    golden.check(case, "plan.kml", files["plan.kml"].decode("utf-8"))  # type: ignore[union-attr]
    wpml = dji_wpml(dispatch_plan(), dispatch_world(dialect))
    golden.check(case, "template.kml", wpml["wpmz/template.kml"].decode("utf-8"))
    golden.check(case, "waylines.wpml", wpml["wpmz/waylines.wpml"].decode("utf-8"))


WPML = "{http://www.dji.com/wpmz/1.0.2}"


def test_dji_kmz_holds_template_and_waylines_that_lxml_parses() -> None:
    import io
    import zipfile

    from planner.output.export_files import dji_kmz

    world, plan = dispatch_world(), dispatch_plan()
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
    from planner.output.export_files import dji_kmz

    world = dispatch_world()
    other = replace(world, drones=(replace(world.drones[0], model="Holybro X500"),))
    assert "sortie-0-M30T-01.kmz" in export_files(dispatch_plan(), world)
    assert "sortie-0-M30T-01.kmz" not in export_files(dispatch_plan(), other)
    with pytest.raises(InvalidArgument):
        dji_kmz(dispatch_plan(), other)
