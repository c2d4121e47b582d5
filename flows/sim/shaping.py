"""ArduPilot's kinematic shaping on one axis: how its position controller moves a target to a new position or speed.

Everywhere ArduCopter moves without a waypoint leg — the take-off climb, a landing's
descent, a brake to a stop, a pause on a leg — its ``AC_PosControl`` shapes the
target with the functions of ``libraries/AP_Math/control.cpp``: a square-root
controller picks the acceleration that closes the error without overshoot
(``sqrt_controller``), the acceleration moves towards it no faster than the jerk
limit (``shape_accel``), and the target integrates it (``update_pos_vel_accel``).
``Axis`` is that target on one axis; ``approach`` and ``hold_speed`` are
``shape_pos_vel_accel`` and ``shape_vel_accel`` followed by the integration, as
``AC_PosControl::input_pos_vel_accel_z`` / ``input_vel_accel_z`` run them.
Metres and seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Axis", "sqrt_controller"]


def sqrt_controller(error: float, p: float, second_order_limit: float, dt: float) -> float:
    """The correction rate for ``error``: proportional near zero, square-root beyond, never overshooting in one step
    (``sqrt_controller`` in ``control.cpp``)."""
    if second_order_limit <= 0:
        rate = error * p
    elif p == 0:
        rate = math.copysign(math.sqrt(2.0 * second_order_limit * abs(error)), error) if error else 0.0
    else:
        linear = second_order_limit / (p * p)
        if error > linear:
            rate = math.sqrt(2.0 * second_order_limit * (error - linear / 2.0))
        elif error < -linear:
            rate = -math.sqrt(2.0 * second_order_limit * (-error - linear / 2.0))
        else:
            rate = error * p
    if dt > 0:
        bound = abs(error) / dt
        rate = max(-bound, min(bound, rate))
    return rate


@dataclass
class Axis:
    """One axis of a shaped target: position, velocity, acceleration."""

    pos: float = 0.0
    vel: float = 0.0
    accel: float = 0.0

    def _shape_accel(self, accel_target: float, jerk_max: float, dt: float) -> None:
        """``shape_accel``: the acceleration moves towards its target at most ``jerk_max`` per second."""
        step = jerk_max * dt
        self.accel += max(-step, min(step, accel_target - self.accel))

    def _integrate(self, dt: float) -> None:
        """``update_pos_vel_accel`` without limits."""
        self.pos += self.vel * dt + 0.5 * self.accel * dt * dt
        self.vel += self.accel * dt

    def hold_speed(self, vel_input: float, accel_min: float, accel_max: float, jerk_max: float, dt: float) -> None:
        """Integrate, then move the velocity towards ``vel_input`` (``AC_PosControl::input_vel_accel_z``:
        ``update_pos_vel_accel`` then ``shape_vel_accel``)."""
        self._integrate(dt)
        error = vel_input - self.vel
        kpa = jerk_max / accel_max if error > 0 else jerk_max / -accel_min
        accel_target = max(accel_min, min(accel_max, sqrt_controller(error, kpa, jerk_max, dt)))
        self._shape_accel(accel_target, jerk_max, dt)

    def approach(self, pos_input: float, vel_min: float, vel_max: float, accel_min: float, accel_max: float,
                 jerk_max: float, dt: float) -> None:
        """Integrate, then steer towards ``pos_input`` to stop there (``AC_PosControl::input_pos_vel_accel_z``:
        ``shape_pos_vel_accel``, whose square-root controller brakes at half the acceleration limit)."""
        self._integrate(dt)
        error = pos_input - self.pos
        if error > 0:
            accel_tc, kpv = -0.5 * accel_min, 0.5 * jerk_max / -accel_min
        else:
            accel_tc, kpv = 0.5 * accel_max, 0.5 * jerk_max / accel_max
        vel_target = max(vel_min, min(vel_max, sqrt_controller(error, kpv, accel_tc, dt)))
        verr = vel_target - self.vel
        kpa = jerk_max / accel_max if verr > 0 else jerk_max / -accel_min
        accel_target = max(accel_min, min(accel_max, sqrt_controller(verr, kpa, jerk_max, dt)))
        self._shape_accel(accel_target, jerk_max, dt)
