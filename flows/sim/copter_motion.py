"""How ArduCopter moves outside a waypoint leg: the take-off climb, the landing descent, a brake to a hold.

Each piece is a small controller stepped by the flight in simulated time; it
moves the vehicle's ``Body`` (position and velocity, metres from the EKF origin,
north/east/up) the way the named ArduCopter code moves its position target:

- ``Climb`` — ``_AutoTakeoff::run`` (``ArduCopter/takeoff.cpp``): the motors spool
  up and the throttle ramps for ``TKOFF_SLEW_TIME`` before the vehicle leaves the
  ground, then ``AC_PosControl::input_pos_vel_accel_z`` climbs to the take-off
  altitude at WPNAV_SPEED_UP / WPNAV_ACCEL_Z / PSC_JERK_Z; the take-off is complete
  when the target is within the stopping distance of 10 % of the climb rate and
  climbs slower than that.
- ``Descent`` — ``Mode::land_run_vertical_control`` (``ArduCopter/mode.cpp``): down
  at LAND_SPEED_HIGH (0: WPNAV_SPEED_DN) to LAND_ALT_LOW, then at LAND_SPEED,
  shaped by ``AC_PosControl::land_at_climb_rate_cm``; after touch-down the land
  detector (``Copter::update_land_detector``, LAND_DETECTOR_TRIGGER_SEC) and the
  motors' spool-down take ``LANDED_TO_DISARM_S`` before the disarm (SITL: "Hit
  ground" 2.0 s before "Disarming motors").
- ``Brake`` — a stop at a fixed deceleration and jerk on each horizontal axis
  (``ModeBrake``: BRAKE_MODE_DECEL_RATE; LAND's and LOITER's loiter brake:
  LOIT_BRK_ACCEL, LOIT_BRK_JERK), then a hold.
"""

from __future__ import annotations

from dataclasses import dataclass

from flows.sim.vec3 import ZERO, Vec
from flows.sim.shaping import Axis, sqrt_controller

__all__ = ["Body", "Climb", "Descent", "Brake", "LANDED_TO_DISARM_S", "SPOOL_UP_S"]

JERK_Z = 5.0  # PSC_JERK_Z 5 m/s/s/s (AC_PosControl.h POSCONTROL_JERK_Z)
POS_Z_P = 1.0  # PSC_POSZ_P (AC_PosControl.h POSCONTROL_POS_Z_P)
SPOOL_UP_S = 0.5  # MOT_SPOOL_TIME: ground idle to full range before the throttle ramps
LANDED_TO_DISARM_S = 2.0  # touch-down → land_complete (1 s trigger after the throttle winds down) → spool-down → disarm


@dataclass
class Body:
    """Where the vehicle is and how it moves: (north, east, up) metres from the EKF origin, and m/s."""

    pos: Vec = ZERO
    vel: Vec = ZERO

    @property
    def speed_xy(self) -> float:
        return (self.vel[0] ** 2 + self.vel[1] ** 2) ** 0.5


@dataclass
class Climb:
    """A vertical take-off to ``alt_m`` above the origin (``_AutoTakeoff::run``)."""

    alt_m: float
    speed_up: float = 2.5  # WPNAV_SPEED_UP
    accel_z: float = 1.0  # WPNAV_ACCEL_Z
    slew_s: float = 2.0  # TKOFF_SLEW_TIME
    ground_left_s: float | None = None
    axis: Axis | None = None
    complete: bool = False

    def step(self, body: Body, dt: float) -> None:
        if self.ground_left_s is None:
            # spool-up, then the throttle ramps at dt / TKOFF_SLEW_TIME until 90 %: the vehicle leaves the ground
            self.ground_left_s = SPOOL_UP_S + 0.9 * self.slew_s
        if self.ground_left_s > 0:
            self.ground_left_s -= dt
            return
        if self.axis is None:
            self.axis = Axis(body.pos[2], body.vel[2], 0.0)
        ax = self.axis
        ax.approach(self.alt_m, -10.0, self.speed_up, -self.accel_z, self.accel_z, JERK_Z, dt)
        body.pos = (body.pos[0], body.pos[1], ax.pos)
        body.vel = (0.0, 0.0, ax.vel)
        stop = 0.5 * (0.1 * self.speed_up) ** 2 / self.accel_z
        self.complete = ax.pos >= self.alt_m - stop and ax.vel < 0.1 * self.speed_up


@dataclass
class Descent:
    """Straight down to the ground at the landing speeds (``Mode::land_run_vertical_control``)."""

    ground_m: float = 0.0  # the ground's height above the origin (flat ground: 0)
    land_speed: float = 0.5  # LAND_SPEED 50 cm/s
    land_speed_high: float = 0.0  # LAND_SPEED_HIGH (0: WPNAV_SPEED_DN)
    speed_down: float = 1.5  # WPNAV_SPEED_DN
    alt_low_m: float = 10.0  # LAND_ALT_LOW 1000 cm
    accel_z: float = 1.0  # WPNAV_ACCEL_Z (ModeAuto::land_start / ModeLand::init set it)
    axis: Axis | None = None
    touched_down: bool = False
    landed_for_s: float = 0.0
    touchdown_speed: float = 0.0

    @property
    def disarm_due(self) -> bool:
        return self.touched_down and self.landed_for_s >= LANDED_TO_DISARM_S

    def step(self, body: Body, dt: float) -> None:
        if self.touched_down:
            self.landed_for_s += dt
            body.vel = ZERO
            return
        if self.axis is None:
            self.axis = Axis(body.pos[2], body.vel[2], 0.0)
        ax = self.axis
        height = ax.pos - self.ground_m
        fastest = -(self.land_speed_high if self.land_speed_high > 0 else self.speed_down)
        fastest = min(fastest, -abs(self.land_speed))  # "Don't speed up for landing"
        rate = sqrt_controller(max(self.alt_low_m, 1.0) - height, POS_Z_P, self.accel_z, dt)
        rate = max(fastest, min(-abs(self.land_speed), rate))
        ax.hold_speed(rate, -self.accel_z, self.accel_z, JERK_Z, dt)
        if ax.pos <= self.ground_m:
            self.touched_down, self.touchdown_speed = True, -ax.vel
            ax.pos, ax.vel, ax.accel = self.ground_m, 0.0, 0.0
        body.pos = (body.pos[0], body.pos[1], ax.pos)
        body.vel = (body.vel[0], body.vel[1], ax.vel)


@dataclass
class Brake:
    """A horizontal stop at ``decel`` m/s² with ``jerk`` m/s³, then a hold where it stopped."""

    decel: float = 2.5
    jerk: float = 5.0
    north: Axis | None = None
    east: Axis | None = None

    def step(self, body: Body, dt: float) -> None:
        if self.north is None or self.east is None:
            self.north = Axis(body.pos[0], body.vel[0], 0.0)
            self.east = Axis(body.pos[1], body.vel[1], 0.0)
        for ax in (self.north, self.east):
            if abs(ax.vel) < 1e-3 and abs(ax.accel) < 1e-3:
                ax.vel = ax.accel = 0.0
                continue
            ax.hold_speed(0.0, -self.decel, self.decel, self.jerk, dt)
        body.pos = (self.north.pos, self.east.pos, body.pos[2])
        body.vel = (self.north.vel, self.east.vel, body.vel[2])

    @property
    def stopped(self) -> bool:
        return self.north is not None and self.east is not None and self.north.vel == 0.0 and self.east.vel == 0.0
