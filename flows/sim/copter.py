"""ArduCopter's flight modes as the simulator flies them: what each mode does to the vehicle, step by step.

``CopterModes`` holds the controller of the mode the vehicle is in and steps it
in simulated time (``Copter::update_flight_mode`` → ``Mode::run``):

- AUTO — ``flows.sim.copter_auto.AutoMission`` (AP_Mission + ModeAuto), entered with
  ``ModeAuto::init``; a pause brakes the leg's clock (``ModeAuto::pause``).
- RTL — ``flows.sim.copter_rtl.ReturnHome`` (ModeRTL), landing and disarming in RTL.
- LAND — ``ModeLand::gps_run``: a loiter brake where it is, then the landing descent;
  a failsafe's land waits LAND_WITH_DELAY_MS first (``set_mode_land_with_pause``).
- GUIDED — stops at the position controller's stopping point (``ModeGuided::init``:
  WPNAV_ACCEL / PSC_JERK_XY) and holds; BRAKE — stops at BRAKE_MODE_DECEL_RATE
  (``ModeBrake::init``: ``init_brake_target(BRAKE_MODE_DECEL_RATE)``) and holds.
- LOITER, STABILIZE, ALT_HOLD — follow the pilot's sticks; with no RC the
  throttle sits at its minimum, so the vehicle sinks (observed on SITL in LOITER:
  2.4 m/s at the ground, "Hit ground", disarmed still in LOITER).

Each mode's end on the ground is ``disarm_due`` (the flight disarms the vehicle).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from flows.sim.ardupilot_mission import StoredCommand
from flows.sim.copter_auto import AutoMission
from flows.sim.copter_motion import Body, Brake, Descent, LANDED_TO_DISARM_S
from flows.sim.copter_rtl import ReturnHome, descent_from
from flows.sim.local_frame import LocalFrame

__all__ = ["CopterModes", "NO_PILOT_SINK_MPS", "LAND_WITH_DELAY_S", "BRAKE_DECEL"]

NO_PILOT_SINK_MPS = 2.4  # LOITER with the throttle stick at its minimum (observed on SITL)
LAND_WITH_DELAY_S = 4.0  # LAND_WITH_DELAY_MS (ArduCopter/config.h)
BRAKE_DECEL = 7.5  # BRAKE_MODE_DECEL_RATE 750 cm/s/s
_PILOT_MODES = frozenset({"LOITER", "STABILIZE", "ALT_HOLD", "POSHOLD"})


@dataclass
class CopterModes:
    """The running mode's controller for one flight (from launch to disarm)."""

    frame: LocalFrame
    params: Callable[[], Mapping[str, float]]
    say: Callable[[str], None]
    reached: Callable[[int], None]
    home_ne: tuple[float, float] = (0.0, 0.0)
    rally_ne: Sequence[tuple[float, float]] = ()
    origin_alt_m: float = 0.0
    mode: str = "STABILIZE"
    auto: AutoMission | None = None
    rtl: ReturnHome | None = None
    land: Descent | None = None
    land_pause_s: float = 0.0
    brake: Brake | None = None
    sink_ground_s: float | None = None
    hit_ground: bool = field(default=False)

    def enter(self, mode: str, body: Body, commands: Sequence[StoredCommand] = (), *, land_pause: bool = False) -> None:
        """Switch to ``mode`` with its ``init`` (a flying vehicle; the flight checks whether it may)."""
        p = self.params()
        self.mode = mode
        self.brake = None
        if mode == "AUTO":
            if self.auto is None:
                self.auto = AutoMission(commands, self.frame, p, self.home_ne, self.rally_ne, self.origin_alt_m,
                                        say=self.say, reached=self.reached)
            else:
                self.auto.resume_after_mode_change()  # ModeAuto::init → mission.start_or_resume (MIS_RESTART 0)
        elif mode == "RTL":
            self.rtl = ReturnHome(p, self.home_ne, self.rally_ne)
        elif mode == "LAND":
            self.land = descent_from(p)
            self.land_pause_s = LAND_WITH_DELAY_S if land_pause else 0.0
            self.brake = Brake(decel=p.get("WPNAV_ACCEL", 250.0) / 100.0, jerk=p.get("PSC_JERK_XY", 5.0))
        elif mode == "GUIDED":
            self.brake = Brake(decel=p.get("WPNAV_ACCEL", 250.0) / 100.0, jerk=p.get("PSC_JERK_XY", 5.0))
        elif mode == "BRAKE":
            self.brake = Brake(decel=BRAKE_DECEL, jerk=p.get("PSC_JERK_XY", 5.0))

    @property
    def landing(self) -> bool:
        """Descending to land (EXTENDED_SYS_STATE LANDING; ``Mode::is_landing``)."""
        if self.mode == "AUTO" and self.auto is not None:
            return self.auto.landing
        if self.mode == "RTL" and self.rtl is not None:
            return self.rtl.landing
        return self.mode == "LAND" and self.land_pause_s <= 0

    @property
    def taking_off(self) -> bool:
        return self.mode == "AUTO" and self.auto is not None and self.auto.submode == "TAKEOFF"

    @property
    def disarm_due(self) -> bool:
        """On the ground after the land detector and spool-down: the mode disarms the vehicle."""
        if self.mode == "AUTO" and self.auto is not None:
            return self.auto.disarm_due
        if self.mode == "RTL" and self.rtl is not None:
            return self.rtl.disarm_due
        if self.mode == "LAND" and self.land is not None:
            return self.land.disarm_due
        return self.sink_ground_s is not None and self.sink_ground_s >= LANDED_TO_DISARM_S

    @property
    def on_ground(self) -> bool:
        for d in (self.land, self.auto.descent if self.auto else None, self.rtl.descent if self.rtl else None):
            if d is not None and d.touched_down:
                return True
        return self.sink_ground_s is not None

    def step(self, body: Body, dt: float) -> None:
        """One ``Mode::run`` of the current mode."""
        if self.mode == "AUTO" and self.auto is not None:
            self.auto.step(body, dt)
        elif self.mode == "RTL" and self.rtl is not None:
            self.rtl.step(body, dt)
        elif self.mode == "LAND" and self.land is not None:
            if self.brake is not None:
                self.brake.step(body, dt)
            if self.land_pause_s > 0:
                self.land_pause_s -= dt
                return
            self.land.step(body, dt)
        elif self.mode in _PILOT_MODES:
            self._sink(body, dt)
        elif self.brake is not None:
            self.brake.step(body, dt)

    def _sink(self, body: Body, dt: float) -> None:
        """No pilot: the throttle stick at minimum lets the vehicle sink; on the ground the land detector disarms."""
        if self.sink_ground_s is not None:
            self.sink_ground_s += dt
            return
        if self.brake is None:
            self.brake = Brake(decel=self.params().get("WPNAV_ACCEL", 250.0) / 100.0, jerk=5.0)
        self.brake.step(body, dt)
        up = max(0.0, body.pos[2] - NO_PILOT_SINK_MPS * dt)
        body.pos = (body.pos[0], body.pos[1], up)
        body.vel = (body.vel[0], body.vel[1], -NO_PILOT_SINK_MPS if up > 0 else 0.0)
        if up <= 0.0:
            self.sink_ground_s = 0.0
            self.hit_ground = True
