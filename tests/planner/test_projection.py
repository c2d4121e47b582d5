"""LocalFrame: UTM zone choice, round trips under 1 cm, geometry transforms."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from shapely.geometry import Polygon, box

from planner.errors import InvalidArgument
from planner.geo.projection import LocalFrame, utm_epsg_for


def _metres_between(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    # small-distance equirectangular approximation, good to far below a millimetre here
    k = math.cos(math.radians((lat1 + lat2) / 2))
    return math.hypot((lon2 - lon1) * k, lat2 - lat1) * 111_320.0


@given(
    lon=st.floats(-179.9, 179.9),
    lat=st.floats(-79.0, 83.0),
    dlon=st.floats(-0.5, 0.5),
    dlat=st.floats(-0.5, 0.5),
)
def test_round_trip_is_under_a_centimetre(lon: float, lat: float, dlon: float, dlat: float) -> None:
    frame = LocalFrame.for_point(lon, lat)
    plon = max(-180.0, min(180.0, lon + dlon))
    plat = max(-80.0, min(84.0, lat + dlat))
    x, y = frame.forward(plon, plat)
    lon2, lat2 = frame.inverse(x, y)
    assert _metres_between(plon, plat, lon2, lat2) < 0.01


def test_zone_choice() -> None:
    assert utm_epsg_for(24.94, 60.17) == 32635
    assert utm_epsg_for(-73.98, 40.75) == 32618
    assert utm_epsg_for(151.2, -33.9) == 32756
    assert utm_epsg_for(180.0, 0.0) == 32660


def test_metric_distances_are_metres() -> None:
    frame = LocalFrame.for_point(24.94, 60.17)
    x1, y1 = frame.forward(24.94, 60.17)
    x2, y2 = frame.forward(24.94, 60.18)  # 0.01° of latitude ≈ 1113 m
    assert 1110 < math.hypot(x2 - x1, y2 - y1) < 1116


def test_geometry_round_trip_and_type() -> None:
    area = Polygon([(24.93, 60.16), (24.95, 60.16), (24.95, 60.17), (24.93, 60.17)], [[(24.935, 60.162), (24.94, 60.162), (24.94, 60.165)]])
    frame = LocalFrame.for_geometry(area)
    local = frame.to_local(area)
    assert local.geom_type == "Polygon" and len(local.interiors) == 1
    assert 1.0e6 < local.area < 1.3e6
    assert frame.to_wgs84(local).equals_exact(area, 1e-9)


def test_frames_are_values() -> None:
    assert LocalFrame.for_point(24.9, 60.1) == LocalFrame(32635)
    assert hash(LocalFrame(32635)) == hash(LocalFrame.for_point(25.1, 60.3))
    assert "Transformer" not in repr(LocalFrame(32635))


@pytest.mark.parametrize(
    "lon,lat",
    [(float("nan"), 60.0), (24.0, float("inf")), (200.0, 10.0), (24.0, 88.0), (24.0, -85.0)],
)
def test_bad_points_are_invalid_argument(lon: float, lat: float) -> None:
    with pytest.raises(InvalidArgument):
        LocalFrame.for_point(lon, lat)


def test_bad_frames() -> None:
    with pytest.raises(InvalidArgument):
        LocalFrame(4326)
    with pytest.raises(InvalidArgument):
        LocalFrame.for_geometry(box(0, 0, 0, 0).buffer(0))
