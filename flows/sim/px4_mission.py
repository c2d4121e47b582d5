"""How PX4 stores a mission, fence or rally item and what it hands back (``MavlinkMissionManager``).

PX4 keeps a ``mission_item_s`` (``src/modules/mavlink/mavlink_mission.cpp``,
``MavlinkMissionManager::parse_mavlink_mission_item``), not the packet:

- an item with a global frame (0, 3, or their ``_INT`` forms) keeps latitude and
  longitude (degE7 → double → back with ``round(lat * 1e7)``: exact), its altitude
  as a float and whether it is relative, and only the params its command uses —
  WAYPOINT: hold time, acceptance radius, yaw (``wrap_2pi(radians(param4))``, so
  -90° comes back as 270°); TAKEOFF: yaw; LAND: precision (param2), yaw; LOITER_*:
  their radius and flags; fence vertices their count (``uint16(param1 + 0.5)``),
  fence circles their radius; rally points nothing. The rest comes back 0;
- an item in MAV_FRAME_MISSION (2) keeps param1–4 and x, y, z as they came, for
  the commands PX4 knows (DO_CHANGE_SPEED, DO_SET_CAM_TRIGG_DIST, DO_JUMP, …);
- anything else is refused: an unknown command MAV_MISSION_UNSUPPORTED, another
  frame MAV_MISSION_UNSUPPORTED_FRAME, a DO_SET_ROI mode it cannot fly
  MAV_MISSION_INVALID_PARAM1.

A download (``format_mavlink_mission_item``) answers MISSION_ITEM_INT with the
``_INT`` frames; ``MissionItem`` keeps plain frame numbers, so those are 0 and 3
here (the wire conversion adds ``_INT`` again). ``autocontinue`` is kept.
"""

from __future__ import annotations

import math
import struct
from dataclasses import replace

from pymavlink.dialects.v20 import common as _M

from planner.output.mission_items import MissionItem

__all__ = ["store_px4"]

_GLOBAL = {_M.MAV_FRAME_GLOBAL: False, _M.MAV_FRAME_GLOBAL_INT: False, _M.MAV_FRAME_GLOBAL_RELATIVE_ALT: True,
           _M.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT: True}
# parse_mavlink_mission_item, global frames: the params each command keeps (1-based), the rest come back 0
_GLOBAL_PARAMS: dict[int, tuple[int, ...]] = {
    _M.MAV_CMD_NAV_WAYPOINT: (1, 2, 4), _M.MAV_CMD_NAV_LOITER_UNLIM: (3, 4), _M.MAV_CMD_NAV_LOITER_TIME: (1, 2, 3, 4),
    _M.MAV_CMD_NAV_LAND: (2, 4), _M.MAV_CMD_NAV_TAKEOFF: (4,), _M.MAV_CMD_NAV_LOITER_TO_ALT: (1, 2, 4),
    _M.MAV_CMD_NAV_VTOL_TAKEOFF: (4,), _M.MAV_CMD_NAV_VTOL_LAND: (4,), _M.MAV_CMD_DO_SET_ROI_LOCATION: (),
    _M.MAV_CMD_NAV_FENCE_RETURN_POINT: (), _M.MAV_CMD_NAV_FENCE_POLYGON_VERTEX_INCLUSION: (1,),
    _M.MAV_CMD_NAV_FENCE_POLYGON_VERTEX_EXCLUSION: (1,), _M.MAV_CMD_NAV_FENCE_CIRCLE_INCLUSION: (1,),
    _M.MAV_CMD_NAV_FENCE_CIRCLE_EXCLUSION: (1,), _M.MAV_CMD_NAV_RALLY_POINT: (),
}
_YAW_PARAM = frozenset({_M.MAV_CMD_NAV_WAYPOINT, _M.MAV_CMD_NAV_LOITER_UNLIM, _M.MAV_CMD_NAV_LAND,
                        _M.MAV_CMD_NAV_TAKEOFF, _M.MAV_CMD_NAV_VTOL_TAKEOFF, _M.MAV_CMD_NAV_VTOL_LAND})
# MAV_FRAME_MISSION commands PX4 stores (params as sent)
_MISSION_FRAME = frozenset({
    _M.MAV_CMD_DO_JUMP, _M.MAV_CMD_DO_CHANGE_SPEED, _M.MAV_CMD_DO_SET_HOME, _M.MAV_CMD_DO_LAND_START,
    _M.MAV_CMD_DO_TRIGGER_CONTROL, _M.MAV_CMD_DO_DIGICAM_CONTROL, _M.MAV_CMD_DO_MOUNT_CONFIGURE,
    _M.MAV_CMD_DO_MOUNT_CONTROL, _M.MAV_CMD_DO_GIMBAL_MANAGER_PITCHYAW, _M.MAV_CMD_IMAGE_START_CAPTURE,
    _M.MAV_CMD_IMAGE_STOP_CAPTURE, _M.MAV_CMD_VIDEO_START_CAPTURE, _M.MAV_CMD_VIDEO_STOP_CAPTURE,
    _M.MAV_CMD_DO_CONTROL_VIDEO, _M.MAV_CMD_DO_SET_CAM_TRIGG_DIST, _M.MAV_CMD_OBLIQUE_SURVEY,
    _M.MAV_CMD_DO_SET_CAM_TRIGG_INTERVAL, _M.MAV_CMD_SET_CAMERA_MODE, _M.MAV_CMD_DO_VTOL_TRANSITION,
    _M.MAV_CMD_NAV_DELAY, _M.MAV_CMD_NAV_RETURN_TO_LAUNCH, _M.MAV_CMD_DO_SET_ROI_WPNEXT_OFFSET,
    _M.MAV_CMD_DO_SET_ROI_NONE, _M.MAV_CMD_CONDITION_DELAY, _M.MAV_CMD_CONDITION_DISTANCE,
    _M.MAV_CMD_DO_SET_ACTUATOR, _M.MAV_CMD_DO_WINCH, _M.MAV_CMD_DO_GRIPPER, _M.MAV_CMD_DO_SET_ROI,
    _M.MAV_CMD_NAV_ROI,
})
_PLAIN = {_M.MAV_FRAME_GLOBAL_INT: _M.MAV_FRAME_GLOBAL, _M.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT: _M.MAV_FRAME_GLOBAL_RELATIVE_ALT}


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]


def _yaw_back(deg: float) -> float:
    """param4 through ``wrap_2pi(radians(deg))`` and ``degrees`` back (float32)."""
    rad = _f32(math.radians(_f32(deg)))
    rad = _f32(rad % (2.0 * math.pi)) if math.isfinite(rad) else 0.0
    return _f32(math.degrees(rad))


def store_px4(item: MissionItem) -> MissionItem | int:
    """The item a PX4 download returns for ``item`` (its wire values), or the MAV_MISSION_RESULT refusing it."""
    frame = item.frame
    params = [_f32(p) for p in (item.param1, item.param2, item.param3, item.param4)]
    if frame in _GLOBAL:
        cid = item.command
        if cid in (_M.MAV_CMD_DO_SET_ROI, _M.MAV_CMD_NAV_ROI):
            if int(params[0]) not in (_M.MAV_ROI_LOCATION, _M.MAV_ROI_NONE):
                return _M.MAV_MISSION_INVALID_PARAM1
            kept = [float(int(params[0])), 0.0, 0.0, 0.0]
        elif cid not in _GLOBAL_PARAMS:
            return _M.MAV_MISSION_UNSUPPORTED
        else:
            kept = [params[n - 1] if n in _GLOBAL_PARAMS[cid] else 0.0 for n in (1, 2, 3, 4)]
            if cid in _YAW_PARAM:
                kept[3] = _yaw_back(params[3])
            if cid in (_M.MAV_CMD_NAV_FENCE_POLYGON_VERTEX_INCLUSION, _M.MAV_CMD_NAV_FENCE_POLYGON_VERTEX_EXCLUSION):
                kept[0] = float(int(params[0] + 0.5) & 0xFFFF)
        return replace(item, frame=_PLAIN.get(frame, frame), lat=round(item.lat * 1e7) / 1e7, lon=round(item.lon * 1e7) / 1e7,
                       alt_m=_f32(item.alt_m), param1=kept[0], param2=kept[1], param3=kept[2], param4=kept[3],
                       current=0)
    if frame == _M.MAV_FRAME_MISSION:
        if item.command not in _MISSION_FRAME:
            return _M.MAV_MISSION_UNSUPPORTED
        if item.command in (_M.MAV_CMD_DO_SET_ROI, _M.MAV_CMD_NAV_ROI) and int(params[0]) not in (
                _M.MAV_ROI_NONE, _M.MAV_ROI_WPNEXT, _M.MAV_ROI_WPINDEX):
            return _M.MAV_MISSION_INVALID_PARAM1
        return replace(item, lat=round(item.lat * 1e7) / 1e7, lon=round(item.lon * 1e7) / 1e7, alt_m=_f32(item.alt_m),
                       param1=params[0], param2=params[1], param3=params[2], param4=params[3], current=0)
    return _M.MAV_MISSION_UNSUPPORTED_FRAME
