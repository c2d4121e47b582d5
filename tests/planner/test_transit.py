"""Transit and inside-area visibility graphs: shortest, legal, deterministic."""

from __future__ import annotations

import math

import pytest
import shapely
from hypothesis import given
from hypothesis import strategies as st
from shapely.geometry import LineString, Point, Polygon, box

from planner.errors import AirspaceBlocked, InvalidArgument
from planner.geo.transit import InsideGraph, TransitGraph, polyline_length

U_SHAPE = Polygon([(0, 0), (600, 0), (600, 500), (450, 500), (450, 150), (150, 150), (150, 500), (0, 500)])


def test_straight_when_clear() -> None:
    g = TransitGraph([box(0, 0, 10, 10)], margin_m=5)
    assert g.path((-50, -50), (-50, 50)) == [(-50.0, -50.0), (-50.0, 50.0)]
    assert g.length((-50, -50), (-50, 50)) == pytest.approx(100.0)


def test_around_a_box_with_margin() -> None:
    g = TransitGraph([box(-10, -10, 10, 10)], margin_m=5)
    p = g.path((-40, 0), (40, 0))
    # around the grown square ±15: via two corners
    assert p[0] == (-40.0, 0.0) and p[-1] == (40.0, 0.0)
    assert len(p) == 4
    assert polyline_length(p) == pytest.approx(2 * math.hypot(25, 15) + 30, abs=1e-6)
    assert not LineString(p).intersects(box(-15, -15, 15, 15).buffer(-1e-3))


def test_around_a_circle_is_near_the_true_geodesic() -> None:
    r = 100.0
    circle = Point(0, 0).buffer(r, quad_segs=16)
    g = TransitGraph([circle])
    d = g.length((-300, 0), (300, 0))
    # true shortest path around a disc: 2·sqrt(d²−r²) + r·(π − 2·acos(r/d))
    true = 2 * math.sqrt(300**2 - r**2) + r * (math.pi - 2 * math.acos(r / 300))
    assert abs(d - true) <= 0.002 * true  # the 64-gon is inscribed, so a hair shorter


def test_point_in_zone_is_airspace_blocked() -> None:
    g = TransitGraph([box(0, 0, 100, 100)], margin_m=20)
    with pytest.raises(AirspaceBlocked):
        g.path((50, 50), (300, 300))


def test_point_in_margin_steps_out() -> None:
    g = TransitGraph([box(0, 0, 100, 100)], margin_m=20)
    p = g.path((110, 50), (300, 50))
    assert p[0] == (110.0, 50.0)
    assert p[1] == pytest.approx((120.0, 50.0))
    assert not LineString(p).intersects(box(0, 0, 100, 100))


def test_enclosed_point_has_no_path() -> None:
    ring = box(-100, -100, 100, 100).difference(box(-50, -50, 50, 50))
    g = TransitGraph([ring])
    with pytest.raises(InvalidArgument):
        g.path((0, 0), (500, 0))


def test_bad_margin() -> None:
    with pytest.raises(InvalidArgument):
        TransitGraph([box(0, 0, 1, 1)], margin_m=-1)


def test_inside_graph_goes_around_the_notch() -> None:
    g = InsideGraph(U_SHAPE)
    p = g.path((20, 480), (580, 480))
    assert p == [(20.0, 480.0), (150.0, 150.0), (450.0, 150.0), (580.0, 480.0)]
    assert U_SHAPE.buffer(1e-6).covers(LineString(p))
    with pytest.raises(InvalidArgument):
        g.path((300, 400), (20, 20))


obstacle_sets = st.lists(
    st.tuples(st.floats(-400, 400), st.floats(-400, 400), st.floats(10, 120), st.integers(3, 12)),
    min_size=1,
    max_size=5,
)


@given(obstacle_sets, st.floats(0, 30), st.floats(0, 2 * math.pi), st.floats(0, 2 * math.pi))
def test_no_transit_enters_a_zone(obs: list, margin: float, t1: float, t2: float) -> None:
    polys = [Point(x, y).buffer(r, quad_segs=max(1, k // 4)) for x, y, r, k in obs]
    g = TransitGraph(polys, margin_m=margin)
    a = (900 * math.cos(t1), 900 * math.sin(t1))
    b = (900 * math.cos(t2), 900 * math.sin(t2))
    p = g.path(a, b)
    line = LineString(p) if len(p) >= 2 and p[0] != p[-1] else Point(p[0])
    blocked = shapely.union_all(polys).buffer(margin - 1e-3 if margin > 1e-3 else -1e-3)
    assert not line.intersects(blocked.buffer(-1e-3))
    assert g.length(a, b) >= math.dist(a, b) - 1e-6
    # deterministic: a fresh graph gives the same bytes
    assert TransitGraph(polys, margin_m=margin).path(a, b) == p
