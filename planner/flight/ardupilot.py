"""ArduCopter's AUTO mode flying a list of nav points: when each is reached, and the speed in between.

What is followed (ArduPilot Copter-4.6):

* ``ModeAuto::do_nav_wp`` / ``ModeAuto::set_next_wp``: a waypoint without a hold whose next nav command
  is a waypoint is a "fast" waypoint — ``AC_WPNav::set_wp_destination_next`` plans the following leg so
  the two can be blended; a hold, a following NAV_LAND (the vehicle stops before landing) or the end of
  the mission stop the vehicle there. ``ModeAuto::verify_nav_wp`` then holds ``param1`` seconds.
* ``AC_WPNav::set_wp_destination`` / ``set_wp_destination_next``: each straight leg is an ``SCurve``
  (``planner.flight.scurve``) from rest to rest at the speed in force, ``WPNAV_ACCEL``, the S-curve jerk
  and snap (``AC_WPNav::calc_scurve_jerk_and_snap``); a zero-length leg (two nav points at one place)
  takes no time but carries no speed either, so the vehicle comes to rest at the duplicated point.
* ``SCurve::advance_target_along_track``: at a fast waypoint the next leg starts while this one is
  still decelerating. On each 400 Hz tick once this leg has started braking and will finish before
  the next leg's acceleration does, the combined target half-way through the remaining time is
  checked: within ``WPNAV_RADIUS`` of the corner, slower than the lower of the two legs' speeds, and
  under the corner acceleration. The first tick that passes starts the next leg; the waypoint is
  "reached" when the next leg's elapsed time equals this leg's remaining time (the middle of the
  turn). ``corner_rule="turn_in"`` is the older form of the same check (ArduPilot before the
  ``time_decel_start``/``time_accel_end`` names: start once past ``time_turn_out − next.time_turn_in``
  and half the leg, next leg's remaining time under half its length).
* Take-off and landing: ``planner.flight.vertical``; a NAV_RETURN_TO_LAUNCH is ``ModeRTL`` (climb to the
  return altitude, home at RTL_SPEED, RTL_LOIT_TIME over home, land: ``_return_to_launch``).

The vehicle is taken to follow its position target: ``AC_WPNav::advance_wp_target_along_track`` slows
the target's clock only when the vehicle lags it, which a healthy copter within its limits does not.

Example: a 100 m leg, a 90° corner, another 100 m (ArduPilot defaults)::

    >>> from planner.flight.params import NavLimits
    >>> from planner.world.nav_params import NavParams
    >>> lim = NavLimits.from_params(NavParams(), "ardupilot")
    >>> pts = [NavPoint("takeoff", 0, 0, 40), NavPoint("waypoint", 0, 0, 40), NavPoint("waypoint", 0, 100, 40),
    ...        NavPoint("waypoint", 100, 100, 40), NavPoint("land", 100, 100, 40)]
    >>> tl = fly_auto(pts, lim)
    >>> [round(t, 1) for t in tl.arrivals_s], round(tl.end_s, 1)
    ([21.4, 21.4, 36.1, 50.7, 50.7], 95.9)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

from planner.errors import InvalidArgument
from planner.flight.params import NavLimits
from planner.flight.scurve import SCurve, kinematic_limit
from planner.flight.timeline import FlightTimeline, HorizontalMotion, NavPoint, VerticalMotion
from planner.flight.vertical import LANDED_TO_DISARM_S, landing_s, takeoff_s

__all__ = ["TICK_S", "CornerRule", "fly_auto", "leg_curve"]

TICK_S = 1.0 / 400.0  # ArduCopter's main loop on a multicopter: the waypoint controller's tick
CornerRule = Literal["decel_start", "turn_in"]


def leg_curve(a: Sequence[float], b: Sequence[float], speed_mps: float, lim: NavLimits) -> tuple[SCurve, tuple[float, float, float]]:
    """The ``SCurve`` of the straight leg a → b (east, north, up) and its unit direction (``SCurve::calculate_track``)."""
    dx, dy, dz = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    length = math.sqrt(dx * dx + dy * dy + dz * dz)
    if length <= 0.0:
        return SCurve.empty(), (0.0, 0.0, 0.0)
    vel = kinematic_limit(dx, dy, dz, speed_mps, lim.speed_up_mps, lim.speed_down_mps)
    acc = kinematic_limit(dx, dy, dz, lim.accel_mss, lim.accel_z_mss, lim.accel_z_mss)
    return SCurve.straight(length, vel, acc, lim.jerk_msss, lim.snap_mssss), (dx / length, dy / length, dz / length)


@lru_cache(maxsize=4096)
def _corner_start(
    this: SCurve, d_this: tuple[float, float, float], nxt: SCurve, d_next: tuple[float, float, float], earliest: float,
    lim: NavLimits, rule: CornerRule,
) -> float | None:
    """The first tick (on ``this`` leg's clock, not before ``earliest``) at which the next leg may start,
    or ``None`` when the corner is never blended (the vehicle stops).

    The check passes from some tick to the end of the leg (as the remaining time shrinks, the mid-turn
    point nears the corner and both legs' speeds and accelerations fall towards their rest at the
    ends), so the first passing tick is found by bisection over the ticks."""
    if this.is_empty or nxt.is_empty:
        return None
    t_end = this.time_end
    if rule == "decel_start":
        start = max(earliest, this.time_decel_start, t_end - nxt.time_accel_end)
    else:
        start = max(earliest, this.time_decel_start - nxt.time_accel_max_end)
    lo, hi = math.ceil(start / TICK_S - 1e-9), math.floor(t_end / TICK_S)
    if hi < lo or not _passes(hi, this, d_this, nxt, d_next, lim, rule):
        return None
    while lo < hi:  # invariant: hi passes
        mid = (lo + hi) // 2
        if _passes(mid, this, d_this, nxt, d_next, lim, rule):
            hi = mid
        else:
            lo = mid + 1
    return hi * TICK_S


def _passes(k: int, this: SCurve, d1: tuple[float, float, float], nxt: SCurve, d2: tuple[float, float, float],
            lim: NavLimits, rule: CornerRule) -> bool:
    """Whether the blend check of ``SCurve::advance_target_along_track`` passes at tick ``k``."""
    t = k * TICK_S
    remaining = this.time_end - t
    _, a1, v1, p1 = this.state(t + remaining * 0.5)
    _, a2, v2, p2 = nxt.state(remaining * 0.5)
    back = p1 - this.length
    pos = [back * d1[i] + p2 * d2[i] for i in range(3)]
    vel = [v1 * d1[i] + v2 * d2[i] for i in range(3)]
    acc = [a1 * d1[i] + a2 * d2[i] for i in range(3)]
    if math.sqrt(sum(x * x for x in pos)) >= lim.radius_m:
        return False
    if math.sqrt(sum(x * x for x in vel)) >= min(this.vel_max, nxt.vel_max):
        return False
    if rule == "decel_start":
        return math.hypot(acc[0], acc[1]) < lim.corner_accel_mss and abs(acc[2]) < lim.accel_z_mss
    return (this.state(t)[3] >= 0.5 * this.length and remaining < nxt.time_end * 0.5
            and math.sqrt(sum(x * x for x in acc)) < lim.corner_accel_mss)


def _descend(t: float, height: float, lim: NavLimits, verticals: list[VerticalMotion]) -> float:
    """The landing from ``height`` starting at ``t`` (``planner.flight.vertical.landing_s``); when disarmed."""
    down = landing_s(height, lim)
    verticals.append(VerticalMotion("descent", t, t + down - LANDED_TO_DISARM_S, height))
    return t + down


def _return_to_launch(t: float, here: tuple[float, float, float], lim: NavLimits, motions: list[HorizontalMotion],
                      verticals: list[VerticalMotion]) -> tuple[float, float, float]:
    """``ModeRTL`` from ``here`` at ``t``: climb to the return altitude (``ModeRTL::compute_return_target``:
    at least RTL_ALT and the current altitude, at most RTL_CONE_SLOPE × the distance home), fly home at
    RTL_SPEED (its own ``wp_and_spline_init``: 0 is WPNAV_SPEED, not the mission's speed), hold
    RTL_LOIT_TIME, land. Returns (over home, disarmed, return altitude)."""
    dist = math.hypot(here[0], here[1])
    target = max(lim.rtl_alt_m, here[2])
    if lim.rtl_cone_slope >= 0.5:  # RTL_MIN_CONE_SLOPE
        target = min(target, max(dist * lim.rtl_cone_slope, max(0.3, here[2])))
    for a, b in ((here, (here[0], here[1], target)), ((here[0], here[1], target), (0.0, 0.0, target))):
        curve, d = leg_curve(a, b, lim.rtl_speed_mps if lim.rtl_speed_mps > 0 else lim.speed_mps, lim)
        if not curve.is_empty:
            motions.append(HorizontalMotion(t, curve, d))
            t += curve.time_end
    over_home = t
    if lim.rtl_loiter_s > 0:
        verticals.append(VerticalMotion("hover", t, t + lim.rtl_loiter_s))
        t += lim.rtl_loiter_s
    return over_home, _descend(t, target, lim, verticals), target


def fly_auto(points: Sequence[NavPoint], lim: NavLimits, *, corner_rule: CornerRule = "decel_start") -> FlightTimeline:
    """The timeline of ArduCopter flying ``points`` in AUTO (module docstring); the first must be a take-off."""
    pts = tuple(points)
    if not pts or pts[0].kind != "takeoff":
        raise InvalidArgument("an ArduCopter mission timeline starts with a take-off")
    if any(p.kind == "takeoff" for p in pts[1:]):
        raise InvalidArgument("one take-off per sortie: a second take-off cannot be timed")
    n = len(pts)
    arrivals = [0.0] * n
    departures = [0.0] * n
    motions: list[HorizontalMotion] = []
    verticals: list[VerticalMotion] = []
    climb = takeoff_s(pts[0].up_m, lim)
    verticals.append(VerticalMotion("climb", 0.0, climb, pts[0].up_m))
    arrivals[0] = departures[0] = climb
    # the wp controller starts at the default speed (AC_WPNav::wp_and_spline_init); nav points carry changes
    speed = lim.speed_mps
    here = pts[0].xyz
    # legs: index i → the leg that ends at point i (waypoints and a landing's fly-to part)
    legs: dict[int, tuple[SCurve, tuple[float, float, float]]] = {}

    def leg(i: int, origin: tuple[float, float, float], spd: float) -> tuple[SCurve, tuple[float, float, float]]:
        if i not in legs:
            target = pts[i].xyz if pts[i].kind == "waypoint" else (pts[i].east_m, pts[i].north_m, origin[2])
            legs[i] = leg_curve(origin, target, spd, lim)
        return legs[i]

    start = climb  # mission clock when the current leg's S-curve starts
    became_current = climb  # when the current leg became "this leg" (its corner checks begin then)
    end = climb
    for i in range(1, n):
        p = pts[i]
        if p.speed_mps is not None:
            speed = min(p.speed_mps, lim.max_speed_mps)
        if p.kind == "rtl":
            arrivals[i], end, height = _return_to_launch(start, here, lim, motions, verticals)
            departures[i] = end
            break
        curve, d = leg(i, here, speed)
        if p.kind == "land":
            arrive = start + curve.time_end
            arrivals[i] = arrive
            if not curve.is_empty:
                motions.append(HorizontalMotion(start, curve, d))
            departures[i] = end = _descend(arrive, here[2], lim, verticals)
            here = (p.east_m, p.north_m, 0.0)
            break
        if not curve.is_empty:
            motions.append(HorizontalMotion(start, curve, d))
        nxt = pts[i + 1] if i + 1 < n else None
        fast = p.hold_s <= 0 and nxt is not None and nxt.kind == "waypoint"
        t_start_next = None
        if fast and nxt is not None:
            next_speed = min(nxt.speed_mps, lim.max_speed_mps) if nxt.speed_mps is not None else speed
            ncurve, nd = leg(i + 1, p.xyz, next_speed)
            t_start_next = _corner_start(curve, d, ncurve, nd, became_current - start, lim, corner_rule)
        if t_start_next is not None:
            remaining = curve.time_end - t_start_next
            arrivals[i] = departures[i] = start + t_start_next + remaining * 0.5
            start, became_current = start + t_start_next, arrivals[i]
        else:
            arrivals[i] = start + curve.time_end
            departures[i] = arrivals[i] + max(p.hold_s, 0.0)
            if p.hold_s > 0:
                verticals.append(VerticalMotion("hover", arrivals[i], departures[i]))
            start = became_current = departures[i]
        here = p.xyz
        end = departures[i]
    return FlightTimeline(pts, tuple(arrivals), tuple(departures), end, tuple(motions), tuple(verticals))
