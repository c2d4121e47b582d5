"""The vehicle simulator's protocol habits, driven by a raw pymavlink ground station over UDP.

Each test pins one row of the behaviour table in ``flows.sim.mission_protocol``
(ArduPilot's ``libraries/GCS_MAVLink/MissionItemProtocol*.cpp`` and
``GCS_Common.cpp``, PX4's ``mavlink_mission.cpp``), so a change to the
simulator that drifts from the autopilots' code fails here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil  # noqa: E402

from flows.sim.vehicle import SimVehicle  # noqa: E402
from testkit import sim_vehicle  # noqa: E402
from planner.output.mission_items import (  # noqa: E402
    FENCE,
    FRAME_GLOBAL_RELATIVE_ALT,
    MISSION,
    MissionItem,
)
from planner.output.mission_wire import to_wire  # noqa: E402

M = mavutil.mavlink
ITEMS = tuple(
    MissionItem(seq=i, command=M.MAV_CMD_NAV_WAYPOINT, frame=FRAME_GLOBAL_RELATIVE_ALT, lat=60.17 + i * 1e-4, lon=24.94, alt_m=30.0)
    for i in range(3)
)
# a fence is made of fence items (MissionItemProtocol_Fence refuses a waypoint: MAV_MISSION_UNSUPPORTED)
FENCE_POINTS = tuple(replace(i, command=M.MAV_CMD_NAV_FENCE_POLYGON_VERTEX_INCLUSION, param1=3.0) for i in ITEMS)


class Station:
    """A bare ground station: send what the test says, wait for what it expects."""

    def __init__(self, address: str) -> None:
        self.conn = mavutil.mavlink_connection(address, source_system=255, source_component=190)
        self.mav = self.conn.mav
        self.mav.heartbeat_send(M.MAV_TYPE_GCS, M.MAV_AUTOPILOT_INVALID, 0, 0, 0)
        assert self.expect("HEARTBEAT") is not None

    def expect(self, types: str | list[str], timeout_s: float = 3.0, **fields: Any) -> Any:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            msg = self.conn.recv_match(type=types, blocking=True, timeout=0.05)
            if msg is not None and all(getattr(msg, k) == v for k, v in fields.items()):
                return msg
        return None

    def item(self, seq: int, mission_type: int = MISSION) -> None:
        wire = to_wire(ITEMS[seq] if mission_type != FENCE else FENCE_POINTS[seq])
        wire["mission_type"] = mission_type
        self.mav.mission_item_int_send(1, 1, **wire)


@pytest.fixture
def px4() -> Iterator[SimVehicle]:
    with sim_vehicle("udpin:127.0.0.1:0", "px4", heartbeat_s=0.05, rerequest_s=0.1, transfer_timeout_s=0.6) as sim:
        yield sim


@pytest.fixture
def ardupilot() -> Iterator[SimVehicle]:
    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", heartbeat_s=0.05, rerequest_s=0.1, transfer_timeout_s=0.6) as sim:
        yield sim


def test_px4_asks_with_request_int_reasks_after_silence_and_reacks_a_repeated_last_item(px4: SimVehicle) -> None:
    gs = Station(px4.address)
    gs.mav.mission_count_send(1, 1, 3, MISSION)
    assert gs.expect("MISSION_REQUEST_INT", seq=0) is not None
    assert gs.expect("MISSION_REQUEST_INT", seq=0) is not None, "asks again after its re-request time"
    for seq in range(3):
        gs.item(seq)
        if seq < 2:
            assert gs.expect("MISSION_REQUEST_INT", seq=seq + 1) is not None
    assert gs.expect("MISSION_ACK", type=M.MAV_MISSION_ACCEPTED) is not None
    gs.item(2)  # our ack was "lost": send the last item again
    assert gs.expect("MISSION_ACK", type=M.MAV_MISSION_ACCEPTED) is not None
    assert [round(i.lat * 1e7) for i in px4.missions[MISSION]] == [round(i.lat * 1e7) for i in ITEMS]


def test_ardupilot_asks_with_the_legacy_request_and_flags_a_duplicate(ardupilot: SimVehicle) -> None:
    gs = Station(ardupilot.address)
    gs.mav.mission_count_send(1, 1, 3, MISSION)
    assert gs.expect("MISSION_REQUEST", seq=0) is not None
    gs.item(0)
    assert gs.expect("MISSION_REQUEST", seq=1) is not None
    gs.item(0)  # a late duplicate
    assert gs.expect("MISSION_ACK", type=M.MAV_MISSION_INVALID_SEQUENCE) is not None
    gs.item(1)
    gs.item(2)
    assert gs.expect("MISSION_ACK", type=M.MAV_MISSION_ACCEPTED) is not None
    assert len(ardupilot.missions[MISSION]) == 3


def test_px4_gives_up_a_stalled_upload_silently_and_keeps_the_old_mission(px4: SimVehicle) -> None:
    """PX4 ``MavlinkMissionManager::send``: protocol timeout → idle, no ack; the mission slot is double-buffered."""
    gs = Station(px4.address)
    gs.mav.mission_count_send(1, 1, 1, MISSION)
    gs.expect("MISSION_REQUEST_INT", seq=0)
    gs.item(0)
    assert gs.expect("MISSION_ACK", type=M.MAV_MISSION_ACCEPTED) is not None
    gs.mav.mission_count_send(1, 1, 3, MISSION)
    assert gs.expect("MISSION_REQUEST_INT", seq=0) is not None
    gs.item(0)  # …and then the station goes quiet
    assert gs.expect("MISSION_ACK", timeout_s=1.5) is None, "PX4 sends no ack when it gives up"
    assert len(px4.missions[MISSION]) == 1, "the new items went to the inactive slot"
    gs.mav.mission_count_send(1, 1, 1, MISSION)
    assert gs.expect("MISSION_REQUEST_INT", seq=0) is not None, "idle again after the timeout"


def test_ardupilot_cancels_a_stalled_upload_and_keeps_what_it_wrote(ardupilot: SimVehicle) -> None:
    """ArduPilot ``MissionItemProtocol::update``: OPERATION_CANCELLED; items were written as they came (not atomic)."""
    gs = Station(ardupilot.address)
    gs.mav.mission_count_send(1, 1, 3, MISSION)
    assert gs.expect("MISSION_REQUEST", seq=0) is not None
    gs.item(0)
    gs.item(1)
    assert gs.expect("MISSION_REQUEST", seq=2) is not None
    assert gs.expect("MISSION_ACK", timeout_s=3.0, type=M.MAV_MISSION_OPERATION_CANCELLED) is not None
    assert len(ardupilot.missions[MISSION]) == 2, "a half upload stays on an ArduPilot"


def test_ardupilot_answers_error_to_an_item_after_the_transfer(ardupilot: SimVehicle) -> None:
    """``GCS_MAVLINK::handle_mission_item``: ``if (!prot->receiving)`` → MAV_MISSION_ERROR (issue 15)."""
    gs = Station(ardupilot.address)
    gs.mav.mission_count_send(1, 1, 2, MISSION)
    gs.expect("MISSION_REQUEST", seq=0)
    gs.item(0)
    gs.expect("MISSION_REQUEST", seq=1)
    gs.item(1)
    assert gs.expect("MISSION_ACK", type=M.MAV_MISSION_ACCEPTED) is not None
    gs.item(1)  # the station did not see that ack and re-sends its last item
    assert gs.expect("MISSION_ACK", type=M.MAV_MISSION_ERROR) is not None
    assert len(ardupilot.missions[MISSION]) == 2, "and the mission is stored all the same"


def test_ardupilot_restarts_on_a_repeated_count_and_denies_a_download_meanwhile(ardupilot: SimVehicle) -> None:
    gs = Station(ardupilot.address)
    gs.mav.mission_count_send(1, 1, 3, MISSION)
    gs.expect("MISSION_REQUEST", seq=0)
    gs.item(0)
    gs.expect("MISSION_REQUEST", seq=1)
    gs.mav.mission_request_list_send(1, 1, MISSION)
    assert gs.expect("MISSION_ACK", type=M.MAV_MISSION_DENIED) is not None, "handle_mission_request_list while receiving"
    gs.mav.mission_count_send(1, 1, 3, MISSION)
    assert gs.expect("MISSION_REQUEST", seq=0) is not None, "handle_mission_count: same sender starts again"


def test_ardupilot_writes_the_fence_whole_and_px4_in_place(ardupilot: SimVehicle, px4: SimVehicle) -> None:
    """``MissionItemProtocol_Fence::complete`` keeps the fence aside; PX4 ``dm_write(DM_KEY_FENCE_POINTS, seq + 1)`` does not."""
    for sim, request in ((ardupilot, "MISSION_REQUEST"), (px4, "MISSION_REQUEST_INT")):
        gs = Station(sim.address)
        gs.mav.mission_count_send(1, 1, 2, FENCE)
        gs.expect(request, seq=0, mission_type=FENCE)
        gs.item(0, FENCE)
        gs.expect(request, seq=1, mission_type=FENCE)
        gs.item(1, FENCE)
        assert gs.expect("MISSION_ACK", type=M.MAV_MISSION_ACCEPTED, mission_type=FENCE) is not None
        gs.mav.mission_count_send(1, 1, 3, FENCE)  # a second, longer fence that stops after one point
        gs.expect(request, seq=0, mission_type=FENCE)
        moved = to_wire(FENCE_POINTS[2])
        moved["seq"], moved["mission_type"] = 0, FENCE
        gs.mav.mission_item_int_send(1, 1, **moved)
        assert gs.expect(request, seq=1, mission_type=FENCE) is not None
        held = sim.missions[FENCE]
        assert len(held) == 2
        changed = round(held[0].lat * 1e7) == round(ITEMS[2].lat * 1e7)
        assert changed is (sim.dialect == "px4"), f"{sim.dialect}: first fence point rewritten in place: {changed}"


def test_px4_ignores_an_item_out_of_order_and_is_busy_after_a_download_without_ack(px4: SimVehicle) -> None:
    gs = Station(px4.address)
    gs.mav.mission_count_send(1, 1, 2, MISSION)
    gs.expect("MISSION_REQUEST_INT", seq=0)
    gs.item(1)  # out of order: "Item sequence not expected, ignore item"
    assert gs.expect("MISSION_ACK", timeout_s=0.3) is None
    assert gs.expect("MISSION_REQUEST_INT", seq=0) is not None, "it asks again for what it misses"
    gs.item(0)
    gs.expect("MISSION_REQUEST_INT", seq=1)
    gs.item(1)
    assert gs.expect("MISSION_ACK", type=M.MAV_MISSION_ACCEPTED) is not None
    gs.mav.mission_request_list_send(1, 1, MISSION)
    assert gs.expect("MISSION_COUNT", count=2) is not None
    gs.mav.mission_request_int_send(1, 1, 0, MISSION)
    assert gs.expect("MISSION_ITEM_INT", seq=0) is not None
    gs.mav.mission_count_send(1, 1, 1, FENCE)  # no download ack yet: still SENDLIST
    assert gs.expect("MISSION_ACK", type=M.MAV_MISSION_ERROR) is not None, "handle_mission_count: busy"
    assert px4.missions[MISSION][0].seq == 0 and len(px4.missions[MISSION]) == 2, "no home slot on PX4"


def test_reject_is_sticky_for_its_type_only_and_lost_acks_still_store() -> None:
    with sim_vehicle("udpin:127.0.0.1:0", "px4", heartbeat_s=0.05, reject="NO_SPACE", lose_final_ack=True) as sim:
        gs = Station(sim.address)
        for _ in range(2):
            gs.mav.mission_count_send(1, 1, 3, MISSION)
            assert gs.expect("MISSION_ACK", type=M.MAV_MISSION_NO_SPACE) is not None
        gs.mav.mission_count_send(1, 1, 1, FENCE)
        assert gs.expect("MISSION_REQUEST_INT", seq=0, mission_type=FENCE) is not None
        gs.item(0, FENCE)
        assert gs.expect("MISSION_ACK", timeout_s=0.5) is None, "the final ack is lost"
        assert len(sim.missions[FENCE]) == 1 and sim.missions[MISSION] == ()
        assert sim.stats.uploads_rejected == 2 and sim.stats.final_acks_lost == 1


def test_params_and_clear_all(ardupilot: SimVehicle) -> None:
    gs = Station(ardupilot.address)
    gs.mav.param_set_send(1, 1, b"FENCE_ALT_MAX", 120.0, M.MAV_PARAM_TYPE_REAL32)
    echo = gs.expect("PARAM_VALUE")
    assert echo is not None and echo.param_id == "FENCE_ALT_MAX" and echo.param_value == 120.0
    gs.mav.param_set_send(1, 1, b"NO_SUCH_PARAM", 1.0, M.MAV_PARAM_TYPE_REAL32)
    assert gs.expect("PARAM_VALUE", timeout_s=0.4) is None, "unknown names are ignored"
    gs.mav.mission_count_send(1, 1, 1, MISSION)
    gs.expect("MISSION_REQUEST", seq=0)
    gs.item(0)
    gs.expect("MISSION_ACK")
    gs.mav.mission_clear_all_send(1, 1, MISSION)
    assert gs.expect("MISSION_ACK", type=M.MAV_MISSION_ACCEPTED) is not None
    assert ardupilot.missions[MISSION] == () and ardupilot.params["FENCE_ALT_MAX"] == 120.0


def test_ardupilot_says_boot_refuses_a_count_until_ready_then_accepts_it() -> None:
    # observed on SITL (ArduPilot master, Sep 2025): HEARTBEAT system_status 1 (BOOT) until "ArduPilot Ready";
    # a MISSION_COUNT at 1 s answered NO_SPACE with "Only 0 items are supported", at 4 s accepted
    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", boot_s=10.0, speedup=12.5) as sim:  # 0.8 s wall
        gs = Station(sim.address)
        assert gs.expect("HEARTBEAT", system_status=M.MAV_STATE_BOOT) is not None
        gs.mav.mission_count_send(1, 1, 3, MISSION)
        assert gs.expect("MISSION_ACK", type=M.MAV_MISSION_NO_SPACE) is not None
        assert gs.expect("STATUSTEXT", text="Only 0 items are supported") is not None
        assert gs.expect("STATUSTEXT", text="ArduPilot Ready") is not None
        assert gs.expect("HEARTBEAT", system_status=M.MAV_STATE_STANDBY) is not None
        gs.mav.mission_count_send(1, 1, 3, MISSION)
        assert gs.expect("MISSION_REQUEST", seq=0) is not None
        assert sim.stats.booting_refusals == 1


def test_ardupilot_hands_a_mission_back_as_it_stores_it() -> None:
    # observed on SITL and AP_Mission::mission_cmd_to_mavlink_int: seq 0 is home, a DO_ command comes back with
    # frame 0 and no position, NAV_LAND's param4 (0 sent) as 1; a waypoint keeps its frame and position
    home = (60.1700, 24.9400, 12.5)
    items = (
        MissionItem(seq=0, command=M.MAV_CMD_NAV_WAYPOINT, frame=FRAME_GLOBAL_RELATIVE_ALT, lat=1.0, lon=2.0, alt_m=3.0),
        MissionItem(seq=1, command=M.MAV_CMD_DO_CHANGE_SPEED, frame=FRAME_GLOBAL_RELATIVE_ALT, param1=1.0, param2=8.0,
                    param3=-1.0),
        MissionItem(seq=2, command=M.MAV_CMD_NAV_WAYPOINT, frame=FRAME_GLOBAL_RELATIVE_ALT, lat=60.1712, lon=24.9413,
                    alt_m=30.0),
        MissionItem(seq=3, command=M.MAV_CMD_NAV_LAND, frame=FRAME_GLOBAL_RELATIVE_ALT, lat=60.1701, lon=24.9401),
    )
    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", heartbeat_s=0.05, home=home) as sim:
        gs = Station(sim.address)
        gs.mav.mission_count_send(1, 1, len(items), MISSION)
        for item in items:
            assert gs.expect("MISSION_REQUEST", seq=item.seq) is not None
            gs.mav.mission_item_int_send(1, 1, **to_wire(item))
        assert gs.expect("MISSION_ACK", type=M.MAV_MISSION_ACCEPTED) is not None
        gs.mav.mission_request_list_send(1, 1, MISSION)
        count = gs.expect("MISSION_COUNT")
        assert count is not None and count.count == len(items)
        got = []
        for seq in range(len(items)):
            gs.mav.mission_request_int_send(1, 1, seq, MISSION)
            got.append(gs.expect("MISSION_ITEM_INT", seq=seq))
        gs.mav.mission_ack_send(1, 1, M.MAV_MISSION_ACCEPTED, MISSION)
    assert None not in got
    assert (got[0].x, got[0].y, round(got[0].z, 2)) == (601700000, 249400000, 12.5)  # home, not the 1.0/2.0 sent
    assert (got[1].frame, got[1].x, got[1].y, got[1].param2) == (0, 0, 0, 8.0)
    assert (got[2].frame, got[2].x, got[2].y) == (FRAME_GLOBAL_RELATIVE_ALT, 601712000, 249413000)
    assert (got[3].frame, got[3].param4, got[3].x) == (FRAME_GLOBAL_RELATIVE_ALT, 1.0, 601701000)
