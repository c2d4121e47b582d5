"""What the simulated vehicle's failsafes decide, from its parameters: battery and ground-station link.

ArduCopter (``ArduCopter/events.cpp``, ``libraries/AP_BattMonitor``):

- battery: ``AP_BattMonitor::check_failsafes`` raises low / critical once each while armed
  (``flows.sim.battery.BatteryMonitor.check``), always saying "Battery 1 is low 10.49V used 1234 mAh";
  ``Copter::handle_battery_failsafe`` then acts as BATT_FS_LOW_ACT / BATT_FS_CRT_ACT say
  (``do_failsafe_action``: 1 LAND, 2 RTL, 3 SmartRTL or RTL, 4 SmartRTL or LAND, 6 DO_LAND_START or RTL,
  7 Brake or LAND — SmartRTL and DO_LAND_START fall back as the simulator has neither); 0 does nothing
  (SITL's default: FACTS.md, a flight went to 0 % in the air);
- GCS: ``Copter::failsafe_gcs_check`` — with FS_GCS_ENABLE set, no HEARTBEAT from SYSID_MYGCS for
  FS_GCS_TIMEOUT while armed → ``failsafe_gcs_on_event`` ("GCS Failsafe", RTL for 1–3 and 6, LAND for 4, 5, 7).
  The silence is measured on the wall clock: a ground station's heartbeat runs on it, whatever the speed-up.

PX4 (``commander``): "Low battery level! Return advised" at BAT_LOW_THR; at BAT_CRIT_THR, COM_LOW_BAT_ACT
(2 LAND, 3 RTL; 0 a warning only); the data link lost for COM_DL_LOSS_T → NAV_DLL_ACT (1 hold, 2 RTL, 3 LAND).
"""

from __future__ import annotations

from typing import Any, Iterator

from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants only)

from flows.sim.battery import FAILSAFE_CRITICAL, FAILSAFE_LOW  # noqa: E402

__all__ = ["check"]

BATTERY_ACTIONS = {1: "LAND", 2: "RTL", 3: "RTL", 4: "LAND", 6: "RTL", 7: "LAND"}  # BATT_FS_*_ACT
GCS_ACTIONS = {1: "RTL", 2: "RTL", 3: "RTL", 4: "LAND", 5: "LAND", 6: "RTL", 7: "LAND"}  # FS_GCS_ENABLE
PX4_BATTERY = {2: "LAND", 3: "RTL"}  # COM_LOW_BAT_ACT at BAT_CRIT_THR
PX4_DATALINK = {1: "LOITER", 2: "RTL", 3: "LAND"}  # NAV_DLL_ACT

Event = tuple[str, int, str, "str | None", str]  # (text to say, severity, kind, the mode to switch to, the name)


def check(flight: Any, vehicle: Any, now_wall: float) -> Iterator[Event]:
    """The failsafe events of this step: a text to say, and/or an action named ("low", "critical", "gcs")."""
    p = vehicle.params
    monitor = flight.monitor
    if vehicle.dialect == "ardupilot":
        level = monitor.check(p, vehicle.clock_s, flight.armed)
        if level is not None:
            name = "critical" if level == FAILSAFE_CRITICAL else "low"
            action = int(p.get("BATT_FS_CRT_ACT" if level == FAILSAFE_CRITICAL else "BATT_FS_LOW_ACT", 0.0))
            yield monitor.text(level), _M.MAV_SEVERITY_WARNING, "Battery", BATTERY_ACTIONS.get(action), name
        gcs_mode = GCS_ACTIONS.get(int(p.get("FS_GCS_ENABLE", 0.0)))
        timeout = p.get("FS_GCS_TIMEOUT", 5.0)
    else:
        remaining = monitor.remaining_pct / 100.0
        if monitor.failsafe < FAILSAFE_LOW and remaining < p.get("BAT_LOW_THR", 0.15):
            monitor.failsafe = FAILSAFE_LOW
            yield "Low battery level! Return advised", _M.MAV_SEVERITY_WARNING, "Battery", None, "low"
        if monitor.failsafe < FAILSAFE_CRITICAL and remaining < p.get("BAT_CRIT_THR", 0.07):
            monitor.failsafe = FAILSAFE_CRITICAL
            yield ("Critical battery level!", _M.MAV_SEVERITY_CRITICAL, "Battery",
                   PX4_BATTERY.get(int(p.get("COM_LOW_BAT_ACT", 0.0))), "critical")
        gcs_mode = PX4_DATALINK.get(int(p.get("NAV_DLL_ACT", 0.0)))
        timeout = p.get("COM_DL_LOSS_T", 10.0)
    last = flight.last_gcs_wall
    if gcs_mode and flight.armed and last is not None and now_wall - last > timeout and flight.battery_failsafe != "gcs":
        yield "", 0, "GCS", gcs_mode, "gcs"
