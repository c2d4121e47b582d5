"""The simulated ArduPilot's pre-arm checks: whether it may arm, why not, and when it says so.

``AP_Arming`` runs its pre-arm checks continuously (``AP_Arming::update``) and reports the
first failing one as "PreArm: <reason>" (``AP_Arming::check_failed``, severity CRITICAL)
every PREARM_DISPLAY_PERIOD (30 s) while they fail, and again whenever an arm is refused
(``AP_Arming::arm`` → ``pre_arm_checks(report=true)``). The simulator's checks:

- the vehicle's own readiness: ``prearm_s`` seconds of its clock after boot (FACTS.md: SITL
  passes ~20–60 s after boot; None: never), failing with ``reason`` until then ("AHRS:
  waiting for home" from ``AP_Arming::gps_checks`` by default);
- the battery's arming minimums (``AP_BattMonitor_Backend::arming_checks``): BATT_ARM_MAH
  left, BATT_ARM_VOLT.
"""

from __future__ import annotations

from typing import Any

from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants only)

__all__ = ["PreArm", "PREARM_REASON", "PREARM_DISPLAY_S"]

PREARM_REASON = "AHRS: waiting for home"
PREARM_DISPLAY_S = 30.0  # AP_Arming PREARM_DISPLAY_PERIOD


class PreArm:
    """One vehicle's pre-arm state; ``vehicle`` is the ``SimVehicle`` (its clock, parameters, battery)."""

    def __init__(self, reason: str = PREARM_REASON) -> None:
        self.reason = reason
        self.last_text_s = 0.0

    def failure(self, vehicle: Any) -> str | None:
        """The failing check's reason, or None when every check passes."""
        if vehicle.prearm_s is None or not vehicle.booted or vehicle.clock_s - vehicle.boot_clock_s < vehicle.prearm_s:
            return self.reason
        monitor = getattr(vehicle.flight, "monitor", None)
        if monitor is None:
            return None
        arm_mah = vehicle.params.get("BATT_ARM_MAH", 0.0)
        if arm_mah > 0 and monitor.capacity_mah - monitor.consumed_mah < arm_mah:
            return "Battery 1 below minimum arming capacity"
        arm_volt = vehicle.params.get("BATT_ARM_VOLT", 0.0)
        if arm_volt > 0 and monitor.voltage < arm_volt:
            return "Battery 1 below minimum arming voltage"
        return None

    def report(self, vehicle: Any) -> None:
        """``AP_Arming::update``: the failing check every PREARM_DISPLAY_PERIOD of the vehicle's clock (ArduPilot)."""
        if vehicle.dialect != "ardupilot" or vehicle.clock_s - self.last_text_s < PREARM_DISPLAY_S:
            return
        self.last_text_s = vehicle.clock_s
        reason = self.failure(vehicle)
        if reason is not None:
            self.say(vehicle, reason)

    def say(self, vehicle: Any, reason: str) -> None:
        text = f"PreArm: {reason}".encode("utf-8")[:50]
        vehicle.broadcast(lambda m: m.statustext_send(_M.MAV_SEVERITY_CRITICAL, text))
