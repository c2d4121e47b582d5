"""Energy and time per leg for a multirotor, calibrated from its spec sheet and the wind.

The model (documented here because every figure in a plan comes from it):

* **Calibration.** Two spec figures fix the power curve: hover power
  ``P_hover = E_battery / hover endurance`` and cruise power
  ``P_cruise = E_battery / flight endurance`` at the drone's cruise speed
  (FACTS.md "Multirotor energy"; Matrice 30T: 263.2 Wh, 41 min / 36 min →
  ≈385 W cruise, ≈439 W hover).
* **Power against airspeed** ``v`` follows the shape of Zeng, Xu & Zhang (IEEE
  TWC 18(4) 2019, eq. 12) with the blade-profile term folded into the others:
  ``P(v) = P_hover · ι(v) + k · v³`` where
  ``ι(v) = sqrt(sqrt(1 + v⁴ / 4v₀⁴) − v² / 2v₀²)`` is the induced-power ratio
  (``v₀`` = mean rotor induced velocity in hover, 4.03 m/s in Zeng's example)
  and ``k`` is the parasite coefficient chosen so that ``P(V_cruise) = P_cruise``
  (clamped at 0). Power first drops with speed (translational lift), then
  rises with its cube.
* **Wind.** The drone holds its ground velocity; the air moves with the wind,
  so the airspeed is ``|v_ground − v_wind|``. A head wind raises the airspeed and
  the power for the same ground time; a tail wind lowers it. Wind speed is taken
  at the forecast level closest to the flight altitude (10, 80 or 120 m),
  direction from ``wind_direction_10m`` (meteorological: where it blows FROM).
  Hovering in wind flies at airspeed = wind speed.
* **Climb and descent** at fixed vertical speeds with hover power scaled by
  ``CLIMB_POWER_FACTOR`` / ``DESCENT_POWER_FACTOR`` (a mass-free approximation;
  the spec sheet gives no mass).

Example::

    >>> from planner.world.model import Camera, Drone
    >>> from datetime import datetime, timezone
    >>> d = Drone("D", "M30T", "A", "t", frozenset(), 263.2, 100, 2460, 2160, 12.0, 7.0, 12.0,
    ...           -20, 50, None, Camera(84, 66), "ONLINE", datetime(2026, 1, 1, tzinfo=timezone.utc),
    ...           "ardupilot", "udp:127.0.0.1:14550")
    >>> m = EnergyModel.for_drone(d, None)
    >>> round(m.power_w(12.0)), round(m.power_w(0.0))
    (385, 439)
    >>> c = m.leg(1200.0, 12.0, heading_deg=90.0)
    >>> round(c.duration_s), round(c.energy_wh, 2)
    (100, 10.7)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from planner.errors import InvalidArgument
from planner.world.model import Drone, WeatherHour

__all__ = [
    "cold_derating",
    "usable_energy_wh",
    "LegCost",
    "EnergyModel",
    "INDUCED_VELOCITY_MPS",
    "CLIMB_POWER_FACTOR",
    "DESCENT_POWER_FACTOR",
    "CLIMB_SPEED_MPS",
    "DESCENT_SPEED_MPS",
    "wind_at_altitude",
    "wind_level_mps",
]

INDUCED_VELOCITY_MPS = 4.03
CLIMB_SPEED_MPS = 4.0
DESCENT_SPEED_MPS = 3.0
CLIMB_POWER_FACTOR = 1.2
DESCENT_POWER_FACTOR = 0.8
_WIND_LEVELS = ((10.0, "wind_speed_10m_mps"), (80.0, "wind_speed_80m_mps"), (120.0, "wind_speed_120m_mps"))

XY = tuple[float, float]


@dataclass(frozen=True)
class LegCost:
    """Duration and energy of a leg (or a sum of legs)."""

    duration_s: float
    energy_wh: float

    def __add__(self, other: LegCost) -> LegCost:
        return LegCost(self.duration_s + other.duration_s, self.energy_wh + other.energy_wh)


ZERO = LegCost(0.0, 0.0)


def usable_energy_wh(battery_wh: float, battery_pct: float, reserve_fraction: float, derating: float = 1.0) -> float:
    """Energy a sortie may use: the charge now, less the reserve that must remain at landing,
    times the cold ``derating`` (lithium cells give less below freezing).

    The one definition: the planner routes within it and the battery_reserve rule
    judges against it, so what is planned passes.
    """
    return battery_wh * (battery_pct / 100.0) * (1.0 - reserve_fraction) * derating


def cold_derating(temperatures_c: Iterable[float | None], *, cold_below_c: float, derating: float,
                  when_unknown: bool) -> float:
    """``derating`` when the coldest of ``temperatures_c`` is strictly below ``cold_below_c``
    (``None`` values are unknown hours and skipped), or when no temperature is known and
    ``when_unknown``; else 1. Which hours count is the caller's: the rule takes a sortie's,
    the planner the whole flight window (which holds every sortie's)."""
    known = [t for t in temperatures_c if t is not None]
    if not known:
        return derating if when_unknown else 1.0
    return derating if min(known) < cold_below_c else 1.0


def wind_level_mps(hour: WeatherHour, altitude_m: float) -> tuple[float, float] | None:
    """(wind m/s, level m) at the forecast level nearest ``altitude_m`` that has a value; ties go up.

    The one choice of level: the planner's energy and wind limits and the weather
    rule all read the wind here. ``None`` when the hour has no wind speed at all.
    """
    have = [(lvl, getattr(hour, name)) for lvl, name in _WIND_LEVELS]
    have = [(lvl, v) for lvl, v in have if v is not None and math.isfinite(v)]
    if not have:
        return None
    lvl, value = min(have, key=lambda lv: (abs(lv[0] - altitude_m), -lv[0]))
    return float(value), lvl


def wind_at_altitude(hour: WeatherHour | None, altitude_m: float) -> tuple[float, float]:
    """(speed m/s, FROM direction degrees) at the forecast level ``wind_level_mps`` picks.

    No wind data at all → calm (0, 0).
    """
    level = None if hour is None else wind_level_mps(hour, altitude_m)
    if level is None:
        return 0.0, 0.0
    speed = level[0]
    direction = hour.wind_direction_10m_deg  # type: ignore[union-attr]
    if direction is None or not math.isfinite(direction):
        direction = 0.0
    return max(0.0, float(speed)), float(direction) % 360.0


@dataclass(frozen=True)
class EnergyModel:
    """Calibrated power curve of one drone plus the wind vector for one flight.

    ``wind_east_mps``/``wind_north_mps`` is where the air moves TO (metres per
    second in the local east/north frame).
    """

    hover_power_w: float
    cruise_power_w: float
    cruise_speed_mps: float
    parasite_coeff: float
    wind_east_mps: float = 0.0
    wind_north_mps: float = 0.0
    battery_wh: float = 0.0

    @classmethod
    def for_drone(cls, drone: Drone, weather_hour: WeatherHour | None, altitude_m: float = 50.0) -> EnergyModel:
        """Calibrate from ``drone``'s spec and take the wind of ``weather_hour`` at ``altitude_m``."""
        for name in ("battery_wh", "flight_time_s", "hover_time_s", "cruise_speed_mps"):
            v = getattr(drone, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise InvalidArgument(f"drone {drone.id}: {name} must be > 0 to plan energy, got {v!r}")
        p_hover = drone.hover_power_w
        p_cruise = drone.cruise_power_w
        v_c = float(drone.cruise_speed_mps)
        k = max(0.0, (p_cruise - p_hover * _induced_ratio(v_c)) / v_c**3)
        speed, from_deg = wind_at_altitude(weather_hour, altitude_m)
        to = math.radians(from_deg + 180.0)
        return cls(
            hover_power_w=p_hover,
            cruise_power_w=p_cruise,
            cruise_speed_mps=v_c,
            parasite_coeff=k,
            wind_east_mps=speed * math.sin(to),
            wind_north_mps=speed * math.cos(to),
            battery_wh=float(drone.battery_wh),
        )

    @property
    def wind_speed_mps(self) -> float:
        return math.hypot(self.wind_east_mps, self.wind_north_mps)

    def power_w(self, airspeed_mps: float) -> float:
        """Electrical power at ``airspeed_mps`` in level flight."""
        v = max(0.0, float(airspeed_mps))
        return self.hover_power_w * _induced_ratio(v) + self.parasite_coeff * v**3

    def powers_w(self, airspeeds_mps: np.ndarray) -> np.ndarray:
        """``power_w`` for an array of airspeeds (``planner.flight.power`` integrates over a whole flight)."""
        v = np.maximum(0.0, np.asarray(airspeeds_mps, dtype=float))
        r = v * v / (2.0 * INDUCED_VELOCITY_MPS**2)
        return self.hover_power_w * np.sqrt(np.maximum(0.0, np.sqrt(1.0 + r * r) - r)) + self.parasite_coeff * v**3

    def airspeed_mps(self, ground_speed_mps: float, heading_deg: float | None) -> float:
        """Airspeed when flying ``ground_speed_mps`` towards ``heading_deg`` (clockwise from north).

        Without a heading the wind is taken as a direct head wind (the safe side).
        """
        if heading_deg is None:
            return ground_speed_mps + self.wind_speed_mps
        h = math.radians(heading_deg)
        ge, gn = ground_speed_mps * math.sin(h), ground_speed_mps * math.cos(h)
        return math.hypot(ge - self.wind_east_mps, gn - self.wind_north_mps)

    def leg(
        self,
        distance_m: float,
        speed_mps: float,
        *,
        heading_deg: float | None = None,
        climb_m: float = 0.0,
        hold_s: float = 0.0,
    ) -> LegCost:
        """Cost of flying ``distance_m`` at ground speed ``speed_mps`` towards ``heading_deg``,
        plus a vertical change of ``climb_m`` (negative = descent) and a hover of ``hold_s``."""
        if not (math.isfinite(distance_m) and distance_m >= 0):
            raise InvalidArgument(f"distance_m must be >= 0, got {distance_m}")
        if not (math.isfinite(hold_s) and hold_s >= 0):
            raise InvalidArgument(f"hold_s must be >= 0, got {hold_s}")
        if not math.isfinite(climb_m):
            raise InvalidArgument(f"climb_m must be finite, got {climb_m}")
        cost = ZERO
        if distance_m > 0:
            if not (math.isfinite(speed_mps) and speed_mps > 0):
                raise InvalidArgument(f"speed_mps must be > 0 to fly {distance_m:.1f} m, got {speed_mps}")
            t = distance_m / speed_mps
            p = self.power_w(self.airspeed_mps(speed_mps, heading_deg))
            cost += LegCost(t, p * t / 3600.0)
        if climb_m > 0:
            t = climb_m / CLIMB_SPEED_MPS
            cost += LegCost(t, self.power_w(self.wind_speed_mps) * CLIMB_POWER_FACTOR * t / 3600.0)
        elif climb_m < 0:
            t = -climb_m / DESCENT_SPEED_MPS
            cost += LegCost(t, self.power_w(self.wind_speed_mps) * DESCENT_POWER_FACTOR * t / 3600.0)
        if hold_s > 0:
            cost += LegCost(hold_s, self.power_w(self.wind_speed_mps) * hold_s / 3600.0)
        return cost

    def segment(self, a: XY, b: XY, speed_mps: float) -> LegCost:
        """Cost of the straight local-frame segment a → b (heading from the geometry)."""
        dx, dy = b[0] - a[0], b[1] - a[1]
        d = math.hypot(dx, dy)
        if d == 0:
            return ZERO
        return self.leg(d, speed_mps, heading_deg=math.degrees(math.atan2(dx, dy)) % 360.0)

    def polyline(self, points: Sequence[XY], speed_mps: float) -> LegCost:
        """Cost of a local-frame polyline flown at ``speed_mps``."""
        total = ZERO
        for a, b in zip(points, points[1:]):
            total += self.segment(a, b, speed_mps)
        return total

    def battery_fraction(self, energy_wh: float) -> float:
        """Share of the full battery that ``energy_wh`` uses."""
        return energy_wh / self.battery_wh if self.battery_wh > 0 else math.inf


def _induced_ratio(v: float) -> float:
    """Induced power at airspeed v relative to hover (Zeng et al. eq. 12 middle term)."""
    r = v * v / (2.0 * INDUCED_VELOCITY_MPS**2)
    return math.sqrt(max(0.0, math.sqrt(1.0 + r * r) - r))
