"""planner.world.geozones: ED-269 and ED-318 give the same zones; real-data quirks are normalised."""

from __future__ import annotations

import copy
import json
from datetime import datetime, time
from pathlib import Path
from typing import Any

import pytest
from shapely.geometry import Polygon

from planner.errors import InvalidArgument
from planner.world.geozones import FT_TO_M, detect_format, parse_geozones, read_geozones
from planner.world.model import Applicability, CircleArea, Restriction, VerticalReference, WeeklySlot

HERE = Path(__file__).resolve().parent
ED269_FILE = HERE.parents[1] / "data" / "demo-helsinki" / "zones" / "helx.json"  # copy of shared ed269_example.json
ED318_FILE = HERE / "geozones_ed318_example.geojson"  # copy of shared ed318_example.geojson


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _ed269_zone(**over: Any) -> dict[str, Any]:
    zone = {
        "identifier": "TST001", "country": "FIN", "name": "test", "type": "COMMON", "restriction": "PROHIBITED",
        "message": "m", "applicability": [{"permanent": "YES"}],
        "geometry": [{"uomDimensions": "M", "lowerLimit": 0, "lowerVerticalReference": "AGL", "upperLimit": 120,
                      "upperVerticalReference": "AGL",
                      "horizontalProjection": {"type": "Circle", "center": [24.94, 60.17], "radius": 100}}],
    }
    zone.update(over)
    return {"title": "t", "features": [zone]}


def _ed318_doc(geometry: dict[str, Any], **props: Any) -> dict[str, Any]:
    p = {"identifier": "TST318", "country": "FIN", "name": [{"text": "Testi", "lang": "fi-FI"},
                                                            {"text": "Test", "lang": "en-GB"}],
         "type": "REQ_AUTHORIZATION", "variant": "COMMON"}
    p.update(props)
    return {"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": geometry, "properties": p}]}


def test_both_standards_give_the_same_zones() -> None:
    a, pa = parse_geozones(_load(ED269_FILE), "a.json")
    b, pb = parse_geozones(_load(ED318_FILE), "b.geojson")
    assert pa == () and pb == ()
    assert [z.id for z in a] == [z.id for z in b] == ["HELX001", "HELX002", "HELX003"]
    for za, zb in zip(a, b, strict=True):
        assert za.restriction == zb.restriction
        assert za.volumes == zb.volumes
        assert za.applicability == zb.applicability
        assert za.name == zb.name
    assert [z.restriction for z in a] == [Restriction.PROHIBITED, Restriction.REQ_AUTHORISATION, Restriction.CONDITIONAL]
    assert (a[0].source, b[0].source) == ("a.json", "b.geojson")


def test_shapes_limits_and_applicability_of_the_examples() -> None:
    zones, _ = parse_geozones(_load(ED318_FILE), "x")
    helx001, helx002, helx003 = zones
    assert helx001.volumes[0].horizontal == CircleArea(lon=24.94897, lat=60.16459, radius_m=150.0)
    v = helx002.volumes[0]
    assert isinstance(v.horizontal, Polygon) and v.horizontal.is_valid
    assert (v.lower_m, v.lower_ref, v.upper_m, v.upper_ref) == (50.0, VerticalReference.AGL, 120.0, VerticalReference.AGL)
    assert helx001.applicability == (Applicability(permanent=True),)
    (appl,) = helx003.applicability
    assert appl.schedule == (WeeklySlot(days=frozenset({4, 5}), start=time(14), end=time(22)),)
    assert helx001.message.startswith("UAS flights prohibited")


@pytest.mark.parametrize(
    ("when", "applies"),
    [
        ("2026-12-04T15:00:00+00:00", True),  # Friday inside the window
        ("2026-12-04T17:30:00+02:00", True),  # the same in Helsinki time
        ("2026-12-04T13:59:59+00:00", False),  # Friday before 14 UTC
        ("2026-12-05T21:59:00+00:00", True),  # Saturday
        ("2026-12-05T22:00:00+00:00", False),  # end is exclusive
        ("2026-12-06T15:00:00+00:00", False),  # Sunday
        ("2026-11-27T15:00:00+00:00", False),  # a Friday before startDateTime
        ("2026-12-11T15:00:00+00:00", False),  # a Friday after endDateTime
    ],
)
def test_weekly_schedule_between_dates(when: str, applies: bool) -> None:
    for path in (ED269_FILE, ED318_FILE):
        helx003 = parse_geozones(_load(path), "x")[0][2]
        assert helx003.applies_at(datetime.fromisoformat(when)) is applies, (path.name, when)


def test_permanent_zone_applies_any_time() -> None:
    helx001 = parse_geozones(_load(ED269_FILE), "x")[0][0]
    assert helx001.applies_at(datetime.fromisoformat("1999-01-01T00:00:00+00:00"))


def test_unbounded_upper_limits_null_and_99999_and_feet() -> None:
    doc = _ed269_zone(geometry=[
        {"uomDimensions": "FT", "lowerLimit": 0, "lowerVerticalReference": "AGL", "upperLimit": 400,
         "upperVerticalReference": "AGL", "horizontalProjection": {"type": "Circle", "center": [24.94, 60.17], "radius": 500}},
        {"uomDimensions": "FT", "lowerLimit": 400, "lowerVerticalReference": "AGL", "upperLimit": None,
         "upperVerticalReference": "AMSL", "horizontalProjection": {"type": "Circle", "center": [24.94, 60.17], "radius": 500}},
        {"uomDimensions": "M", "lowerLimit": None, "lowerVerticalReference": "AMSL", "upperLimit": 99999,
         "upperVerticalReference": "AMSL", "horizontalProjection": {"type": "Circle", "center": [24.94, 60.17], "radius": 50}},
    ])
    (zone,), problems = parse_geozones(doc, "s")
    assert problems == ()
    low, high, sky = zone.volumes  # stacked volumes, kept in order
    assert low.upper_m == pytest.approx(400 * FT_TO_M) and low.lower_m == 0
    assert low.horizontal.radius_m == pytest.approx(500 * FT_TO_M)
    assert high.lower_m == pytest.approx(121.92) and high.upper_m is None and high.upper_ref is VerticalReference.AMSL
    assert sky.lower_m is None and sky.upper_m is None


def test_ed318_stacked_volumes_in_a_geometry_collection_and_multilingual_text() -> None:
    square = [[[24.94, 60.17], [24.945, 60.17], [24.945, 60.172], [24.94, 60.172], [24.94, 60.17]]]
    geometry = {"type": "GeometryCollection", "geometries": [
        {"type": "Polygon", "coordinates": square,
         "layer": {"upper": 60, "upperReference": "AGL", "lower": 0, "lowerReference": "AGL", "uom": "m"}},
        {"type": "Point", "coordinates": [24.942, 60.171], "extent": {"subType": "Circle", "radius": 328.084},
         "layer": {"upper": 99999, "upperReference": "AMSL", "lower": 200, "lowerReference": "AMSL", "uom": "ft"}},
    ]}
    doc = _ed318_doc(geometry, message=[{"text": "Viesti", "lang": "fi-FI"}, {"text": "Message", "lang": "en-GB"}])
    (zone,), problems = parse_geozones(doc, "s")
    assert problems == ()
    assert zone.restriction is Restriction.REQ_AUTHORISATION  # ED-318 spelling normalised
    assert (zone.name, zone.message) == ("Test", "Message")
    poly, circle = zone.volumes
    assert isinstance(poly.horizontal, Polygon) and poly.upper_m == 60
    assert circle.horizontal.radius_m == pytest.approx(100.0, abs=1e-3)
    assert circle.lower_m == pytest.approx(60.96) and circle.upper_m is None


def test_uaszonelist_shape_and_overnight_schedule() -> None:
    doc = _ed269_zone(applicability=[{"permanent": "NO", "schedule": [
        {"day": ["SUN"], "startTime": "22:00:00Z", "endTime": "02:00:00Z"}]}])
    doc = {"UASZoneList": doc["features"]}
    assert detect_format(doc) == "ED-269"
    (zone,), problems = parse_geozones(doc, "s")
    assert problems == ()
    assert zone.applies_at(datetime.fromisoformat("2026-11-29T23:00:00+00:00"))  # Sunday night
    assert zone.applies_at(datetime.fromisoformat("2026-11-30T01:30:00+00:00"))  # Monday early
    assert not zone.applies_at(datetime.fromisoformat("2026-11-30T02:30:00+00:00"))
    assert not zone.applies_at(datetime.fromisoformat("2026-11-30T23:00:00+00:00"))  # Monday night


def test_schedule_times_with_an_offset_are_converted_to_utc() -> None:
    doc = _ed269_zone(applicability=[{"permanent": "NO", "schedule": [
        {"day": ["MON"], "startTime": "09:00:00+02:00", "endTime": "10:00:00+02:00"}]}])
    (zone,), _ = parse_geozones(doc, "s")
    assert zone.applicability[0].schedule[0].start == time(7)


@pytest.mark.parametrize(
    ("doc", "path", "fragment"),
    [
        (_ed269_zone(restriction="MAYBE"), "$.features[0].restriction", "unknown restriction 'MAYBE'"),
        (_ed269_zone(colour="red"), "$.features[0].colour", "unknown key 'colour'"),
        (_ed269_zone(applicability=[{"permanent": "SOMETIMES"}]), "$.features[0].applicability[0].permanent", "YES"),
        (_ed269_zone(applicability=[{"permanent": "NO", "startDateTime": "2026-12-04T00:00:00"}]),
         "$.features[0].applicability[0].startDateTime", "needs an offset"),
        (_ed269_zone(applicability=[{"permanent": "NO", "startDateTime": "2026-12-07T00:00:00Z",
                                     "endDateTime": "2026-12-04T00:00:00Z"}]),
         "$.features[0].applicability[0]", "is not after"),
        (_ed318_doc({"type": "Point", "coordinates": [24.94, 60.17], "extent": {"subType": "Circle", "radius": 0},
                     "layer": {"upper": 120, "upperReference": "AGL", "lower": 0, "lowerReference": "AGL", "uom": "m"}}),
         "$.features[0].geometry.extent.radius", "radius must be a number > 0"),
        (_ed318_doc({"type": "Polygon", "coordinates": [[[24.94, 60.17], [24.95, 60.17], [24.95, 60.18]]],
                     "layer": {"upper": 120, "upperReference": "AGL", "lower": 0, "lowerReference": "AGL", "uom": "m"}}),
         "$.features[0].geometry.coordinates[0]", "at least 4 positions"),
        (_ed318_doc({"type": "Point", "coordinates": [24.94, 60.17], "extent": {"subType": "Circle", "radius": 5},
                     "layer": {"upper": 120, "upperReference": "AGL", "lower": 0, "lowerReference": "AGL", "uom": "yards"}}),
         "$.features[0].geometry.layer.uom", "unknown unit 'yards'"),
        (_ed318_doc({"type": "Point", "coordinates": [24.94, 60.17], "extent": {"subType": "Circle", "radius": 5},
                     "layer": {"upper": 10, "upperReference": "AGL", "lower": 50, "lowerReference": "AGL", "uom": "m"}}),
         "$.features[0].geometry.layer", "not above lower limit"),
        ({"something": 1}, "$", "not a geozone document"),
    ],
)
def test_problems_are_located(doc: dict[str, Any], path: str, fragment: str) -> None:
    zones, problems = parse_geozones(copy.deepcopy(doc), "bad.json")
    assert zones == ()
    assert any(p == path and fragment in m for p, m in problems), problems
    with pytest.raises(InvalidArgument) as info:
        read_geozones(doc, "bad.json")
    assert {"file": "bad.json", "path": path} in [{"file": d["file"], "path": d["path"]} for d in info.value.details]


def test_one_bad_zone_does_not_hide_the_good_ones_or_other_problems() -> None:
    doc = _load(ED269_FILE)
    doc["features"][0]["restriction"] = "NOPE"
    doc["features"][2]["geometry"][0]["lowerVerticalReference"] = "SEA"
    zones, problems = parse_geozones(doc, "x")
    assert [z.id for z in zones] == ["HELX002"]
    assert [p for p, _ in problems] == ["$.features[0].restriction", "$.features[2].geometry[0].lowerVerticalReference"]
