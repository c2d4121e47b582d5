"""ArduCopter's AUTO mode: the mission's sequencing (``AP_Mission``) and how each command is flown (``ModeAuto``).

``AutoMission.step`` is one pass of ``ModeAuto::run``: ``AP_Mission::update`` first,
then the controller of the current sub-mode. The sequencing is AP_Mission's, with
its observable consequences:

- a navigation command runs until ``verify_command`` says it is done; then
  ``advance_current_nav_cmd`` stops the running DO command, walks forward from the
  finished one, starts the *first* DO command it meets and the next navigation
  command. Further DO commands before that navigation command start one per
  update (``advance_current_do_cmd``) — unless the navigation command finishes
  first, in which case they are never run (observed on SITL: "Mission: 11
  ChangeSpeed" never appears when waypoint 12 sits on waypoint 9).
- every started command says "Mission: N <type>" (``AP_Mission::start_command``);
  a waypoint says "Reached command #N" (``ModeAuto::verify_nav_wp``);
  MISSION_ITEM_REACHED goes out for each command ModeAuto verifies
  (``ModeAuto::verify_command``), so not for the camera commands AP_Mission
  verifies itself (``AP_Mission::verify_command``).
- a waypoint passes through when the next navigation command is a waypoint and it
  has no delay (``ModeAuto::set_next_wp``); before a landing, RTL or take-off, and
  after a delay, the vehicle stops.
- NAV_TAKEOFF climbs where the vehicle is (``ModeAuto::takeoff_start``); NAV_LAND
  with a position flies there at its altitude, then descends (``do_land``,
  ``verify_land``), disarming on the ground (the mission then resets: "Mission:
  1 Takeoff" once disarmed); NAV_RETURN_TO_LAUNCH runs ModeRTL.
- DO_CHANGE_SPEED sets the waypoint speed (``ModeAuto::do_change_speed`` →
  ``AC_WPNav::set_speed_xy``); a speed of -1 or under WPNAV_WP_SPEED_MIN changes nothing.

Commands not flown by this simulator (loiters, splines, jumps, conditions) are
skipped with ArduCopter's "Skipping invalid cmd #N".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from pymavlink.dialects.v20 import common as _M

from flows.sim.ardupilot_mission import StoredCommand
from flows.sim.copter_motion import Body, Climb, Descent
from flows.sim.copter_rtl import ReturnHome, descent_from
from flows.sim.local_frame import LocalFrame
from flows.sim.vec3 import Vec
from flows.sim.wpnav import NavLimits, WaypointNav

__all__ = ["AutoMission", "COMMAND_NAMES", "NAV_LAST"]

NAV_LAST = 95  # MAV_CMD_NAV_LAST: every id up to it is a navigation command (AP_Mission::is_nav_cmd)
COMMAND_NAMES = {  # AP_Mission::Mission_Command::type
    _M.MAV_CMD_NAV_WAYPOINT: "WP", _M.MAV_CMD_NAV_SPLINE_WAYPOINT: "SplineWP", _M.MAV_CMD_NAV_RETURN_TO_LAUNCH: "RTL",
    _M.MAV_CMD_NAV_LOITER_UNLIM: "LoitUnlim", _M.MAV_CMD_NAV_LOITER_TIME: "LoitTime",
    _M.MAV_CMD_NAV_LOITER_TURNS: "LoitTurns", _M.MAV_CMD_NAV_TAKEOFF: "Takeoff", _M.MAV_CMD_NAV_LAND: "Land",
    _M.MAV_CMD_CONDITION_DELAY: "CondDelay", _M.MAV_CMD_CONDITION_YAW: "CondYaw",
    _M.MAV_CMD_DO_CHANGE_SPEED: "ChangeSpeed", _M.MAV_CMD_DO_SET_HOME: "SetHome", _M.MAV_CMD_DO_SET_SERVO: "SetServo",
    _M.MAV_CMD_DO_SET_RELAY: "SetRelay", _M.MAV_CMD_DO_DIGICAM_CONTROL: "DigiCamCtrl",
    _M.MAV_CMD_DO_SET_CAM_TRIGG_DIST: "SetCamTrigDst", _M.MAV_CMD_DO_SET_ROI: "SetROI",
    _M.MAV_CMD_DO_JUMP: "Jump", _M.MAV_CMD_DO_LAND_START: "LandStart", _M.MAV_CMD_DO_MOUNT_CONTROL: "MountControl",
    _M.MAV_CMD_IMAGE_START_CAPTURE: "ImageStartCapture", _M.MAV_CMD_IMAGE_STOP_CAPTURE: "ImageStopCapture",
}
_SELF_VERIFIED = frozenset({  # AP_Mission::verify_command answers these itself: no MISSION_ITEM_REACHED
    _M.MAV_CMD_DO_SET_SERVO, _M.MAV_CMD_DO_SET_RELAY, _M.MAV_CMD_DO_REPEAT_SERVO, _M.MAV_CMD_DO_REPEAT_RELAY,
    _M.MAV_CMD_DO_DIGICAM_CONFIGURE, _M.MAV_CMD_DO_DIGICAM_CONTROL, _M.MAV_CMD_DO_SET_CAM_TRIGG_DIST,
    _M.MAV_CMD_DO_PARACHUTE, _M.MAV_CMD_DO_GRIPPER, _M.MAV_CMD_IMAGE_START_CAPTURE, _M.MAV_CMD_IMAGE_STOP_CAPTURE,
    _M.MAV_CMD_VIDEO_START_CAPTURE, _M.MAV_CMD_VIDEO_STOP_CAPTURE, _M.MAV_CMD_SET_CAMERA_ZOOM,
    _M.MAV_CMD_SET_CAMERA_FOCUS,
})
_MODE_AUTO_DONE_AT_ONCE = frozenset({  # ModeAuto::verify_command: cmd_complete = true
    _M.MAV_CMD_DO_CHANGE_SPEED, _M.MAV_CMD_DO_SET_HOME, _M.MAV_CMD_DO_SET_ROI, _M.MAV_CMD_DO_MOUNT_CONTROL,
    _M.MAV_CMD_DO_GUIDED_LIMITS, _M.MAV_CMD_DO_FENCE_ENABLE, _M.MAV_CMD_DO_WINCH, _M.MAV_CMD_DO_LAND_START,
})
_FLOWN = frozenset({_M.MAV_CMD_NAV_WAYPOINT, _M.MAV_CMD_NAV_SPLINE_WAYPOINT, _M.MAV_CMD_NAV_TAKEOFF,
                    _M.MAV_CMD_NAV_LAND, _M.MAV_CMD_NAV_RETURN_TO_LAUNCH})
_PASS_THROUGH = frozenset({_M.MAV_CMD_NAV_WAYPOINT, _M.MAV_CMD_NAV_SPLINE_WAYPOINT})
SPEED_MIN = 0.2  # WPNAV_WP_SPEED_MIN

Say = Callable[[str], None]


def is_nav(cmd: StoredCommand) -> bool:
    return cmd.id <= NAV_LAST


@dataclass
class AutoMission:
    """One run of a stored mission in AUTO (``mission.start()`` … complete, or landed and disarmed)."""

    commands: Sequence[StoredCommand]  # index 0 is the home slot, never flown
    frame: LocalFrame
    params: Mapping[str, float]
    home_ne: tuple[float, float]
    rally_ne: Sequence[tuple[float, float]] = ()
    origin_alt_m: float = 0.0  # the EKF origin's altitude AMSL: an absolute-altitude command is flown relative to it
    say: Say = field(default=lambda text: None)
    reached: Callable[[int], None] = field(default=lambda seq: None)
    nav_cmd: StoredCommand | None = None
    do_cmd: StoredCommand | None = None  # the last DO command started (kept after it is done: the search goes on from it)
    do_loaded: bool = False
    do_all_done: bool = False
    submode: str = "NONE"  # TAKEOFF, WP, LAND, RTL
    nav: WaypointNav | None = None
    climb: Climb | None = None
    descent: Descent | None = None
    rtl: ReturnHome | None = None
    land_state: str = ""  # FlyToLocation → Descending (ModeAuto::do_land)
    hold_started_s: float | None = None
    clock_s: float = 0.0
    complete: bool = False
    paused: bool = False
    restart: bool = False  # re-entered AUTO: the current navigation command starts again (AP_Mission::resume)
    started: int = 0  # commands started so far

    # --- AP_Mission -------------------------------------------------------------------

    def _next_cmd(self, index: int) -> StoredCommand | None:
        return self.commands[index] if 0 < index < len(self.commands) else None

    def _next_nav(self, index: int) -> StoredCommand | None:
        while index < len(self.commands):
            if is_nav(self.commands[index]):
                return self.commands[index]
            index += 1
        return None

    def _start(self, cmd: StoredCommand, body: Body) -> None:
        """``AP_Mission::start_command`` → ``ModeAuto::start_command``."""
        self.started += 1
        self.say(f"Mission: {cmd.index} {COMMAND_NAMES.get(cmd.id, str(cmd.id))}")
        if cmd.id == _M.MAV_CMD_NAV_TAKEOFF:
            up = self._up(cmd)
            self.climb = Climb(alt_m=max(up, body.pos[2] + 1.0), speed_up=self.params.get("WPNAV_SPEED_UP", 250.0) / 100.0,
                               accel_z=self.params.get("WPNAV_ACCEL_Z", 100.0) / 100.0,
                               slew_s=self.params.get("TKOFF_SLEW_TIME", 2.0),
                               ground_left_s=None if body.pos[2] <= 0.05 else 0.0)  # airborne: no spool-up
            self.submode = "TAKEOFF"
        elif cmd.id in _PASS_THROUGH:
            self._do_nav_wp(cmd, body)
        elif cmd.id == _M.MAV_CMD_NAV_LAND:
            if cmd.lat_e7 or cmd.lon_e7:
                n, e = self.frame.to_ne(cmd.lat, cmd.lon)
                self._wp_start((n, e, body.pos[2]), body)  # do_land: fly there at the current altitude
                self.land_state = "FlyToLocation"
            else:
                self._land_start()
        elif cmd.id == _M.MAV_CMD_NAV_RETURN_TO_LAUNCH:
            self.rtl = ReturnHome(self.params, self.home_ne, self.rally_ne)
            self.submode = "RTL"
        elif cmd.id == _M.MAV_CMD_DO_CHANGE_SPEED:
            speed = cmd.value("target_ms")
            if speed > 0 and self.nav is not None:
                self.nav.set_speed_xy(speed)
            elif speed > 0:
                self._speed_override = speed
        elif is_nav(cmd) and cmd.id not in _FLOWN:
            self.submode = "SKIP"

    _speed_override: float = 0.0  # ModeAuto::desired_speed_override.xy: a DO_CHANGE_SPEED before wp_nav is active

    def _verify(self, cmd: StoredCommand) -> bool:
        """``AP_Mission::verify_command`` → ``ModeAuto::verify_command`` (sends MISSION_ITEM_REACHED when done)."""
        if cmd.id in _SELF_VERIFIED:
            return True
        if cmd.id == _M.MAV_CMD_NAV_TAKEOFF:
            done = self.climb is not None and self.climb.complete
        elif cmd.id in _PASS_THROUGH:
            done = self._verify_nav_wp(cmd)
        elif cmd.id == _M.MAV_CMD_NAV_LAND:
            done = False  # verify_land disarms on the ground and returns false: the flight ends it
        elif cmd.id == _M.MAV_CMD_NAV_RETURN_TO_LAUNCH:
            done = False  # verify_RTL: only once landed, when the vehicle disarms anyway
        elif cmd.id in _MODE_AUTO_DONE_AT_ONCE:
            done = True
        else:
            self.say(f"Skipping invalid cmd #{cmd.id}")
            done = True
        if done:
            self.reached(cmd.index)
        return done

    def _advance_nav(self, body: Body) -> bool:
        """``AP_Mission::advance_current_nav_cmd``: False when there is no navigation command left."""
        self.do_cmd, self.do_loaded, self.do_all_done = None, False, False
        index = self.nav_cmd.index + 1 if self.nav_cmd is not None else 1
        while True:
            cmd = self._next_cmd(index)
            if cmd is None:
                return False
            if is_nav(cmd):
                self.nav_cmd = cmd
                self._start(cmd, body)
                break
            if not self.do_loaded:
                self.do_cmd, self.do_loaded = cmd, True
                self._start(cmd, body)
            index = cmd.index + 1
        if not self.do_loaded:
            self.do_all_done = True
        return True

    def _advance_do(self, body: Body) -> None:
        """``AP_Mission::advance_current_do_cmd``: the next DO command before the next navigation command."""
        if self.do_all_done:
            return
        cmd = self._next_cmd(self.do_cmd.index + 1 if self.do_cmd is not None else 1)
        if cmd is None or is_nav(cmd):
            self.do_all_done = True
            return
        self.do_cmd, self.do_loaded = cmd, True
        self._start(cmd, body)

    def resume_after_mode_change(self) -> None:
        """AUTO entered again in flight (``ModeAuto::init`` → ``AP_Mission::start_or_resume`` with MIS_RESTART 0): the
        waypoint controller starts over from where the vehicle is and the current navigation command runs again."""
        self.restart = True
        self.paused = False
        if self.nav is not None:
            self.nav.active = False

    def update(self, body: Body) -> None:
        """``AP_Mission::update``: the navigation command, then one step of the DO commands."""
        if self.complete:
            return
        if self.restart and self.nav_cmd is not None:
            self.restart = False
            self._start(self.nav_cmd, body)
        if self.nav_cmd is None or self._verify(self.nav_cmd):
            if not self._advance_nav(body):
                self._mission_complete()
                return
        if not self.do_loaded:
            self._advance_do(body)
        elif self.do_cmd is not None and self._verify(self.do_cmd):
            self.do_loaded = False

    def _mission_complete(self) -> None:
        """``AP_Mission::complete`` → ``ModeAuto::exit_mission``: no more commands — land where it is."""
        self.complete = True
        if self.submode not in ("LAND", "RTL"):
            self._land_start()

    # --- ModeAuto ---------------------------------------------------------------------

    def _up(self, cmd: StoredCommand) -> float:
        """A command's altitude as metres above the origin (flat ground; absolute altitudes less home's)."""
        if cmd.relative_alt:
            return cmd.alt_m
        return cmd.alt_m - self.origin_alt_m

    def _target(self, cmd: StoredCommand, default: Vec) -> Vec:
        """``ModeAuto::loc_from_cmd``: a zero latitude/longitude or altitude means "where the default is"."""
        if cmd.lat_e7 == 0 and cmd.lon_e7 == 0:
            n, e = default[0], default[1]
        else:
            n, e = self.frame.to_ne(cmd.lat, cmd.lon)
        up = default[2] if cmd.alt_cm == 0 else self._up(cmd)
        return (n, e, up)

    def _wp_start(self, destination: Vec, body: Body, spline_next: tuple[Vec, bool] | None = None) -> None:
        """``ModeAuto::wp_start``: the waypoint controller starts from where the take-off ended (or the vehicle is);
        ``spline_next`` (the point after, and whether it is a spline too) makes the leg a spline."""
        if self.nav is None or not self.nav.active:
            self.nav = WaypointNav(NavLimits.from_params(self.params))
            start = body.pos
            if self.submode == "TAKEOFF" and self.climb is not None:
                start = (body.pos[0], body.pos[1], self.climb.alt_m)
            self.nav.init(start, self._speed_override or None)
        if spline_next is None:
            self.nav.set_destination(destination)
        else:
            self.nav.set_spline_destination(destination, *spline_next)
        self.submode = "WP"

    def _do_nav_wp(self, cmd: StoredCommand, body: Body) -> None:
        """``ModeAuto::do_nav_wp`` / ``do_spline_wp`` and ``set_next_wp``."""
        default = self.nav.destination if self.nav is not None and self.nav.active and self.nav.reached else body.pos
        target = self._target(cmd, default)
        nxt = self._next_nav(cmd.index + 1)
        if cmd.id == _M.MAV_CMD_NAV_SPLINE_WAYPOINT:
            # get_spline_from_cmd: the point after (if no delay), and whether it is a spline
            after = (self._target(nxt, target), nxt.id == _M.MAV_CMD_NAV_SPLINE_WAYPOINT) \
                if cmd.p1 == 0 and nxt is not None else (target, False)
            self._wp_start(target, body, after)
        else:
            self._wp_start(target, body)
        self.hold_started_s = None
        if cmd.p1 > 0 or nxt is None or self.nav is None:
            return  # a delay at the waypoint: stop there
        if nxt.id == _M.MAV_CMD_NAV_WAYPOINT:
            self.nav.set_destination_next(self._target(nxt, target))
        elif nxt.id == _M.MAV_CMD_NAV_SPLINE_WAYPOINT:
            nxt_target = self._target(nxt, target)
            after = self._next_nav(nxt.index + 1)
            if nxt.p1 == 0 and after is not None:
                self.nav.set_spline_destination_next(nxt_target, self._target(after, nxt_target),
                                                     after.id == _M.MAV_CMD_NAV_SPLINE_WAYPOINT)
            else:
                self.nav.set_spline_destination_next(nxt_target, nxt_target, False)

    def _verify_nav_wp(self, cmd: StoredCommand) -> bool:
        """``ModeAuto::verify_nav_wp``: reached, then the delay (whole seconds, as ``millis() / 1000`` counts)."""
        if self.nav is None or not self.nav.reached:
            return False
        if self.hold_started_s is None:
            self.hold_started_s = self.clock_s
        if int(self.clock_s - self.hold_started_s) >= cmd.p1:
            self.say(f"Reached command #{cmd.index}")
            return True
        return False

    def _land_start(self) -> None:
        """``ModeAuto::land_start``: descend where it is."""
        self.descent = descent_from(self.params)
        self.land_state = "Descending"
        self.submode = "LAND"

    @property
    def disarm_due(self) -> bool:
        """Landed: ``verify_land`` / ModeRTL's landing disarms now."""
        if self.submode == "LAND" and self.descent is not None:
            return self.descent.disarm_due
        return self.submode == "RTL" and self.rtl is not None and self.rtl.disarm_due

    @property
    def landing(self) -> bool:
        return (self.submode == "LAND" and self.land_state == "Descending") or (
            self.submode == "RTL" and self.rtl is not None and self.rtl.landing)

    @property
    def on_leg(self) -> bool:
        """Flying a waypoint leg that is not finished (``ModeAuto::pause`` is allowed: SubMode::WP, not reached)."""
        return self.submode == "WP" and self.nav is not None and not self.nav.reached

    def set_speed(self, speed: float) -> None:
        """``ModeAuto::set_speed_xy``: the waypoint controller's speed now, and for any later re-initialisation."""
        self._speed_override = speed
        if self.nav is not None:
            self.nav.set_speed_xy(speed)

    def set_paused(self, paused: bool) -> None:
        """``AC_WPNav::set_pause`` / ``set_resume``: the leg's clock is braked to 0 or released."""
        self.paused = paused
        if self.nav is not None:
            self.nav.paused = paused

    def step(self, body: Body, dt: float) -> None:
        """One ``ModeAuto::run``: ``mission.update()``, then the sub-mode's controller."""
        self.clock_s += dt
        self.update(body)
        if self.submode == "TAKEOFF" and self.climb is not None:
            self.climb.step(body, dt)
        elif self.submode == "WP" and self.nav is not None:
            self.nav.advance(dt)
            body.pos, body.vel = self.nav.target, self.nav.velocity
            if self.land_state == "FlyToLocation" and self.nav.reached:
                self._land_start()
        elif self.submode == "LAND" and self.descent is not None:
            self.descent.step(body, dt)
        elif self.submode == "RTL" and self.rtl is not None:
            self.rtl.step(body, dt)
