"""Mission items on the wire and back: ``MISSION_ITEM_INT`` fields, and the read-back comparison.

``to_wire``/``from_wire`` convert a ``planner.output.mission_items.MissionItem`` to and from the
fields of a ``MISSION_ITEM_INT`` (the ``_INT`` frames, degrees × 1e7: the float
``MISSION_ITEM`` loses ~0.5–1 m). ``normalise_as_vehicle`` is what a vehicle stores of an
item and hands back (float32 params and altitude, ArduPilot's centimetre altitudes, and
what ArduPilot rewrites on the way back), so an upload read back is compared item by item
with ``compare_items`` (FACTS.md, MAVLink and "ArduCopter 4.6.3 SITL, observed"). Pure.

What ArduPilot hands back differently from what it was sent (``AP_Mission::mission_cmd_to_mavlink_int``,
``libraries/AP_Mission/AP_Mission.cpp``; observed on ArduCopter 4.6.3):

- a command without a location (``AP_Mission::stored_in_location`` false: DO_CHANGE_SPEED,
  DO_SET_CAM_TRIGG_DIST, RETURN_TO_LAUNCH, …) comes back in frame 0 (the packet is zeroed and
  only location commands set a frame), whatever frame it was sent in;
- NAV_LAND comes back with param4 = 1 (``packet.param4 = loiter_ccw ? -1 : 1``);
- mission seq 0 is its home (checked for presence only), and unused params come back as 0.
"""

from __future__ import annotations

import math
import struct
from dataclasses import replace
from typing import Any

from pymavlink.dialects.v20 import common as _M

from planner.output.mission_items import MISSION, MISSION_TYPE_NAMES, Dialect, MissionItem, command_name

__all__ = [
    "wire_frame", "plain_frame", "to_wire", "from_wire", "normalise_as_vehicle", "compare_items",
    "ARDUPILOT_LOCATION_COMMANDS",
]

_TO_WIRE_FRAME = {
    _M.MAV_FRAME_GLOBAL: _M.MAV_FRAME_GLOBAL_INT,
    _M.MAV_FRAME_GLOBAL_RELATIVE_ALT: _M.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT,
    _M.MAV_FRAME_GLOBAL_TERRAIN_ALT: _M.MAV_FRAME_GLOBAL_TERRAIN_ALT_INT,
}
_FROM_WIRE_FRAME = {v: k for k, v in _TO_WIRE_FRAME.items()}


def wire_frame(frame: int) -> int:
    """The ``_INT`` frame for ``MISSION_ITEM_INT`` (3 → 6, 0 → 5); others unchanged."""
    return _TO_WIRE_FRAME.get(frame, frame)


def plain_frame(frame: int) -> int:
    """The file frame for a wire frame (6 → 3, 5 → 0); others unchanged."""
    return _FROM_WIRE_FRAME.get(frame, frame)


def _degE7(deg: float) -> int:
    return int(round(deg * 1e7))


def to_wire(item: MissionItem) -> dict[str, Any]:
    """Keyword arguments for ``mav.mission_item_int_send`` (without target ids)."""
    return {
        "seq": item.seq,
        "frame": wire_frame(item.frame),
        "command": item.command,
        "current": item.current,
        "autocontinue": item.autocontinue,
        "param1": item.param1,
        "param2": item.param2,
        "param3": item.param3,
        "param4": item.param4,
        "x": _degE7(item.lat),
        "y": _degE7(item.lon),
        "z": item.alt_m,
        "mission_type": item.mission_type,
    }


def from_wire(msg: Any) -> MissionItem:
    """A ``MISSION_ITEM_INT`` (or legacy float ``MISSION_ITEM``) message as a ``MissionItem``."""
    is_int = msg.get_type() == "MISSION_ITEM_INT"
    return MissionItem(
        seq=int(msg.seq),
        command=int(msg.command),
        frame=plain_frame(int(msg.frame)),
        lat=msg.x / 1e7 if is_int else float(msg.x),
        lon=msg.y / 1e7 if is_int else float(msg.y),
        alt_m=float(msg.z),
        param1=float(msg.param1),
        param2=float(msg.param2),
        param3=float(msg.param3),
        param4=float(msg.param4),
        current=int(msg.current),
        autocontinue=int(msg.autocontinue),
        mission_type=int(getattr(msg, "mission_type", MISSION)),
    )


_F32_EPS = 2.0**-23


def _f32(x: float) -> float:
    """``x`` as a MAVLink float field carries it (IEEE single precision)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _clean(p: float) -> float:
    return 0.0 if math.isnan(p) else p


#: ArduPilot's ``AP_Mission::stored_in_location``: the mission commands it keeps a location (and frame) for.
ARDUPILOT_LOCATION_COMMANDS = frozenset({
    _M.MAV_CMD_NAV_WAYPOINT, _M.MAV_CMD_NAV_LOITER_UNLIM, _M.MAV_CMD_NAV_LOITER_TURNS, _M.MAV_CMD_NAV_LOITER_TIME,
    _M.MAV_CMD_NAV_LAND, _M.MAV_CMD_NAV_TAKEOFF, _M.MAV_CMD_NAV_CONTINUE_AND_CHANGE_ALT, _M.MAV_CMD_NAV_LOITER_TO_ALT,
    _M.MAV_CMD_NAV_SPLINE_WAYPOINT, _M.MAV_CMD_NAV_GUIDED_ENABLE, _M.MAV_CMD_DO_SET_HOME,
    _M.MAV_CMD_DO_LAND_START, _M.MAV_CMD_DO_GO_AROUND, _M.MAV_CMD_DO_SET_ROI_LOCATION, _M.MAV_CMD_DO_SET_ROI,
    _M.MAV_CMD_NAV_VTOL_TAKEOFF, _M.MAV_CMD_NAV_VTOL_LAND, _M.MAV_CMD_NAV_PAYLOAD_PLACE,
})


def normalise_as_vehicle(item: MissionItem, dialect: Dialect) -> MissionItem:
    """What a vehicle of ``dialect`` hands back for ``item``: degE7 lat/lon, float32, NaN → 0.

    ArduPilot also keeps altitudes in whole centimetres, and a mission command
    comes back as ``AP_Mission::mission_cmd_to_mavlink_int`` writes it (module
    docstring): frame 0 without a location, NAV_LAND's param4 as ±1.
    """
    alt = _f32(item.alt_m)
    if dialect == "ardupilot":
        alt = _f32(round(alt * 100.0) / 100.0)
    out = replace(
        item,
        lat=_degE7(item.lat) / 1e7,
        lon=_degE7(item.lon) / 1e7,
        alt_m=alt,
        param1=_f32(_clean(item.param1)),
        param2=_f32(_clean(item.param2)),
        param3=_f32(_clean(item.param3)),
        param4=_f32(_clean(item.param4)),
        current=0,
    )
    if dialect == "ardupilot" and item.mission_type == MISSION:
        if item.command not in ARDUPILOT_LOCATION_COMMANDS:
            out = replace(out, frame=0, lat=0.0, lon=0.0, alt_m=0.0)
        if item.command == _M.MAV_CMD_NAV_LAND:
            out = replace(out, param4=-1.0 if item.param4 < 0 else 1.0)
    return out


def _close_float(a: float, b: float, abs_tol: float) -> bool:
    a, b = _clean(a), _clean(b)
    return abs(a - b) <= max(abs_tol, 2.0 * _F32_EPS * max(abs(a), abs(b)))


def compare_items(
    planned: tuple[MissionItem, ...] | list[MissionItem],
    actual: tuple[MissionItem, ...] | list[MissionItem],
    *,
    dialect: Dialect,
    mission_type: int = MISSION,
) -> tuple[str, ...]:
    """Differences between the planned rows and the rows read back (empty = the same mission).

    Compared as the vehicle hands them back (``normalise_as_vehicle`` of the
    planned row): lat/lon within 1 degE7, altitude within float32 (and
    ArduPilot's centimetres), params within float32 with NaN read as 0,
    ``current`` ignored; what the dialect does not preserve (ArduPilot: the
    frame of a command without a location, NAV_LAND's param4) is not a
    difference. ArduPilot's mission seq 0 is its home, so only its presence is
    checked. Each difference names the row, the field, and both values.
    """
    diffs: list[str] = []
    if len(planned) != len(actual):
        diffs.append(f"{MISSION_TYPE_NAMES.get(mission_type, mission_type)}: {len(actual)} items on the vehicle, {len(planned)} planned")
        return tuple(diffs)
    alt_tol = 0.0051 if dialect == "ardupilot" else 1e-3
    for p, a in zip(planned, actual):
        if dialect == "ardupilot" and mission_type == MISSION and p.seq == 0:
            continue
        p = normalise_as_vehicle(p, dialect)
        where = f"{MISSION_TYPE_NAMES.get(mission_type, mission_type)} seq {p.seq}"
        if a.seq != p.seq:
            diffs.append(f"{where}: vehicle has seq {a.seq}")
        if a.command != p.command:
            diffs.append(f"{where}: command {command_name(a.command)} instead of {command_name(p.command)}")
            continue
        ardu_mission = dialect == "ardupilot" and mission_type == MISSION
        ignore_frame = ardu_mission and p.command not in ARDUPILOT_LOCATION_COMMANDS
        if not ignore_frame and plain_frame(a.frame) != plain_frame(p.frame):
            diffs.append(f"{where}: frame {a.frame} instead of {p.frame}")
        if abs(_degE7(a.lat) - _degE7(p.lat)) > 1 or abs(_degE7(a.lon) - _degE7(p.lon)) > 1:
            diffs.append(f"{where}: position {a.lat:.7f},{a.lon:.7f} instead of {p.lat:.7f},{p.lon:.7f}")
        if not _close_float(a.alt_m, p.alt_m, alt_tol):
            diffs.append(f"{where}: altitude {a.alt_m} instead of {p.alt_m}")
        for i, (pa, pp) in enumerate(zip(a.params, p.params), start=1):
            if ardu_mission and i == 4 and p.command == _M.MAV_CMD_NAV_LAND:
                continue  # ArduPilot keeps only the sign (its yaw direction) and hands back ±1
            if not _close_float(pa, pp, 1e-6):
                diffs.append(f"{where}: param{i} {pa} instead of {pp}")
        if a.autocontinue != p.autocontinue:
            diffs.append(f"{where}: autocontinue {a.autocontinue} instead of {p.autocontinue}")
    return tuple(diffs)
