"""Mission items on the wire and back: ``MISSION_ITEM_INT`` fields, and the read-back comparison.

``to_wire``/``from_wire`` convert a ``planner.output.mission_items.MissionItem`` to and from the
fields of a ``MISSION_ITEM_INT`` (the ``_INT`` frames, degrees × 1e7: the float
``MISSION_ITEM`` loses ~0.5–1 m). ``normalise_as_vehicle`` is what a vehicle stores of an
item (float32 params and altitude, ArduPilot's centimetre altitudes), so an upload read
back is compared item by item with ``compare_items`` (FACTS.md, MAVLink). Pure.
"""

from __future__ import annotations

import math
import struct
from dataclasses import replace
from typing import Any

from pymavlink.dialects.v20 import common as _M

from planner.output.mission_items import MISSION, MISSION_TYPE_NAMES, Dialect, MissionItem, command_name

__all__ = ["wire_frame", "plain_frame", "to_wire", "from_wire", "normalise_as_vehicle", "compare_items"]

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


def normalise_as_vehicle(item: MissionItem, dialect: Dialect) -> MissionItem:
    """What a vehicle of ``dialect`` hands back for ``item``: degE7 lat/lon, float32, NaN → 0.

    ArduPilot also keeps altitudes in whole centimetres.
    """
    alt = _f32(item.alt_m)
    if dialect == "ardupilot":
        alt = _f32(round(alt * 100.0) / 100.0)
    return replace(
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

    Normalised as the vehicle stores them: lat/lon within 1 degE7, altitude
    within float32 (and ArduPilot's centimetres), params within float32 with
    NaN read as 0, ``current`` ignored. ArduPilot's mission seq 0 is its home,
    so only its presence is checked.
    """
    diffs: list[str] = []
    if len(planned) != len(actual):
        diffs.append(f"{MISSION_TYPE_NAMES.get(mission_type, mission_type)}: {len(actual)} items on the vehicle, {len(planned)} planned")
        return tuple(diffs)
    alt_tol = 0.0051 if dialect == "ardupilot" else 1e-3
    for p, a in zip(planned, actual):
        if dialect == "ardupilot" and mission_type == MISSION and p.seq == 0:
            continue
        where = f"{MISSION_TYPE_NAMES.get(mission_type, mission_type)} seq {p.seq}"
        if a.seq != p.seq:
            diffs.append(f"{where}: vehicle has seq {a.seq}")
        if a.command != p.command:
            diffs.append(f"{where}: command {command_name(a.command)} instead of {command_name(p.command)}")
            continue
        if plain_frame(a.frame) != plain_frame(p.frame):
            diffs.append(f"{where}: frame {a.frame} instead of {p.frame}")
        if abs(_degE7(a.lat) - _degE7(p.lat)) > 1 or abs(_degE7(a.lon) - _degE7(p.lon)) > 1:
            diffs.append(f"{where}: position {a.lat:.7f},{a.lon:.7f} instead of {p.lat:.7f},{p.lon:.7f}")
        if not _close_float(a.alt_m, p.alt_m, alt_tol):
            diffs.append(f"{where}: altitude {a.alt_m} instead of {p.alt_m}")
        for i, (pa, pp) in enumerate(zip(a.params, p.params), start=1):
            if not _close_float(pa, pp, 1e-6):
                diffs.append(f"{where}: param{i} {pa} instead of {pp}")
        if a.autocontinue != p.autocontinue:
            diffs.append(f"{where}: autocontinue {a.autocontinue} instead of {p.autocontinue}")
    return tuple(diffs)
