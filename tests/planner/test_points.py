"""Inspection points inside a selection, with hover time; a golden hydrant set of the demo world."""

from __future__ import annotations

import json

import pytest
from shapely.geometry import box

from planner.errors import InvalidArgument
from planner.inspection.points import inspection_points
from planner.geo.projection import LocalFrame
from planner.world.model import Poi
from testkit import bare_world

POIS = (
    Poi("H2", "hydrant", "b", 24.9412, 60.1702),
    Poi("H1", "hydrant", "a", 24.9410, 60.1700),
    Poi("R1", "roof", "r", 24.9411, 60.1701),
    Poi("H9", "hydrant", "far", 24.9600, 60.1800),
)
W = bare_world(pois=POIS)
AREA = box(24.9405, 60.1695, 24.9415, 60.1705)


def test_points_inside_sorted_by_id_with_hover() -> None:
    pts = inspection_points(W, AREA, ("hydrant",), hover_s=30)
    assert [p.id for p in pts] == ["H1", "H2"]
    assert all(p.hover_s == 30 for p in pts)
    both = inspection_points(W, AREA, ("hydrant", "roof"))
    assert [p.id for p in both] == ["H1", "H2", "R1"]
    x, y = pts[0].xy(LocalFrame.for_point(24.94, 60.17))
    assert LocalFrame.for_point(24.94, 60.17).inverse(x, y) == pytest.approx((24.9410, 60.1700), abs=1e-9)


def test_boundary_point_counts() -> None:
    edge = box(24.9410, 60.1700, 24.9420, 60.1710)  # H1 on the corner
    assert "H1" in [p.id for p in inspection_points(W, edge)]


@pytest.mark.parametrize("kwargs", [{"kinds": ("tree",)}, {"hover_s": -1}, {"hover_s": float("nan")}])
def test_bad_input(kwargs) -> None:
    with pytest.raises(InvalidArgument):
        inspection_points(W, AREA, **kwargs)


def test_golden_hydrants_of_a_region(golden) -> None:
    from flows.context import DEMO_WORLD_DIR
    from flows.world_folder import load_world

    if not DEMO_WORLD_DIR.exists():
        pytest.skip("demo world not present")
    w = load_world(DEMO_WORLD_DIR)
    pts = inspection_points(w, w.region("region-1001").area, ("hydrant",), hover_s=20)
    assert pts
    doc = [{"id": p.id, "lon": round(p.lon, 7), "lat": round(p.lat, 7), "hover_s": p.hover_s} for p in pts]
    golden.check("hydrants_region_1001", "points.json", json.dumps(doc, sort_keys=True, indent=1) + "\n")
