"""ArduCopter's S-curve leg and waypoint controller (``flows.sim.scurve``, ``flows.sim.wpnav``): the limits hold.

Properties a leg of ``SCurve`` must have whatever the numbers (``SCurve::calculate_track``): it starts and ends at
rest on its end points, never exceeds its speed, acceleration or jerk limits, and takes at least length / speed;
the waypoint controller passes a corner inside WPNAV_RADIUS, faster than stopping there, and a DO_CHANGE_SPEED
takes effect on the leg in flight.
"""

from __future__ import annotations

import math

import pytest

from flows.sim.scurve import SCurve
from flows.sim.vec3 import vlen
from flows.sim.wpnav import NavLimits, WaypointNav

LIMITS = NavLimits()  # ArduCopter's defaults: 10 m/s, 2.5 m/s², jerk 1 m/s³


def _leg(length: float, speed: float = 10.0) -> SCurve:
    jerk, snap = LIMITS.jerk_and_snap()
    leg = SCurve()
    leg.calculate_track((0.0, 0.0, 20.0), (length, 0.0, 20.0), speed, 2.5, 1.5, LIMITS.accel, 1.0, snap, jerk)
    return leg


@pytest.mark.parametrize("length", [0.5, 5.0, 30.0, 200.0, 1500.0])
def test_a_leg_starts_and_ends_at_rest_within_its_limits(length: float) -> None:
    leg = _leg(length)
    dt, t_end = 0.01, leg.time_end()
    assert t_end >= length / 10.0
    samples = [leg.state_at(i * dt) for i in range(int(t_end / dt) + 2)]
    assert samples[0][2] == pytest.approx(0.0, abs=1e-6) and samples[-1][2] == pytest.approx(0.0, abs=1e-3)
    assert samples[-1][3] == pytest.approx(length, abs=1e-3)
    assert max(s[2] for s in samples) <= 10.0 + 1e-6
    assert max(abs(s[1]) for s in samples) <= LIMITS.accel + 1e-3
    assert max(abs(s[0]) for s in samples) <= LIMITS.jerk + 1e-3
    distances = [s[3] for s in samples]
    assert all(b >= a - 1e-6 for a, b in zip(distances, distances[1:]))  # never backwards


def test_short_legs_never_reach_the_waypoint_speed() -> None:
    """Why dense waypoints fly slowly: at WPNAV_JERK 1 m/s³ a 20 m leg peaks far below 10 m/s."""
    leg = _leg(20.0)
    peak = max(leg.state_at(i * 0.05)[2] for i in range(int(leg.time_end() / 0.05)))
    assert peak < 5.0 and leg.time_end() > 20.0 / peak


def test_a_corner_is_cut_inside_the_radius_and_faster_than_stopping() -> None:
    def fly(fast: bool) -> tuple[float, float]:
        nav = WaypointNav(LIMITS)
        nav.init((0.0, 0.0, 20.0))
        nav.set_destination((100.0, 0.0, 20.0))
        if fast:
            nav.set_destination_next((100.0, 100.0, 20.0))
        t, closest = 0.0, math.inf
        while not nav.reached:
            nav.advance(0.05)
            t += 0.05
            closest = min(closest, vlen((nav.target[0] - 100.0, nav.target[1], 0.0)))
        nav.set_destination((100.0, 100.0, 20.0))
        while not nav.reached:
            nav.advance(0.05)
            t += 0.05
            closest = min(closest, vlen((nav.target[0] - 100.0, nav.target[1], 0.0)))
        return t, closest

    t_fast, closest_fast = fly(True)
    t_stop, closest_stop = fly(False)
    assert t_fast < t_stop
    assert closest_stop < 0.01 and closest_fast < LIMITS.radius * 1.1  # (the turn starts on a 50 ms step)


def test_a_speed_change_on_a_leg_in_flight_changes_its_cruise() -> None:
    nav = WaypointNav(LIMITS)
    nav.init((0.0, 0.0, 20.0))
    nav.set_destination((1000.0, 0.0, 20.0))
    for _ in range(400):  # 20 s: cruising at 10 m/s
        nav.advance(0.05)
    assert vlen(nav.velocity) == pytest.approx(10.0, abs=0.01)
    nav.set_speed_xy(5.0)  # AC_WPNav::set_speed_xy → SCurve::set_speed_max
    for _ in range(400):
        nav.advance(0.05)
    assert vlen(nav.velocity) == pytest.approx(5.0, abs=0.01)
