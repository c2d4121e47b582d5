"""Flight modes and flown items as an autopilot reports them: shared by the monitor and the simulator.

The monitor reads HEARTBEAT ``custom_mode`` and MISSION_ITEM_REACHED of real
vehicles; the simulator writes them. Both need the same tables, and a
production module must never import the simulator for them, so they live here.

ArduCopter's modes are ``Mode::Number`` in ``ArduCopter/mode.h`` (STABILIZE=0,
AUTO=3, GUIDED=4, LOITER=5, RTL=6, LAND=9, BRAKE=17). PX4 packs ``main_mode << 16 |
sub_mode << 24`` (``src/modules/commander/px4_custom_mode.h``: main AUTO=4 with
sub modes LOITER=3, MISSION=4, RTL=5, LAND=6; main POSCTL=3 ... ).
"""

from __future__ import annotations


from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants only)

from planner.output.mission_items import MissionItem  # noqa: E402

__all__ = ["NAV_COMMANDS", "NAV_TAKEOFF", "NAV_WAYPOINT", "NAV_LAND", "NAV_RTL", "custom_mode", "mode_name", "nav_seqs"]

NAV_TAKEOFF = _M.MAV_CMD_NAV_TAKEOFF
NAV_WAYPOINT = _M.MAV_CMD_NAV_WAYPOINT
NAV_LAND = _M.MAV_CMD_NAV_LAND
NAV_RTL = _M.MAV_CMD_NAV_RETURN_TO_LAUNCH
NAV_COMMANDS: frozenset[int] = frozenset({NAV_TAKEOFF, NAV_WAYPOINT, NAV_LAND, NAV_RTL})
"""Commands that are flown (and reported with MISSION_ITEM_REACHED); DO_ commands are executed instantly."""

# ArduCopter custom modes; PX4 packs main mode << 16 | sub mode << 24 (AUTO=4: MISSION=4, RTL=5, LOITER=3).
_ARDU_MODES = {"STABILIZE": 0, "AUTO": 3, "GUIDED": 4, "LOITER": 5, "RTL": 6, "LAND": 9, "BRAKE": 17}
_PX4_MODES = {"AUTO": (4 << 16) | (4 << 24), "RTL": (4 << 16) | (5 << 24), "LOITER": (4 << 16) | (3 << 24),
              "LAND": (4 << 16) | (6 << 24), "GUIDED": (4 << 16) | (8 << 24), "STABILIZE": 7 << 16}


def custom_mode(mode: str, dialect: str) -> int:
    """The HEARTBEAT ``custom_mode`` of ``mode`` (AUTO, RTL, LOITER, LAND, GUIDED; BRAKE on ArduPilot) in the dialect."""
    table = _PX4_MODES if dialect == "px4" else _ARDU_MODES
    return table[mode]


def mode_name(custom: int, autopilot: int) -> str:
    """The mode name of a HEARTBEAT's ``custom_mode`` (ArduPilot or PX4), ``MODE(n)`` when unknown."""
    table = _PX4_MODES if autopilot == _M.MAV_AUTOPILOT_PX4 else _ARDU_MODES
    for name, value in table.items():
        if value == custom:
            return name
    return f"MODE({custom})"


def nav_seqs(items: tuple[MissionItem, ...] | list[MissionItem], dialect: str) -> list[int]:
    """The seqs of the items that are flown, in order (ArduPilot's seq 0 is the home slot, not flown)."""
    return [i.seq for i in items if i.command in NAV_COMMANDS and not (dialect == "ardupilot" and i.seq == 0)]
