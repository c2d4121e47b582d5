"""No-fly polygons: time, altitude band, restriction, authorisation, circles, margin."""

from __future__ import annotations

from datetime import datetime, time, timezone

import pytest
from shapely.geometry import Point, box

from planner.airspace import blocking_zones, circle_polygon_local, no_fly_polygons, no_fly_zones
from planner.errors import InvalidArgument
from planner.projection import LocalFrame
from planner.world import (
    Applicability,
    CircleArea,
    Geozone,
    Restriction,
    VerticalReference,
    Weather,
    WeeklySlot,
    World,
    WorldDefaults,
    ZoneVolume,
)

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)  # a Tuesday
AGL, AMSL = VerticalReference.AGL, VerticalReference.AMSL
FRAME = LocalFrame.for_point(24.94, 60.17)


def zone(zid: str, restriction: Restriction, horizontal, lower=None, upper=None, ref=AGL, applicability=()) -> Geozone:
    return Geozone(zid, zid, restriction, (ZoneVolume(horizontal, lower, ref, upper, ref),), tuple(applicability), "", "test")


def world(*zones: Geozone) -> World:
    return World("t", "UTC", WorldDefaults(), "", (), (), tuple(zones), (), (), (), Weather(()), ())


SQUARE = box(24.940, 60.170, 24.942, 60.171)


def test_restrictions_and_authorisation() -> None:
    w = world(
        zone("P", Restriction.PROHIBITED, SQUARE),
        zone("R", Restriction.REQ_AUTHORISATION, SQUARE),
        zone("C", Restriction.CONDITIONAL, SQUARE),
        zone("N", Restriction.NO_RESTRICTION, SQUARE),
    )
    assert [z.id for z, _ in blocking_zones(w, T0, 50)] == ["P", "R"]
    assert [z.id for z, _ in blocking_zones(w, T0, 50, authorised_zone_ids={"R"})] == ["P"]


def test_altitude_band() -> None:
    w = world(
        zone("HIGH", Restriction.PROHIBITED, SQUARE, lower=60, upper=None),
        zone("LOW", Restriction.PROHIBITED, SQUARE, lower=None, upper=30),
        zone("AMSL", Restriction.PROHIBITED, SQUARE, lower=100, upper=200, ref=AMSL),
    )
    assert [z.id for z, _ in blocking_zones(w, T0, 50)] == ["LOW"]
    assert [z.id for z, _ in blocking_zones(w, T0, 70)] == ["HIGH", "LOW"]
    # ground at 60 m AMSL: flying to 50 m AGL reaches 110 m AMSL, inside 100..200 AMSL
    assert [z.id for z, _ in blocking_zones(w, T0, 50, ground_alt_m=60)] == ["AMSL", "LOW"]


def test_time_applicability() -> None:
    weekly = Applicability(permanent=False, schedule=(WeeklySlot(frozenset({1}), time(8), time(10)),))
    w = world(zone("W", Restriction.PROHIBITED, SQUARE, applicability=[weekly]))
    assert len(blocking_zones(w, T0, 50)) == 1
    assert blocking_zones(w, T0.replace(hour=11), 50) == []
    with pytest.raises(InvalidArgument):
        blocking_zones(w, datetime(2026, 12, 1, 9), 50)


def test_circle_contains_the_true_circle_and_margin_grows() -> None:
    c = CircleArea(24.95, 60.17, 150.0)
    poly = circle_polygon_local(FRAME, c)
    assert len(poly.exterior.coords) == 65
    centre = Point(FRAME.forward(24.95, 60.17))
    assert poly.contains(centre.buffer(150.0, quad_segs=64))
    w = world(zone("C", Restriction.PROHIBITED, c))
    (p0,) = no_fly_polygons(w, T0, 50, FRAME, 0.0)
    (p20,) = no_fly_polygons(w, T0, 50, FRAME, 20.0)
    assert p20.contains(centre.buffer(170.0, quad_segs=64))
    assert p20.area > p0.area
    (nz,) = no_fly_zones(w, T0, 50, FRAME, 20.0)
    assert nz.zone_id == "C" and nz.polygon_local.equals(p20)


def test_negative_margin_rejected() -> None:
    with pytest.raises(InvalidArgument):
        no_fly_polygons(world(), T0, 50, FRAME, -1.0)
