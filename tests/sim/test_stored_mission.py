"""What the vehicles keep of an upload, from their own conversion code — and the production read-back checked against it.

``flows.sim.ardupilot_mission`` is ArduPilot's ``AP_Mission::mavlink_int_to_mission_cmd`` /
``mission_cmd_to_mavlink_int`` (and the fence and rally protocols), ``flows.sim.px4_mission``
PX4's ``MavlinkMissionManager::parse_mavlink_mission_item`` / ``format_mavlink_mission_item``.
The production read-back (``planner.output.mission_wire.compare_items``, with its own idea of
what a vehicle hands back) must find no difference in what the planner sends, whatever the
vehicle changed on the way, and must find the differences that matter.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from pymavlink.dialects.v20 import common as M

from flows.sim.ardupilot_mission import StoredCommand, hand_back, home_item, store, store_fence, store_rally
from flows.sim.px4_mission import store_px4
from planner.output.mission_items import FENCE, MISSION, RALLY, MissionItem, mission_set
from planner.output.mission_wire import compare_items
from testkit import dispatch_plan, dispatch_world

WP = MissionItem(seq=3, command=M.MAV_CMD_NAV_WAYPOINT, frame=3, lat=60.1712345, lon=24.9412345, alt_m=40.0)


def _ardupilot_download(items: tuple[MissionItem, ...], mtype: int) -> tuple[MissionItem, ...]:
    if mtype == FENCE:
        kept = [store_fence(i) for i in items]
    elif mtype == RALLY:
        kept = [store_rally(i) for i in items]
    else:
        kept = [hand_back(c) if isinstance(c, StoredCommand) else c for c in (store(i) for i in items)]
        kept[0] = home_item(60.17, 24.941, 14.0)
    assert all(isinstance(k, MissionItem) for k in kept), kept
    return tuple(k for k in kept if isinstance(k, MissionItem))


@pytest.mark.parametrize("dialect", ["ardupilot", "px4"])
def test_what_the_planner_sends_reads_back_equal_through_the_vehicles_own_conversions(dialect: str) -> None:
    ms = mission_set(dispatch_plan(), 0, dispatch_world(dialect))
    for mtype, planned in ((MISSION, ms.mission), (FENCE, ms.fence), (RALLY, ms.rally)):
        if dialect == "ardupilot":
            down = _ardupilot_download(planned, mtype)
        else:
            kept = [store_px4(i) for i in planned]
            assert all(isinstance(k, MissionItem) for k in kept), kept
            down = tuple(k for k in kept if isinstance(k, MissionItem))
        assert compare_items(planned, down, dialect=dialect, mission_type=mtype) == (), (dialect, mtype)


def test_ardupilot_keeps_what_its_command_structures_hold() -> None:
    speed = MissionItem(seq=5, command=M.MAV_CMD_DO_CHANGE_SPEED, frame=2, param1=1.0, param2=7.0, param3=-1.0,
                        param4=9.0)
    back = hand_back(store(speed))  # type: ignore[arg-type]
    assert (back.frame, back.params) == (0, (1.0, 7.0, -1.0, 0.0))  # Change_Speed_Command has no param4
    land = MissionItem(seq=9, command=M.MAV_CMD_NAV_LAND, frame=3, lat=60.17, lon=24.94, alt_m=0.0, param4=0.0)
    assert hand_back(store(land)).param4 == 1.0  # type: ignore[arg-type]  # loiter_ccw ? -1 : 1
    hold = replace(WP, param1=2.7, param2=5.0, param3=1.0)
    back = hand_back(store(hold))  # type: ignore[arg-type]
    assert back.params == (2.0, 0.0, 0.0, 0.0)  # uint16 p1: the hold truncated to whole seconds; the rest gone
    assert hand_back(store(replace(WP, alt_m=12.3456))).alt_m == pytest.approx(12.34)  # type: ignore[arg-type]
    mission_frame = hand_back(store(replace(WP, frame=2)))  # type: ignore[arg-type]
    assert mission_frame.frame == 0  # MAV_FRAME_MISSION: an absolute altitude on ArduPilot
    assert store(replace(WP, param1=math.nan)) == M.MAV_MISSION_INVALID_PARAM1
    assert store(replace(WP, param4=math.nan)) != M.MAV_MISSION_INVALID_PARAM4  # a waypoint may leave param4 NaN
    assert store(replace(WP, frame=10)) == M.MAV_MISSION_UNSUPPORTED_FRAME  # terrain frames need AP_TERRAIN
    assert store(replace(WP, command=M.MAV_CMD_DO_SET_ROI_LOCATION)) == M.MAV_MISSION_UNSUPPORTED
    assert store_fence(replace(WP, mission_type=FENCE)) == M.MAV_MISSION_UNSUPPORTED  # a waypoint is no fence item
    rally = replace(WP, command=M.MAV_CMD_NAV_RALLY_POINT, alt_m=30.7, mission_type=RALLY)
    assert store_rally(rally).alt_m == 30.0  # type: ignore[union-attr]  # int16 metres


def test_px4_keeps_what_its_mission_item_holds() -> None:
    back = store_px4(replace(WP, param1=2.7, param3=4.0, param4=-90.0))
    assert isinstance(back, MissionItem)
    assert back.params[0] == pytest.approx(2.7) and back.param3 == 0.0 and back.param4 == pytest.approx(270.0)
    assert store_px4(replace(WP, frame=10)) == M.MAV_MISSION_UNSUPPORTED_FRAME
    assert store_px4(MissionItem(seq=1, command=M.MAV_CMD_DO_CHANGE_SPEED, frame=3, param2=7.0)) == \
        M.MAV_MISSION_UNSUPPORTED  # a DO command in a global frame is parsed as a position item PX4 does not know


@pytest.mark.parametrize("dialect", ["ardupilot", "px4"])
def test_the_read_back_sees_what_the_vehicle_changed_that_matters(dialect: str) -> None:
    """A vehicle that kept something else than was planned is a difference, not an accepted quirk."""
    planned = (home_item(60.17, 24.941, 14.0), replace(WP, seq=1, param1=2.7), replace(WP, seq=2, frame=2),
               replace(WP, seq=3, param4=-90.0))
    if dialect == "ardupilot":
        down = _ardupilot_download(planned, MISSION)
    else:
        assert store_px4(planned[2]) == M.MAV_MISSION_UNSUPPORTED  # PX4 knows no waypoint without a position
        planned = planned[:2] + planned[3:]
        down = tuple(store_px4(i) for i in planned)  # type: ignore[misc]
    diffs = compare_items(planned, down, dialect=dialect, mission_type=MISSION)
    if dialect == "ardupilot":
        assert any("seq 1: param1" in d for d in diffs)  # the hold, truncated
        assert any("seq 2: frame" in d for d in diffs)  # MAV_FRAME_MISSION became an absolute altitude
        assert any("seq 3: param4" in d for d in diffs)  # a waypoint's yaw is not kept
    else:
        assert diffs == (f"mission seq 3: param4 {down[-1].param4} instead of -90.0",)  # -90° came back as 270°
