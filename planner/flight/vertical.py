"""How long a take-off climb and a landing descent take, as the autopilots fly them.

Both are one-dimensional: a velocity demand shaped by the vertical acceleration and jerk limits
(``AC_PosControl``'s ``shape_vel_accel``, PX4's ``VelocitySmoothing``), integrated on a 20 ms clock.

* ArduPilot take-off (``Mode::auto_takeoff_run``, Copter-4.6 ``takeoff.cpp``): the altitude target moves
  up at ``WPNAV_SPEED_UP`` and brakes with the square-root position controller (``sqrt_controller``,
  ``PSC_POSZ_P`` = 1) at ``WPNAV_ACCEL_Z``; it is complete when the target has covered 90 % of the
  climb and its climb rate is under 10 % of ``WPNAV_SPEED_UP``. Motors spool up and the throttle slews
  up to lift-off first (``SPOOL_UP_S``).
* ArduPilot landing (``Mode::land_run_vertical_control``): descent demand =
  ``sqrt_controller(max(LAND_ALT_LOW, 1 m) − altitude)`` held between ``LAND_SPEED_HIGH`` (0:
  ``WPNAV_SPEED_DN``) and ``LAND_SPEED``; on the ground the land detector and the spool-down take
  ``LANDED_TO_DISARM_S`` before the motors disarm.
* PX4 take-off climbs at ``MPC_TKO_SPEED`` and the landing descends at ``MPC_Z_V_AUTO_DN`` down to
  ``MPC_LAND_ALT2``, then at ``MPC_LAND_SPEED``; the same shaping, braking at the acceleration limit.

Example (ArduPilot defaults, 40 m)::

    >>> from planner.flight.params import NavLimits
    >>> from planner.world.nav_params import NavParams
    >>> lim = NavLimits.from_params(NavParams(), "ardupilot")
    >>> round(takeoff_s(40.0, lim), 1), round(landing_s(40.0, lim), 1)
    (21.4, 45.2)
"""

from __future__ import annotations

import math
from functools import lru_cache

from planner.flight.params import NavLimits

__all__ = ["takeoff_s", "landing_s", "LANDED_TO_DISARM_S", "SPOOL_UP_S"]

DT_S = 0.02
POS_Z_P = 1.0  # PSC_POSZ_P default: the square-root controller's gain
# From the take-off command to leaving the ground (``_AutoTakeoff::run``: the motors spool up to
# THROTTLE_UNLIMITED, then the throttle slews up over TKOFF_SLEW_TIME until lift-off is detected): 3.1 s
# on the ArduCopter 4.6.3 SITL's tune flights (MISSION_START → EXTENDED_SYS_STATE "taking off"), the
# figure used. Tuned-on, not derived.
SPOOL_UP_S = 3.1
# Touchdown to disarmed: the land detector (LAND_DETECTOR_TRIGGER_SEC, 1 s) and the spool-down (2.0 s
# "SIM Hit ground" → "Disarming motors" on the recorded flights), plus what the final metre of the
# descent takes beyond this model: 3.5 s makes the last waypoint → disarm time of the 4.6.3 SITL's
# tune flights right on their median. Tuned-on, not derived.
LANDED_TO_DISARM_S = 3.5
PX4_ALT_ACCEPT_M = 0.8  # NAV_MC_ALT_RAD: the take-off is done within this of its altitude
_MAX_STEPS = 200_000  # 4000 s of climb or descent at 20 ms: far beyond any real one


def sqrt_controller(error: float, p: float, accel: float) -> float:
    """AP_Math ``sqrt_controller`` (no dt limit): the speed that brakes at ``accel`` onto ``error``."""
    if accel <= 0:
        return error * p
    linear = accel / (p * p)
    if abs(error) > linear:
        v = math.sqrt(2.0 * accel * (abs(error) - linear / 2.0))
        return v if error > 0 else -v
    return error * p


def _shape(v: float, a: float, demand: float, accel: float, jerk: float) -> tuple[float, float]:
    """One ``DT_S`` step of velocity ``v``/acceleration ``a`` towards ``demand`` (AP_Math ``shape_vel_accel``:
    the acceleration asked is the square-root controller of the speed error with gain jerk/accel, at most
    ``accel``, and it changes at most ``jerk`` per second)."""
    want = max(-accel, min(accel, sqrt_controller(demand - v, jerk / accel, jerk)))
    step = jerk * DT_S
    a = max(a - step, min(a + step, want))
    return v + a * DT_S, a


@lru_cache(maxsize=256)
def takeoff_s(height_m: float, lim: NavLimits) -> float:
    """Seconds from the take-off command to the take-off being complete at ``height_m`` above home."""
    if height_m <= 0:
        return 0.0
    z = v = a = 0.0
    speed = lim.takeoff_speed_mps
    for step in range(_MAX_STEPS):
        t = (step + 1) * DT_S
        if lim.autopilot == "ardupilot":
            demand = min(speed, sqrt_controller(height_m - z, POS_Z_P, lim.accel_z_mss))
        else:
            demand = min(speed, max(0.0, math.sqrt(2.0 * lim.accel_z_mss * max(height_m - z, 0.0))))
        v, a = _shape(v, a, demand, lim.accel_z_mss, lim.jerk_z_msss)
        z += v * DT_S
        if lim.autopilot == "ardupilot":
            if z >= 0.9 * height_m and v < 0.1 * speed:
                return t + SPOOL_UP_S
        elif z >= height_m - PX4_ALT_ACCEPT_M:
            return t
    return _MAX_STEPS * DT_S


@lru_cache(maxsize=256)
def landing_s(height_m: float, lim: NavLimits) -> float:
    """Seconds from the start of the descent at ``height_m`` to the motors disarmed on the ground."""
    if height_m <= 0:
        return LANDED_TO_DISARM_S
    z, v, a = height_m, 0.0, 0.0
    for step in range(_MAX_STEPS):
        if lim.autopilot == "ardupilot":
            rate = sqrt_controller(lim.land_alt_low_m - z, POS_Z_P, lim.accel_z_mss)
            demand = max(-lim.land_speed_high_mps, min(-lim.land_speed_mps, rate))
        else:
            demand = -lim.land_speed_high_mps if z > lim.land_alt_low_m else -lim.land_speed_mps
        v, a = _shape(v, a, demand, lim.accel_z_mss, lim.jerk_z_msss)
        z += v * DT_S
        if z <= 0.0:
            return (step + 1) * DT_S + LANDED_TO_DISARM_S
    return _MAX_STEPS * DT_S
