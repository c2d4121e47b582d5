"""A bare MAVLink ground station for the simulator's own tests: upload, launch, listen — pymavlink only.

The product's ground station (``flows.vehicle``) is tested against the simulator elsewhere; here the simulator is
under test, so the station is the plainest one that does what FACTS.md says a GCS must (ask for streams on its
connection, upload with MISSION_ITEM_INT, wait for the pre-arm bit, GUIDED → arm → AUTO → MISSION_START).
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil  # noqa: E402

from planner.output.mission_items import MISSION, MissionItem  # noqa: E402
from planner.output.mission_wire import to_wire  # noqa: E402

M = mavutil.mavlink
LAT0, LON0 = 60.1700, 24.9400
STREAMS = {33: 5.0, 1: 2.0, 42: 2.0, 245: 2.0, 147: 1.0, 242: 1.0, 2: 1.0}  # message id → Hz


def square_mission(side_m: float = 60.0, alt_m: float = 20.0) -> list[MissionItem]:
    """Home, take-off, a square of waypoints, land at home (ArduPilot's layout: seq 0 is the home slot)."""
    k = 111319.49
    def wp(seq: int, dn: float, de: float) -> MissionItem:
        return MissionItem(seq, M.MAV_CMD_NAV_WAYPOINT, 3, LAT0 + dn / k, LON0 + de / (k * 0.4975), alt_m)
    return [MissionItem(0, M.MAV_CMD_NAV_WAYPOINT, 0, LAT0, LON0, 10.0),
            MissionItem(1, M.MAV_CMD_NAV_TAKEOFF, 3, LAT0, LON0, alt_m),
            wp(2, side_m, 0), wp(3, side_m, side_m), wp(4, 0, side_m),
            MissionItem(5, M.MAV_CMD_NAV_LAND, 3, LAT0, LON0, 0.0)]


class Station:
    """One ground station on one connection (system 255, as SYSID_MYGCS expects)."""

    def __init__(self, address: str, heartbeat: bool = True) -> None:
        self.conn = mavutil.mavlink_connection(address, source_system=255, source_component=190)
        self.mav = self.conn.mav
        self.heartbeats = heartbeat
        self.seen: list[Any] = []
        self._last_hb = 0.0
        self.beat()
        assert self.wait(lambda m: m.get_type() == "HEARTBEAT", 10.0) is not None, "no heartbeat"
        for msg_id, hz in STREAMS.items():
            self.mav.command_long_send(1, 1, 511, 0, msg_id, 1e6 / hz, 0, 0, 0, 0, 0)

    def beat(self) -> None:
        if self.heartbeats and time.monotonic() - self._last_hb > 0.5:
            self._last_hb = time.monotonic()
            self.mav.heartbeat_send(M.MAV_TYPE_GCS, M.MAV_AUTOPILOT_INVALID, 0, 0, 0)

    def wait(self, pred: Callable[[Any], bool], timeout_s: float) -> Any:
        """The first message (read from now on) for which ``pred`` holds, or None after ``timeout_s``."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            self.beat()
            msg = self.conn.recv_match(blocking=True, timeout=0.05)
            if msg is None or msg.get_type() == "BAD_DATA":
                continue
            self.seen.append(msg)
            if pred(msg):
                return msg
        return None

    def texts(self) -> list[str]:
        return [m.text for m in self.seen if m.get_type() == "STATUSTEXT"]

    def upload(self, items: list[MissionItem], mission_type: int = MISSION, timeout_s: float = 20.0) -> int:
        """Upload; the final MISSION_ACK's result (retrying the COUNT while the vehicle answers NO_SPACE)."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            self.mav.mission_count_send(1, 1, len(items), mission_type)
            while True:
                msg = self.wait(lambda m: m.get_type() in ("MISSION_REQUEST", "MISSION_REQUEST_INT", "MISSION_ACK"), 2.0)
                if msg is None:
                    break
                if msg.get_type() == "MISSION_ACK":
                    if msg.type == M.MAV_MISSION_NO_SPACE:
                        time.sleep(0.2)
                        break
                    return int(msg.type)
                self.mav.mission_item_int_send(1, 1, **{**to_wire(items[msg.seq]), "mission_type": mission_type})
        raise AssertionError("upload did not finish")

    def command(self, cmd: int, *params: float, timeout_s: float = 5.0) -> int:
        p = list(params) + [0.0] * (7 - len(params))
        self.mav.command_long_send(1, 1, cmd, 0, *p)
        ack = self.wait(lambda m: m.get_type() == "COMMAND_ACK" and m.command == cmd, timeout_s)
        assert ack is not None, f"no COMMAND_ACK for {cmd}"
        return int(ack.result)

    def prearm_ok(self, timeout_s: float) -> bool:
        return self.wait(lambda m: m.get_type() == "SYS_STATUS"
                         and m.onboard_control_sensors_health & M.MAV_SYS_STATUS_PREARM_CHECK, timeout_s) is not None

    def launch(self) -> None:
        """GUIDED → arm → AUTO → MISSION_START, each ACCEPTED (FACTS.md)."""
        assert self.prearm_ok(20.0)
        assert self.command(M.MAV_CMD_DO_SET_MODE, M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, 4) == M.MAV_RESULT_ACCEPTED
        assert self.command(M.MAV_CMD_COMPONENT_ARM_DISARM, 1) == M.MAV_RESULT_ACCEPTED
        assert self.command(M.MAV_CMD_DO_SET_MODE, M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, 3) == M.MAV_RESULT_ACCEPTED
        assert self.command(M.MAV_CMD_MISSION_START, 0, 0) == M.MAV_RESULT_ACCEPTED

    def landed(self, timeout_s: float) -> Any:
        """The HEARTBEAT that says disarmed after having been armed, or None."""
        armed = [False]

        def disarmed(m: Any) -> bool:
            if m.get_type() != "HEARTBEAT" or m.get_srcSystem() != 1:
                return False
            now = bool(m.base_mode & M.MAV_MODE_FLAG_SAFETY_ARMED)
            if now:
                armed[0] = True
            return armed[0] and not now
        return self.wait(disarmed, timeout_s)

    def close(self) -> None:
        self.conn.close()
