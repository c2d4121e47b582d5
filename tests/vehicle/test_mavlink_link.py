"""The ground-station side of the mission protocol against a scripted vehicle over real UDP.

The script plays the awkward parts of real autopilots in a fixed order, so each
rule of the protocol is exercised deterministically: a stale ACCEPTED ack
before any item, a legacy MISSION_REQUEST, a repeated request, an
INVALID_SEQUENCE ack for a duplicate, silence (the station must resend), and
only then the final ack.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import pytest

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil  # noqa: E402

from flows.vehicle.link import open_link  # noqa: E402
from flows.vehicle.mission_client import MissionClient  # noqa: E402
from flows.vehicle.udp_exclusive import mavlink_connection  # noqa: E402
from planner.output.mission_items import FRAME_GLOBAL_RELATIVE_ALT, MISSION, MissionItem  # noqa: E402

M = mavutil.mavlink


def _items(n: int) -> tuple[MissionItem, ...]:
    return tuple(
        MissionItem(seq=i, command=M.MAV_CMD_NAV_WAYPOINT, frame=FRAME_GLOBAL_RELATIVE_ALT, lat=60.17 + i * 1e-4, lon=24.94, alt_m=30.0 + i)
        for i in range(n)
    )


class ScriptedVehicle:
    """A vehicle that follows a script step by step; records what the station sent."""

    def __init__(self) -> None:
        self.conn = mavlink_connection("udpin:127.0.0.1:0", source_system=1, source_component=1)
        host, port = self.conn.port.getsockname()[:2]
        self.address = f"udpout:{host}:{port}"
        self.received: list[Any] = []
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _recv(self, types: list[str], timeout_s: float = 3.0) -> Any:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            msg = self.conn.recv_match(type=types, blocking=True, timeout=0.05)
            if msg is not None:
                self.received.append(msg)
                return msg
        raise AssertionError(f"the station sent no {types} within {timeout_s} s")

    def _run(self) -> None:
        try:
            mav = self.conn.mav
            self._recv(["HEARTBEAT"])
            mav.heartbeat_send(M.MAV_TYPE_QUADROTOR, M.MAV_AUTOPILOT_ARDUPILOTMEGA, 0, 0, 0)
            count = self._recv(["MISSION_COUNT"]).count
            mav.mission_ack_send(255, 190, M.MAV_MISSION_ACCEPTED, MISSION)  # stale: from an earlier transfer
            mav.mission_request_send(255, 190, 0, MISSION)  # legacy request
            self._recv(["MISSION_ITEM_INT", "MISSION_ITEM"])
            mav.mission_request_int_send(255, 190, 0, MISSION)  # a repeat: normal
            self._recv(["MISSION_ITEM_INT", "MISSION_ITEM"])
            mav.mission_ack_send(255, 190, M.MAV_MISSION_INVALID_SEQUENCE, MISSION)  # "that one again?"
            for seq in range(1, count):
                mav.mission_request_int_send(255, 190, seq, MISSION)
                self._recv(["MISSION_ITEM_INT", "MISSION_ITEM"])
            self._recv(["MISSION_ITEM_INT", "MISSION_ITEM"])  # silence: the station resends the last item
            mav.mission_ack_send(255, 190, M.MAV_MISSION_ACCEPTED, MISSION)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc


@pytest.mark.timeout(30)
def test_upload_follows_the_protocol_through_every_awkward_turn() -> None:
    vehicle = ScriptedVehicle()
    vehicle.thread.start()
    items = _items(4)
    with open_link(vehicle.address, streams={}, heartbeat_timeout_s=5.0) as link:
        deadline = time.monotonic() + 15.0
        tr = MissionClient(link, retry_s=0.2, max_retries=5).upload(items, MISSION, deadline)
    vehicle.thread.join(5)
    assert vehicle.error is None, vehicle.error
    assert tr.outcome == "ACCEPTED", tr
    assert tr.duplicates_acked == 1
    assert tr.requests_seen == 5  # 0, 0 again, 1, 2, 3
    assert tr.resends >= 1
    sent = [m for m in vehicle.received if m.get_type().startswith("MISSION_ITEM")]
    assert {m.get_type() for m in sent} == {"MISSION_ITEM_INT"}, "a legacy request still gets MISSION_ITEM_INT"
    assert [m.seq for m in sent] == [0, 0, 1, 2, 3, 3]
    assert {m.frame for m in sent} == {M.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT}
    assert [m.x for m in sent[2:5]] == [601701000, 601702000, 601703000]


@pytest.mark.timeout(30)
def test_a_nack_ends_the_upload_at_once_with_its_name() -> None:
    conn = mavlink_connection("udpin:127.0.0.1:0", source_system=1, source_component=1)
    host, port = conn.port.getsockname()[:2]

    def vehicle() -> None:
        conn.recv_match(type="HEARTBEAT", blocking=True, timeout=5)
        conn.mav.heartbeat_send(M.MAV_TYPE_QUADROTOR, M.MAV_AUTOPILOT_PX4, 0, 0, 0)
        conn.recv_match(type="MISSION_COUNT", blocking=True, timeout=5)
        conn.mav.mission_ack_send(255, 190, M.MAV_MISSION_UNSUPPORTED_FRAME, MISSION)

    t = threading.Thread(target=vehicle, daemon=True)
    t.start()
    with open_link(f"udpout:{host}:{port}", streams={}, heartbeat_timeout_s=5.0) as link:
        deadline = time.monotonic() + 10.0
        t0 = time.monotonic()
        tr = MissionClient(link, retry_s=0.2).upload(_items(3), MISSION, deadline)
    t.join(5)
    conn.close()
    assert (tr.outcome, tr.result) == ("REJECTED", "MAV_MISSION_UNSUPPORTED_FRAME")
    assert time.monotonic() - t0 < 1.0 and tr.items_sent == 0


def test_a_px4_still_busy_with_an_unacked_download_is_waited_for_not_taken_as_a_refusal() -> None:
    """PX4 ``handle_mission_count``: ERROR (in the busy transfer's type) until its protocol timeout; then it accepts."""
    from testkit import sim_vehicle

    # busy for 0.6 s; six silent retries (0.3 s) would give up, the busy budget (24 × 50 ms) does not
    with sim_vehicle("udpin:127.0.0.1:0", "px4", heartbeat_s=0.05, rerequest_s=0.05, transfer_timeout_s=0.6) as sim:
        station = mavutil.mavlink_connection(sim.address, source_system=255, source_component=190)
        station.mav.heartbeat_send(M.MAV_TYPE_GCS, M.MAV_AUTOPILOT_INVALID, 0, 0, 0)
        station.mav.mission_request_list_send(1, 1, 1)  # a fence download that is never acked: PX4 stays in SENDLIST
        assert station.recv_match(type="MISSION_COUNT", blocking=True, timeout=3) is not None
        station.close()
        with open_link(sim.address, streams={}, deadline=time.monotonic() + 3) as link:
            tr = MissionClient(link, retry_s=0.05, max_retries=6).upload(_items(3), MISSION, time.monotonic() + 5)
        assert tr.outcome == "ACCEPTED" and tr.busy_nacks >= 1, tr.to_dict()
        assert len(sim.missions[MISSION]) == 3
