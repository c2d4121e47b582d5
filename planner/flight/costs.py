"""What a piece of work costs as the vehicle flies it on its own, for routers that add costs up.

A router sums per-piece costs (a lane unit, a sweep, a transit); the sortie's figures are the whole
mission flown (``planner.output.sortie_flight``). ``polyline_cost`` flies one polyline from a stop to
a stop under the vehicle's waypoint controller (``planner.flight.ardupilot`` / ``planner.flight.px4``)
and prices it with ``planner.flight.power``; pieces joined in a mission at a corner the vehicle
blends only get cheaper, so a sum of these costs does not undercount the flight. ``StraightCost``
is the same for straight flight as a per-metre figure plus what each stop (braking and accelerating
again) adds, fitted on two long legs.

Example (ArduPilot defaults, a Matrice 30T's power curve, calm air)::

    >>> from planner.energy import EnergyModel
    >>> from planner.world.nav_params import NavParams
    >>> lim = NavLimits.from_params(NavParams(), "ardupilot")
    >>> model = EnergyModel(439.0, 385.0, 12.0, 0.0, battery_wh=263.2)
    >>> c = polyline_cost([(0, 0), (0, 100), (100, 100)], 40.0, 10.0, lim, model)
    >>> round(c.duration_s, 1)
    29.2
    >>> s = StraightCost.fit(10.0, lim, model)
    >>> round(s.s_per_m, 3), round(s.stop_s, 2)
    (0.1, 6.8)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from planner.energy import EnergyModel, LegCost
from planner.flight.ardupilot import fly_auto
from planner.flight.params import NavLimits
from planner.flight.power import cumulative_wh
from planner.flight.px4 import fly_mission
from planner.flight.timeline import NavPoint

__all__ = ["polyline_cost", "StraightCost"]


def polyline_cost(points: Sequence[tuple[float, float]], altitude_m: float, speed_mps: float, lim: NavLimits,
                  model: EnergyModel) -> LegCost:
    """Seconds and Wh of flying ``points`` (metres east/north) at ``altitude_m`` and ``speed_mps``, at rest at
    both ends, as the vehicle of ``lim`` does (take-off and landing not included)."""
    pts = [(float(x), float(y)) for x, y in points]
    if len(pts) < 2:
        return LegCost(0.0, 0.0)
    nav = [NavPoint("takeoff", *pts[0], altitude_m), NavPoint("waypoint", *pts[0], altitude_m)]
    nav += [NavPoint("waypoint", x, y, altitude_m, 0.0, speed_mps) for x, y in pts[1:]]
    timeline = fly_auto(nav, lim) if lim.autopilot == "ardupilot" else fly_mission(nav, lim)
    t0, t1 = timeline.arrivals_s[1], timeline.arrivals_s[-1]
    e0, e1 = cumulative_wh(timeline, model, [t0, t1])
    return LegCost(t1 - t0, e1 - e0)


@dataclass(frozen=True)
class StraightCost:
    """Straight flight at one speed: ``s_per_m``/``wh_per_m`` at speed, plus ``stop_s``/``stop_wh`` per
    rest-to-rest piece (the acceleration and the braking)."""

    s_per_m: float
    wh_per_m: float
    stop_s: float
    stop_wh: float

    @classmethod
    def fit(cls, speed_mps: float, lim: NavLimits, model: EnergyModel, heading_deg: float = 0.0) -> StraightCost:
        """The line through the costs of two long straight legs flown at ``speed_mps``."""
        h = math.radians(heading_deg)
        ux, uy = math.sin(h), math.cos(h)
        a, b = 1000.0, 2000.0
        ca = polyline_cost([(0, 0), (a * ux, a * uy)], 50.0, speed_mps, lim, model)
        cb = polyline_cost([(0, 0), (b * ux, b * uy)], 50.0, speed_mps, lim, model)
        s_per_m = (cb.duration_s - ca.duration_s) / (b - a)
        wh_per_m = (cb.energy_wh - ca.energy_wh) / (b - a)
        return cls(s_per_m, wh_per_m, ca.duration_s - s_per_m * a, ca.energy_wh - wh_per_m * a)

    def cost(self, length_m: float) -> LegCost:
        """A rest-to-rest straight leg of ``length_m``: exact once the leg reaches its speed (at 10 m/s from
        ~60 m with ArduPilot's defaults), within half a second below that."""
        return LegCost(self.stop_s + self.s_per_m * length_m, self.stop_wh + self.wh_per_m * length_m)
