"""One spline leg of ArduCopter's waypoint path (``libraries/AP_Math/SplineCurve.cpp``): a cubic Hermite curve.

A NAV_SPLINE_WAYPOINT leg is a cubic from the origin to the destination whose end
tangents point along the neighbouring legs (``AC_WPNav::set_spline_destination``),
scaled down when they would make the curve loop (SPLINE_FACTOR). The target moves
along it at the highest speed the curve allows: the waypoint speed, lowered where
the curvature would need more than half the acceleration limit sideways
(LATERAL_ACCEL_SCALER), changing by at most half the acceleration limit along the
track (TANGENTIAL_ACCEL_SCALER), and slow enough to reach the destination at its
exit speed (``SplineCurve::calc_dt_speed_max``). The curve's own parameter runs from 0
to 1 (``SplineCurve::advance_target_along_track``). Metres and seconds; vectors are
(north, east, up) tuples.
"""

from __future__ import annotations

import math

from flows.sim.vec3 import ZERO, Vec, kinematic_limit, vadd, vlen, vscale, vsub

__all__ = ["SplineCurve"]

SPLINE_FACTOR = 4.0
TANGENTIAL_ACCEL_SCALER = 0.5
LATERAL_ACCEL_SCALER = 0.5


def _dot(a: Vec, b: Vec) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _unit(a: Vec) -> Vec:
    n = vlen(a)
    return vscale(a, 1.0 / n) if n > 0 else ZERO


class SplineCurve:
    """``SplineCurve``: the leg's Hermite solution, its time (0..1), and the speeds allowed at its ends."""

    def __init__(self) -> None:
        self.speed_xy = self.speed_up = self.speed_down = self.accel_xy = self.accel_z = 0.0
        self.origin: Vec = ZERO
        self.destination: Vec = ZERO
        self.origin_vel: Vec = ZERO
        self.destination_vel: Vec = ZERO
        self.solution: tuple[Vec, Vec, Vec, Vec] = (ZERO, ZERO, ZERO, ZERO)
        self.time = 0.0
        self.zero_length = True
        self.reached = True
        self.origin_speed_max = 0.0
        self.destination_speed_max = 0.0

    def set_speed_accel(self, speed_xy: float, speed_up: float, speed_down: float, accel_xy: float, accel_z: float) -> None:
        self.speed_xy, self.speed_up, self.speed_down = abs(speed_xy), abs(speed_up), abs(speed_down)
        self.accel_xy, self.accel_z = abs(accel_xy), abs(accel_z)

    def set_origin_and_destination(self, origin: Vec, destination: Vec, origin_vel: Vec, destination_vel: Vec) -> None:
        """``SplineCurve::set_origin_and_destination``."""
        self.origin, self.destination = origin, destination
        self.zero_length = vlen(vsub(destination, origin)) <= 1e-9
        if self.zero_length:
            self.time, self.reached = 1.0, True
            self.origin_vel = self.destination_vel = ZERO
            self.origin_speed_max = self.destination_speed_max = 0.0
            return
        self.origin_vel, self.destination_vel = origin_vel, destination_vel
        self.reached, self.time = False, 0.0
        vel_len = vlen(origin_vel) + vlen(destination_vel)
        pos_len = vlen(vsub(destination, origin)) * SPLINE_FACTOR
        scale = pos_len / vel_len if vel_len > pos_len else 1.0
        self._solve(origin, destination, vscale(origin_vel, scale), vscale(destination_vel, scale))
        self.origin_speed_max = self._dt_speed_max(0.0, 0.0)[3]
        # the source computes this into _destination_speed_max itself, so its own "slow enough to stop" clamp
        # reads the value just computed and changes nothing: the end speed is the curve's own limit there
        self.destination_speed_max = 0.0 if destination_vel == ZERO else self._dt_speed_max(1.0, 0.0, clamp=False)[3]

    def set_destination_speed_max(self, speed: float) -> None:
        self.destination_speed_max = min(self.destination_speed_max, speed)

    def _solve(self, o: Vec, d: Vec, ov: Vec, dv: Vec) -> None:
        """``SplineCurve::update_solution``: the Hermite coefficients."""
        c2 = vadd(vadd(vscale(o, -3.0), vscale(ov, -2.0)), vsub(vscale(d, 3.0), dv))
        c3 = vadd(vadd(vscale(o, 2.0), ov), vadd(vscale(d, -2.0), dv))
        self.solution = (o, ov, c2, c3)

    def _at(self, t: float) -> tuple[Vec, Vec, Vec, Vec]:
        c0, c1, c2, c3 = self.solution
        pos = vadd(vadd(c0, vscale(c1, t)), vadd(vscale(c2, t * t), vscale(c3, t ** 3)))
        vel = vadd(c1, vadd(vscale(c2, 2.0 * t), vscale(c3, 3.0 * t * t)))
        acc = vadd(vscale(c2, 2.0), vscale(c3, 6.0 * t))
        return pos, vel, acc, vscale(c3, 6.0)

    def _dt_speed_max(self, t: float, distance: float, clamp: bool = True) -> tuple[float, Vec, Vec, float, float]:
        """``SplineCurve::calc_dt_speed_max``: (the curve-time step for ``distance``, the target, the unit
        direction, the speed allowed there, the tangential acceleration allowed)."""
        pos, vel, acc, jerk = self._at(t)
        vel_len = vlen(vel)
        if vel_len <= 0:
            if vlen(acc) <= 0:
                unit, dt = _unit(jerk), (6.0 * distance / max(vlen(jerk), 1e-9)) ** (1.0 / 3.0)
            else:
                unit, dt = _unit(acc), math.sqrt(max(0.0, 2.0 * distance / vlen(acc)))
        else:
            unit, dt = vscale(vel, 1.0 / vel_len), distance / vel_len
        acc_norm = vsub(acc, vscale(unit, _dot(acc, unit)))
        norm_len = vlen(acc_norm)
        tangential = kinematic_limit(unit, self.speed_xy, self.speed_up, self.speed_down)
        norm_max = LATERAL_ACCEL_SCALER * kinematic_limit(acc_norm, self.accel_xy, self.accel_z, self.accel_z)
        if tangential <= 0:
            self.reached = True
            return dt, pos, unit, 0.0, 0.0
        if norm_max > 0 and norm_len > 0 and vel_len > 0 and norm_len / norm_max > (vel_len / tangential) ** 2:
            speed = vel_len / math.sqrt(norm_len / norm_max)
        else:
            speed = tangential
        accel_max = TANGENTIAL_ACCEL_SCALER * kinematic_limit(unit, self.accel_xy, self.accel_z, self.accel_z)
        if accel_max <= 0:
            self.reached = True
            return dt, pos, unit, speed, 0.0
        if clamp:
            left = vlen(vsub(self.destination, pos))
            speed = min(speed, math.sqrt(2.0 * accel_max * (left + self.destination_speed_max ** 2 / (2.0 * accel_max))))
        return dt, pos, unit, speed, accel_max

    def advance(self, dt: float, speed: float) -> tuple[Vec, Vec]:
        """``SplineCurve::advance_target_along_track``: from the current ``speed``, (the new target, its velocity)."""
        if self.zero_length:
            return self.destination, ZERO
        step, pos, unit, speed_max, accel_max = self._dt_speed_max(self.time, speed * dt)
        speed = max(speed - accel_max * dt, min(speed + accel_max * dt, speed_max))
        self.time += step
        if self.time >= 1.0:
            self.time, self.reached = 1.0, True
        return pos, vscale(unit, speed)
