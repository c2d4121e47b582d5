"""The limits a vehicle's waypoint controller flies a mission under, in SI units, from its parameters.

``NavLimits.for_drone`` reads ``Drone.nav_params`` (the autopilot's own names and units, with its
defaults: ``planner.world.nav_params``) and derives what the controllers use:

ArduPilot (Copter-4.6):

* horizontal speed ``WPNAV_SPEED``, acceleration ``WPNAV_ACCEL`` (``AC_WPNav::get_wp_acceleration``),
  corner acceleration ``WPNAV_ACCEL_C`` or twice ``WPNAV_ACCEL`` (``AC_WPNav::get_corner_acceleration``),
  waypoint radius ``WPNAV_RADIUS``; vertical ``WPNAV_SPEED_UP``/``_DN``, ``WPNAV_ACCEL_Z``;
* jerk and snap as ``AC_WPNav::calc_scurve_jerk_and_snap``: jerk = min(``WPNAV_JERK``, the roll/pitch
  rate limits × g when ``ATC_RATE_R_MAX``/``_P_MAX`` are set); snap = jerk·π / (2·max(``ATC_INPUT_TC``,
  0.1)), at most the roll/pitch angular acceleration limits × g, then halved;
* landing: ``LAND_SPEED_HIGH`` (0: ``WPNAV_SPEED_DN``) down to ``LAND_ALT_LOW``, ``LAND_SPEED`` below;
* return to launch (``ModeRTL``): ``RTL_ALT`` (at least the current altitude, at most ``RTL_CONE_SLOPE`` ×
  the distance home), ``RTL_SPEED`` (0: ``WPNAV_SPEED``), ``RTL_LOIT_TIME`` over home.

PX4: ``MPC_XY_CRUISE`` (the mission speed when the mission sets none), ``MPC_XY_VEL_MAX``,
``MPC_ACC_HOR``, ``MPC_JERK_AUTO``, ``NAV_ACC_RAD``, ``MPC_XY_TRAJ_P``; vertical ``MPC_Z_V_AUTO_UP/DN``,
``MPC_TKO_SPEED``, ``MPC_LAND_SPEED`` below ``MPC_LAND_ALT2``.

Example::

    >>> lim = NavLimits.from_params(NavParams(), "ardupilot")
    >>> lim.speed_mps, lim.accel_mss, lim.jerk_msss, round(lim.snap_mssss, 3), lim.radius_m, lim.corner_accel_mss
    (10.0, 2.5, 1.0, 5.236, 2.0, 5.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.errors import InvalidArgument
from planner.world.model import Drone
from planner.world.nav_params import NAV_PARAM_NAMES, NavParams

__all__ = ["GRAVITY_MSS", "NAV_PARAM_NAMES", "NavLimits"]

GRAVITY_MSS = 9.80665


@dataclass(frozen=True)
class NavLimits:
    """What one vehicle's waypoint controller flies under (SI units)."""

    autopilot: str
    speed_mps: float  # default horizontal mission speed
    accel_mss: float
    jerk_msss: float
    snap_mssss: float
    radius_m: float  # ArduPilot WPNAV_RADIUS / PX4 NAV_ACC_RAD
    corner_accel_mss: float  # ArduPilot corner acceleration / PX4 MPC_XY_TRAJ_P × MPC_ACC_HOR
    speed_up_mps: float
    speed_down_mps: float
    accel_z_mss: float
    jerk_z_msss: float
    land_speed_high_mps: float
    land_speed_mps: float
    land_alt_low_m: float
    takeoff_speed_mps: float
    max_speed_mps: float  # the highest speed a mission may ask for
    rtl_alt_m: float = 15.0  # ArduPilot RTL: return altitude (at least the current one)
    rtl_speed_mps: float = 0.0  # 0: the default horizontal speed
    rtl_cone_slope: float = 3.0
    rtl_loiter_s: float = 5.0

    @classmethod
    def for_drone(cls, drone: Drone) -> NavLimits:
        return cls.from_params(drone.nav_params, drone.autopilot)

    @classmethod
    def from_params(cls, params: NavParams, autopilot: str) -> NavLimits:
        if autopilot not in NAV_PARAM_NAMES:
            raise InvalidArgument(f"unknown autopilot {autopilot!r}; expected ardupilot or px4")
        params.check(autopilot)
        v = lambda name: params.value(name, autopilot)  # noqa: E731
        lim = _ardupilot(v) if autopilot == "ardupilot" else _px4(v)
        for name in ("speed_mps", "accel_mss", "jerk_msss", "snap_mssss", "radius_m", "corner_accel_mss", "speed_up_mps",
                     "speed_down_mps", "accel_z_mss", "jerk_z_msss", "land_speed_mps", "takeoff_speed_mps", "max_speed_mps"):
            x = getattr(lim, name)
            if not (x > 0 and (math.isfinite(x) or name == "snap_mssss")):
                raise InvalidArgument(f"{autopilot} navigation parameters {params.as_dict()} give {name} = {x!r}; it must be > 0")
        return lim


def _ardupilot(v) -> NavLimits:
    accel = v("WPNAV_ACCEL") / 100.0
    # calc_scurve_jerk_and_snap: jerk from the rate limits (0 = unlimited) and WPNAV_JERK
    rate_max = min(v("ATC_RATE_R_MAX"), v("ATC_RATE_P_MAX"))
    jerk = v("WPNAV_JERK") if rate_max <= 0 else min(math.radians(rate_max) * GRAVITY_MSS, v("WPNAV_JERK"))
    if jerk <= 0:  # AC_WPNav::wp_and_spline_init: a non-positive WPNAV_JERK becomes the acceleration
        jerk = accel
    snap = jerk * math.pi / (2.0 * max(v("ATC_INPUT_TC"), 0.1))
    ang_accel = min(v("ATC_ACCEL_R_MAX"), v("ATC_ACCEL_P_MAX"))
    if ang_accel > 0:
        snap = min(snap, math.radians(ang_accel / 100.0) * GRAVITY_MSS)
    snap *= 0.5
    corner = v("WPNAV_ACCEL_C") / 100.0
    speed_down = v("WPNAV_SPEED_DN") / 100.0
    high = v("LAND_SPEED_HIGH") / 100.0
    return NavLimits(
        autopilot="ardupilot",
        speed_mps=max(v("WPNAV_SPEED"), 20.0) / 100.0,  # WPNAV_WP_SPEED_MIN
        accel_mss=accel,
        jerk_msss=jerk,
        snap_mssss=snap,
        radius_m=max(v("WPNAV_RADIUS"), 5.0) / 100.0,  # WPNAV_WP_RADIUS_MIN
        corner_accel_mss=corner if corner > 0 else 2.0 * accel,
        speed_up_mps=v("WPNAV_SPEED_UP") / 100.0,
        speed_down_mps=speed_down,
        accel_z_mss=v("WPNAV_ACCEL_Z") / 100.0,
        jerk_z_msss=v("PSC_JERK_Z"),
        land_speed_high_mps=high if high > 0 else speed_down,
        land_speed_mps=abs(v("LAND_SPEED")) / 100.0,
        land_alt_low_m=max(v("LAND_ALT_LOW"), 100.0) / 100.0,  # land_run_vertical_control: MAX(land_alt_low, 100)
        takeoff_speed_mps=v("WPNAV_SPEED_UP") / 100.0,
        max_speed_mps=20.0,  # WPNAV_SPEED's range
        rtl_alt_m=max(v("RTL_ALT"), 30.0) / 100.0,  # RTL_ALT_MIN
        rtl_speed_mps=max(v("RTL_SPEED"), 0.0) / 100.0,
        rtl_cone_slope=v("RTL_CONE_SLOPE"),
        rtl_loiter_s=max(v("RTL_LOIT_TIME"), 0.0) / 1000.0,
    )


def _px4(v) -> NavLimits:
    accel = v("MPC_ACC_HOR")
    return NavLimits(
        autopilot="px4",
        speed_mps=min(v("MPC_XY_CRUISE"), v("MPC_XY_VEL_MAX")),
        accel_mss=accel,
        jerk_msss=v("MPC_JERK_AUTO"),
        snap_mssss=math.inf,  # VelocitySmoothing limits jerk, not snap
        radius_m=v("NAV_ACC_RAD"),
        corner_accel_mss=v("MPC_XY_TRAJ_P") * accel,
        speed_up_mps=v("MPC_Z_V_AUTO_UP"),
        speed_down_mps=v("MPC_Z_V_AUTO_DN"),
        accel_z_mss=min(v("MPC_ACC_UP_MAX"), v("MPC_ACC_DOWN_MAX")),
        jerk_z_msss=v("MPC_JERK_AUTO"),
        land_speed_high_mps=v("MPC_Z_V_AUTO_DN"),
        land_speed_mps=v("MPC_LAND_SPEED"),
        land_alt_low_m=v("MPC_LAND_ALT2"),
        takeoff_speed_mps=v("MPC_TKO_SPEED"),
        max_speed_mps=v("MPC_XY_VEL_MAX"),
    )
