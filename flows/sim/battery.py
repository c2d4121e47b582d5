"""The simulated vehicle's battery: drained by the power the flight draws, read as an autopilot reads it.

Two halves, as on a real vehicle and in SITL:

- **the pack** (``libraries/SITL/SIM_Battery.cpp``): a charge in ampere-hours and a
  resting voltage from the state of charge (SITL's single-cell table × cells, from
  4.173 V full), less the current × internal resistance. The current is the
  power drawn over the voltage. The power comes from the drone's two figures
  (FACTS.md "Multirotor energy": P_hover = E / hover endurance, P_cruise =
  E / flight endurance) through a rotorcraft power curve (Zeng, Xu, Zhang,
  IEEE TWC 18(4) 2019, eq. 12 shape): induced power falls from its hover value
  as forward speed rises, parasitic power grows with v³, fitted so the curve
  passes through both figures — hover-dominated when slow — and a climb adds
  induced power. A flight that dawdles at waypoints therefore drains like a
  hover, not like a cruise.
- **the monitor** (``libraries/AP_BattMonitor``): ArduPilot integrates the current
  it measures into consumed mAh from boot (``AP_BattMonitor_Backend::update_consumed``)
  and reports the remaining percentage against BATT_CAPACITY
  (``capacity_remaining_pct``); a reboot starts the count again, so a drained pack
  reads 100 % after a reboot until the voltage says otherwise
  (FACTS.md: a rebooted vehicle's battery "starts over"). Failsafes follow
  ``AP_BattMonitor_Backend::update_failsafes``: low / critical voltage held for
  BATT_LOW_TIMER seconds, or consumed capacity past BATT_LOW_MAH / BATT_CRT_MAH;
  ``AP_BattMonitor::check_failsafes`` raises each level once while armed, with
  "Battery 1 is low 10.49V used 1234 mAh" whatever the action.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

__all__ = ["Pack", "PowerModel", "BatteryMonitor", "FAILSAFE_NONE", "FAILSAFE_LOW", "FAILSAFE_CRITICAL"]

FAILSAFE_NONE, FAILSAFE_LOW, FAILSAFE_CRITICAL = 0, 1, 2
NOMINAL_CELL_V = 3.7
FULL_CELL_V = 4.173
# SIM_Battery.cpp soc_table: (volts per cell, state of charge %)
_SOC_TABLE = ((4.173, 100.0), (4.112, 96.15), (4.085, 92.31), (4.071, 88.46), (4.039, 84.62), (3.987, 80.77),
              (3.943, 76.92), (3.908, 73.08), (3.887, 69.23), (3.854, 65.38), (3.833, 61.54), (3.801, 57.69),
              (3.783, 53.85), (3.742, 50.0), (3.715, 46.15), (3.679, 42.31), (3.636, 38.46), (3.588, 34.62),
              (3.543, 30.77), (3.503, 26.92), (3.462, 23.08), (3.379, 19.23), (3.296, 15.38), (3.218, 11.54),
              (3.165, 7.69), (3.091, 3.85), (2.977, 2.0), (2.8, 1.5), (2.7, 1.3), (2.5, 1.2), (2.3, 1.1),
              (2.1, 1.0), (1.9, 0.9), (1.6, 0.8), (1.3, 0.7), (1.0, 0.6), (0.6, 0.4), (0.3, 0.2), (0.01, 0.01),
              (0.001, 0.001))


def resting_cell_volts(charge_pct: float) -> float:
    """``Battery::get_resting_voltage`` per cell: linear between the table's rows."""
    for (v_hi, soc_hi), (v_lo, soc_lo) in zip(_SOC_TABLE, _SOC_TABLE[1:]):
        if charge_pct >= soc_lo:
            return v_lo + (charge_pct - soc_lo) / (soc_hi - soc_lo) * (v_hi - v_lo)
    return 0.001


@dataclass(frozen=True)
class PowerModel:
    """Electrical power against airspeed and climb rate, through the drone's hover and cruise figures."""

    hover_w: float
    cruise_w: float
    cruise_mps: float = 10.0
    induced_mps: float = 5.0  # mean rotor induced velocity in hover (v0 of Zeng et al.)

    @property
    def _parasitic(self) -> float:
        """The v³ coefficient that puts ``cruise_w`` at ``cruise_mps``."""
        return max(0.0, self.cruise_w - self.hover_w * self._induced(self.cruise_mps)) / self.cruise_mps ** 3

    def _induced(self, v: float) -> float:
        r = (v / self.induced_mps) ** 2
        return math.sqrt(max(0.0, math.sqrt(1.0 + r * r / 4.0) - r / 2.0))

    def power_w(self, speed_mps: float, climb_mps: float = 0.0) -> float:
        """Watts drawn at ``speed_mps`` horizontally while climbing at ``climb_mps`` (descending: as level)."""
        level = self.hover_w * self._induced(speed_mps) + self._parasitic * speed_mps ** 3
        return level * (1.0 + max(0.0, climb_mps) / (2.0 * self.induced_mps))


@dataclass
class Pack:
    """The physical pack: what is left in it, and its voltage under a current."""

    capacity_ah: float
    cells: int = 3
    charge_ah: float = 0.0
    resistance_ohm: float = 0.01  # SIM_Frame refBatRes

    @classmethod
    def of(cls, energy_wh: float, charge_pct: float, cells: int) -> "Pack":
        capacity = energy_wh / (NOMINAL_CELL_V * cells)
        return cls(capacity_ah=capacity, cells=cells, charge_ah=capacity * max(0.0, min(100.0, charge_pct)) / 100.0)

    @property
    def charge_pct(self) -> float:
        return 100.0 * self.charge_ah / self.capacity_ah if self.capacity_ah > 0 else 0.0

    def volts(self, current_a: float = 0.0) -> float:
        return max(0.0, resting_cell_volts(self.charge_pct) * self.cells - current_a * self.resistance_ohm)

    def draw(self, power_w: float, dt: float) -> float:
        """Draw ``power_w`` for ``dt`` seconds; returns the current (A)."""
        v = max(self.volts(), 0.5 * self.cells)
        current = power_w / v
        self.charge_ah = max(0.0, self.charge_ah - current * dt / 3600.0)
        return current


@dataclass
class BatteryMonitor:
    """What the autopilot knows of the pack: consumed mAh since boot, voltage, failsafe level."""

    capacity_mah: float
    consumed_mah: float = 0.0
    consumed_wh: float = 0.0
    voltage: float = 0.0
    current_a: float = 0.0
    failsafe: int = FAILSAFE_NONE
    _low_since_s: float | None = None
    _critical_since_s: float | None = None
    raised: list[int] = field(default_factory=list)

    @property
    def remaining_pct(self) -> float:
        """``AP_BattMonitor::capacity_remaining_pct``: from consumed mAh against BATT_CAPACITY."""
        if self.capacity_mah <= 0:
            return 0.0
        return max(0.0, min(100.0, 100.0 * (1.0 - self.consumed_mah / self.capacity_mah)))

    def measure(self, voltage: float, current_a: float, dt: float) -> None:
        """``AP_BattMonitor_Backend::update_consumed``."""
        self.voltage, self.current_a = voltage, current_a
        mah = current_a * dt / 3.6
        self.consumed_mah += mah
        self.consumed_wh += 0.001 * mah * voltage

    def check(self, params: Mapping[str, float], clock_s: float, armed: bool) -> int | None:
        """``update_failsafes`` + ``check_failsafes``: the new failsafe level when it rises (armed only), else None."""
        timer = params.get("BATT_LOW_TIMER", 10.0)
        low_v, crt_v = params.get("BATT_LOW_VOLT", 10.5), params.get("BATT_CRT_VOLT", 0.0)
        low_mah, crt_mah = params.get("BATT_LOW_MAH", 0.0), params.get("BATT_CRT_MAH", 0.0)
        remaining = self.capacity_mah - self.consumed_mah
        self._critical_since_s = _held_since(crt_v > 0 and self.voltage < crt_v, self._critical_since_s, clock_s)
        self._low_since_s = _held_since(low_v > 0 and self.voltage < low_v, self._low_since_s, clock_s)
        level = FAILSAFE_NONE
        if (self._critical_since_s is not None and timer > 0 and clock_s - self._critical_since_s > timer) or (
                crt_mah > 0 and remaining < crt_mah):
            level = FAILSAFE_CRITICAL
        elif (self._low_since_s is not None and timer > 0 and clock_s - self._low_since_s > timer) or (
                low_mah > 0 and remaining < low_mah):
            level = FAILSAFE_LOW
        if not armed or level <= self.failsafe:
            return None
        self.failsafe = level
        self.raised.append(level)
        return level

    def text(self, level: int) -> str:
        """The STATUSTEXT ``AP_BattMonitor::check_failsafes`` sends when a level is raised."""
        kind = "critical" if level == FAILSAFE_CRITICAL else "low"
        return f"Battery 1 is {kind} {self.voltage:.2f}V used {self.consumed_mah:.0f} mAh"


def _held_since(condition: bool, since: float | None, now: float) -> float | None:
    if not condition:
        return None
    return now if since is None else since
