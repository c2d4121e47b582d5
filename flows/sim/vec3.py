"""Three-vectors as tuples (north, east, up), and ArduPilot's split speed limits along a direction.

Small on purpose: the simulator's autopilot models (``flows.sim.scurve``, ``flows.sim.spline``,
``flows.sim.wpnav``) move positions of this form many thousand times a flight.
"""

from __future__ import annotations

import math

__all__ = ["Vec", "ZERO", "vadd", "vsub", "vscale", "vlen", "vlen_xy", "kinematic_limit"]

Vec = tuple[float, float, float]
ZERO: Vec = (0.0, 0.0, 0.0)
_EPS = 1e-6


def vadd(a: Vec, b: Vec) -> Vec:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def vsub(a: Vec, b: Vec) -> Vec:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def vscale(a: Vec, k: float) -> Vec:
    return (a[0] * k, a[1] * k, a[2] * k)


def vlen(a: Vec) -> float:
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


def vlen_xy(a: Vec) -> float:
    return math.hypot(a[0], a[1])


def kinematic_limit(direction: Vec, max_xy: float, max_up: float, max_down: float) -> float:
    """The largest speed (or acceleration) along ``direction`` within separate horizontal, up and down limits
    (``kinematic_limit`` in ``libraries/AP_Math/control.cpp``)."""
    length = vlen(direction)
    if length <= 0 or _is_zero(max_xy) or _is_zero(max_up) or _is_zero(max_down):
        return 0.0
    max_xy, max_up, max_down = abs(max_xy), abs(max_up), abs(max_down)
    n, e, u = direction[0] / length, direction[1] / length, direction[2] / length
    xy = math.hypot(n, e)
    if _is_zero(xy):
        return max_up if u > 0 else max_down
    if _is_zero(u):
        return max_xy
    slope = u / xy
    if slope > 0:
        return max_xy / xy if abs(slope) < max_up / max_xy else abs(max_up / u)
    return max_xy / xy if abs(slope) < max_down / max_xy else abs(max_down / u)


def _is_zero(x: float) -> bool:
    return abs(x) <= _EPS
