"""How ArduPilot stores a mission item and what it hands back: ``AP_Mission``'s own conversions.

An uploaded ``MISSION_ITEM_INT`` is not kept as sent. ``AP_Mission::mavlink_int_to_mission_cmd``
(``libraries/AP_Mission/AP_Mission.cpp``) turns it into a ``Mission_Command``: a 16-bit
``p1``, and either a location (``stored_in_location``: latitude and longitude as sent,
the altitude in whole centimetres — truncated, as a C float-to-int conversion does —
with a relative-altitude flag from the frame, plus loiter direction bits) or a
command-specific structure of typed fields (``Change_Speed_Command``: ``uint8``
speed type, ``float`` speed and throttle; ``Cam_Trigg_Distance``: ``float`` metres,
``uint8`` trigger; …). Whatever does not fit is gone. A download rebuilds the item
from that (``AP_Mission::mission_cmd_to_mavlink_int``): params the structure has no
field for come back 0, a command without a location in frame 0, a location in frame
0 or 3 (the plain frames, even in MISSION_ITEM_INT), ``autocontinue`` 1; seq 0 is
always the home (``read_cmd_from_storage``).

The upload also refuses items the vehicle cannot store (``sanity_check_params``: a
NaN where the command does not allow one, an infinity → MAV_MISSION_INVALID_PARAMn;
an unknown command → MAV_MISSION_UNSUPPORTED; a location frame other than global /
relative / mission → MAV_MISSION_UNSUPPORTED_FRAME; latitude/longitude out of range
→ INVALID_PARAM5_X / 6_Y). The simulator stores ``StoredCommand`` values and flies
them, so what it flies and what it reads back come from the same model — and that
model is written here from ArduPilot's code, not from the ground station's
read-back comparison (``planner.output.mission_wire``), which the tests check against it.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field

from pymavlink.dialects.v20 import common as _M

from planner.output.mission_items import FENCE, MISSION, RALLY, MissionItem

__all__ = ["StoredCommand", "store", "hand_back", "home_item", "store_fence", "store_rally", "LOCATION_COMMANDS"]

# AP_Mission::stored_in_location
LOCATION_COMMANDS = frozenset({
    _M.MAV_CMD_NAV_WAYPOINT, _M.MAV_CMD_NAV_LOITER_UNLIM, _M.MAV_CMD_NAV_LOITER_TURNS, _M.MAV_CMD_NAV_LOITER_TIME,
    _M.MAV_CMD_NAV_LAND, _M.MAV_CMD_NAV_TAKEOFF, _M.MAV_CMD_NAV_CONTINUE_AND_CHANGE_ALT, _M.MAV_CMD_NAV_LOITER_TO_ALT,
    _M.MAV_CMD_NAV_SPLINE_WAYPOINT, _M.MAV_CMD_NAV_GUIDED_ENABLE, _M.MAV_CMD_DO_SET_HOME, _M.MAV_CMD_DO_LAND_START,
    _M.MAV_CMD_DO_GO_AROUND, _M.MAV_CMD_DO_SET_ROI, _M.MAV_CMD_NAV_VTOL_TAKEOFF, _M.MAV_CMD_NAV_VTOL_LAND,
    _M.MAV_CMD_NAV_PAYLOAD_PLACE,
})

# Typed storage: how a C assignment from the packet's float changes the value.
U8, I8, U16, I16, F32 = "u8", "i8", "u16", "i16", "f32"
_RANGES = {U8: (0, 255), I8: (-128, 127), U16: (0, 65535), I16: (-32768, 32767)}

# Commands whose params land in typed fields: (packet field, stored field name, type). "p1" is Mission_Command::p1
# (uint16). Order is the download's; fields not listed come back 0. From mavlink_int_to_mission_cmd and
# mission_cmd_to_mavlink_int, Copter build (NAV_WAYPOINT keeps its delay in p1; Plane's radius packing is not here).
_FIELDS: dict[int, tuple[tuple[str, str, str], ...]] = {
    _M.MAV_CMD_NAV_WAYPOINT: (("param1", "p1", U16),),
    _M.MAV_CMD_NAV_RETURN_TO_LAUNCH: (),
    _M.MAV_CMD_NAV_TAKEOFF: (("param1", "p1", U16),),
    _M.MAV_CMD_NAV_CONTINUE_AND_CHANGE_ALT: (("param1", "p1", U16),),
    _M.MAV_CMD_NAV_SPLINE_WAYPOINT: (("param1", "p1", U16),),
    _M.MAV_CMD_NAV_GUIDED_ENABLE: (("param1", "p1", U16),),
    _M.MAV_CMD_NAV_DELAY: (("param1", "seconds", F32), ("param2", "hour_utc", I8), ("param3", "min_utc", I8),
                           ("param4", "sec_utc", I8)),
    _M.MAV_CMD_CONDITION_DELAY: (("param1", "seconds", F32),),
    _M.MAV_CMD_CONDITION_DISTANCE: (("param1", "meters", F32),),
    _M.MAV_CMD_CONDITION_YAW: (("param1", "angle_deg", F32), ("param2", "turn_rate_dps", F32), ("param3", "direction", I8),
                               ("param4", "relative_angle", U8)),
    _M.MAV_CMD_DO_JUMP: (("param1", "target", U16), ("param2", "num_times", I16)),
    _M.MAV_CMD_DO_CHANGE_SPEED: (("param1", "speed_type", U8), ("param2", "target_ms", F32),
                                 ("param3", "throttle_pct", F32)),
    _M.MAV_CMD_DO_SET_HOME: (("param1", "p1", U16),),
    _M.MAV_CMD_DO_SET_RELAY: (("param1", "num", U8), ("param2", "state", U8)),
    _M.MAV_CMD_DO_REPEAT_RELAY: (("param1", "num", U8), ("param2", "repeat_count", I16), ("param3", "cycle_time", F32)),
    _M.MAV_CMD_DO_SET_SERVO: (("param1", "channel", U8), ("param2", "pwm", U16)),
    _M.MAV_CMD_DO_REPEAT_SERVO: (("param1", "channel", U8), ("param2", "pwm", U16), ("param3", "repeat_count", I16),
                                 ("param4", "cycle_time", F32)),
    _M.MAV_CMD_DO_LAND_START: (),
    _M.MAV_CMD_DO_GO_AROUND: (),
    _M.MAV_CMD_DO_SET_ROI: (("param1", "p1", U16),),
    _M.MAV_CMD_DO_DIGICAM_CONFIGURE: (("param1", "shooting_mode", U8), ("param2", "shutter_speed", U16),
                                      ("param3", "aperture", U8), ("param4", "ISO", U16), ("x", "exposure_type", U8),
                                      ("y", "cmd_id", U8), ("z", "engine_cutoff_time", F32)),
    _M.MAV_CMD_DO_DIGICAM_CONTROL: (("param1", "session", U8), ("param2", "zoom_pos", U8), ("param3", "zoom_step", I8),
                                    ("param4", "focus_lock", U8), ("x", "shooting_cmd", U8), ("y", "cmd_id", U8)),
    _M.MAV_CMD_DO_MOUNT_CONTROL: (("param1", "pitch", F32), ("param2", "roll", F32), ("param3", "yaw", F32)),
    _M.MAV_CMD_DO_SET_CAM_TRIGG_DIST: (("param1", "meters", F32), ("param3", "trigger", U8)),
    _M.MAV_CMD_DO_FENCE_ENABLE: (("param1", "p1", U16),),
    _M.MAV_CMD_DO_PARACHUTE: (("param1", "p1", U16),),
    _M.MAV_CMD_DO_GRIPPER: (("param1", "num", U8), ("param2", "action", U8)),
    _M.MAV_CMD_DO_GUIDED_LIMITS: (("param1", "p1", U16), ("param2", "alt_min", F32), ("param3", "alt_max", F32),
                                  ("param4", "horiz_max", F32)),
    _M.MAV_CMD_DO_PAUSE_CONTINUE: (("param1", "p1", U16),),
    _M.MAV_CMD_IMAGE_START_CAPTURE: (("param1", "instance", U8), ("param2", "interval_s", F32),
                                     ("param3", "total_num_images", U16), ("param4", "start_seq_number", U16)),
    _M.MAV_CMD_IMAGE_STOP_CAPTURE: (("param1", "p1", U16),),
    _M.MAV_CMD_SET_CAMERA_ZOOM: (("param1", "zoom_type", U8), ("param2", "zoom_value", F32)),
    _M.MAV_CMD_SET_CAMERA_FOCUS: (("param1", "focus_type", U8), ("param2", "focus_value", F32)),
    _M.MAV_CMD_VIDEO_START_CAPTURE: (("param1", "video_stream_id", U8),),
    _M.MAV_CMD_VIDEO_STOP_CAPTURE: (("param1", "video_stream_id", U8),),
}
_LOITERS = (_M.MAV_CMD_NAV_LOITER_UNLIM, _M.MAV_CMD_NAV_LOITER_TURNS, _M.MAV_CMD_NAV_LOITER_TIME,
            _M.MAV_CMD_NAV_LOITER_TO_ALT, _M.MAV_CMD_NAV_LAND)
_NAN_PARAM4_OK = frozenset({_M.MAV_CMD_NAV_WAYPOINT, _M.MAV_CMD_NAV_LAND, _M.MAV_CMD_NAV_TAKEOFF,
                            _M.MAV_CMD_NAV_VTOL_TAKEOFF})  # sanity_check_params
_RELATIVE_FRAMES = {_M.MAV_FRAME_GLOBAL_RELATIVE_ALT: True, _M.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT: True,
                    _M.MAV_FRAME_GLOBAL: False, _M.MAV_FRAME_GLOBAL_INT: False, _M.MAV_FRAME_MISSION: False}
LOCATION_ALT_MAX_M = 83000  # Location.h: what a 24-bit centimetre altitude holds


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]


def _typed(value: float, kind: str) -> float:
    """``value`` after a C assignment from float to ``kind`` (float32, or an integer truncated toward zero)."""
    if kind == F32:
        return _f32(value)
    lo, hi = _RANGES[kind]
    if not math.isfinite(value):
        return 0.0
    return float(max(lo, min(hi, int(value))))  # out-of-range conversions are undefined in C; clamped here


@dataclass(frozen=True)
class StoredCommand:
    """One ``AP_Mission::Mission_Command`` as the vehicle keeps it."""

    index: int
    id: int
    p1: int = 0
    lat_e7: int = 0
    lon_e7: int = 0
    alt_cm: int = 0
    relative_alt: bool = False
    loiter_ccw: bool = False
    loiter_xtrack: bool = False
    type_bits: int = 0  # type_specific_bits (LOITER_TURNS' scaled radius and fractional turns)
    content: tuple[tuple[str, float], ...] = field(default=())

    @property
    def has_location(self) -> bool:
        return self.id in LOCATION_COMMANDS

    def value(self, name: str, default: float = 0.0) -> float:
        """A stored field by its ``AP_Mission`` name (``target_ms``, ``meters``, …; ``p1`` too)."""
        if name == "p1":
            return float(self.p1)
        return dict(self.content).get(name, default)

    @property
    def lat(self) -> float:
        return self.lat_e7 / 1e7

    @property
    def lon(self) -> float:
        return self.lon_e7 / 1e7

    @property
    def alt_m(self) -> float:
        return self.alt_cm / 100.0


def store(item: MissionItem) -> StoredCommand | int:
    """``mavlink_int_to_mission_cmd``: the command the vehicle keeps for ``item`` (its wire values: degE7
    lat/lon, float32 params), or the MAV_MISSION_RESULT that refuses it."""
    params = (item.param1, item.param2, item.param3, item.param4)
    for n, p in enumerate(params, start=1):
        nan_ok = n == 4 and item.command in _NAN_PARAM4_OK
        if math.isinf(p) or (math.isnan(p) and not nan_ok):
            return getattr(_M, f"MAV_MISSION_INVALID_PARAM{n}")
    cid = item.command
    if cid in (0, 1):
        return _M.MAV_MISSION_INVALID
    wire = {"param1": params[0], "param2": params[1], "param3": params[2], "param4": params[3],
            "x": float(round(item.lat * 1e7)), "y": float(round(item.lon * 1e7)), "z": item.alt_m}
    p1, bits, ccw, xtrack = 0, 0, False, False
    content: list[tuple[str, float]] = []
    if cid in _FIELDS:
        for source, name, kind in _FIELDS[cid]:
            value = _typed(wire[source], kind)
            if name == "p1":
                p1 = int(value)
            else:
                content.append((name, value))
    elif cid == _M.MAV_CMD_NAV_LOITER_UNLIM:
        p1, ccw = int(_typed(abs(params[2]), U16)), params[2] < 0
    elif cid == _M.MAV_CMD_NAV_LOITER_TURNS:
        turns = params[0]
        if 0 < turns < 1:
            turns, bits = turns * 256.0, bits | 2
        radius = abs(params[2])
        if radius > 255:
            radius, bits = min(255.0, radius * 0.1), bits | 1
        p1 = int(min(255.0, max(0.0, turns))) | (int(radius) << 8)
        ccw, xtrack = params[2] < 0, params[3] > 0
    elif cid == _M.MAV_CMD_NAV_LOITER_TIME:
        p1, ccw, xtrack = int(_typed(params[0], U16)), params[2] < 0, params[3] > 0
    elif cid == _M.MAV_CMD_NAV_LOITER_TO_ALT:
        p1, ccw, xtrack = int(_typed(abs(params[1]), U16)), params[1] < 0, params[3] > 0
    elif cid == _M.MAV_CMD_NAV_LAND:
        p1 = int(_typed(params[0], U16))
        ccw = (not math.isnan(params[3])) and params[3] < 0
    else:
        return _M.MAV_MISSION_UNSUPPORTED
    if cid not in LOCATION_COMMANDS:
        return StoredCommand(item.seq, cid, p1, type_bits=bits, content=tuple(content))
    lat_e7, lon_e7 = int(wire["x"]), int(wire["y"])
    if abs(lat_e7) > 900_000_000:
        return _M.MAV_MISSION_INVALID_PARAM5_X
    if abs(lon_e7) > 1_800_000_000:
        return _M.MAV_MISSION_INVALID_PARAM6_Y
    z = _f32(item.alt_m)
    if math.isnan(z) or abs(z) >= LOCATION_ALT_MAX_M:
        return _M.MAV_MISSION_INVALID_PARAM7
    frame = item.frame
    if frame not in _RELATIVE_FRAMES:
        return _M.MAV_MISSION_UNSUPPORTED_FRAME  # terrain frames need AP_TERRAIN; others are refused
    return StoredCommand(item.seq, cid, p1, lat_e7, lon_e7, int(_f32(z * 100.0)), _RELATIVE_FRAMES[frame],
                         ccw, xtrack, bits, tuple(content))


def hand_back(cmd: StoredCommand) -> MissionItem:
    """``mission_cmd_to_mavlink_int``: the item a download returns for ``cmd`` (plain frame numbers, as
    ``MissionItem`` keeps them)."""
    params = [0.0, 0.0, 0.0, 0.0]
    extra = {"x": 0.0, "y": 0.0, "z": 0.0}
    stored = dict(cmd.content)
    cid = cmd.id
    if cid in _FIELDS:
        for target, name, _ in _FIELDS[cid]:
            value = float(cmd.p1) if name == "p1" else stored.get(name, 0.0)
            if target.startswith("param"):
                params[int(target[-1]) - 1] = value
            else:
                extra[target] = value
    elif cid == _M.MAV_CMD_NAV_LOITER_UNLIM:
        params[2] = -float(cmd.p1) if cmd.loiter_ccw else float(cmd.p1)
    elif cid == _M.MAV_CMD_NAV_LOITER_TURNS:
        params[0] = float(cmd.p1 & 0xFF)
        params[2] = float(cmd.p1 >> 8) * (-1.0 if cmd.loiter_ccw else 1.0)
        if cmd.type_bits & 1:
            params[2] *= 10.0
        if cmd.type_bits & 2:
            params[0] /= 256.0
        params[3] = 1.0 if cmd.loiter_xtrack else 0.0
    elif cid == _M.MAV_CMD_NAV_LOITER_TIME:
        params[0], params[2], params[3] = float(cmd.p1), -1.0 if cmd.loiter_ccw else 1.0, 1.0 if cmd.loiter_xtrack else 0.0
    elif cid == _M.MAV_CMD_NAV_LOITER_TO_ALT:
        params[1] = -float(cmd.p1) if cmd.loiter_ccw else float(cmd.p1)
        params[3] = 1.0 if cmd.loiter_xtrack else 0.0
    elif cid == _M.MAV_CMD_NAV_LAND:
        params[0], params[3] = float(cmd.p1), -1.0 if cmd.loiter_ccw else 1.0
    frame, lat, lon, alt = 0, extra["x"] / 1e7, extra["y"] / 1e7, _f32(extra["z"])
    if cmd.has_location:
        frame = _M.MAV_FRAME_GLOBAL_RELATIVE_ALT if cmd.relative_alt else _M.MAV_FRAME_GLOBAL
        lat, lon, alt = cmd.lat_e7 / 1e7, cmd.lon_e7 / 1e7, _f32(cmd.alt_cm * _f32(0.01))
    return MissionItem(seq=cmd.index, command=cid, frame=frame, lat=lat, lon=lon, alt_m=alt,
                       param1=_f32(params[0]), param2=_f32(params[1]), param3=_f32(params[2]), param4=_f32(params[3]),
                       current=0, autocontinue=1, mission_type=MISSION)


def home_item(lat: float, lon: float, alt_amsl_m: float) -> MissionItem:
    """Seq 0 as a download returns it: the vehicle's home, an absolute NAV_WAYPOINT (``read_cmd_from_storage``)."""
    home = StoredCommand(0, _M.MAV_CMD_NAV_WAYPOINT, lat_e7=int(round(lat * 1e7)), lon_e7=int(round(lon * 1e7)),
                         alt_cm=int(round(alt_amsl_m * 100.0)))
    return hand_back(home)


_FENCE_COMMANDS = frozenset({
    _M.MAV_CMD_NAV_FENCE_POLYGON_VERTEX_INCLUSION, _M.MAV_CMD_NAV_FENCE_POLYGON_VERTEX_EXCLUSION,
    _M.MAV_CMD_NAV_FENCE_RETURN_POINT, _M.MAV_CMD_NAV_FENCE_CIRCLE_EXCLUSION, _M.MAV_CMD_NAV_FENCE_CIRCLE_INCLUSION,
})
_VERTICES = (_M.MAV_CMD_NAV_FENCE_POLYGON_VERTEX_INCLUSION, _M.MAV_CMD_NAV_FENCE_POLYGON_VERTEX_EXCLUSION)
_CIRCLES = (_M.MAV_CMD_NAV_FENCE_CIRCLE_EXCLUSION, _M.MAV_CMD_NAV_FENCE_CIRCLE_INCLUSION)


def store_fence(item: MissionItem) -> MissionItem | int:
    """A fence item through ``AC_PolyFenceItem`` and back (``MissionItemProtocol_Fence::
    convert_MISSION_ITEM_INT_to_AC_PolyFenceItem`` / ``get_item_as_mission_item``): the type, the point (degE7),
    a ``uint8`` vertex count or a ``float`` radius in param1; frame 0, no altitude, the other params 0."""
    if item.frame not in _RELATIVE_FRAMES or item.frame == _M.MAV_FRAME_MISSION:
        if item.frame not in (_M.MAV_FRAME_GLOBAL_TERRAIN_ALT, _M.MAV_FRAME_GLOBAL_TERRAIN_ALT_INT):
            return _M.MAV_MISSION_UNSUPPORTED_FRAME
    if item.command not in _FENCE_COMMANDS:
        return _M.MAV_MISSION_UNSUPPORTED
    p1 = 0.0
    if item.command in _VERTICES:
        if item.param1 > 255:
            return _M.MAV_MISSION_INVALID_PARAM1
        p1 = _typed(item.param1, U8)
    elif item.command in _CIRCLES:
        p1 = _f32(item.param1)
    return MissionItem(seq=item.seq, command=item.command, frame=0, lat=round(item.lat * 1e7) / 1e7,
                       lon=round(item.lon * 1e7) / 1e7, alt_m=0.0, param1=p1, autocontinue=0, mission_type=FENCE)


def store_rally(item: MissionItem) -> MissionItem | int:
    """A rally point through ``RallyLocation`` and back (``MissionItemProtocol_Rally::
    convert_MISSION_ITEM_INT_to_RallyLocation`` / ``get_item_as_mission_item``): degE7 position, the altitude in
    whole metres (``int16``), its frame (absolute or relative); params 0."""
    if item.command != _M.MAV_CMD_NAV_RALLY_POINT:
        return _M.MAV_MISSION_UNSUPPORTED
    if abs(round(item.lat * 1e7)) > 900_000_000:
        return _M.MAV_MISSION_INVALID_PARAM5_X
    if abs(round(item.lon * 1e7)) > 1_800_000_000:
        return _M.MAV_MISSION_INVALID_PARAM6_Y
    if not -32768 <= item.alt_m <= 32767:
        return _M.MAV_MISSION_INVALID_PARAM7
    frames = {_M.MAV_FRAME_GLOBAL: 0, _M.MAV_FRAME_GLOBAL_INT: 0, _M.MAV_FRAME_GLOBAL_RELATIVE_ALT: 3,
              _M.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT: 3}
    if item.frame not in frames:
        return _M.MAV_MISSION_UNSUPPORTED_FRAME
    return MissionItem(seq=item.seq, command=item.command, frame=frames[item.frame], lat=round(item.lat * 1e7) / 1e7,
                       lon=round(item.lon * 1e7) / 1e7, alt_m=float(int(_f32(item.alt_m))), autocontinue=0,
                       mission_type=RALLY)
