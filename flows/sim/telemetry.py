"""The simulated vehicle's telemetry messages, built from one ``SimState`` snapshot.

Each builder returns a ``build(mav)`` callable for ``SimVehicle.send``. Field
sources, as a ground station reads them:

- HEARTBEAT: ``custom_mode`` per dialect (``flows.vehicle.modes``), SAFETY_ARMED
  while armed, system status STANDBY on the ground (armed or not) and ACTIVE in
  the air (``GCS_MAVLINK_Copter::vehicle_system_status``: ``land_complete`` →
  STANDBY, before ``!initialised`` → BOOT, so a booting vehicle on the ground
  says STANDBY too).
- SYS_STATUS: the PREARM_CHECK bit is present and enabled, and healthy once the
  pre-arm checks pass or while armed (ArduPilot ``GCS::update_sensor_status_flags``,
  ``libraries/GCS_MAVLink/GCS.cpp``: "it is healthy if armed or checks are
  passing"; PX4 ``MavlinkStreamSysStatus``: healthy when the current mode can arm).
  The AHRS (EKF) bit follows it: SITL's pre-arm checks wait for the EKF.
- GLOBAL_POSITION_INT ``time_boot_ms``: the vehicle's simulated clock, so the
  track carries flight time; latitude and longitude 0 while an ArduPilot has no
  position yet (``GCS_MAVLINK::send_global_position_int`` ignores
  ``AP_AHRS::get_location``'s refusal and sends its zeroed location: a SITL says
  0, 0 for its first ~40 s, until the EKF has its origin); MISSION_CURRENT with ``mission_state``
  (ArduCopter ``GCS_MAVLINK_Copter::mission_state``).
"""

from __future__ import annotations

import time
from typing import Any, Callable

from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants only)

from flows.sim.state import SimState  # noqa: E402
from flows.vehicle.modes import custom_mode  # noqa: E402

__all__ = ["heartbeat", "message", "boot_messages", "timesync", "AUTOPILOT"]

Build = Callable[[Any], None]
AUTOPILOT = {"ardupilot": _M.MAV_AUTOPILOT_ARDUPILOTMEGA, "px4": _M.MAV_AUTOPILOT_PX4}
_SENSORS = (_M.MAV_SYS_STATUS_SENSOR_3D_GYRO | _M.MAV_SYS_STATUS_SENSOR_3D_ACCEL | _M.MAV_SYS_STATUS_SENSOR_3D_MAG
            | _M.MAV_SYS_STATUS_SENSOR_ABSOLUTE_PRESSURE | _M.MAV_SYS_STATUS_SENSOR_GPS | _M.MAV_SYS_STATUS_AHRS
            | _M.MAV_SYS_STATUS_PREARM_CHECK)
_NOT_READY = _M.MAV_SYS_STATUS_AHRS | _M.MAV_SYS_STATUS_PREARM_CHECK
_VOLTS_MV = 3900


def heartbeat(s: SimState, dialect: str, *, booting: bool = False) -> Build:
    """HEARTBEAT; ``booting``: MAV_STATE_BOOT, as ArduCopter says until "ArduPilot Ready" (observed on SITL: status 1
    for the first ~2.5 s, then 3; ``vehicle_system_status``: ``!ap.initialised`` → BOOT before land_complete is set)."""
    base = _M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED
    if s.armed:
        base |= _M.MAV_MODE_FLAG_SAFETY_ARMED
    if s.mode == "AUTO":
        base |= _M.MAV_MODE_FLAG_AUTO_ENABLED
    status = _M.MAV_STATE_STANDBY if s.landed_state == _M.MAV_LANDED_STATE_ON_GROUND else _M.MAV_STATE_ACTIVE
    if booting:
        status = _M.MAV_STATE_BOOT
    cm = custom_mode(s.mode, dialect)
    return lambda m: m.heartbeat_send(_M.MAV_TYPE_QUADROTOR, AUTOPILOT[dialect], base, cm, status)


def _millivolts(s: SimState) -> int:
    return int(round(s.voltage_v * 1000)) if s.voltage_v > 0 else 4 * _VOLTS_MV


def _centiamps(s: SimState) -> int:
    return max(-1, min(32767, int(round(s.current_a * 100))))  # int16 on the wire (-1: not measured)


def _sys_status(s: SimState, prearm_ok: bool) -> Build:
    """SYS_STATUS: sensors, load, the battery's voltage (mV), current (cA) and remaining % (``GCS_MAVLINK::send_sys_status``)."""
    health = _SENSORS if (prearm_ok or s.armed) else _SENSORS & ~_NOT_READY
    remaining = int(round(s.battery_pct))
    mv, ca = _millivolts(s), _centiamps(s)
    return lambda m: m.sys_status_send(_SENSORS, _SENSORS, health, 250, mv, ca, remaining, 0, 0, 0, 0, 0, 0)


def _position(s: SimState, boot_ms: int, located: bool) -> Build:
    lat, lon = (int(round(s.lat * 1e7)), int(round(s.lon * 1e7))) if located else (0, 0)
    rel = int(round(s.alt_m * 1000))
    amsl = int(round((s.home[2] + s.alt_m) * 1000))
    vn, ve, vd = (int(round(v * 100)) for v in (s.velocity[0], s.velocity[1], -s.velocity[2]))
    hdg = int(round(s.heading_deg * 100.0)) % 36000  # ``send_global_position_int``: ahrs.yaw_sensor, centidegrees
    return lambda m: m.global_position_int_send(boot_ms, lat, lon, amsl, rel, vn, ve, vd, hdg)


def _gps(s: SimState, fix_type: int) -> Build:
    lat, lon = int(round(s.lat * 1e7)), int(round(s.lon * 1e7))
    amsl = int(round((s.home[2] + s.alt_m) * 1000))
    sats = 12 if fix_type >= 3 else 3
    return lambda m: m.gps_raw_int_send(int(time.time() * 1e6), fix_type, lat, lon, amsl, 80, 120, 0, 65535, sats)


def _battery(s: SimState) -> Build:
    """BATTERY_STATUS as ArduPilot sends it for a monitor without cell voltages (``GCS_MAVLINK::send_battery_status``:
    function and type UNKNOWN, temperature INT16_MAX, the pack voltage in the first cell, the others UINT16_MAX),
    current in cA, consumed mAh, energy in hJ, and the charge state from the battery failsafe
    (``AP_BattMonitor::get_mavlink_charge_state``: none OK, low LOW, critical CRITICAL)."""
    remaining = int(round(s.battery_pct))
    hj = int(s.energy_j / 100.0)
    volts = [_millivolts(s)] + [65535] * 9
    ca, mah, charge = _centiamps(s), int(round(s.consumed_mah)), s.charge_state
    return lambda m: m.battery_status_send(0, _M.MAV_BATTERY_FUNCTION_UNKNOWN, _M.MAV_BATTERY_TYPE_UNKNOWN, 32767,
                                           volts, ca, mah, hj, remaining, 0, charge)


def _home(s: SimState) -> Build:
    lat, lon, amsl = int(round(s.home[0] * 1e7)), int(round(s.home[1] * 1e7)), int(round(s.home[2] * 1000))
    return lambda m: m.home_position_send(lat, lon, amsl, 0.0, 0.0, 0.0, [1.0, 0.0, 0.0, 0.0], 0.0, 0.0, 0.0)


def message(name: str, s: SimState, *, boot_ms: int, prearm_ok: bool, fix_type: int,
            located: bool = True) -> Build | None:
    """The ``build`` of one produced telemetry message (``flows.sim.streams.PRODUCED``), or None; ``located``:
    the vehicle knows where it is (else its position says 0, 0)."""
    if name == "SYS_STATUS":
        return _sys_status(s, prearm_ok)
    if name == "GLOBAL_POSITION_INT":
        return _position(s, boot_ms, located)
    if name == "GPS_RAW_INT":
        return _gps(s, fix_type)
    if name == "BATTERY_STATUS":
        return _battery(s)
    if name == "HOME_POSITION":
        return _home(s)
    if name == "MISSION_CURRENT":
        seq, total, state = s.mission_seq, s.mission_total, s.mission_state
        return lambda m: m.mission_current_send(seq, total, state)
    if name == "EXTENDED_SYS_STATE":
        landed = s.landed_state
        return lambda m: m.extended_sys_state_send(_M.MAV_VTOL_STATE_UNDEFINED, landed)
    if name == "SYSTEM_TIME":
        return lambda m: m.system_time_send(int(time.time() * 1e6), boot_ms)
    return None


def boot_messages(s: SimState, *, boot_ms: int, prearm_ok: bool) -> list[Build]:
    """What a port hears once, unasked, when a ground station first appears on it (FACTS.md, observed on
    ArduCopter: HOME_POSITION, GPS_GLOBAL_ORIGIN and SYS_STATUS once; TIMESYNC is ``timesync``'s)."""
    lat, lon, amsl = int(round(s.home[0] * 1e7)), int(round(s.home[1] * 1e7)), int(round(s.home[2] * 1000))
    return [
        _home(s),
        lambda m: m.gps_global_origin_send(lat, lon, amsl),
        _sys_status(s, prearm_ok),
    ]


def timesync(boot_ms: int) -> Build:
    """ArduPilot's own TIMESYNC request, every 10 s on every port (observed on SITL; ``tc1`` 0, ``ts1`` its clock
    in ns): a ground station can read the vehicle's uptime from it without asking for anything."""
    ns = boot_ms * 1_000_000
    return lambda m: m.timesync_send(0, ns)
