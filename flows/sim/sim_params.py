"""The simulated vehicle's parameters: its dialect's own names, units and defaults, readable and settable.

The simulator flies by these values (``flows.sim.wpnav.NavLimits.from_params``, the
landing, RTL, battery and failsafe code read them when they act), so a ground
station that reads or sets them over MAVLink sees and changes what the vehicle
does. Defaults are the autopilot's own, from its source, as SITL has them:

- ArduCopter 4.6 (``ArduCopter/Parameters.cpp``, ``config.h``, ``libraries/AC_WPNav/AC_WPNav.cpp``,
  ``libraries/AP_BattMonitor/AP_BattMonitor_Params.cpp``, ``libraries/AC_Fence/AC_Fence.cpp``,
  ``libraries/AP_Rally/AP_Rally.cpp``) plus SITL's ``Tools/autotest/default_params/copter.parm``
  (BATT_MONITOR 4) — so no battery failsafe action (BATT_FS_LOW_ACT 0, BATT_FS_CRT_ACT 0)
  and no GCS failsafe (FS_GCS_ENABLE 0), as FACTS.md records for SITL;
- PX4 (``mc_pos_control_params.c``, ``navigator_params.c``, ``rtl_params.c``,
  ``commander_params.c``, ``battery_params.c``).

SIM_* names are the simulator's own (as SITL's SIM_* are): SIM_SPEED_MAX is the
fastest the airframe flies (its lean-angle limit against drag; SITL's "+" frame
at ANGLE_MAX 30° reached 10 m/s in the recorded flights), SIM_BATT_CELLS the pack's
cells.

PARAM_SET of a known name stores the value as float32 (PARAM_VALUE carries a
float) and answers PARAM_VALUE; an unknown name is ignored, as ArduPilot's
``GCS_MAVLINK::handle_param_set`` does when ``AP_Param::find`` fails;
PARAM_REQUEST_READ of a known name (or by index) answers PARAM_VALUE; the
table persists across a reboot (EEPROM).
"""

from __future__ import annotations

import struct
import threading
from typing import Any, Mapping

from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants only)

__all__ = ["SimParams", "DEFAULTS", "FAILSAFE_PRESETS", "SORTIE_FAILSAFES", "SORTIE_RESERVES"]

ARDUCOPTER = {
    # waypoint navigation (AC_WPNav.cpp, AC_PosControl.h, AC_AttitudeControl.cpp)
    "WPNAV_SPEED": 1000.0, "WPNAV_SPEED_UP": 250.0, "WPNAV_SPEED_DN": 150.0, "WPNAV_ACCEL": 250.0,
    "WPNAV_ACCEL_Z": 100.0, "WPNAV_ACCEL_C": 0.0, "WPNAV_JERK": 1.0, "WPNAV_RADIUS": 200.0,
    "PSC_JERK_XY": 5.0, "PSC_JERK_Z": 5.0, "ATC_INPUT_TC": 0.15, "ATC_ACCEL_R_MAX": 110000.0,
    "ATC_ACCEL_P_MAX": 110000.0, "ATC_RATE_R_MAX": 0.0, "ATC_RATE_P_MAX": 0.0, "ANGLE_MAX": 3000.0,
    # take-off, landing, return (Parameters.cpp, config.h)
    "TKOFF_SLEW_TIME": 2.0, "LAND_SPEED": 50.0, "LAND_SPEED_HIGH": 0.0, "LAND_ALT_LOW": 1000.0,
    "RTL_ALT": 1500.0, "RTL_ALT_FINAL": 0.0, "RTL_CLIMB_MIN": 0.0, "RTL_CONE_SLOPE": 3.0, "RTL_SPEED": 0.0,
    "RTL_LOIT_TIME": 5000.0, "RTL_ALT_TYPE": 0.0, "DISARM_DELAY": 10.0,
    "RALLY_LIMIT_KM": 0.3, "RALLY_INCL_HOME": 1.0,
    # failsafes (Parameters.cpp; AP_BattMonitor_Params.cpp with the Copter low voltage 10.5 V)
    "FS_GCS_ENABLE": 0.0, "FS_GCS_TIMEOUT": 5.0, "FS_OPTIONS": 16.0, "SYSID_MYGCS": 255.0,
    "BATT_MONITOR": 4.0, "BATT_CAPACITY": 3300.0, "BATT_LOW_VOLT": 10.5, "BATT_LOW_MAH": 0.0,
    "BATT_CRT_VOLT": 0.0, "BATT_CRT_MAH": 0.0, "BATT_FS_LOW_ACT": 0.0, "BATT_FS_CRT_ACT": 0.0,
    "BATT_LOW_TIMER": 10.0, "BATT_ARM_VOLT": 0.0, "BATT_ARM_MAH": 0.0,
    # fence (AC_Fence.cpp)
    "FENCE_ENABLE": 0.0, "FENCE_TYPE": 7.0, "FENCE_ALT_MAX": 100.0, "FENCE_MARGIN": 2.0, "FENCE_ACTION": 1.0,
    # the airframe (the simulator's own)
    "SIM_SPEED_MAX": 0.0, "SIM_BATT_CELLS": 3.0,
}
PX4 = {
    # multicopter position control and the auto trajectory (mc_pos_control_params.c)
    "MPC_XY_CRUISE": 5.0, "MPC_XY_VEL_MAX": 12.0, "MPC_ACC_HOR": 3.0, "MPC_JERK_AUTO": 4.0,
    "MPC_Z_V_AUTO_UP": 3.0, "MPC_Z_V_AUTO_DN": 1.5, "MPC_ACC_UP_MAX": 4.0, "MPC_ACC_DOWN_MAX": 3.0,
    "MPC_XY_TRAJ_P": 0.5, "MPC_TKO_SPEED": 1.5, "MPC_LAND_SPEED": 0.7, "MPC_LAND_ALT1": 10.0, "MPC_LAND_ALT2": 5.0,
    # navigator (navigator_params.c, rtl_params.c, mission_params.c)
    "NAV_ACC_RAD": 10.0, "NAV_MC_ALT_RAD": 0.8, "RTL_RETURN_ALT": 60.0, "RTL_DESCEND_ALT": 30.0,
    "RTL_LAND_DELAY": 0.0, "MIS_TAKEOFF_ALT": 2.5,
    # failsafes (commander_params.c, battery_params.c)
    "NAV_DLL_ACT": 0.0, "COM_DL_LOSS_T": 10.0, "COM_LOW_BAT_ACT": 0.0, "BAT_LOW_THR": 0.15, "BAT_CRIT_THR": 0.07,
    "BAT_EMERGEN_THR": 0.05, "COM_DISARM_PRFLT": 10.0,
    # geofence
    "GF_MAX_VER_DIST": 0.0, "GF_ACTION": 1.0,
    # the airframe (the simulator's own)
    "SIM_SPEED_MAX": 0.0, "SIM_BATT_CELLS": 4.0,
}
DEFAULTS: dict[str, dict[str, float]] = {"ardupilot": ARDUCOPTER, "px4": PX4}

#: What an operator sets on a vehicle that flies sorties — SITL's defaults take no battery or link action, and the
#: launch's pre-flight (rule ``vehicle_failsafes``) refuses such a vehicle: RTL on a low battery, LAND on a critical
#: one, RTL when the ground station has been silent 30 s (so a telemetry stall of a few seconds does not trip it),
#: a return altitude of 120 m (above every sortie). ``SimVehicle(failsafes="sortie")``; "sitl" keeps SITL's.
SORTIE_FAILSAFES: dict[str, dict[str, float]] = {
    "ardupilot": {"FS_GCS_ENABLE": 1.0, "FS_GCS_TIMEOUT": 30.0, "BATT_FS_LOW_ACT": 2.0, "BATT_FS_CRT_ACT": 1.0,
                  "RTL_ALT": 12000.0},
    "px4": {"NAV_DLL_ACT": 2.0, "COM_DL_LOSS_T": 30.0, "COM_LOW_BAT_ACT": 3.0, "BAT_LOW_THR": 0.20,
            "BAT_CRIT_THR": 0.10,
            # the acceptance radius of a vehicle that patrols lanes: PX4's default 10 m switches to the next waypoint
            # 10 m early and cuts every corner by up to that much (MissionBlock::is_mission_item_reached_or_completed,
            # computeXYSpeedAtWaypoint), wider than the 5 m within which sortie counts a lane flown (flown_work)
            "NAV_ACC_RAD": 2.0},
}
#: ArduCopter's reserves of the "sortie" preset, as fractions of BATT_CAPACITY (set when the pack is known).
SORTIE_RESERVES: dict[str, float] = {"BATT_LOW_MAH": 0.20, "BATT_CRT_MAH": 0.10}
FAILSAFE_PRESETS = ("sitl", "sortie")


class SimParams:
    """One vehicle's parameter table; ``vehicle`` is the ``SimVehicle`` that sends the answers."""

    def __init__(self, dialect: str, overrides: Mapping[str, float] | None = None) -> None:
        self._values: dict[str, float] = {k: _f32(v) for k, v in DEFAULTS[dialect].items()}
        for name, value in (overrides or {}).items():
            self._values[name] = _f32(value)
        self._lock = threading.Lock()

    def values(self) -> dict[str, float]:
        with self._lock:
            return dict(self._values)

    def get(self, name: str, default: float = 0.0) -> float:
        with self._lock:
            return self._values.get(name, default)

    def set(self, name: str, value: float) -> None:
        """Set a parameter from inside the simulator (as a parameter file loaded at boot would)."""
        with self._lock:
            self._values[name] = _f32(value)

    def on_set(self, vehicle: Any, msg: Any) -> None:
        name = _name(msg.param_id)
        with self._lock:
            if name not in self._values:
                return
            self._values[name] = _f32(msg.param_value)
        vehicle.log(f"param {name} = {msg.param_value:g}")
        self._answer(vehicle, name)

    def on_read(self, vehicle: Any, msg: Any) -> None:
        name = _name(msg.param_id)
        with self._lock:
            names = sorted(self._values)
        if not name and 0 <= int(msg.param_index) < len(names):
            name = names[int(msg.param_index)]  # read by index (param_id empty)
        if name in names:
            self._answer(vehicle, name)

    def _answer(self, vehicle: Any, name: str) -> None:
        with self._lock:
            names = sorted(self._values)
            value = self._values[name]
        index = names.index(name)
        vehicle.send(lambda m: m.param_value_send(name.encode("ascii"), value, _M.MAV_PARAM_TYPE_REAL32, len(names), index))


def _name(raw: Any) -> str:
    text = raw if isinstance(raw, str) else bytes(raw).decode("ascii", "replace")
    return text.rstrip("\x00")


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]
