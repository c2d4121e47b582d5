"""Energy of a flown timeline: the drone's power integrated over the speeds the autopilot really flies.

A multicopter's power depends on its airspeed (``planner.energy.EnergyModel.power_w``: hover power
at rest, a dip through translational lift, the parasite cube at speed). A plan that says "12 m/s for
4 km" prices 5.6 minutes near the curve's minimum; the vehicle that slows at every corner spends 20
minutes mostly near hover power. So the energy is integrated over the timeline's commanded ground
velocity (``FlightTimeline.velocity``) on a ``STEP_S`` clock (trapezoidal), with the wind: airspeed =
|ground velocity − wind|. The take-off climb, the landing descent and holds are priced as
``EnergyModel.leg`` prices them (hover power in the wind, times the climb/descent factors).

``cumulative_wh(timeline, model, at_s)`` gives the energy used from the take-off command to each
instant of ``at_s``: a leg's energy is the difference between its end and its start.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from planner.energy import CLIMB_POWER_FACTOR, DESCENT_POWER_FACTOR, EnergyModel
from planner.flight.timeline import FlightTimeline

__all__ = ["STEP_S", "power_series", "cumulative_wh"]

STEP_S = 0.5


def power_series(timeline: FlightTimeline, model: EnergyModel) -> tuple[np.ndarray, np.ndarray]:
    """(instants, power W) over the whole flight on a ``STEP_S`` clock."""
    n = max(2, int(np.ceil(timeline.end_s / STEP_S)) + 1)
    ts = np.linspace(0.0, timeline.end_s, n)
    vel = timeline.velocity(ts)
    air = np.hypot(vel[:, 0] - model.wind_east_mps, vel[:, 1] - model.wind_north_mps)
    power = model.powers_w(air)
    still = model.power_w(model.wind_speed_mps)
    for v in timeline.verticals:
        factor = {"climb": CLIMB_POWER_FACTOR, "descent": DESCENT_POWER_FACTOR, "hover": 1.0}[v.kind]
        inside = (ts >= v.start_s) & (ts <= v.end_s)
        power[inside] = still * factor
    return ts, power


def cumulative_wh(timeline: FlightTimeline, model: EnergyModel, at_s: Sequence[float]) -> list[float]:
    """Energy (Wh) used from the take-off command to each instant of ``at_s``."""
    ts, power = power_series(timeline, model)
    cum = np.concatenate([[0.0], np.cumsum((power[1:] + power[:-1]) * 0.5 * np.diff(ts))]) / 3600.0
    return [float(x) for x in np.interp(np.asarray(at_s, dtype=float), ts, cum)]

