"""How long an S-curve's phases last: ArduPilot's ``SCurve::calculate_path``, on its own.

Given the snap and jerk limits, a starting speed, the acceleration and speed limits and
the length available (half a leg: a leg accelerates in its first half and brakes in its
second), ``path_times`` returns the raised-cosine jerk ramp ``tj``, the constant-jerk
time ``t2``/``t6`` and the constant-acceleration time ``t4`` of the shortest profile
that stays within them — the closed-form solutions of ``libraries/AP_Math/SCurve.cpp``
(solutions 0, 2, 5 and 7), with the cubic of solution 5 solved as the source does.
Kept apart from ``flows.sim.scurve`` (the leg itself) because it is pure algebra.
"""

from __future__ import annotations

import math

__all__ = ["path_times"]

_EPS = 1e-6


def _pos(x: float) -> bool:
    return x > _EPS


def _zero(x: float) -> bool:
    return abs(x) <= _EPS


def path_times(snap: float, jerk: float, v0: float, accel: float, vmax: float, length: float
                ) -> tuple[float, float, float, float, float]:
    """``SCurve::calculate_path``: (jerk, tj, t2, t4, t6) of a speed change from ``v0`` towards ``vmax`` within
    ``length`` metres — tj the raised-cosine jerk ramp, t2/t6 constant jerk, t4 constant acceleration; zeros when
    there is nothing to change or the inputs are out of range."""
    if not (_pos(snap) and _pos(jerk) and _pos(accel) and _pos(vmax) and _pos(length)) or v0 >= vmax:
        return 0.0, 0.0, 0.0, 0.0, 0.0
    tj = jerk * math.pi / (2.0 * snap)
    at = min(accel, (vmax - v0) / (2.0 * tj), (length + 4.0 * v0 * tj) / (4.0 * tj * tj))
    t2 = t4 = t6 = 0.0
    if abs(at) < jerk * tj:
        if _zero(v0):
            # the ramps themselves are cut short: the profile is all raised-cosine jerk
            tj = min(tj, (length * math.pi / (8.0 * snap)) ** 0.25, (vmax * math.pi / (4.0 * snap)) ** (1.0 / 3.0),
                     math.sqrt(max(0.0, accel * math.pi / (2.0 * snap))))
            jerk = 2.0 * snap * tj / math.pi
            accel = jerk * tj
        else:
            accel = at  # a speed change keeps tj and lowers the jerk instead
            jerk = accel / tj
        if not (vmax <= v0 + 2.0 * accel * tj or length <= 4.0 * v0 * tj + 4.0 * accel * tj * tj):
            t4 = max(0.0, _const_accel_time(jerk, tj, v0, accel, vmax, length))
    else:
        short = (vmax < v0 + accel * tj + accel * accel / jerk
                 or length < (accel ** 3 + accel * jerk * (2.0 * v0 + 2.0 * accel * tj)) / (jerk * jerk)
                 + 2.0 * v0 * tj + accel * tj * tj)
        if short:
            accel = min(accel, _reachable_accel_by_speed(jerk, tj, v0, vmax),
                        _reachable_accel_by_length(jerk, tj, v0, length))
            t2 = accel / jerk - tj
            t6 = t2
        else:
            t2 = accel / jerk - tj
            t4 = max(0.0, _const_accel_time(jerk, tj, v0, accel, vmax, length))
            t6 = t2
    result = (jerk, tj, t2, t4, t6)
    if any(not math.isfinite(x) or x < -_EPS for x in result):
        return 0.0, 0.0, 0.0, 0.0, 0.0  # "SCurve::calculate_path invalid outputs": no change
    return result


def _const_accel_time(jm: float, tj: float, v0: float, am: float, vm: float, length: float) -> float:
    """The constant-acceleration time t4 of ``calculate_path`` (solutions 2 and 7): the smaller of the time that
    reaches ``vm`` and the time that uses up ``length`` (a root of its quadratic in t4)."""
    by_speed = -(v0 - vm + am * tj + am * am / jm) / am
    disc = (am ** 4 / 4.0 + jm * jm * v0 * v0 + am * am * jm * jm * tj * tj / 4.0 + 2.0 * am * jm * jm * length
            - am * am * jm * v0 + am ** 3 * jm * tj / 2.0 - am * jm * jm * v0 * tj)
    root = math.sqrt(max(0.0, disc))
    base = -1.5 * am * am - jm * v0 - 1.5 * am * jm * tj
    by_length = max((base + root) / (am * jm), (base - root) / (am * jm))
    return min(by_speed, by_length)


def _reachable_accel_by_speed(jm: float, tj: float, v0: float, vm: float) -> float:
    """Solution 5 of ``calculate_path``: the peak acceleration whose two ramps change the speed by exactly vm − v0."""
    root = math.sqrt(max(0.0, (4.0 * (vm - v0) + jm * tj * tj) / jm))
    return max(-0.5 * jm * (tj + root), -0.5 * jm * (tj - root))


def _reachable_accel_by_length(jm: float, tj: float, v0: float, length: float) -> float:
    """Solution 5 of ``calculate_path``: the peak acceleration whose two ramps use exactly ``length`` (Cardano's
    root of the cubic in the acceleration, as the source writes it)."""
    p = jm * jm * tj * tj / 9.0 - jm * v0 * 2.0 / 3.0
    q = (-(jm * jm) * length / 2.0 + jm ** 3 * tj ** 3 * 8.0 / 27.0 - jm * tj * (jm * jm * tj * tj + 2.0 * jm * v0) / 3.0
         + jm * jm * v0 * tj)
    root = math.sqrt(max(0.0, q * q - p ** 3))
    cube = (root - q) ** (1.0 / 3.0) if root - q > 0 else -((q - root) ** (1.0 / 3.0))
    if _zero(cube):
        return 0.0
    return -jm * tj * 2.0 / 3.0 + p / cube + cube
