"""How a PX4 multicopter joins the line to its next waypoint: L1 crossing points in the turn, then the waypoint.

PX4's navigator moves on to the next mission item while the vehicle is still up to
NAV_ACC_RAD from the one it reached (``MissionBlock::is_mission_item_reached_or_completed``),
so a new leg starts beside the line from that waypoint to the next. The auto trajectory
does not fly straight from there (``src/lib/motion_planning/PositionSmoothing.cpp``):

- while the vehicle turns, ``_getCrossingPoint`` aims at ``_getL1Point``: the point of the
  line from the previous waypoint to the target that lies ``L1 = max(NAV_ACC_RAD, 5 m)``
  from the vehicle (the closest point of the line plus sqrt(L1² − crosstrack²) along it);
- it turns for as long as ``_isTurning``: its velocity is more than acos(0.98) ≈ 11.5° off
  the direction to the target and the target is farther than the acceptance radius; after
  that it aims at the target itself.

So a survey's sweep is flown on its line, not ~NAV_ACC_RAD/2 beside it (the simulator used to
fly each leg straight from the acceptance point: 4.2 m off the region-1001 sweeps at PX4's
default 10 m, issue 43). The simulator flies the leg's S-curve along the line (its progress and
speed) and carries the cross-track offset beside it: while turning the offset shrinks as the
heading to the L1 point says (de/ds = −e / sqrt(L1² − e²)); once aimed at the target, in
proportion to the distance left. The velocity is the setpoint's direction: the trajectory's lag
in the turn (``VelocitySmoothing``) is not modelled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from flows.sim.vec3 import Vec

__all__ = ["CrossTrack", "join_line"]

L1_MIN_M = 5.0  # PositionSmoothing::_getL1Point: l1 = max(_target_acceptance_radius, 5.f)
TURNING_COS = 0.98  # PositionSmoothing::_isTurning: cos_align < 0.98f
_TURNING_ANGLE = math.acos(TURNING_COS)
_SUBSTEP_M = 0.1  # along-track metres per integration step of the turn
_EPS = 1e-3


@dataclass
class CrossTrack:
    """The vehicle's offset beside the line it flies (metres, along ``normal``: from the line to the vehicle)."""

    normal: tuple[float, float]
    offset: float
    l1: float
    accept: float
    aiming_at_target: bool = False
    _along: tuple[float, float] = (0.0, 0.0)  # the last horizontal position on the line (relative to the leg's start)

    def beside(self) -> Vec:
        return (self.normal[0] * self.offset, self.normal[1] * self.offset, 0.0)

    def follow(self, on_line: Vec, destination: Vec, dt: float) -> tuple[Vec, Vec]:
        """The offset vector and its rate after the leg's S-curve moved to ``on_line`` (both relative to the leg's
        start; ``destination`` is the target there)."""
        ds = math.hypot(on_line[0] - self._along[0], on_line[1] - self._along[1])
        self._along = (on_line[0], on_line[1])
        left = math.hypot(destination[0] - on_line[0], destination[1] - on_line[1])
        before = self.offset
        self._shrink(ds, left)
        rate = (self.offset - before) / dt if dt > 0 else 0.0
        return self.beside(), (self.normal[0] * rate, self.normal[1] * rate, 0.0)

    def _shrink(self, ds: float, left: float) -> None:
        """Fly ``ds`` metres along the line, ending ``left`` metres short of the target."""
        flown = 0.0
        while flown < ds and self.offset > 0.0:
            to_target = left + ds - flown  # along the line, from where the vehicle is now
            if not self.aiming_at_target:
                toward_l1 = math.asin(min(self.offset / self.l1, 1.0))
                if toward_l1 - math.atan2(self.offset, to_target) <= _TURNING_ANGLE or to_target <= self.accept:
                    self.aiming_at_target = True
            if self.aiming_at_target:
                # straight at the target: the offset keeps its ratio to the distance left
                self.offset *= left / to_target if to_target > _EPS else 0.0
                return
            step = min(ds - flown, _SUBSTEP_M)
            flown += step
            self.offset = max(0.0, self.offset - step * math.tan(math.asin(min(self.offset / self.l1, 0.999))))


def join_line(line_from: Vec, pos: Vec, target: Vec, accept_m: float) -> tuple[Vec, CrossTrack] | None:
    """Where the leg's S-curve starts (the point of the line ``line_from`` → ``target`` abeam ``pos``, at ``pos``'s
    height) and the offset the vehicle carries beside it; None when it flies straight at the target (it is on the
    line, the line has no length, it is past the target, or it is outside the L1 circle — where PX4 would first
    fly square to the line: not modelled)."""
    dn, de = target[0] - line_from[0], target[1] - line_from[1]
    length = math.hypot(dn, de)
    if length < _EPS:
        return None
    u = (dn / length, de / length)
    along = (pos[0] - line_from[0]) * u[0] + (pos[1] - line_from[1]) * u[1]
    if along >= length - _EPS:
        return None
    foot = (line_from[0] + u[0] * along, line_from[1] + u[1] * along)
    side = (pos[0] - foot[0], pos[1] - foot[1])
    offset = math.hypot(*side)
    l1 = max(accept_m, L1_MIN_M)
    if offset < _EPS or offset >= l1:
        return None
    normal = (side[0] / offset, side[1] / offset)
    return (foot[0], foot[1], pos[2]), CrossTrack(normal, offset, l1, accept_m)

