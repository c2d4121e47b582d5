"""planner.flight: the S-curve, the ArduPilot and PX4 timelines, the vertical phases, the parameters."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import planner.flight.ardupilot
import planner.flight.params
import planner.flight.scurve
import planner.flight.vertical
import planner.world.nav_params
from planner.errors import InvalidArgument
from planner.flight.ardupilot import fly_auto
from planner.flight.params import NavLimits
from planner.flight.px4 import fly_mission
from planner.flight.scurve import SCurve, calculate_path
from planner.flight.timeline import NavPoint
from planner.flight.vertical import landing_s, takeoff_s
from planner.world.nav_params import NavParams

AP = NavLimits.from_params(NavParams(), "ardupilot")
PX4 = NavLimits.from_params(NavParams(), "px4")


@pytest.mark.parametrize(
    "module",
    [planner.flight.scurve, planner.flight.ardupilot, planner.flight.params, planner.flight.vertical, planner.world.nav_params],
)
def test_module_examples_run(module) -> None:  # noqa: ANN001
    failures, tried = doctest.testmod(module, verbose=False)
    assert tried > 0 and failures == 0


@settings(max_examples=60, deadline=None)
@given(length=st.floats(0.5, 3000.0), speed=st.floats(1.0, 20.0), accel=st.floats(0.5, 5.0), jerk=st.floats(0.5, 10.0))
def test_a_leg_ends_at_rest_at_its_end_within_its_limits(length: float, speed: float, accel: float, jerk: float) -> None:
    snap = jerk * math.pi / (2 * 0.15) * 0.5
    leg = SCurve.straight(length, speed, accel, jerk, snap)
    ts = np.linspace(0.0, leg.time_end, 4001)
    _, a, v, p = leg.states(ts)
    assert p[-1] == pytest.approx(length, rel=1e-6, abs=1e-6)
    assert v[-1] == pytest.approx(0.0, abs=1e-6) and v[0] == 0.0
    assert np.all(np.diff(p) >= -1e-9)
    assert v.max() <= speed * (1 + 1e-6) and np.abs(a).max() <= accel * (1 + 1e-6)
    # never faster than the speed limit allows, never slower than an accelerate-then-brake at the limits
    assert leg.time_end >= length / speed


def test_a_long_leg_costs_its_cruise_time_plus_one_acceleration() -> None:
    leg = SCurve.straight(1000.0, 10.0, 2.5, 1.0, 5.236)
    # rest to rest = L/V + the acceleration phase (braking mirrors it)
    assert leg.time_end == pytest.approx(1000.0 / 10.0 + leg.time_accel_end, abs=1e-6)
    assert leg.cruise_speed == pytest.approx(10.0)


def test_calculate_path_refuses_nonsense_quietly() -> None:
    assert calculate_path(0.0, 1.0, 0.0, 2.5, 10.0, 50.0) == (0.0, 0.0, 0.0, 0.0, 0.0)
    assert calculate_path(5.0, 1.0, 10.0, 2.5, 10.0, 50.0) == (0.0, 0.0, 0.0, 0.0, 0.0)  # already at speed
    assert SCurve.straight(0.0, 10.0, 2.5, 1.0, 5.0).is_empty


def _mission(*xy: tuple[float, float], alt: float = 40.0, hold: dict[int, float] | None = None) -> list[NavPoint]:
    hold = hold or {}
    pts = [NavPoint("takeoff", 0.0, 0.0, alt), NavPoint("waypoint", 0.0, 0.0, alt)]
    pts += [NavPoint("waypoint", x, y, alt, hold.get(i, 0.0)) for i, (x, y) in enumerate(xy)]
    pts.append(NavPoint("land", *xy[-1], alt))
    return pts


def _flight_s(tl) -> float:  # noqa: ANN001
    return tl.arrivals_s[-2] - tl.arrivals_s[1]


def test_a_point_on_the_line_is_flown_through_at_speed() -> None:
    through = fly_auto(_mission((0, 100), (0, 200)), AP)
    single = fly_auto(_mission((0, 200)), AP)
    assert _flight_s(through) == pytest.approx(_flight_s(single), abs=0.1)


def test_corners_cost_more_the_sharper_they_are() -> None:
    times = [_flight_s(fly_auto(_mission((0, 100), (100 * math.sin(a), 100 + 100 * math.cos(a))), AP))
             for a in np.radians([0, 30, 60, 90, 135])]
    assert times == sorted(times) and times[-1] > times[0] + 2.5


def test_a_repeated_point_stops_the_vehicle_and_a_hold_holds() -> None:
    base = _flight_s(fly_auto(_mission((0, 100), (0, 200)), AP))
    repeated = _flight_s(fly_auto(_mission((0, 100), (0, 100), (0, 200)), AP))
    held = fly_auto(_mission((0, 100), (0, 200), hold={0: 5.0}), AP)
    assert repeated > base + 5.0  # a stop and a fresh acceleration
    assert _flight_s(held) > repeated + 4.0
    assert any(v.kind == "hover" and v.end_s - v.start_s == pytest.approx(5.0) for v in held.verticals)


def test_the_vehicle_parameters_decide() -> None:
    slow = NavLimits.from_params(NavParams.of({"WPNAV_SPEED": 500}), "ardupilot")
    wide = NavLimits.from_params(NavParams.of({"WPNAV_RADIUS": 1000}), "ardupilot")
    zigzag = _mission((0, 60), (60, 60), (60, 120), (120, 120))
    base = _flight_s(fly_auto(zigzag, AP))
    assert _flight_s(fly_auto(zigzag, slow)) > base + 5.0
    assert _flight_s(fly_auto(zigzag, wide)) < base - 2.0


def test_speed_changes_apply_from_the_leg_they_precede() -> None:
    pts = _mission((0, 300), (0, 600))
    fast = [p if p.east_m or p.north_m != 600 else NavPoint("waypoint", 0, 600, 40, 0, 15.0) for p in pts]
    assert _flight_s(fly_auto(fast, AP)) < _flight_s(fly_auto(pts, AP)) - 5.0


def test_px4_times_a_mission_too() -> None:
    pts = _mission((0, 200), (200, 200), (200, 400))
    tl = fly_mission(pts, PX4)
    assert all(b >= a for a, b in zip(tl.arrivals_s, tl.arrivals_s[1:]))
    # 600 m at MPC_XY_CRUISE 5 m/s and two 90° corners at NAV_ACC_RAD 10 m: a little over 120 s
    assert 120.0 < _flight_s(tl) < 140.0
    straight = fly_mission(_mission((0, 600)), PX4)
    assert _flight_s(straight) < _flight_s(tl)


def test_take_off_and_landing_grow_with_height() -> None:
    for lim in (AP, PX4):
        assert 0 < takeoff_s(20, lim) < takeoff_s(40, lim) < takeoff_s(80, lim)
        assert 0 < landing_s(20, lim) < landing_s(40, lim) < landing_s(80, lim)
    # ArduPilot: 1.5 m/s down to LAND_ALT_LOW, then 0.5 m/s: ~42 s from 40 m, 3.5 s to disarm
    assert landing_s(40, AP) == pytest.approx(45.2, abs=0.5)


def test_unknown_or_impossible_parameters_are_refused() -> None:
    with pytest.raises(InvalidArgument, match="WPNAV_SPED"):
        NavLimits.from_params(NavParams.of({"WPNAV_SPED": 1000}), "ardupilot")
    with pytest.raises(InvalidArgument, match="MPC_XY_CRUISE.*speed_mps"):
        NavLimits.from_params(NavParams.of({"MPC_XY_CRUISE": 0}), "px4")
    with pytest.raises(InvalidArgument):
        NavParams.of({"WPNAV_SPEED": float("nan")})
    with pytest.raises(InvalidArgument, match="take-off"):
        fly_auto([NavPoint("waypoint", 0, 0, 40)], AP)


def test_nav_params_merge_and_default() -> None:
    given_ = NavParams.of({"WPNAV_SPEED": 1200})
    read = given_.merged({"WPNAV_SPEED": 800.0, "WPNAV_RADIUS": 300.0})
    assert read.value("WPNAV_SPEED", "ardupilot") == 800.0 and read.value("WPNAV_JERK", "ardupilot") == 1.0
    assert hash(read) == hash(NavParams.of({"WPNAV_RADIUS": 300.0, "WPNAV_SPEED": 800.0}))


def test_a_return_to_launch_climbs_flies_home_waits_and_lands() -> None:
    """ModeRTL: climb to RTL_ALT (15 m) when lower, home at WPNAV_SPEED, 5 s over home, land."""
    low = fly_auto([NavPoint("takeoff", 0, 0, 10), NavPoint("waypoint", 0, 300, 10), NavPoint("rtl", 0, 0, 0)], AP)
    high = fly_auto([NavPoint("takeoff", 0, 0, 40), NavPoint("waypoint", 0, 300, 40), NavPoint("rtl", 0, 0, 0)], AP)
    climb = [m for m in low.motions if m.direction[2] > 0.99]
    assert len(climb) == 1 and climb[0].profile.length == pytest.approx(5.0)  # 10 m → 15 m
    assert not [m for m in high.motions if m.direction[2] > 0.99]  # already above RTL_ALT
    for tl, alt in ((low, 15.0), (high, 40.0)):
        hover = [v for v in tl.verticals if v.kind == "hover"]
        assert len(hover) == 1 and hover[0].end_s - hover[0].start_s == pytest.approx(5.0)
        assert tl.end_s - hover[0].end_s == pytest.approx(landing_s(alt, AP))
    no_wait = NavLimits.from_params(NavParams.of({"RTL_LOIT_TIME": 0}), "ardupilot")
    assert fly_auto([NavPoint("takeoff", 0, 0, 40), NavPoint("waypoint", 0, 300, 40), NavPoint("rtl", 0, 0, 0)], no_wait).end_s \
        == pytest.approx(high.end_s - 5.0)
