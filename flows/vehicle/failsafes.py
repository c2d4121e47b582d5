"""Naming a failsafe from what the vehicle said: its STATUSTEXT and its battery's charge state.

Why: a vehicle that leaves its mission on its own (AUTO → RTL or LAND with no
recall of ours) did so for a reason the autopilot announces, and an end state
that only says "switched from AUTO to RTL at item 9" hides that the battery ran
low (issue 42). The name is a fact about the flight, for the end state and the
report; **nothing is ever sent because of it** (telemetry is data).

What ArduCopter 4.6.3 says (``ArduCopter/events.cpp``):

- ``Copter::announce_failsafe(type, action)`` sends ``"<type> Failsafe"`` or
  ``"<type> Failsafe - <action>"`` at WARNING, for the types ``Radio``,
  ``Battery``, ``GCS`` and the combined ``Radio + Battery`` / ``GCS + Battery``
  (``failsafe_radio_on_event``, ``handle_battery_failsafe``,
  ``failsafe_gcs_on_event``); ``"... Failsafe Cleared"`` when it ends
  (``failsafe_radio_off_event``, ``failsafe_gcs_off_event``). A clearing is
  not a failsafe, but it proves one was raised: a GCS failsafe fires during a
  telemetry gap, where its announcement is lost, so ``failsafe_cleared``
  names the failsafe a clearing heard after a gap ends (observed on the 4.6.3
  SITL: only "GCS Failsafe Cleared" reached the ground station);
- ``Copter::failsafe_ekf_event`` (``ekf_check.cpp``): ``"EKF Failsafe: changed
  to <mode> Mode"``; ``"Failsafe: Terrain data missing"`` (``events.cpp``);
- BATTERY_STATUS ``charge_state`` is ``AP_BattMonitor::get_mavlink_charge_state``:
  LOW / CRITICAL while the battery failsafe is raised, so a battery failsafe is
  known even when its text was lost.

PX4's commander announces "Failsafe activated: …" and low/critical battery
warnings; those are named ``FAILSAFE`` / ``FAILSAFE_BATTERY`` the same way.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pymavlink.dialects.v20 import common as _M

__all__ = ["FAILSAFE_NAMES", "failsafe_of_text", "failsafe_cleared", "failsafes_said", "failsafe_of_charge_state",
           "first_failsafe"]

#: The names an end state and a report use, with what each means.
FAILSAFE_NAMES = {
    "FAILSAFE_BATTERY": "the vehicle's battery failsafe (BATT_FS_LOW_ACT / BATT_FS_CRT_ACT) took over",
    "FAILSAFE_GCS": "the vehicle's ground-station failsafe (FS_GCS_ENABLE) took over: it stopped hearing its GCS",
    "FAILSAFE_RADIO": "the vehicle's radio (RC) failsafe took over",
    "FAILSAFE_EKF": "the vehicle's EKF (navigation) failsafe took over",
    "FAILSAFE_TERRAIN": "the vehicle's terrain failsafe took over (terrain data missing)",
    "FAILSAFE": "a failsafe of the vehicle took over",
}

# "<type> Failsafe" or "<type> Failsafe - <action>" (Copter::announce_failsafe), never "... Failsafe Cleared"
_ANNOUNCED = re.compile(r"^(Radio|Battery|GCS|Radio \+ Battery|GCS \+ Battery) Failsafe(?: - .*)?$")
_TYPE = {"Radio": "FAILSAFE_RADIO", "Battery": "FAILSAFE_BATTERY", "GCS": "FAILSAFE_GCS",
         "Radio + Battery": "FAILSAFE_BATTERY", "GCS + Battery": "FAILSAFE_BATTERY"}


def failsafe_of_text(text: str) -> str | None:
    """The failsafe a STATUSTEXT announces (``FAILSAFE_NAMES``), or None (a clearing is not a failsafe)."""
    text = text.strip()
    if text.endswith("Cleared"):
        return None
    m = _ANNOUNCED.match(text)
    if m is not None:
        return _TYPE[m.group(1)]
    if text.startswith("EKF Failsafe"):
        return "FAILSAFE_EKF"
    if text.startswith("Failsafe: Terrain"):
        return "FAILSAFE_TERRAIN"
    lowered = text.lower()
    if "battery" in lowered and ("critical" in lowered or "low battery" in lowered or "emergency" in lowered):
        return "FAILSAFE_BATTERY"  # PX4 commander: "Low battery level! Return advised", "Critical battery level! …"
    if lowered.startswith("failsafe activated"):
        return "FAILSAFE"  # PX4 commander's generic announcement
    return None


def failsafe_cleared(text: str) -> str | None:
    """The failsafe a "<type> Failsafe Cleared" STATUSTEXT ends (``Copter::failsafe_gcs_off_event``, …), or None."""
    text = text.strip()
    if not text.endswith(" Cleared"):
        return None
    return failsafe_of_text(text.removesuffix(" Cleared"))


def failsafes_said(text: str, known: Iterable[str]) -> list[tuple[str, str]]:
    """(name, evidence) of the failsafe one STATUSTEXT announces, or of one its clearing proves was raised unheard
    (not already ``known``)."""
    named = failsafe_of_text(text)
    if named is not None:
        return [(named, f"the vehicle said {text!r}")]
    ended = failsafe_cleared(text)
    if ended is not None and ended not in set(known):
        return [(ended, f"the vehicle said {text!r} (the failsafe was raised while it was not heard)")]
    return []


def failsafe_of_charge_state(charge_state: int) -> str | None:
    """FAILSAFE_BATTERY when BATTERY_STATUS says LOW, CRITICAL or EMERGENCY (ArduPilot raises them with its battery
    failsafe: ``AP_BattMonitor::get_mavlink_charge_state``), else None."""
    if charge_state in (_M.MAV_BATTERY_CHARGE_STATE_LOW, _M.MAV_BATTERY_CHARGE_STATE_CRITICAL,
                        _M.MAV_BATTERY_CHARGE_STATE_EMERGENCY):
        return "FAILSAFE_BATTERY"
    return None


def first_failsafe(texts: Iterable[str], charge_states: Iterable[int] = ()) -> str | None:
    """The failsafe named by the first announcing text, else by a battery charge state, else None."""
    for text in texts:
        name = failsafe_of_text(text)
        if name is not None:
            return name
    for state in charge_states:
        name = failsafe_of_charge_state(int(state))
        if name is not None:
            return name
    return None
