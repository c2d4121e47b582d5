"""``PlanningLimits``: the limits a plan is made inside, handed in by whoever holds the rule set.

The rules judge every plan; a planner with limits of its own would make plans
the rules then block (or plan timidly inside limits the rules do not have).
So the planner owns no safety figure: ``rules.derived_limits.planning_limits`` derives
this value from the LOADED rule set (and the world's optional site limits) and
the caller passes it to ``planner.mission.plan_mission``. Changing a limit is a
change to the rule file, and the next plan follows it.

What each field comes from (``rules.derived_limits`` has the exact derivation):

* ``safety_margin_m`` — the geozone_clearance ``buffer_m``: how far transits and
  work keep from a zone that blocks.
* ``ceiling_m``/``floor_m`` — the altitude_ceiling band the flight altitude must
  sit in; the ceiling is also the vehicle's altitude fence.
* ``reserves`` — one ``EnergyReserve`` per battery_reserve rule: the share of
  the charge a sortie must leave, and the cold derating.
* ``wind_margin_mps``/``gust_margin_mps`` — the weather rule's margins under
  min(drone, dock) wind limit; a drone whose flight window is windier is not
  used. ``None``: the rule set does not check that quantity.

The defaults are the limits of an EMPTY rule set (no margin, no ceiling, no
reserve, no wind limit): a plan made with them is judged by nothing. Geometry
tests use them; every production path derives the value from its rule set.

Example::

    >>> limits = PlanningLimits(reserves=(EnergyReserve(0.25, cold_below_c=0.0, cold_derating=0.8),))
    >>> round(limits.usable_energy_wh(263.2, 100.0, temperatures_c=[3.0, -1.0]), 2)
    157.92
    >>> round(limits.usable_energy_wh(263.2, 100.0, temperatures_c=[3.0]), 1)
    197.4
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from planner.energy import cold_derating, usable_energy_wh
from planner.errors import InvalidArgument

__all__ = ["EnergyReserve", "PlanningLimits"]


@dataclass(frozen=True)
class EnergyReserve:
    """One battery_reserve rule's figures: what a sortie must leave, and the cold derating.

    ``cold_below_c`` ``None``: never derated. ``derate_when_temperature_unknown``:
    derate when the forecast has no temperature for the hours in question.
    """

    reserve_fraction: float = 0.0
    cold_below_c: float | None = None
    cold_derating: float = 1.0
    derate_when_temperature_unknown: bool = False

    def __post_init__(self) -> None:
        if not 0.0 <= self.reserve_fraction < 1.0:
            raise InvalidArgument(f"reserve_fraction must be in [0, 1), got {self.reserve_fraction}")
        if not 0.0 < self.cold_derating <= 1.0:
            raise InvalidArgument(f"cold_derating must be in (0, 1], got {self.cold_derating}")

    def derating(self, temperatures_c: Iterable[float]) -> float:
        """The factor on usable energy for a flight through hours of ``temperatures_c``."""
        if self.cold_below_c is None:
            return 1.0
        return cold_derating(
            temperatures_c,
            cold_below_c=self.cold_below_c,
            derating=self.cold_derating,
            when_unknown=self.derate_when_temperature_unknown,
        )

    def usable_energy_wh(self, battery_wh: float, battery_pct: float, temperatures_c: Iterable[float]) -> float:
        return usable_energy_wh(battery_wh, battery_pct, self.reserve_fraction, self.derating(temperatures_c))


@dataclass(frozen=True)
class PlanningLimits:
    """The rule set's limits, as the planner needs them (module docstring)."""

    safety_margin_m: float = 0.0
    ceiling_m: float | None = None
    floor_m: float = 0.0
    reserves: tuple[EnergyReserve, ...] = ()
    wind_margin_mps: float | None = None
    gust_margin_mps: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "reserves", tuple(self.reserves))
        if not (math.isfinite(self.safety_margin_m) and self.safety_margin_m >= 0):
            raise InvalidArgument(f"safety_margin_m must be >= 0 m, got {self.safety_margin_m}")
        if self.ceiling_m is not None and not self.ceiling_m > 0:
            raise InvalidArgument(f"ceiling_m must be > 0 m, got {self.ceiling_m}")
        if self.ceiling_m is not None and self.floor_m > self.ceiling_m:
            raise InvalidArgument(f"floor_m {self.floor_m:g} m is above the ceiling {self.ceiling_m:g} m")

    def usable_energy_wh(self, battery_wh: float, battery_pct: float, temperatures_c: Iterable[float]) -> float:
        """Energy a sortie may use: the least any reserve allows (``planner.energy.usable_energy_wh``)."""
        temps = tuple(temperatures_c)
        if not self.reserves:
            return usable_energy_wh(battery_wh, battery_pct, 0.0)
        return min(r.usable_energy_wh(battery_wh, battery_pct, temps) for r in self.reserves)

    def derating(self, temperatures_c: Iterable[float]) -> float:
        """The strongest cold derating of the reserves (1 without any)."""
        temps = tuple(temperatures_c)
        return min((r.derating(temps) for r in self.reserves), default=1.0)

    @property
    def reserve_fraction(self) -> float:
        """The largest reserve of the rule set (0 without a battery rule)."""
        return max((r.reserve_fraction for r in self.reserves), default=0.0)

    def check_altitude(self, altitude_m: float) -> None:
        """Raise ``InvalidArgument`` when ``altitude_m`` is outside ``[floor_m, ceiling_m]``."""
        if self.ceiling_m is not None and altitude_m > self.ceiling_m:
            raise InvalidArgument(f"altitude_m {altitude_m:g} m is above the ceiling of {self.ceiling_m:g} m AGL")
        if altitude_m < self.floor_m:
            raise InvalidArgument(f"altitude_m {altitude_m:g} m is below the floor of {self.floor_m:g} m AGL")

    def altitude_m(self, requested_m: float | None, default_m: float) -> float:
        """The flight altitude: the requested one (checked), else ``default_m`` brought inside the band."""
        if requested_m is not None:
            self.check_altitude(float(requested_m))
            return float(requested_m)
        alt = max(float(default_m), self.floor_m)
        return min(alt, self.ceiling_m) if self.ceiling_m is not None else alt

    def wind_cap_mps(self, drone_max_mps: float, dock_max_mps: float | None) -> tuple[float | None, float | None]:
        """(sustained, gust) wind a drone at a dock may plan for; ``None`` where the rules set no limit."""
        cap = min(drone_max_mps, dock_max_mps) if dock_max_mps is not None else drone_max_mps
        wind = None if self.wind_margin_mps is None else cap - self.wind_margin_mps
        gust = None if self.gust_margin_mps is None else cap - self.gust_margin_mps
        return wind, gust

    def to_dict(self) -> dict[str, object]:
        """What a plan records of the limits it was made inside."""
        return {
            "safety_margin_m": self.safety_margin_m,
            "ceiling_m": self.ceiling_m,
            "floor_m": self.floor_m,
            "reserve_fraction": self.reserve_fraction,
            "wind_margin_mps": self.wind_margin_mps,
            "gust_margin_mps": self.gust_margin_mps,
        }
