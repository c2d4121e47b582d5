"""PX4 flying a list of nav points in a mission: when each is reached, and the speed in between.

What is followed (PX4 v1.14, ``FlightTaskAuto`` with its jerk-limited ``VelocitySmoothing``):

* the speed at a waypoint (``FlightTaskAuto::_getMaxXYSpeed`` / ``PositionSmoothing::_getMaxXYSpeed``):
  the lowest of the turn speed ``computeMaxSpeedInWaypoint(α, MPC_XY_TRAJ_P·MPC_ACC_HOR, NAV_ACC_RAD)``
  = √(a·r·tan(α/2)) (α the angle between the legs at the waypoint, π for straight on), the speed from
  which the next leg can still brake to a stop (``computeMaxSpeedFromDistance``) and the cruise speed;
  zero where the vehicle stops (a hold, the last waypoint, before a landing);
* along a leg the speed changes jerk-limited (``MPC_JERK_AUTO``, ``MPC_ACC_HOR``) from the speed at the
  previous waypoint to the cruise speed and down to the speed at the next one; where the leg is too
  short for the cruise speed it peaks lower;
* take-off and landing: ``planner.flight.vertical``.

The corner itself is cut inside ``NAV_ACC_RAD``; the model keeps the leg lengths (the cut is a few
metres against legs of tens). Not validated against a flown PX4 vehicle yet (no PX4 SITL was at hand):
the parameters and formulas are PX4's, the timing is this module's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from planner.errors import InvalidArgument
from planner.flight.params import NavLimits
from planner.flight.scurve import SegmentProfile
from planner.flight.timeline import FlightTimeline, HorizontalMotion, NavPoint, VerticalMotion
from planner.flight.vertical import LANDED_TO_DISARM_S, landing_s, takeoff_s

__all__ = ["fly_mission", "speed_change", "max_speed_from_distance", "max_speed_in_waypoint"]


def max_speed_in_waypoint(alpha: float, accel: float, radius: float) -> float:
    """``math::trajectory::computeMaxSpeedInWaypoint``: √(accel·radius·tan(α/2))."""
    return math.sqrt(max(0.0, accel * radius * math.tan(min(alpha, math.pi - 1e-6) / 2.0)))


def max_speed_from_distance(jerk: float, accel: float, distance: float, final_speed: float) -> float:
    """``math::trajectory::computeMaxSpeedFromDistance``: the speed that still brakes to ``final_speed``."""
    b = 4.0 * accel * accel / jerk
    c = -2.0 * accel * distance - final_speed * final_speed
    return max(0.5 * (-b + math.sqrt(b * b - 4.0 * c)), final_speed)


def speed_change(v0: float, v1: float, accel: float, jerk: float) -> tuple[list[tuple[float, float]], float]:
    """The constant-jerk pieces (duration, jerk) taking the speed from ``v0`` to ``v1``, and their distance."""
    dv = abs(v1 - v0)
    if dv <= 0.0:
        return [], 0.0
    sign = 1.0 if v1 > v0 else -1.0
    if dv >= accel * accel / jerk:
        tj, ta = accel / jerk, dv / accel - accel / jerk
    else:
        tj, ta = math.sqrt(dv / jerk), 0.0
    pieces = [(tj, sign * jerk), (ta, 0.0), (tj, -sign * jerk)]
    return pieces, (v0 + v1) * 0.5 * (2.0 * tj + ta)


def _leg_profile(length: float, v_in: float, v_out: float, cruise: float, lim: NavLimits) -> SegmentProfile:
    """Jerk-limited v_in → peak → v_out over ``length`` (the peak found by bisection)."""
    if length <= 0.0:
        return SegmentProfile(np.zeros((0, 6)), 0.0, 0.0, 0.0)
    v_out = min(v_out, cruise)

    def dist(peak: float) -> float:
        return speed_change(v_in, peak, lim.accel_mss, lim.jerk_msss)[1] + speed_change(peak, v_out, lim.accel_mss, lim.jerk_msss)[1]

    lo, hi = max(v_in, v_out), max(cruise, v_in, v_out)
    if dist(hi) <= length:
        peak = hi
    else:
        for _ in range(30):  # 2⁻³⁰ of the speed range
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if dist(mid) <= length else (lo, mid)
        peak = lo
    up, d_up = speed_change(v_in, peak, lim.accel_mss, lim.jerk_msss)
    down, d_down = speed_change(peak, v_out, lim.accel_mss, lim.jerk_msss)
    rest = max(0.0, length - d_up - d_down)
    cruise_s = rest / peak if peak > 0 else 0.0
    return SegmentProfile.build(up + [(cruise_s, 0.0)] + down, v0=v_in, vel_max=cruise, accel_max=lim.accel_mss)


def fly_mission(points: Sequence[NavPoint], lim: NavLimits) -> FlightTimeline:
    """The timeline of a PX4 multicopter flying ``points`` in mission mode (module docstring)."""
    pts = tuple(points)
    if not pts or pts[0].kind != "takeoff":
        raise InvalidArgument("a PX4 mission timeline starts with a take-off")
    n = len(pts)
    arrivals, departures = [0.0] * n, [0.0] * n
    motions: list[HorizontalMotion] = []
    climb = takeoff_s(pts[0].up_m, lim)
    verticals = [VerticalMotion("climb", 0.0, climb, pts[0].up_m)]
    arrivals[0] = departures[0] = climb
    speeds = []
    speed = lim.speed_mps
    for p in pts:
        if p.speed_mps is not None:
            speed = min(p.speed_mps, lim.max_speed_mps)
        speeds.append(speed)
    corner = [0.0] * n  # speed at each point
    for i in range(1, n - 1):
        p, nxt = pts[i], pts[i + 1]
        if p.kind != "waypoint" or p.hold_s > 0 or nxt.kind != "waypoint":
            continue
        a = np.subtract(p.xyz[:2], pts[i - 1].xyz[:2])
        b = np.subtract(nxt.xyz[:2], p.xyz[:2])
        la, lb = float(np.hypot(*a)), float(np.hypot(*b))
        if la < lim.radius_m or lb <= 1e-3:
            continue
        alpha = math.acos(max(-1.0, min(1.0, float(np.dot(-a, b)) / (la * lb))))
        corner[i] = min(max_speed_in_waypoint(alpha, lim.corner_accel_mss, lim.radius_m),
                        max_speed_from_distance(lim.jerk_msss, lim.accel_mss, lb, 0.0), speeds[i], speeds[i + 1])
    t = climb
    here = pts[0].xyz
    for i in range(1, n):
        p = pts[i]
        target = p.xyz if p.kind == "waypoint" else (p.east_m, p.north_m, here[2])  # a return: home at this altitude
        d = np.subtract(target, here)
        length = float(np.linalg.norm(d))
        prof = _leg_profile(length, corner[i - 1], corner[i], speeds[i], lim)
        if length > 0:
            motions.append(HorizontalMotion(t, prof, tuple(d / length)))
        t += prof.time_end
        arrivals[i] = t
        if p.kind in ("land", "rtl"):
            down = landing_s(here[2], lim)
            verticals.append(VerticalMotion("descent", t, t + down - LANDED_TO_DISARM_S, here[2]))
            t += down
            departures[i] = t
            break
        if p.hold_s > 0:
            verticals.append(VerticalMotion("hover", t, t + p.hold_s))
            t += p.hold_s
        departures[i] = t
        here = target
    return FlightTimeline(pts, tuple(arrivals), tuple(departures), t, tuple(motions), tuple(verticals))
