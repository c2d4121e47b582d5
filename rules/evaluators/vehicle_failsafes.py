"""vehicle_failsafes: what the vehicle does alone when its battery or its ground-station link fails.

Why: those are the vehicle's own parameters, and with the ArduCopter SITL
defaults (BATT_FS_LOW_ACT 0, FS_GCS_ENABLE 0) a flight went to 0 % battery in
the air and a lost link left the vehicle flying on (issue 42, FACTS.md
"Failsafes are parameters"). One finding per parameter that does not meet the
rule, each naming the parameter, the vehicle's value and what is needed.

What the values mean (the autopilots' own parameter documentation):

- ArduCopter ``BATT_FS_LOW_ACT`` / ``BATT_FS_CRT_ACT``
  (``libraries/AP_BattMonitor/AP_BattMonitor_Params.cpp``): 0 None, 1 Land,
  2 RTL, 3 SmartRTL or RTL, 4 SmartRTL or Land, 5 Terminate, 6 Auto
  DO_LAND_START or RTL, 7 Brake or Land; the low failsafe triggers only with
  ``BATT_LOW_VOLT`` or ``BATT_LOW_MAH`` above 0
  (``AP_BattMonitor_Backend::update_failsafes``);
- ArduCopter ``FS_GCS_ENABLE`` (``ArduCopter/Parameters.cpp``): 0 disabled, any
  other value an action; ``RTL_ALT`` in centimetres above home;
- PX4 ``COM_LOW_BAT_ACT`` (commander): 0 warning only, 1 Return, 2 Land,
  3 Return at critical then land at emergency; ``BAT_LOW_THR`` the trigger;
  ``NAV_DLL_ACT`` (data link loss): 0 disabled, 1 Hold, 2 Return, 3 Land,
  5 Terminate, 6 Disarm; ``RTL_RETURN_ALT`` in metres.

A drone whose state comes from its link (``Drone.live``) and that did not report
a parameter blocks, named; a drone known only from the fleet file passes here —
the launch reads the vehicle.
"""

from __future__ import annotations

from collections.abc import Mapping

from planner.plan import Sortie
from rules.evaluators._common import Env, make_finding
from rules.findings import Finding
from rules.schema import VehicleFailsafesRule

__all__ = ["evaluate", "ARDUPILOT_BATTERY_ACTION", "PX4_BATTERY_ACTION", "PX4_LINK_ACTION"]

#: ArduCopter BATT_FS_*_ACT / FS_GCS_ENABLE value → what the vehicle does, by class.
ARDUPILOT_BATTERY_ACTION = {0: "NONE", 1: "LAND", 2: "RTL", 3: "RTL", 4: "LAND", 5: "TERMINATE", 6: "RTL", 7: "LAND"}
_ARDUPILOT_GCS_ACTION = {0: "NONE", 1: "RTL", 2: "RTL", 3: "RTL", 4: "LAND", 5: "LAND", 6: "RTL", 7: "LAND"}
#: PX4 COM_LOW_BAT_ACT and NAV_DLL_ACT value → class.
PX4_BATTERY_ACTION = {0: "NONE", 1: "RTL", 2: "LAND", 3: "RTL"}
PX4_LINK_ACTION = {0: "NONE", 1: "NONE", 2: "RTL", 3: "LAND", 5: "TERMINATE", 6: "TERMINATE"}

_BAD = (
    "Sortie {sortie}: drone {drone_id} has {quantity} = {measured}{detail}; the mission needs {limit}.",
    "第{sortie}架次：无人机 {drone_id} 的 {quantity} = {measured}{detail_zh}；任务要求 {limit}。",
)
_MISSING = (
    "Sortie {sortie}: drone {drone_id} did not report {quantity}: whether its failsafe acts is unknown.",
    "第{sortie}架次：无人机 {drone_id} 未报告 {quantity}：无法确定其失效保护是否生效。",
)


def _names(dialect: str) -> dict[str, str]:
    if dialect == "px4":
        return {"low": "COM_LOW_BAT_ACT", "critical": "COM_LOW_BAT_ACT", "gcs": "NAV_DLL_ACT", "rtl_alt": "RTL_RETURN_ALT"}
    return {"low": "BATT_FS_LOW_ACT", "critical": "BATT_FS_CRT_ACT", "gcs": "FS_GCS_ENABLE", "rtl_alt": "RTL_ALT"}


def _classify(name: str, value: float) -> str:
    table = {"COM_LOW_BAT_ACT": PX4_BATTERY_ACTION, "NAV_DLL_ACT": PX4_LINK_ACTION,
             "FS_GCS_ENABLE": _ARDUPILOT_GCS_ACTION}.get(name, ARDUPILOT_BATTERY_ACTION)
    return table.get(int(value), "RTL" if name == "FS_GCS_ENABLE" else "UNKNOWN")  # ArduCopter: invalid GCS → RTL


def _trigger_missing(params: Mapping[str, float], dialect: str) -> str | None:
    """Why the low-battery failsafe can never trigger, or None."""
    if dialect == "px4":
        thr = params.get("BAT_LOW_THR")
        return None if thr is None or thr > 0 else "BAT_LOW_THR is 0"
    volt, mah = params.get("BATT_LOW_VOLT"), params.get("BATT_LOW_MAH")
    if volt is None and mah is None:
        return None  # not read: the action's finding says enough
    if (volt or 0.0) <= 0 and (mah or 0.0) <= 0:
        return "BATT_LOW_VOLT and BATT_LOW_MAH are 0"
    return None


def evaluate(rule: VehicleFailsafesRule, sortie: Sortie, env: Env) -> list[Finding]:
    drone = env.drone(sortie)
    if drone is None or not drone.live:
        return []
    p, params, names = rule.params, drone.vehicle_params, _names(drone.autopilot)
    out: list[Finding] = []

    def missing(name: str, unit: str = "") -> None:
        out.append(make_finding(rule, _MISSING, sortie=sortie, measured="UNKNOWN", limit=None, unit=unit,
                                quantity=name, quantity_zh=name))

    def bad(name: str, measured: float | str, limit: str, detail: str = "", unit: str = "") -> None:
        out.append(make_finding(rule, _BAD, sortie=sortie, measured=measured, limit=limit, unit=unit, quantity=name,
                                quantity_zh=name, detail=detail and f" ({detail})", detail_zh=detail and f"（{detail}）"))

    checks = [("low", p.battery_actions), ("critical", p.critical_actions)]
    for key, allowed in checks:
        name = names[key]
        if key == "critical" and names["critical"] == names["low"]:
            continue  # PX4: one parameter for both
        value = params.get(name)
        if value is None:
            missing(name)
            continue
        action = _classify(name, value)
        if action not in allowed:
            bad(name, value, " or ".join(allowed), f"{action.lower()} on a {key} battery")
        elif key == "low":
            why = _trigger_missing(params, drone.autopilot)
            if why is not None:
                bad(name, value, "a low-battery trigger", f"{why}: the failsafe never triggers")
    if p.gcs_failsafe:
        name = names["gcs"]
        value = params.get(name)
        if value is None:
            missing(name)
        elif _classify(name, value) in ("NONE", "UNKNOWN"):
            bad(name, value, "a ground-station failsafe", "disabled: a lost link leaves it flying its mission")
    if p.rtl_alt_margin_m is not None:
        name = names["rtl_alt"]
        value = params.get(name)
        highest = max((wp.alt_m for leg in sortie.legs for wp in leg.waypoints if wp.action not in ("TAKEOFF", "LAND")),
                      default=0.0)
        need = highest + p.rtl_alt_margin_m
        if value is None:
            missing(name, "m")
        else:
            alt_m = value / 100.0 if name == "RTL_ALT" else value
            if alt_m < need:
                bad(name, round(alt_m, 2), f"at least {need:g} m", "the return altitude, below the mission's "
                    f"highest waypoint {highest:g} m above ground", "m")
    return out
