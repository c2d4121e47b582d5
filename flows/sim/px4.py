"""PX4's multicopter modes as the simulator flies them: the mission (navigator + auto trajectory), RTL, LAND, hold.

PX4 flies a mission differently from ArduCopter (``flows.sim.copter``), from its own sources:

- the **navigator** (``src/modules/navigator/mission_block.cpp``,
  ``MissionBlock::is_mission_item_reached_or_completed``) moves to the next item as soon
  as the vehicle is within NAV_ACC_RAD horizontally and NAV_MC_ALT_RAD vertically of a
  waypoint (then its hold, param1, runs), reports every item reached, the landing
  item once landed;
- the **trajectory** (``FlightTaskAuto`` with ``PositionSmoothing`` /
  ``VelocitySmoothing``) is jerk-limited (MPC_JERK_AUTO) and acceleration-limited
  (MPC_ACC_HOR) at MPC_XY_CRUISE (or a mission's DO_CHANGE_SPEED), and arrives at a
  waypoint at the speed its turn allows (``computeXYSpeedAtWaypoint`` in
  ``src/lib/motion_planning/TrajectoryConstraints.hpp``: a circle tangent to both legs
  within the acceptance radius at MPC_ACC_HOR × MPC_XY_TRAJ_P sideways,
  ``computeMaxSpeedInWaypoint`` = sqrt(a · d · tan(α/2))); zero before a stop (a hold, a
  landing, the last waypoint). The simulator flies each leg as a jerk-limited
  profile (``flows.sim.scurve``) from the speed it has to that arrival speed;
- take-off climbs at MPC_TKO_SPEED; landing descends at MPC_Z_V_AUTO_DN down to
  MPC_LAND_ALT1, slowing to MPC_LAND_SPEED by MPC_LAND_ALT2 (``FlightTaskAuto::_getLandSpeed``
  / ``mc_pos_control`` land speeds), and the land detector disarms ``LANDED_TO_DISARM_S``
  after touch-down (COM_DISARM_LAND 2 s);
- RTL (``src/modules/navigator/rtl_direct.cpp``): climb to RTL_RETURN_ALT, fly home at
  cruise, descend to RTL_DESCEND_ALT, land; AUTO.LOITER and the pause hold by braking
  at MPC_ACC_HOR.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from pymavlink.dialects.v20 import common as _M

from flows.sim.copter_motion import Body, Brake, Climb
from flows.sim.local_frame import LocalFrame
from flows.sim.px4_track import CrossTrack, join_line
from flows.sim.scurve import SCurve
from flows.sim.vec3 import Vec, vadd, vlen, vsub
from flows.sim.shaping import Axis
from planner.output.mission_items import MissionItem

__all__ = ["Px4Modes", "turn_speed"]

PX4_LANDED_TO_DISARM_S = 2.0  # COM_DISARM_LAND (commander_params.c)
_LEG_SNAP = 500.0  # PX4's smoothing has no snap limit: a large one makes the jerk ramps square


def turn_speed(start: Vec, target: Vec, nxt: Vec | None, p: Mapping[str, float]) -> float:
    """The horizontal speed at which the vehicle may arrive at ``target`` on its way to ``nxt``
    (``computeXYSpeedAtWaypoint``); 0 when it stops there."""
    if nxt is None:
        return 0.0
    cruise = p.get("MPC_XY_CRUISE", 5.0)
    d_next = math.hypot(nxt[0] - target[0], nxt[1] - target[1])
    accept = p.get("NAV_ACC_RAD", 10.0)
    if d_next <= 0.001:
        return 0.0
    a = (target[0] - start[0], target[1] - start[1])
    b = (target[0] - nxt[0], target[1] - nxt[1])
    la, lb = math.hypot(*a), math.hypot(*b)
    if la <= 1e-6 or lb <= 1e-6:
        return 0.0
    cos_alpha = max(-1.0, min(1.0, (a[0] * b[0] + a[1] * b[1]) / (la * lb)))
    alpha = min(math.acos(cos_alpha), math.pi - 1e-6)
    accel = p.get("MPC_ACC_HOR", 3.0) * p.get("MPC_XY_TRAJ_P", 0.5)
    in_turn = math.sqrt(max(0.0, accel * min(accept, d_next) * math.tan(alpha / 2.0)))
    return min(in_turn, cruise)


@dataclass
class _Leg:
    origin: Vec
    target: Vec
    curve: SCurve
    beside: CrossTrack | None = None  # the offset carried beside the line while joining it (``px4_track``)


@dataclass
class Px4Modes:
    """The running navigator mode for one flight (from launch to disarm)."""

    frame: LocalFrame
    params: Callable[[], Mapping[str, float]]
    say: Callable[[str], None]
    reached: Callable[[int], None]
    home_ne: tuple[float, float] = (0.0, 0.0)
    mode: str = "LOITER"
    items: Sequence[MissionItem] = ()
    index: int = 0
    speed: float = 0.0  # the mission's horizontal speed (MPC_XY_CRUISE or a DO_CHANGE_SPEED)
    leg: _Leg | None = None
    climb: Climb | None = None
    hold_left_s: float | None = None
    landing_axis: Axis | None = None
    brake: Brake | None = None
    rtl_stage: str = ""
    touched_down_for_s: float | None = None
    mission_done: bool = False
    paused: bool = False
    hold_point: Vec | None = None
    line_from: Vec | None = None  # the waypoint the mission left last: its next leg is flown on the line from there

    # --- modes --------------------------------------------------------------------------------

    def enter(self, mode: str, body: Body, items: Sequence[MissionItem] = (), *, land_pause: bool = False) -> None:
        p = self.params()
        self.mode = mode
        self.brake = None
        if mode == "AUTO":
            if not self.items:
                self.items, self.index = tuple(items), 0
                self.speed = p.get("MPC_XY_CRUISE", 5.0)
                self.line_from = None
            self.leg, self.climb = None, None
        elif mode == "RTL":
            self.rtl_stage, self.leg, self.climb = "CLIMB", None, None
        elif mode in ("LAND", "LOITER"):
            # Land / Loiter::on_activation: the setpoint is where the vehicle is now; it brakes and comes back to it
            self.leg, self.hold_point = None, body.pos
            self.brake = Brake(decel=p.get("MPC_ACC_HOR", 3.0), jerk=p.get("MPC_JERK_AUTO", 4.0))

    @property
    def landing(self) -> bool:
        return self.landing_axis is not None

    @property
    def taking_off(self) -> bool:
        item = self.current
        return self.mode == "AUTO" and item is not None and item.command == _M.MAV_CMD_NAV_TAKEOFF

    @property
    def disarm_due(self) -> bool:
        return self.touched_down_for_s is not None and self.touched_down_for_s >= PX4_LANDED_TO_DISARM_S

    @property
    def on_ground(self) -> bool:
        return self.touched_down_for_s is not None

    @property
    def current(self) -> MissionItem | None:
        return self.items[self.index] if 0 <= self.index < len(self.items) else None

    @property
    def on_leg(self) -> bool:
        return self.mode == "AUTO" and self.leg is not None and self.hold_left_s is None

    def set_paused(self, paused: bool) -> None:
        self.paused = paused

    # --- stepping -----------------------------------------------------------------------------

    def step(self, body: Body, dt: float) -> None:
        if self.touched_down_for_s is not None:
            self.touched_down_for_s += dt
            return
        if self.landing_axis is not None:
            self._descend(body, dt)
        elif self.mode == "AUTO":
            self._mission(body, dt)
        elif self.mode == "RTL":
            self._rtl(body, dt)
        elif self.mode in ("LAND", "LOITER"):
            self._hold(body, dt)
            if self.mode == "LAND" and self.leg is None and self.brake is None:
                self._start_landing(body)

    def _hold(self, body: Body, dt: float) -> None:
        """Brake to a stop, then fly back to the point the mode was entered at, and stay."""
        if self.brake is not None:
            self.brake.step(body, dt)
            if not self.brake.stopped:
                return
            self.brake = None
        point = self.hold_point
        if point is None or vlen(vsub((point[0], point[1], body.pos[2]), body.pos)) < 0.05:
            self.leg = None
            body.vel = (0.0, 0.0, 0.0)
            return
        self._fly_leg(body, (point[0], point[1], body.pos[2]), 0.0, dt)
        if self.leg is not None and self.leg.curve.finished():
            self.leg = None
            self.hold_point = None

    def _target(self, item: MissionItem, body: Body) -> Vec:
        if item.lat == 0 and item.lon == 0:
            return body.pos
        n, e = self.frame.to_ne(item.lat, item.lon)
        return (n, e, item.alt_m if item.alt_m else body.pos[2])

    def _next_waypoint(self, after: int, body: Body) -> Vec | None:
        """The next waypoint the vehicle passes through, if it does not stop at this one."""
        item = self.items[after]
        if item.param1 > 0:
            return None  # a hold: stop there
        for nxt in self.items[after + 1:]:
            if nxt.command == _M.MAV_CMD_NAV_WAYPOINT:
                return self._target(nxt, body)
            if nxt.command in (_M.MAV_CMD_NAV_LAND, _M.MAV_CMD_NAV_RETURN_TO_LAUNCH, _M.MAV_CMD_NAV_TAKEOFF):
                return None
        return None

    def _fly_leg(self, body: Body, target: Vec, arrive_speed: float, dt: float, line_from: Vec | None = None) -> None:
        """Fly towards ``target``, on the line from ``line_from`` when the mission gives one (``px4_track``)."""
        p = self.params()
        if self.leg is None or self.leg.target != target:
            start, beside = body.pos, None
            joined = None if line_from is None else join_line(line_from, body.pos, target, p.get("NAV_ACC_RAD", 10.0))
            if joined is not None:
                start, beside = joined
            curve = SCurve()
            curve.calculate_track(start, target, self.speed, p.get("MPC_Z_V_AUTO_UP", 3.0),
                                  p.get("MPC_Z_V_AUTO_DN", 1.5), p.get("MPC_ACC_HOR", 3.0),
                                  p.get("MPC_ACC_UP_MAX", 4.0), _LEG_SNAP, p.get("MPC_JERK_AUTO", 4.0))
            if curve.full:
                along = (body.vel[0] * curve.unit[0] + body.vel[1] * curve.unit[1] + body.vel[2] * curve.unit[2])
                curve.set_origin_speed_max(max(0.0, along))
                curve.set_destination_speed_max(arrive_speed)
            self.leg = _Leg(start, target, curve, beside)
        leg = self.leg
        if self.paused:
            self.brake = self.brake or Brake(decel=p.get("MPC_ACC_HOR", 3.0), jerk=p.get("MPC_JERK_AUTO", 4.0))
            self.brake.step(body, dt)
            self.leg = None
            return
        self.brake = None
        pos, vel, _ = leg.curve.move_from(dt)
        if leg.beside is not None:
            off, off_vel = leg.beside.follow(pos, vsub(leg.target, leg.origin), dt)
            pos, vel = vadd(pos, off), vadd(vel, off_vel)
        body.pos, body.vel = vadd(leg.origin, pos), vel

    def _mission(self, body: Body, dt: float) -> None:
        p = self.params()
        while True:
            item = self.current
            if item is None:
                self.mission_done = True
                self.mode = "LOITER"  # PX4: the mission ends in a hold
                self.brake = Brake(decel=p.get("MPC_ACC_HOR", 3.0), jerk=p.get("MPC_JERK_AUTO", 4.0))
                return
            if item.command not in (_M.MAV_CMD_NAV_TAKEOFF, _M.MAV_CMD_NAV_WAYPOINT, _M.MAV_CMD_NAV_LAND,
                                    _M.MAV_CMD_NAV_RETURN_TO_LAUNCH):
                if item.command == _M.MAV_CMD_DO_CHANGE_SPEED and item.param2 > 0:
                    self.speed = min(float(item.param2), p.get("MPC_XY_VEL_MAX", 12.0))
                self._item_done()  # a DO item is done as soon as it is reached
                continue
            break
        if item.command == _M.MAV_CMD_NAV_TAKEOFF:
            if self.climb is None:
                self.climb = Climb(alt_m=max(item.alt_m, p.get("MIS_TAKEOFF_ALT", 2.5)),
                                   speed_up=p.get("MPC_TKO_SPEED", 1.5), accel_z=p.get("MPC_ACC_UP_MAX", 4.0),
                                   slew_s=0.0, ground_left_s=None if body.pos[2] <= 0.05 else 0.0)
            self.climb.step(body, dt)
            if abs(body.pos[2] - self.climb.alt_m) <= p.get("NAV_MC_ALT_RAD", 0.8):
                self.climb, self.line_from = None, None  # the first leg starts where the vehicle climbed
                self._item_done()
            return
        if item.command == _M.MAV_CMD_NAV_RETURN_TO_LAUNCH:
            self.mode, self.rtl_stage, self.leg = "RTL", "CLIMB", None
            return
        target = self._target(item, body)
        if item.command == _M.MAV_CMD_NAV_LAND:
            target = (target[0], target[1], body.pos[2])
            self._fly_leg(body, target, 0.0, dt, self.line_from)
            if math.hypot(target[0] - body.pos[0], target[1] - body.pos[1]) < 0.3 and body.speed_xy < 0.3:
                self._start_landing(body)
            return
        if self.hold_left_s is not None:
            body.vel = (0.0, 0.0, 0.0)
            self.hold_left_s -= dt
            if self.hold_left_s <= 0:
                self.hold_left_s = None
                self._item_done()
            return
        nxt = self._next_waypoint(self.index, body)
        self._fly_leg(body, target, turn_speed(body.pos, target, nxt, p), dt, self.line_from)
        horizontal = math.hypot(target[0] - body.pos[0], target[1] - body.pos[1])
        if horizontal <= p.get("NAV_ACC_RAD", 10.0) and abs(target[2] - body.pos[2]) <= p.get("NAV_MC_ALT_RAD", 0.8):
            if nxt is None and (horizontal > 0.3 or body.speed_xy > 0.3):
                return  # a stop: the trajectory brings it to the waypoint first
            if item.param1 > 0:
                self.hold_left_s = float(item.param1)
                return
            self._item_done()

    def _item_done(self) -> None:
        item = self.current
        if item is not None:
            self.reached(item.seq)
        if self.leg is not None:
            self.line_from = self.leg.target  # a waypoint flown to (a DO item between legs keeps the last one)
        self.index += 1
        self.leg = None

    def _rtl(self, body: Body, dt: float) -> None:
        """``RtlDirect``: climb, return, descend, land."""
        p = self.params()
        home = (self.home_ne[0], self.home_ne[1])
        if self.rtl_stage == "CLIMB":
            alt = max(body.pos[2], p.get("RTL_RETURN_ALT", 60.0))
            if body.pos[2] < alt - 0.5:
                self._fly_leg(body, (body.pos[0], body.pos[1], alt), 0.0, dt)
                return
            self.rtl_stage, self.leg = "RETURN", None
        if self.rtl_stage == "RETURN":
            target = (home[0], home[1], body.pos[2])
            self._fly_leg(body, target, 0.0, dt)
            if vlen(vsub(target, body.pos)) < 0.5 and body.speed_xy < 0.3:
                self.rtl_stage, self.leg = "DESCEND", None
            return
        if self.rtl_stage == "DESCEND":
            alt = p.get("RTL_DESCEND_ALT", 30.0)
            if body.pos[2] > alt + 0.5:
                self._fly_leg(body, (home[0], home[1], alt), 0.0, dt)
                return
            self._start_landing(body)

    def _start_landing(self, body: Body) -> None:
        if self.landing_axis is None:
            self.landing_axis = Axis(body.pos[2], body.vel[2], 0.0)
            self.leg = None

    def _descend(self, body: Body, dt: float) -> None:
        """Down at the land speeds (MPC_Z_V_AUTO_DN above MPC_LAND_ALT1, MPC_LAND_SPEED below MPC_LAND_ALT2)."""
        p = self.params()
        ax = self.landing_axis
        assert ax is not None
        fast, slow = p.get("MPC_Z_V_AUTO_DN", 1.5), p.get("MPC_LAND_SPEED", 0.7)
        alt1, alt2 = p.get("MPC_LAND_ALT1", 10.0), p.get("MPC_LAND_ALT2", 5.0)
        h = ax.pos
        rate = fast if h >= alt1 else slow if h <= alt2 else slow + (fast - slow) * (h - alt2) / max(alt1 - alt2, 0.1)
        ax.hold_speed(-rate, -p.get("MPC_ACC_DOWN_MAX", 3.0), p.get("MPC_ACC_UP_MAX", 4.0), 5.0, dt)
        if self.brake is not None:
            self.brake.step(body, dt)
        if ax.pos <= 0.0:
            ax.pos, ax.vel = 0.0, 0.0
            self.touched_down_for_s = 0.0
            item = self.current
            if self.mode == "AUTO" and item is not None and item.command == _M.MAV_CMD_NAV_LAND:
                self.reached(item.seq)  # PX4 reports the landing item once landed
                self.mission_done = True
        body.pos = (body.pos[0], body.pos[1], ax.pos)
        body.vel = (body.vel[0], body.vel[1], ax.vel)
