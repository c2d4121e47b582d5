"""The map picture: a real PNG, deterministic, drawing what the approver must see."""

from __future__ import annotations

import io
import struct
from datetime import datetime, timezone

import pytest
from shapely.geometry import LineString, Polygon, box

from planner.errors import InvalidArgument
from planner.output.mapimage import render_plan_png
from planner.plan import Leg, Plan, Sortie, Waypoint
from planner.world.model import (
    Applicability,
    CircleArea,
    Dock,
    Geozone,
    Lane,
    Restriction,
    VerticalReference,
    World,
    ZoneVolume,
)
from testkit import bare_world

T0 = datetime(2026, 11, 29, 9, 0, tzinfo=timezone.utc)


def _world() -> World:
    zone = Geozone(
        id="Z1",
        name="no fly",
        restriction=Restriction.PROHIBITED,
        volumes=(ZoneVolume(box(24.944, 60.171, 24.946, 60.172), None, VerticalReference.AGL, None, VerticalReference.AGL),),
        applicability=(Applicability(permanent=True),),
        message="",
        source="t.json",
    )
    circle = Geozone(
        id="Z2",
        name="circle",
        restriction=Restriction.CONDITIONAL,
        volumes=(ZoneVolume(CircleArea(24.95, 60.17, 200.0), None, VerticalReference.AGL, 120.0, VerticalReference.AGL),),
        applicability=(Applicability(permanent=True),),
        message="",
        source="t.json",
    )
    return bare_world(
        timezone="Europe/Helsinki",
        attribution="© OpenStreetMap contributors",
        docks=(Dock("DOCK-A", "roof", "fire", 24.941, 60.170, 12.0, 7000.0, 12.0),),
        zones=(zone, circle),
        lanes=(Lane("L1", "fire_lane", "lane", LineString([(24.942, 60.1705), (24.947, 60.1715)])),),
    )


def _plan(drones: tuple[str, ...] = ("D1", "D2")) -> Plan:
    sorties = []
    for i, d in enumerate(drones):
        wps = (
            Waypoint(24.941, 60.170, 0.0, "TAKEOFF"),
            Waypoint(24.943 + 0.001 * i, 60.1708, 50.0),
            Waypoint(24.947, 60.1712 + 0.0003 * i, 50.0, "INSPECT", hold_s=10.0, target_id="h1"),
            Waypoint(24.941, 60.170, 0.0, "LAND"),
        )
        leg = Leg("transit", wps, 900.0, 120.0, 12.0)
        sorties.append(Sortie(i, d, "DOCK-A", T0, (leg,), 900.0, 120.0, 12.0, 0.05))
    return Plan("FIRE_LANE_PATROL", T0, Polygon([(24.942, 60.1702), (24.948, 60.1702), (24.948, 60.1718), (24.942, 60.1718)]), 50.0, tuple(sorties))


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_png_has_the_requested_size_and_no_software_stamp() -> None:
    data = render_plan_png(_plan(), _world(), width_px=800)
    assert _png_size(data) == (800, 600)
    assert b"Software" not in data and b"matplotlib" not in data


def test_same_input_same_bytes() -> None:
    assert render_plan_png(_plan(), _world()) == render_plan_png(_plan(), _world())


def test_picture_changes_with_the_plan() -> None:
    assert render_plan_png(_plan(("D1",)), _world()) != render_plan_png(_plan(("D1", "D2")), _world())


def test_sortie_colours_are_drawn() -> None:
    """The first drone's colour (#1f77b4 → rgb 31,119,180) appears in the pixels."""
    import matplotlib.image as mpimg

    arr = mpimg.imread(io.BytesIO(render_plan_png(_plan(("D1",)), _world(), width_px=600)))
    rgb = (arr[..., :3] * 255).round().astype(int)
    blue = ((rgb[..., 0] == 31) & (rgb[..., 1] == 119) & (rgb[..., 2] == 180)).sum()
    reddish = ((rgb[..., 0] > 200) & (rgb[..., 1] < 190) & (rgb[..., 2] < 190)).sum()
    assert blue > 50
    assert reddish > 50  # the prohibited zone


def test_zones_are_drawn() -> None:
    world = _world()
    from dataclasses import replace

    assert render_plan_png(_plan(), world) != render_plan_png(_plan(), replace(world, zones=()))


def test_empty_plan_draws_docks_and_bad_size_is_refused() -> None:
    empty = Plan("AREA_SURVEY", T0, Polygon(), 50.0, ())
    assert _png_size(render_plan_png(empty, _world(), width_px=400))[0] == 400
    with pytest.raises(InvalidArgument):
        render_plan_png(_plan(), _world(), width_px=10)


def test_unimaged_area_is_drawn_in_its_colour() -> None:
    """A survey's unimaged patch is painted magenta (#c51b7d → rgb 197,27,125), hatched."""
    import matplotlib.image as mpimg
    from dataclasses import replace

    from planner.output.mapimage import UNIMAGED_COLOUR

    assert UNIMAGED_COLOUR == "#c51b7d"
    patch = box(24.9445, 60.1705, 24.9465, 60.1712)
    dark = replace(_plan(("D1",)), mission_type="AREA_SURVEY", unimaged_wgs84=patch, coverage_fraction=0.97)

    def magenta(plan: Plan) -> int:
        arr = mpimg.imread(io.BytesIO(render_plan_png(plan, _world(), width_px=600)))
        rgb = (arr[..., :3] * 255).round().astype(int)
        return int(((abs(rgb[..., 0] - 197) < 40) & (rgb[..., 1] < 120) & (abs(rgb[..., 2] - 125) < 50)).sum())

    assert magenta(dark) > magenta(replace(dark, unimaged_wgs84=None)) + 2000
