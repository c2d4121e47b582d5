"""Mission items from a plan sortie: dialect layout, commands, fence, rally and the wire round trip."""

from __future__ import annotations

import math
import os
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil  # noqa: E402

from planner.errors import InvalidArgument
from planner.output.mission_items import (
    # noqa: E402,
    FENCE,
    FRAME_GLOBAL,
    FRAME_GLOBAL_RELATIVE_ALT,
    FRAME_MISSION,
    MISSION,
    RALLY,
    MissionItem,
    fence_items,
    fence_params,
    mission_items,
    mission_set,
    rally_items,
)
from planner.output.mission_wire import compare_items, from_wire, normalise_as_vehicle, to_wire, wire_frame
from planner.world.model import Applicability, CircleArea, Restriction, VerticalReference, WeeklySlot  # noqa: E402
from testkit import agl_zone, dispatch_plan, dispatch_world  # noqa: E402

M = mavutil.mavlink


def _cmds(items: tuple[MissionItem, ...]) -> list[int]:
    return [i.command for i in items]


def test_ardupilot_has_the_home_slot_and_takeoff_at_seq1() -> None:
    world, plan = dispatch_world("ardupilot"), dispatch_plan()
    items = mission_items(plan, 0, world)
    dock = world.dock("DOCK-A")
    assert [i.seq for i in items] == list(range(len(items)))
    assert (items[0].command, items[0].frame, items[0].lat, items[0].lon) == (M.MAV_CMD_NAV_WAYPOINT, FRAME_GLOBAL, dock.lat, dock.lon)
    assert items[1].command == M.MAV_CMD_NAV_TAKEOFF and items[1].alt_m == 50.0
    assert items[-1].command == M.MAV_CMD_NAV_LAND and items[-1].alt_m == 0.0


def test_px4_has_no_home_slot_and_otherwise_the_same_rows() -> None:
    ap = mission_items(dispatch_plan(), 0, dispatch_world("ardupilot"))
    px = mission_items(dispatch_plan(), 0, dispatch_world("px4"))
    assert px[0].command == M.MAV_CMD_NAV_TAKEOFF
    assert len(px) == len(ap) - 1
    strip = lambda i: replace(i, seq=0, param1=0.0)  # noqa: E731 - holds differ by rounding, checked below
    assert [strip(i) for i in px] == [strip(i) for i in ap[1:]]


def test_hold_is_whole_seconds_on_ardupilot_and_exact_on_px4() -> None:
    ap = [i for i in mission_items(dispatch_plan(), 0, dispatch_world("ardupilot")) if i.param1 and i.command == M.MAV_CMD_NAV_WAYPOINT]
    px = [i for i in mission_items(dispatch_plan(), 0, dispatch_world("px4")) if i.param1 and i.command == M.MAV_CMD_NAV_WAYPOINT]
    assert [i.param1 for i in ap] == [11.0]  # 10.5 s rounded up: never shorter than planned
    assert [i.param1 for i in px] == [10.5]
    assert (ap[0].lat, ap[0].lon, ap[0].alt_m) == (60.1702, 24.944, 40.0)


def test_speed_changes_only_when_the_speed_does() -> None:
    items = mission_items(dispatch_plan(), 0, dispatch_world("px4"))
    speeds = [i.param2 for i in items if i.command == M.MAV_CMD_DO_CHANGE_SPEED]
    assert speeds == [12.0, 7.0, 12.0]
    first = next(i for i in items if i.command == M.MAV_CMD_DO_CHANGE_SPEED)
    assert (first.param1, first.param3, first.frame) == (1.0, -1.0, FRAME_MISSION)


def test_camera_trigger_distance_brackets_the_sweep() -> None:
    items = mission_items(dispatch_plan(), 0, dispatch_world("px4"))
    trig = [(n, i.param1) for n, i in enumerate(items) if i.command == M.MAV_CMD_DO_SET_CAM_TRIGG_DIST]
    expected = round(2 * 50.0 * math.tan(math.radians(66.0 / 2)) * (1 - 0.7), 2)
    assert [d for _, d in trig] == [expected, 0.0]
    on, off = trig[0][0], trig[1][0]
    assert items[on - 1].command == M.MAV_CMD_NAV_WAYPOINT and (items[on - 1].lat, items[on - 1].lon) == (60.171, 24.943)
    nav_between = [i for i in items[on:off] if i.command == M.MAV_CMD_NAV_WAYPOINT]
    assert len(nav_between) == 3  # the sweep's remaining corners, the last being CAMERA_OFF's
    forced = mission_items(replace(dispatch_plan(), parameters={"trigger_distance_m": 12.345}), 0, dispatch_world("px4"))
    assert [i.param1 for i in forced if i.command == M.MAV_CMD_DO_SET_CAM_TRIGG_DIST] == [12.35, 0.0]


def test_rtl_instead_of_land_and_when_the_sortie_does_not_land() -> None:
    world, plan = dispatch_world("px4"), dispatch_plan()
    rtl = mission_items(plan, 0, world, end="rtl")
    assert rtl[-1].command == M.MAV_CMD_NAV_RETURN_TO_LAUNCH
    assert M.MAV_CMD_NAV_LAND not in _cmds(rtl)
    s = plan.sorties[0]
    no_land = replace(s, legs=s.legs[:-1])
    items = mission_items(replace(plan, sorties=(no_land,)), 0, world)
    assert items[-1].command == M.MAV_CMD_NAV_RETURN_TO_LAUNCH


def test_fence_has_the_dock_range_and_only_relevant_prohibited_zones() -> None:
    world, plan = dispatch_world(), dispatch_plan()
    fence = fence_items(plan, 0, world)
    assert all(i.mission_type == FENCE and i.frame == FRAME_GLOBAL for i in fence)
    assert (fence[0].command, fence[0].param1, fence[0].lat) == (M.MAV_CMD_NAV_FENCE_CIRCLE_INCLUSION, 3000.0, 60.17)
    vertices = [i for i in fence if i.command == M.MAV_CMD_NAV_FENCE_POLYGON_VERTEX_EXCLUSION]
    assert [(v.lon, v.lat) for v in vertices] == [(24.945, 60.171), (24.947, 60.171), (24.947, 60.172), (24.945, 60.172)]
    assert {v.param1 for v in vertices} == {4.0}
    circles = [i for i in fence if i.command == M.MAV_CMD_NAV_FENCE_CIRCLE_EXCLUSION]
    # NFZ-FAR is out of range, AUTH is not prohibited, NFZ-HIGH starts above the sortie, NFZ-LATER is not active yet
    assert [(c.lon, c.lat, c.param1) for c in circles] == [(24.935, 60.168, 150.0)]
    later = replace(plan, sorties=(replace(plan.sorties[0], start_at=datetime(2027, 2, 1, tzinfo=timezone.utc)),))
    assert len(fence_items(later, 0, world)) == len(fence) + 1


def test_a_zone_the_sortie_flies_over_or_under_is_not_fenced() -> None:
    world, plan = dispatch_world(), dispatch_plan()
    base = len(fence_items(plan, 0, world))
    low = agl_zone("LOW", Restriction.PROHIBITED, CircleArea(24.943, 60.171, 80.0))
    low = replace(low, volumes=(replace(low.volumes[0], upper_m=30.0),))  # 0–30 m AGL; the sortie cruises at 40–50 m
    assert len(fence_items(plan, 0, replace(world, zones=world.zones + (low,)))) == base
    band = replace(low, volumes=(replace(low.volumes[0], lower_m=45.0, upper_m=60.0),))
    assert len(fence_items(plan, 0, replace(world, zones=world.zones + (band,)))) == base + 1
    amsl = replace(low, volumes=(replace(low.volumes[0], upper_m=40.0, upper_ref=VerticalReference.AMSL),))
    assert len(fence_items(plan, 0, replace(world, zones=world.zones + (amsl,)))) == base  # 40 m AMSL = 28 m above the dock


def test_a_sortie_without_a_takeoff_gets_one_at_the_dock() -> None:
    world, plan = dispatch_world("px4"), dispatch_plan()
    s = plan.sorties[0]
    no_takeoff = replace(s, legs=s.legs[2:])
    items = mission_items(replace(plan, sorties=(no_takeoff,)), 0, world)
    assert items[0].command == M.MAV_CMD_NAV_TAKEOFF and (items[0].lat, items[0].lon) == (60.17, 24.941)
    assert items[0].alt_m == 50.0


def test_rally_points_are_the_tenants_docks_in_range_home_first() -> None:
    rally = rally_items(dispatch_plan(), 0, dispatch_world())
    assert [(r.lon, r.lat, r.alt_m) for r in rally] == [(24.941, 60.17, 50.0), (24.96, 60.175, 42.0)]
    assert all(r.command == M.MAV_CMD_NAV_RALLY_POINT and r.frame == FRAME_GLOBAL_RELATIVE_ALT and r.mission_type == RALLY for r in rally)


def test_ceiling_is_a_parameter_per_dialect() -> None:
    """The altitude fence is the ceiling the plan was made under (the rule set's), per autopilot."""
    plan = dispatch_plan()
    assert fence_params(plan, "ardupilot") == {"FENCE_ALT_MAX": 120.0, "FENCE_ENABLE": 1.0, "FENCE_TYPE": 5.0}
    assert fence_params(plan, "px4") == {"GF_MAX_VER_DIST": 120.0, "GF_ACTION": 3.0}
    lower = replace(plan, parameters={**plan.parameters, "ceiling_m": 90.0})
    assert fence_params(lower, "ardupilot")["FENCE_ALT_MAX"] == 90.0 and fence_params(lower, "px4")["GF_MAX_VER_DIST"] == 90.0
    # made without a ceiling rule: no altitude fence, the polygons and circles still act
    free = replace(plan, parameters={})
    assert fence_params(free, "ardupilot") == {"FENCE_ENABLE": 1.0, "FENCE_TYPE": 4.0}
    assert fence_params(free, "px4") == {"GF_ACTION": 3.0}
    ms = mission_set(plan, 0, dispatch_world("px4"))
    assert ms.params == fence_params(plan, "px4") and ms.items_of(MISSION) == ms.mission


def test_bad_inputs_are_invalid_arguments() -> None:
    with pytest.raises(InvalidArgument):
        mission_items(dispatch_plan(), 5, dispatch_world())
    world = dispatch_world()
    odd = replace(world, drones=(replace(world.drones[0], autopilot="inav"),))
    with pytest.raises(InvalidArgument):
        mission_items(dispatch_plan(), 0, odd)


def _through_the_wire(item: MissionItem) -> MissionItem:
    """Pack as MISSION_ITEM_INT bytes with pymavlink and parse them back."""
    mav = M.MAVLink(None, srcSystem=1, srcComponent=1)
    msg = M.MAVLink_mission_item_int_message(1, 1, **to_wire(item))
    data = msg.pack(mav)
    parsed = M.MAVLink(None).decode(bytearray(data))
    assert parsed.get_type() == "MISSION_ITEM_INT"
    return from_wire(parsed)


@pytest.mark.parametrize("dialect", ["ardupilot", "px4"])
def test_every_row_survives_the_wire(dialect: str) -> None:
    ms = mission_set(dispatch_plan(), 0, dispatch_world(dialect))
    for t in (MISSION, FENCE, RALLY):
        planned = ms.items_of(t)
        back = tuple(_through_the_wire(i) for i in planned)
        assert all(b.mission_type == t for b in back)
        assert compare_items(planned, back, dialect=dialect, mission_type=t) == ()  # type: ignore[arg-type]
    assert wire_frame(FRAME_GLOBAL_RELATIVE_ALT) == M.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT == 6
    assert wire_frame(FRAME_MISSION) == FRAME_MISSION


@given(
    lat=st.floats(-89.9, 89.9),
    lon=st.floats(-179.9, 179.9),
    alt=st.floats(-100.0, 5000.0),
    p1=st.floats(-1e4, 1e4) | st.just(float("nan")),
    dialect=st.sampled_from(["ardupilot", "px4"]),
)
def test_the_vehicle_normal_form_compares_equal_and_a_shift_does_not(lat: float, lon: float, alt: float, p1: float, dialect: str) -> None:
    item = MissionItem(seq=1, command=M.MAV_CMD_NAV_WAYPOINT, frame=FRAME_GLOBAL_RELATIVE_ALT, lat=lat, lon=lon, alt_m=alt, param1=p1)
    stored = _through_the_wire(normalise_as_vehicle(item, dialect))  # type: ignore[arg-type]
    assert compare_items((item,), (stored,), dialect=dialect, mission_type=RALLY) == ()  # type: ignore[arg-type]
    shifted = replace(stored, lat=stored.lat + 3e-7)
    assert compare_items((item,), (shifted,), dialect=dialect, mission_type=RALLY)  # type: ignore[arg-type]
    higher = replace(stored, alt_m=stored.alt_m + 0.05)
    assert compare_items((item,), (higher,), dialect=dialect, mission_type=RALLY)  # type: ignore[arg-type]


def test_ardupilot_seq0_is_not_compared_but_counted() -> None:
    planned = mission_items(dispatch_plan(), 0, dispatch_world("ardupilot"))
    home = replace(planned[0], lat=10.0, lon=10.0, alt_m=99.0)
    assert compare_items(planned, (home,) + planned[1:], dialect="ardupilot") == ()
    assert compare_items(planned, planned[1:], dialect="ardupilot")
    assert compare_items(planned, (home,) + planned[1:], dialect="px4")


def test_a_zone_opening_during_the_sortie_is_fenced() -> None:
    """The fence holds every prohibited zone that applies at any moment of the sortie, not only at its ends."""
    world, plan = dispatch_world(), dispatch_plan()
    s = plan.sorties[0]
    base = len(fence_items(plan, 0, world))
    mid = s.start_at + (s.end_at - s.start_at) / 2
    slot = WeeklySlot(frozenset({mid.astimezone(timezone.utc).weekday()}),
                      (mid - timedelta(seconds=10)).astimezone(timezone.utc).time(),
                      (mid + timedelta(seconds=10)).astimezone(timezone.utc).time())
    brief = agl_zone("BRIEF", Restriction.PROHIBITED, CircleArea(24.943, 60.171, 80.0),
                     applicability=(Applicability(permanent=False, schedule=(slot,)),))
    assert not brief.applies_at(s.start_at) and not brief.applies_at(s.end_at)
    assert len(fence_items(plan, 0, replace(world, zones=world.zones + (brief,)))) == base + 1
