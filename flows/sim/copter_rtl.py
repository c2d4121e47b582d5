"""ArduCopter's return to launch (``ArduCopter/mode_rtl.cpp``), as mode RTL and as a mission's NAV_RETURN_TO_LAUNCH.

``ReturnHome`` walks ``ModeRTL``'s stages (``ModeRTL::run``):

- INITIAL_CLIMB — straight up from the stopping point to the return altitude
  (``climb_start``: a waypoint leg with the return leg as its next, so it does
  not stop at the top);
- RETURN_HOME — a waypoint leg to the return point at that altitude
  (``return_start``) at RTL_SPEED (0: WPNAV_SPEED);
- LOITER_AT_HOME — RTL_LOIT_TIME over it (``loiterathome_run``);
- LAND (RTL_ALT_FINAL 0) — the landing descent (``ModeRTL::land_start``, ``land_run``),
  disarming on the ground still in RTL; or FINAL_DESCENT to RTL_ALT_FINAL.

The return point and altitude are ``ModeRTL::compute_return_target``'s: the
nearest rally point within RALLY_LIMIT_KM when it is closer than home
(``AP_Rally::calc_best_rally_or_home_location``), at the highest of RTL_ALT and
the current altitude, lowered by the cone (RTL_CONE_SLOPE) near home and by an
altitude fence (FENCE_ALT_MAX less FENCE_MARGIN), never below the current
altitude.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from flows.sim.copter_motion import Body, Brake, Descent
from flows.sim.vec3 import Vec
from flows.sim.wpnav import NavLimits, WaypointNav

__all__ = ["ReturnHome", "return_target"]

RTL_ALT_MIN_M = 0.3  # RTL_ALT_MIN 30 cm (ArduCopter/config.h)
RTL_MIN_CONE_SLOPE = 0.5  # ModeRTL::compute_return_target
FENCE_ALT_MAX_BIT = 1  # AC_FENCE_TYPE_ALT_MAX


def return_target(body: Body, home_ne: tuple[float, float], rally_ne: Sequence[tuple[float, float]],
                  params: Mapping[str, float]) -> Vec:
    """Where RTL returns to and at what height (``ModeRTL::compute_return_target``; flat ground at the origin)."""
    n, e, up = body.pos
    target = home_ne
    home_d = math.hypot(home_ne[0] - n, home_ne[1] - e)
    if rally_ne:
        nearest = min(rally_ne, key=lambda r: math.hypot(r[0] - n, r[1] - e))
        d = math.hypot(nearest[0] - n, nearest[1] - e)
        limit_km = params.get("RALLY_LIMIT_KM", 0.3)
        usable = not (limit_km > 0 and d > limit_km * 1000.0)
        if usable and (not params.get("RALLY_INCL_HOME", 1.0) or d < home_d):
            target = nearest
    min_alt = max(RTL_ALT_MIN_M, up + max(0.0, params.get("RTL_CLIMB_MIN", 0.0) / 100.0))
    alt = max(0.0, params.get("RTL_ALT", 1500.0) / 100.0, min_alt)
    slope = params.get("RTL_CONE_SLOPE", 3.0)
    if slope >= RTL_MIN_CONE_SLOPE:
        alt = min(alt, max(math.hypot(target[0] - n, target[1] - e) * slope, min_alt))
    if params.get("FENCE_ENABLE", 0.0) and int(params.get("FENCE_TYPE", 7.0)) & FENCE_ALT_MAX_BIT:
        alt = min(alt, params.get("FENCE_ALT_MAX", 100.0) - params.get("FENCE_MARGIN", 2.0))
    return (target[0], target[1], max(alt, up))


@dataclass
class ReturnHome:
    """``ModeRTL`` from the moment it is entered; ``step`` until ``disarm_due``."""

    params: Mapping[str, float]
    home_ne: tuple[float, float]
    rally_ne: Sequence[tuple[float, float]] = ()
    stage: str = "STARTING"
    nav: WaypointNav | None = None
    target: Vec | None = None
    loiter_left_s: float = 0.0
    descent: Descent | None = None
    brake: Brake | None = None
    _stage_done: bool = field(default=True)

    @property
    def landing(self) -> bool:
        return self.stage in ("LAND", "FINAL_DESCENT")

    @property
    def disarm_due(self) -> bool:
        return self.descent is not None and self.descent.disarm_due

    def step(self, body: Body, dt: float) -> None:
        if self.stage == "STARTING" and body.speed_xy > 0.05:
            # ModeRTL::init puts the target at the stopping point: the vehicle brakes to it first (WPNAV_ACCEL)
            self.brake = self.brake or Brake(decel=self.params.get("WPNAV_ACCEL", 250.0) / 100.0,
                                             jerk=self.params.get("PSC_JERK_XY", 5.0))
            self.brake.step(body, dt)
            return
        if self._stage_done:
            self._next_stage(body)
        if self.stage in ("INITIAL_CLIMB", "RETURN_HOME") and self.nav is not None:
            self.nav.advance(dt)
            body.pos, body.vel = self.nav.target, self.nav.velocity
            self._stage_done = self.nav.reached
        elif self.stage == "LOITER_AT_HOME":
            body.vel = (0.0, 0.0, 0.0)
            self.loiter_left_s -= dt
            self._stage_done = self.loiter_left_s <= 0
        elif self.descent is not None:
            self.descent.step(body, dt)

    def _next_stage(self, body: Body) -> None:
        self._stage_done = False
        p = self.params
        if self.stage == "STARTING":
            limits = NavLimits.from_params(p)
            self.nav = WaypointNav(limits)
            speed = p.get("RTL_SPEED", 0.0) / 100.0
            self.nav.init(body.pos, speed if speed > 0 else None)  # ModeRTL::init: wp_and_spline_init(RTL_SPEED)
            self.target = return_target(body, self.home_ne, self.rally_ne, p)
            climb = (self.nav.target[0], self.nav.target[1], self.target[2])
            self.nav.set_destination(climb)
            self.nav.set_destination_next(self.target)
            self.stage = "INITIAL_CLIMB"
        elif self.stage == "INITIAL_CLIMB" and self.nav is not None and self.target is not None:
            self.nav.set_destination(self.target)
            self.stage = "RETURN_HOME"
        elif self.stage == "RETURN_HOME":
            self.loiter_left_s = p.get("RTL_LOIT_TIME", 5000.0) / 1000.0
            self.stage = "LOITER_AT_HOME"
        elif self.stage == "LOITER_AT_HOME":
            self.descent = descent_from(p)
            final = p.get("RTL_ALT_FINAL", 0.0) / 100.0
            if final > 0:
                self.descent.ground_m = final  # FINAL_DESCENT: down to RTL_ALT_FINAL and hover there
            self.stage = "LAND" if final <= 0 else "FINAL_DESCENT"


def descent_from(p: Mapping[str, float]) -> Descent:
    """A landing descent with the vehicle's LAND_* and WPNAV_* parameters."""
    return Descent(land_speed=p.get("LAND_SPEED", 50.0) / 100.0, land_speed_high=p.get("LAND_SPEED_HIGH", 0.0) / 100.0,
                   speed_down=p.get("WPNAV_SPEED_DN", 150.0) / 100.0, alt_low_m=p.get("LAND_ALT_LOW", 1000.0) / 100.0,
                   accel_z=p.get("WPNAV_ACCEL_Z", 100.0) / 100.0)
