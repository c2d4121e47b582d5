"""ArduCopter's waypoint controller (``libraries/AC_WPNav/AC_WPNav.cpp``): legs, corners, the speed of a mission.

``WaypointNav`` keeps what ``AC_WPNav`` keeps for straight waypoints — the leg
being flown, the one before it (still braking out of the last corner) and the
next one when the mission has told it (``set_wp_destination_next``: then the
waypoint is "fast" and the vehicle need not stop) — and moves the target along
them in time (``advance_wp_target_along_track``, through ``SCurve``). The
vehicle follows the target; the simulator takes the target as where the
vehicle is (SITL's vehicle tracks it within centimetres at these jerks).

The limits are the vehicle's parameters (``NavLimits.from_params``): WPNAV_SPEED,
WPNAV_SPEED_UP, WPNAV_SPEED_DN, WPNAV_ACCEL, WPNAV_ACCEL_Z, WPNAV_JERK,
WPNAV_RADIUS, WPNAV_ACCEL_C; the snap comes from ATC_INPUT_TC and
ATC_ACCEL_R_MAX/P_MAX as ``AC_WPNav::calc_scurve_jerk_and_snap`` derives it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from flows.sim.scurve import SCurve
from flows.sim.vec3 import ZERO, Vec, vadd, vlen, vscale, vsub
from flows.sim.shaping import sqrt_controller
from flows.sim.spline import SplineCurve

__all__ = ["NavLimits", "WaypointNav"]

GRAVITY = 9.80665
SPEED_MIN = 0.2  # WPNAV_WP_SPEED_MIN 20 cm/s
RADIUS_MIN = 0.05  # WPNAV_WP_RADIUS_MIN 5 cm


@dataclass(frozen=True)
class NavLimits:
    """The waypoint controller's limits in metres and seconds."""

    speed: float = 10.0  # WPNAV_SPEED 1000 cm/s
    speed_up: float = 2.5  # WPNAV_SPEED_UP 250
    speed_down: float = 1.5  # WPNAV_SPEED_DN 150
    accel: float = 2.5  # WPNAV_ACCEL 250 cm/s/s
    accel_z: float = 1.0  # WPNAV_ACCEL_Z 100
    jerk: float = 1.0  # WPNAV_JERK 1 m/s/s/s
    radius: float = 2.0  # WPNAV_RADIUS 200 cm
    accel_corner: float = 0.0  # WPNAV_ACCEL_C 0: twice WPNAV_ACCEL
    input_tc: float = 0.15  # ATC_INPUT_TC (Copter default, AC_AttitudeControl.cpp)
    accel_rp_max_cdss: float = 110000.0  # ATC_ACCEL_R_MAX / ATC_ACCEL_P_MAX
    rate_rp_max_degs: float = 0.0  # ATC_RATE_R_MAX / ATC_RATE_P_MAX (0: no limit)
    shaping_jerk: float = 5.0  # PSC_JERK_XY: how a pause slows the leg's clock
    frame_speed_max: float = 0.0  # what the airframe can fly (lean-angle limit against drag); 0: no limit

    @classmethod
    def from_params(cls, p: Mapping[str, float]) -> "NavLimits":
        """From ArduCopter's parameter values (centimetre units as the vehicle stores them)."""
        return cls(speed=max(p.get("WPNAV_SPEED", 1000.0), 20.0) / 100.0, speed_up=p.get("WPNAV_SPEED_UP", 250.0) / 100.0,
                   speed_down=p.get("WPNAV_SPEED_DN", 150.0) / 100.0, accel=p.get("WPNAV_ACCEL", 250.0) / 100.0,
                   accel_z=p.get("WPNAV_ACCEL_Z", 100.0) / 100.0, jerk=p.get("WPNAV_JERK", 1.0),
                   radius=max(p.get("WPNAV_RADIUS", 200.0) / 100.0, RADIUS_MIN),
                   accel_corner=p.get("WPNAV_ACCEL_C", 0.0) / 100.0, input_tc=p.get("ATC_INPUT_TC", 0.15),
                   accel_rp_max_cdss=min(p.get("ATC_ACCEL_R_MAX", 110000.0), p.get("ATC_ACCEL_P_MAX", 110000.0)),
                   rate_rp_max_degs=min(p.get("ATC_RATE_R_MAX", 0.0), p.get("ATC_RATE_P_MAX", 0.0)),
                   shaping_jerk=p.get("PSC_JERK_XY", 5.0), frame_speed_max=p.get("SIM_SPEED_MAX", 0.0))

    def corner_accel(self) -> float:
        """``AC_WPNav::get_corner_acceleration``."""
        return self.accel_corner if self.accel_corner > 0 else 2.0 * self.accel

    def jerk_and_snap(self) -> tuple[float, float]:
        """``AC_WPNav::calc_scurve_jerk_and_snap``: the jerk is WPNAV_JERK unless the attitude rate limit is lower;
        the snap is what the attitude controller can follow, halved."""
        jerk = self.jerk if self.jerk > 0 else self.accel
        rate_jerk = math.radians(self.rate_rp_max_degs) * GRAVITY
        if rate_jerk > 0:
            jerk = min(jerk, rate_jerk)
        snap = jerk * math.pi / (2.0 * max(self.input_tc, 0.1))
        accel_snap = math.radians(self.accel_rp_max_cdss * 0.01) * GRAVITY
        if accel_snap > 0:
            snap = min(snap, accel_snap)
        return jerk, snap * 0.5


class WaypointNav:
    """The straight-waypoint part of ``AC_WPNav``; positions are (north, east, up) metres from the EKF origin."""

    def __init__(self, limits: NavLimits) -> None:
        self.limits = limits
        self.jerk, self.snap = limits.jerk_and_snap()
        self.speed_xy = limits.speed
        self.speed_up = limits.speed_up
        self.speed_down = limits.speed_down
        self.prev_leg, self.this_leg, self.next_leg = SCurve(), SCurve(), SCurve()
        self.spline_this, self.spline_next = SplineCurve(), SplineCurve()
        self.this_is_spline = self.next_is_spline = False
        self.origin: Vec = ZERO
        self.destination: Vec = ZERO
        self.fast_waypoint = False
        self.reached = True
        self.active = False
        self.paused = False
        self.offset_vel = self.speed_xy  # _offset_vel: the leg's clock as a speed, shaped to 0 by a pause
        self.offset_accel = 0.0
        self.target: Vec = ZERO
        self.velocity: Vec = ZERO
        self._leg_speed = 0.0  # the legs' own speed at the last step, before any slowing

    def init(self, stopping_point: Vec, speed: float | None = None) -> None:
        """Start from ``stopping_point`` at rest (``AC_WPNav::wp_and_spline_init``); ``speed`` overrides WPNAV_SPEED."""
        self.speed_xy = max(speed if speed and speed > 0 else self.limits.speed, SPEED_MIN)
        self.speed_up, self.speed_down = self.limits.speed_up, self.limits.speed_down
        self.prev_leg.init()
        self.this_leg.init()
        self.next_leg.init()
        self.this_is_spline = self.next_is_spline = False
        self.reached = True
        self.fast_waypoint = False
        self.origin = self.destination = self.target = stopping_point
        self.velocity = ZERO
        self.offset_vel = self.speed_xy
        self.offset_accel = 0.0
        self.paused = False
        self.active = True

    def _leg(self, origin: Vec, destination: Vec) -> SCurve:
        leg = SCurve()
        leg.calculate_track(origin, destination, self.speed_xy, self.speed_up, self.speed_down, self.limits.accel,
                            self.limits.accel_z, self.snap, self.jerk)
        return leg

    def set_destination(self, destination: Vec) -> None:
        """The next leg runs from the last destination to ``destination`` (``AC_WPNav::set_wp_destination``): the leg
        already started as the "next" one is taken over when the last waypoint was fast; otherwise a new one (after a
        spline, starting at the speed the spline left off)."""
        if not self.active or not self.reached:
            self.init(self.target, self.speed_xy)
        origin_speed = 0.0
        self.origin = self.destination
        if self.this_is_spline:
            origin_speed = vlen(self.velocity)
            self.prev_leg = SCurve()
        else:
            self.prev_leg = self.this_leg
        self.destination = destination
        if self.fast_waypoint and not self.this_is_spline and not self.next_is_spline and not self.next_leg.finished():
            self.this_leg = self.next_leg
        else:
            self.this_leg = self._leg(self.origin, destination)
            if origin_speed > 0:
                self.this_leg.set_origin_speed_max(origin_speed)
        self.this_is_spline = False
        self.next_leg = SCurve()
        self.fast_waypoint = False
        self.reached = False

    def set_destination_next(self, destination: Vec) -> None:
        """The leg after this one is known: the waypoint is passed through, not stopped at
        (``AC_WPNav::set_wp_destination_next``); after a spline, the two agree on the speed at the waypoint."""
        self.next_leg = self._leg(self.destination, destination)
        if self.this_is_spline:
            start = self.next_leg.set_origin_speed_max(self.spline_this.destination_speed_max)
            self.spline_this.set_destination_speed_max(start)
        self.next_is_spline = False
        self.fast_waypoint = True

    def _spline(self) -> SplineCurve:
        spline = SplineCurve()
        spline.set_speed_accel(self.speed_xy, self.speed_up, self.speed_down, self.limits.accel, self.limits.accel_z)
        return spline

    def set_spline_destination(self, destination: Vec, nxt: Vec, next_is_spline: bool) -> None:
        """A spline leg to ``destination``, its end tangent towards ``nxt`` (``AC_WPNav::set_spline_destination``)."""
        if not self.active or not self.reached:
            self.init(self.target, self.speed_xy)
        origin_vector = ZERO
        if self.fast_waypoint:
            origin_vector = (self.spline_this.destination_vel if self.this_is_spline
                             else vsub(self.destination, self.origin))
        self.origin = self.destination
        self.destination = destination
        destination_vector = vsub(nxt, self.origin) if next_is_spline else vsub(nxt, destination)
        self.fast_waypoint = vlen(destination_vector) > 0
        self.spline_this = self._spline()
        self.spline_this.set_origin_and_destination(self.origin, destination, origin_vector, destination_vector)
        self.prev_leg = SCurve()
        self.this_is_spline = True
        self.reached = False

    def set_spline_destination_next(self, nxt: Vec, next_next: Vec, next_next_is_spline: bool) -> None:
        """The next leg is a spline (``AC_WPNav::set_spline_destination_next``)."""
        origin_vector = self.spline_this.destination_vel if self.this_is_spline else vsub(self.destination, self.origin)
        destination_vector = vsub(next_next, self.destination) if next_next_is_spline else vsub(next_next, nxt)
        self.spline_next = self._spline()
        self.spline_next.set_origin_and_destination(self.destination, nxt, origin_vector, destination_vector)
        self.next_is_spline = True
        self.fast_waypoint = True
        if not self.this_is_spline:
            self.this_leg.set_destination_speed_max(self.spline_next.origin_speed_max)
        else:
            self.spline_this.set_destination_speed_max(self.spline_next.origin_speed_max)

    def set_speed_xy(self, speed: float) -> None:
        """A DO_CHANGE_SPEED or MAV_CMD_DO_CHANGE_SPEED (``AC_WPNav::set_speed_xy`` →
        ``update_track_with_speed_accel_limits``): this leg and the next are rebuilt for the new limit."""
        if speed < SPEED_MIN or self.speed_xy <= 0:
            return
        self.offset_vel = speed * self.offset_vel / self.speed_xy
        self.speed_xy = speed
        for leg in (self.this_leg, self.next_leg):
            leg.set_speed_max(self.speed_xy, self.speed_up, self.speed_down)
        for spline in (self.spline_this, self.spline_next):
            spline.set_speed_accel(self.speed_xy, self.speed_up, self.speed_down, self.limits.accel, self.limits.accel_z)

    def stopping_point(self) -> Vec:
        """Where the vehicle stops braking at WPNAV_ACCEL from its speed now (``AC_PosControl::get_stopping_point_xy_cm``,
        simplified to a straight braking distance v²/2a)."""
        speed = vlen(self.velocity)
        if speed <= 1e-6:
            return self.target
        d = speed * speed / (2.0 * self.limits.accel)
        return vadd(self.target, tuple(c / speed * d for c in self.velocity))  # type: ignore[arg-type]

    def advance(self, dt: float) -> None:
        """One step of ``AC_WPNav::update_wpnav`` / ``advance_wp_target_along_track``: the leg's clock runs at the
        shaped ``offset_vel`` / speed (a pause brakes it to 0 at WPNAV_ACCEL and PSC_JERK_XY), the target moves,
        and a waypoint is reached when its leg is finished (and, if not fast, the vehicle is within WPNAV_RADIUS)."""
        if self.speed_xy > 0:
            self.offset_vel += self.offset_accel * dt
            want = 0.0 if self.paused else self.speed_xy
            err = want - self.offset_vel
            kpa = self.limits.shaping_jerk / self.limits.accel
            accel_target = max(-self.limits.accel, min(self.limits.accel,
                                                       sqrt_controller(err, kpa, self.limits.shaping_jerk, dt)))
            step = self.limits.shaping_jerk * dt
            self.offset_accel += max(-step, min(step, accel_target - self.offset_accel))
            if self.paused and self.offset_vel < 0:
                self.offset_vel, self.offset_accel = 0.0, 0.0
            scale = max(0.0, self.offset_vel / self.speed_xy)
        else:
            scale = 1.0
        cap = self.limits.frame_speed_max
        if cap > 0 and self._leg_speed * scale > cap:
            # the vehicle cannot keep up: _track_scalar_dt slows the leg's clock to the speed it achieves
            scale = cap / self._leg_speed
        if self.this_is_spline:
            # SplineCurve::advance_target_along_track from the target's speed now, on the same slowed clock
            target, vel = self.spline_this.advance(scale * dt, vlen(self.velocity) / scale if scale > 0 else 0.0)
            done = self.spline_this.reached
            self.target = target
        else:
            done, pos, vel, _ = self.this_leg.advance_along_track(self.prev_leg, self.next_leg, self.limits.radius,
                                                                 self.limits.corner_accel(), self.fast_waypoint,
                                                                 scale * dt)
            self.target = vadd(self.origin, pos)
        self._leg_speed = vlen(vel)
        self.velocity = vscale(vel, scale)
        if not self.reached and done:
            if self.fast_waypoint or vlen(vsub(self.target, self.destination)) <= self.limits.radius:
                self.reached = True
