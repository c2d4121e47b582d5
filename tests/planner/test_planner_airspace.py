"""No-fly polygons: time, altitude band, restriction, authorisation, circles, margin."""

from __future__ import annotations

from datetime import datetime, time, timedelta, timezone

import pytest
from shapely.geometry import Point, box

from planner.geo.airspace import (
    DEFAULT_SORTIE_S,
    blocking_zones,
    circle_polygon_local,
    flight_window,
    longest_sortie_s,
    no_fly_polygons,
    no_fly_zones,
)
from planner.errors import InvalidArgument
from planner.geo.projection import LocalFrame
from planner.world.model import (
    Applicability,
    CircleArea,
    Drone,
    Geozone,
    Restriction,
    VerticalReference,
    WeeklySlot,
    World,
    ZoneVolume,
)
from testkit import bare_world

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)  # a Tuesday
AGL, AMSL = VerticalReference.AGL, VerticalReference.AMSL
FRAME = LocalFrame.for_point(24.94, 60.17)


def zone(zid: str, restriction: Restriction, horizontal, lower=None, upper=None, ref=AGL, applicability=()) -> Geozone:
    return Geozone(zid, zid, restriction, (ZoneVolume(horizontal, lower, ref, upper, ref),), tuple(applicability), "", "test")


def world(*zones: Geozone) -> World:
    return bare_world(zones=zones)


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


def test_zone_opening_inside_the_window_blocks() -> None:
    # Tuesday 09:10-10:00: a job at 09:00 is clear at take-off, not ten minutes later
    opens = Applicability(permanent=False, schedule=(WeeklySlot(frozenset({1}), time(9, 10), time(10)),))
    w = world(zone("W", Restriction.PROHIBITED, SQUARE, applicability=[opens]))
    assert blocking_zones(w, T0, 50) == []  # one instant, as before
    assert blocking_zones(w, T0, 50, until=T0 + timedelta(minutes=9)) == []
    assert [z.id for z, _ in blocking_zones(w, T0, 50, until=T0 + timedelta(minutes=10))] == ["W"]
    assert len(no_fly_polygons(w, T0, 50, FRAME, 20.0, until=T0 + timedelta(hours=1))) == 1
    (nz,) = no_fly_zones(w, T0, 50, FRAME, until=T0 + timedelta(hours=1))
    assert nz.zone_id == "W"


def test_zone_closed_before_the_start_or_opening_after_the_window_does_not_block() -> None:
    closed = Applicability(permanent=False, start=T0 - timedelta(days=1), end=T0)  # ends at the job's start
    later = Applicability(permanent=False, schedule=(WeeklySlot(frozenset({1}), time(13), time(14)),))
    w = world(
        zone("CLOSED", Restriction.PROHIBITED, SQUARE, applicability=[closed]),
        zone("LATER", Restriction.PROHIBITED, SQUARE, applicability=[later]),
    )
    assert blocking_zones(w, T0, 50, until=T0 + timedelta(hours=3, minutes=59)) == []
    assert [z.id for z, _ in blocking_zones(w, T0, 50, until=T0 + timedelta(hours=4))] == ["LATER"]


def test_window_bounds_are_checked() -> None:
    w = world(zone("P", Restriction.PROHIBITED, SQUARE))
    with pytest.raises(InvalidArgument):
        blocking_zones(w, T0, 50, until=T0 - timedelta(seconds=1))
    with pytest.raises(InvalidArgument):
        blocking_zones(w, T0, 50, until=datetime(2026, 12, 1, 10))


def _drone(flight_time_s: float, hover_time_s: float) -> Drone:
    return Drone(
        "D", "m", "DOCK", "t", frozenset(), 100.0, 100.0, flight_time_s, hover_time_s, 10.0, 5.0, 12.0, -20.0, 40.0,
        None, None, "ONLINE", T0, "ardupilot", "udp:127.0.0.1:14550",
    )


def test_flight_window_covers_every_sortie_and_turnaround() -> None:
    a, b = _drone(2460, 2160), _drone(2000, 3000)
    assert longest_sortie_s([a, b]) == 3000
    assert longest_sortie_s() == DEFAULT_SORTIE_S
    start, until = flight_window(T0, [a, b], sorties=3, turnaround_s=600)
    assert start == T0 and until == T0 + timedelta(seconds=3 * (3000 + 600))
    assert flight_window(T0) == (T0, T0 + timedelta(seconds=DEFAULT_SORTIE_S))
    with pytest.raises(InvalidArgument):
        flight_window(T0, [a], sorties=0)
    with pytest.raises(InvalidArgument):
        flight_window(datetime(2026, 12, 1, 9))  # naive
