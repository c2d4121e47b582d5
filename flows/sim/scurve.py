"""One straight leg of ArduCopter's waypoint path: a snap- and jerk-limited S-curve in time.

ArduCopter (4.1 on, Copter-4.6 included) does not fly a leg at a constant
speed: ``AC_WPNav`` hands each leg to an ``SCurve`` (``libraries/AP_Math/SCurve.cpp``)
that moves a *target* from the leg's origin to its destination with bounded
speed, acceleration, jerk and snap, starting and ending at rest. The vehicle
follows the target. A corner is not flown by slowing the leg: the next leg's
S-curve is started while this one is still braking, and their motions add up
(``SCurve::advance_target_along_track``); whether, and how early, depends on
the corner's geometry, WPNAV_RADIUS and the corner acceleration. So the time
of a mission is a property of this profile, which is why the simulator keeps
it rather than a speed.

A leg is 23 time segments (``SCurve::add_segments``): one initial segment, seven
accelerating to the leg's speed (raised-cosine jerk ramps: the jerk itself
rises and falls with bounded snap), seven for a later speed change, one at
constant speed, and seven braking to zero. Each segment stores its end time
and the acceleration, speed and distance reached there; the state at any time
is computed in closed form from the segment it falls in
(``SCurve::get_jerk_accel_vel_pos_at_time`` and the ``calc_javp_for_segment_*``
functions). The durations come from ``SCurve::calculate_path``, which picks the
shortest profile that meets the limits within half the leg. Units here are
metres and seconds (ArduPilot works in centimetres); vectors are (north, east,
up) tuples.

Written from ArduPilot's source (GPLv3) as a description of its behaviour: the
names of the functions followed are given beside each method.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from flows.sim.scurve_path import path_times as _path_times
from flows.sim.vec3 import ZERO, Vec, kinematic_limit, vadd, vlen, vlen_xy, vscale, vsub

__all__ = ["SCurve"]

SEG_INIT = 0
SEG_ACCEL_MAX = 4
SEG_ACCEL_END = 7
SEG_SPEED_CHANGE_END = 14
SEG_CONST = 15
SEG_DECEL_START = 15
SEG_DECEL_END = 22
SEGMENTS_MAX = 23

CONSTANT_JERK, POSITIVE_JERK, NEGATIVE_JERK = 0, 1, 2
_EPS = 1e-6  # ArduPilot's is_zero / is_positive / is_equal tolerance (FLT_EPSILON scaled to its units)


def _pos(x: float) -> bool:
    return x > _EPS


def _zero(x: float) -> bool:
    return abs(x) <= _EPS


@dataclass
class _Segment:
    end_time: float = 0.0
    kind: int = CONSTANT_JERK
    jerk: float = 0.0
    end_accel: float = 0.0
    end_vel: float = 0.0
    end_pos: float = 0.0

    def copy_from(self, other: "_Segment") -> None:
        self.end_time, self.kind, self.jerk = other.end_time, other.kind, other.jerk
        self.end_accel, self.end_vel, self.end_pos = other.end_accel, other.end_vel, other.end_pos


class SCurve:
    """One leg (``SCurve``): the target's distance, speed and acceleration along it over time."""

    __slots__ = ("snap_max", "jerk_max", "accel_max", "accel_z_max", "vel_max", "time", "track", "unit", "length",
                 "position_sq", "seg", "_full")

    def __init__(self) -> None:
        self.seg = [_Segment() for _ in range(SEGMENTS_MAX)]
        self.accel_z_max = 0.0  # kept by init(), as in SCurve::init
        self.init()

    # --- building ------------------------------------------------------------------------------------

    def init(self) -> None:
        """An empty (zero-length) leg (``SCurve::init``)."""
        self.snap_max = self.jerk_max = self.accel_max = self.vel_max = 0.0
        self.time = 0.0
        self.track: Vec = ZERO
        self.unit: Vec = ZERO
        self.length = 0.0
        self.position_sq = 0.0
        self._full = False
        for s in self.seg:
            s.end_time = s.jerk = s.end_accel = s.end_vel = s.end_pos = 0.0
            s.kind = CONSTANT_JERK

    def copy(self) -> "SCurve":
        out = SCurve()
        out.snap_max, out.jerk_max, out.accel_max, out.vel_max = self.snap_max, self.jerk_max, self.accel_max, self.vel_max
        out.accel_z_max = self.accel_z_max
        out.time, out.track, out.unit, out.length = self.time, self.track, self.unit, self.length
        out.position_sq, out._full = self.position_sq, self._full
        for a, b in zip(out.seg, self.seg):
            a.copy_from(b)
        return out

    def calculate_track(self, origin: Vec, destination: Vec, speed_xy: float, speed_up: float, speed_down: float,
                        accel_xy: float, accel_z: float, snap: float, jerk: float) -> None:
        """A leg from ``origin`` to ``destination`` starting and ending at rest (``SCurve::calculate_track``)."""
        self.init()
        track = vsub(destination, origin)
        length = vlen(track)
        if length <= 1e-9:
            return  # "leave track as zero length if origin and destination are equal"
        self.snap_max, self.jerk_max = snap, jerk
        self.vel_max = kinematic_limit(track, speed_xy, speed_up, speed_down)
        self.accel_max = kinematic_limit(track, accel_xy, accel_z, accel_z)
        self.accel_z_max = abs(accel_z)
        if not (_pos(snap) and _pos(jerk) and _pos(self.accel_max) and _pos(self.vel_max)):
            return  # "SCurve::calculate_track created zero length path"
        self.track, self.length = track, length
        self.unit = vscale(track, 1.0 / length)
        self._add_segments(length)
        if not self._valid():
            self.init()

    def _add_segments(self, length: float) -> None:
        """``SCurve::add_segments``: accelerate within the first half, cruise, brake within the second half."""
        jm, tj, t2, t4, t6 = _path_times(self.snap_max, self.jerk_max, 0.0, self.accel_max, self.vel_max, length * 0.5)
        i = self._jerk_ramps(1, tj, jm, t2)
        i = self._const_jerk(i, t4, 0.0)
        i = self._jerk_ramps(i, tj, -jm, t6)
        self.seg[SEG_ACCEL_END].end_accel = 0.0
        for _ in range(7):
            i = self._const_jerk(i, 0.0, 0.0)
        s14 = self.seg[SEG_SPEED_CHANGE_END]
        t15 = max(0.0, (length - 2.0 * s14.end_pos) / s14.end_vel) if s14.end_vel > 0 else 0.0
        i = self._const_jerk(i, t15, 0.0)
        i = self._jerk_ramps(i, tj, -jm, t6)
        i = self._const_jerk(i, t4, 0.0)
        i = self._jerk_ramps(i, tj, jm, t2)
        self.seg[SEG_DECEL_END].end_accel = 0.0
        self.seg[SEG_DECEL_END].end_vel = 0.0
        self._full = True

    def _set(self, i: int, end_time: float, kind: int, jerk: float, accel: float, vel: float, pos: float) -> int:
        s = self.seg[i]
        s.end_time, s.kind, s.jerk, s.end_accel, s.end_vel, s.end_pos = end_time, kind, jerk, accel, vel, pos
        return i + 1

    def _jerk_ramps(self, i: int, tj: float, jm: float, t_const: float) -> int:
        """``SCurve::add_segments_jerk``: jerk rises (raised cosine), holds, falls."""
        i = self._incr_jerk(i, tj, jm)
        i = self._const_jerk(i, t_const, jm)
        return self._decr_jerk(i, tj, jm)

    def _const_jerk(self, i: int, dt: float, j0: float) -> int:
        """``SCurve::add_segment_const_jerk``."""
        p = self.seg[i - 1]
        if not _pos(dt):
            return self._set(i, p.end_time, CONSTANT_JERK, j0, p.end_accel, p.end_vel, p.end_pos)
        return self._set(i, p.end_time + dt, CONSTANT_JERK, j0, p.end_accel + j0 * dt,
                         p.end_vel + p.end_accel * dt + 0.5 * j0 * dt * dt,
                         p.end_pos + p.end_vel * dt + 0.5 * p.end_accel * dt * dt + j0 * dt ** 3 / 6.0)

    def _incr_jerk(self, i: int, tj: float, jm: float) -> int:
        """``SCurve::add_segment_incr_jerk``: jerk from 0 to ``jm`` along a raised cosine."""
        p = self.seg[i - 1]
        if not _pos(tj):
            return self._set(i, p.end_time, CONSTANT_JERK, 0.0, p.end_accel, p.end_vel, p.end_pos)
        beta, alpha = math.pi / tj, jm * 0.5
        at = alpha * tj
        vt = alpha * (tj * tj * 0.5 - 2.0 / (beta * beta))
        pt = alpha * (-tj / (beta * beta) + tj ** 3 / 6.0)
        return self._set(i, p.end_time + tj, POSITIVE_JERK, jm, p.end_accel + at, p.end_vel + p.end_accel * tj + vt,
                         p.end_pos + p.end_vel * tj + 0.5 * p.end_accel * tj * tj + pt)

    def _decr_jerk(self, i: int, tj: float, jm: float) -> int:
        """``SCurve::add_segment_decr_jerk``: jerk from ``jm`` back to 0."""
        p = self.seg[i - 1]
        if not _pos(tj):
            return self._set(i, p.end_time, CONSTANT_JERK, 0.0, p.end_accel, p.end_vel, p.end_pos)
        beta, alpha = math.pi / tj, jm * 0.5
        at = alpha * tj
        vt = alpha * (tj * tj * 0.5 - 2.0 / (beta * beta))
        pt = alpha * (-tj / (beta * beta) + tj ** 3 / 6.0)
        a2t, v2t = jm * tj, jm * tj * tj
        p2t = alpha * (-2.0 * tj / (beta * beta) + 4.0 / 3.0 * tj ** 3)
        return self._set(i, p.end_time + tj, NEGATIVE_JERK, jm, (p.end_accel - at) + a2t,
                         (p.end_vel - vt) + (p.end_accel - at) * tj + v2t,
                         (p.end_pos - pt) + (p.end_vel - vt) * tj + 0.5 * (p.end_accel - at) * tj * tj + p2t)

    def _fill(self, first: int, last: int, source: int, accel: float = 0.0) -> None:
        """Segments ``first..last`` repeat ``source``'s end state (empty segments)."""
        src = self.seg[source]
        for i in range(first, last + 1):
            self._set(i, src.end_time, CONSTANT_JERK, 0.0, accel, src.end_vel, src.end_pos)

    def _close_end(self) -> None:
        end = self.seg[SEG_DECEL_END]
        end.end_accel = 0.0
        end.end_vel = max(0.0, end.end_vel)
        dp = max(0.0, self.length - end.end_pos)
        cruise = self.seg[SEG_CONST].end_vel
        dt = dp / cruise if cruise > 0 else 0.0
        for i in range(SEG_CONST, SEG_DECEL_END + 1):
            self.seg[i].end_time += dt
            self.seg[i].end_pos += dp

    def set_origin_speed_max(self, speed: float) -> float:
        """Start the leg at up to ``speed`` instead of at rest; returns the speed it will start at
        (``SCurve::set_origin_speed_max``)."""
        if not self._full:
            return 0.0
        if abs(self.seg[SEG_INIT].end_vel - speed) <= _EPS:
            return speed
        vm = self.seg[SEG_ACCEL_END].end_vel
        speed = min(speed, vm)
        jm, tj, t2, t4, t6 = _path_times(self.snap_max, self.jerk_max, speed, self.accel_max, vm, self.length * 0.5)
        i = self._set(SEG_INIT, 0.0, CONSTANT_JERK, 0.0, 0.0, speed, 0.0)
        i = self._jerk_ramps(i, tj, jm, t2)
        i = self._const_jerk(i, t4, 0.0)
        self._jerk_ramps(i, tj, -jm, t6)
        self.seg[SEG_ACCEL_END].end_accel = 0.0
        d_start = min(0.0, self.length * 0.5 - self.seg[SEG_ACCEL_END].end_pos)
        v7 = self.seg[SEG_ACCEL_END].end_vel
        dt = d_start / v7 if v7 > 0 else 0.0
        for i in range(SEG_INIT, SEG_ACCEL_END + 1):
            self.seg[i].end_time += dt
            self.seg[i].end_pos += d_start
        self._fill(SEG_ACCEL_END + 1, SEG_SPEED_CHANGE_END, SEG_ACCEL_END)
        i = self._const_jerk(SEG_CONST, 0.0, 0.0)
        jm, tj, t2, t4, t6 = _path_times(self.snap_max, self.jerk_max, 0.0, self.accel_max,
                                         self.seg[SEG_CONST].end_vel, self.length * 0.5)
        i = self._jerk_ramps(i, tj, -jm, t6)
        i = self._const_jerk(i, t4, 0.0)
        self._jerk_ramps(i, tj, jm, t2)
        self._close_end()
        if not self._valid():
            self.init()
            return 0.0
        return speed

    def set_destination_speed_max(self, speed: float) -> None:
        """End the leg at up to ``speed`` instead of at rest (``SCurve::set_destination_speed_max``)."""
        if not self._full or abs(self.seg[SEGMENTS_MAX - 1].end_vel - speed) <= _EPS:
            return
        vm = self.seg[SEG_CONST].end_vel
        speed = min(speed, vm)
        jm, tj, t2, t4, t6 = _path_times(self.snap_max, self.jerk_max, speed, self.accel_max, vm, self.length * 0.5)
        i = self._const_jerk(SEG_CONST, 0.0, 0.0)
        i = self._jerk_ramps(i, tj, -jm, t6)
        i = self._const_jerk(i, t4, 0.0)
        self._jerk_ramps(i, tj, jm, t2)
        self._close_end()
        if not self._valid():
            self.init()

    def set_speed_max(self, speed_xy: float, speed_up: float, speed_down: float) -> None:
        """A new speed limit for the leg, flown or not yet (``SCurve::set_speed_max``: what a DO_CHANGE_SPEED does to
        the leg in progress and the next one). Segments already flown stay; what is ahead is rebuilt."""
        if not self._full:
            return
        vmax = kinematic_limit(self.unit, speed_xy, speed_up, abs(speed_down))
        if abs(self.vel_max - vmax) <= _EPS or _zero(vmax):
            return
        self.vel_max = vmax
        seg, t = self.seg, self.time
        if t >= seg[SEG_CONST].end_time:
            return  # already braking: nothing ahead to change
        p_end = seg[SEG_DECEL_END].end_pos
        v_end = min(vmax, seg[SEG_DECEL_END].end_vel)
        if _zero(t):
            v_start = min(vmax, seg[SEG_INIT].end_vel)
            self._set(SEG_INIT, 0.0, CONSTANT_JERK, 0.0, 0.0, 0.0, 0.0)
            self._full = False
            self._add_segments(p_end)
            self.set_origin_speed_max(v_start)
            self.set_destination_speed_max(v_end)
            return
        if seg[SEG_ACCEL_END].end_time <= t <= seg[SEG_SPEED_CHANGE_END].end_time:
            # in the speed change: it becomes the acceleration, leaving room for another change
            s7 = seg[SEG_ACCEL_END]
            self._set(SEG_INIT, s7.end_time, CONSTANT_JERK, 0.0, s7.end_accel, s7.end_vel, s7.end_pos)
            for i in range(SEG_INIT + 1, SEG_ACCEL_END + 1):
                seg[i].copy_from(seg[i + 7])
            self._fill(SEG_ACCEL_END + 1, SEG_SPEED_CHANGE_END, SEG_ACCEL_END)
        elif seg[SEG_SPEED_CHANGE_END].end_time < t <= seg[SEG_CONST].end_time:
            # cruising: acceleration and speed change collapse onto where the leg is now
            s14 = seg[SEG_SPEED_CHANGE_END]
            self._set(SEG_INIT, s14.end_time, CONSTANT_JERK, 0.0, 0.0, s14.end_vel, s14.end_pos)
            _, _, v_now, p_now = self.state_at(t)
            for i in range(SEG_INIT + 1, SEG_SPEED_CHANGE_END + 1):
                self._set(i, t, CONSTANT_JERK, 0.0, 0.0, v_now, p_now)
        s4, s3, s7 = seg[SEG_ACCEL_MAX], seg[SEG_ACCEL_MAX - 1], seg[SEG_ACCEL_END]
        if (t <= s4.end_time and _pos(s4.end_time - s3.end_time) and vmax < s7.end_vel and _pos(s4.end_accel)):
            # still in the constant acceleration: cut it short, as close to the new speed as it can get
            v_start = seg[SEG_INIT].end_vel
            v_min = s7.end_vel - s4.end_accel * (s4.end_time - max(t, s3.end_time))
            jm, tj, t2, t4, t6 = _path_times(self.snap_max, self.jerk_max, v_start, self.accel_max, max(v_min, vmax),
                                             p_end * 0.5)
            i = self._jerk_ramps(SEG_INIT + 1, tj, jm, t2)
            i = self._const_jerk(i, t4, 0.0)
            self._jerk_ramps(i, tj, -jm, t6)
            seg[SEG_ACCEL_END].end_accel = 0.0
            self._fill(SEG_ACCEL_END + 1, SEG_CONST, SEG_ACCEL_END)
            jm, tj, t2, t4, t6 = _path_times(self.snap_max, self.jerk_max, 0.0, self.accel_max, max(v_min, vmax),
                                             p_end * 0.5)
            i = self._jerk_ramps(SEG_CONST + 1, tj, -jm, t6)
            i = self._const_jerk(i, t4, 0.0)
            self._jerk_ramps(i, tj, jm, t2)
            self._close_end_at(p_end)
        self._fill(SEG_ACCEL_END + 1, SEG_SPEED_CHANGE_END, SEG_ACCEL_END)
        s7 = seg[SEG_ACCEL_END]
        if abs(vmax - s7.end_vel) > _EPS and s7.end_vel > 0:
            room = seg[SEG_CONST].end_pos - s7.end_pos
            jerk_time = min((abs(vmax - s7.end_vel) * math.pi / (4.0 * self.snap_max)) ** (1.0 / 3.0),
                            self.jerk_max * math.pi / (2.0 * self.snap_max))
            jm = tj = t2 = t4 = t6 = 0.0
            if vmax < s7.end_vel and jerk_time * 12.0 < room / s7.end_vel:
                jm, tj, t6, t4, t2 = _path_times(self.snap_max, self.jerk_max, vmax, self.accel_max, s7.end_vel, room * 0.5)
                jm = -jm
            elif vmax > s7.end_vel and room / (jerk_time * 12.0) > s7.end_vel:
                vm = min(vmax, room / (jerk_time * 12.0))
                jm, tj, t2, t4, t6 = _path_times(self.snap_max, self.jerk_max, s7.end_vel, self.accel_max, vm, room * 0.5)
            if not _zero(jm) and t2 >= -_EPS and t4 >= -_EPS and t6 >= -_EPS:
                i = self._jerk_ramps(SEG_ACCEL_END + 1, tj, jm, t2)
                i = self._const_jerk(i, t4, 0.0)
                self._jerk_ramps(i, tj, -jm, t6)
                seg[SEG_SPEED_CHANGE_END].end_accel = 0.0
        v_end = min(v_end, seg[SEG_SPEED_CHANGE_END].end_vel)
        i = self._const_jerk(SEG_CONST, 0.0, 0.0)
        if v_end < seg[SEG_SPEED_CHANGE_END].end_vel:
            jm, tj, t2, t4, t6 = _path_times(self.snap_max, self.jerk_max, v_end, self.accel_max,
                                             seg[SEG_CONST].end_vel, p_end - seg[SEG_CONST].end_pos)
            i = self._jerk_ramps(i, tj, -jm, t6)
            i = self._const_jerk(i, t4, 0.0)
            self._jerk_ramps(i, tj, jm, t2)
        else:
            self._fill(SEG_CONST + 1, SEG_DECEL_END, SEG_CONST)
        self._close_end_at(p_end)
        if not self._valid():
            self.init()

    def _close_end_at(self, p_end: float) -> None:
        length, self.length = self.length, p_end
        self._close_end()
        self.length = length

    def _valid(self) -> bool:
        """``SCurve::valid``: finite, time and distance never going back, speed never negative, ending unaccelerated."""
        if not self._full:
            return False
        prev = None
        for s in self.seg:
            if not all(math.isfinite(x) for x in (s.jerk, s.end_time, s.end_accel, s.end_vel, s.end_pos)):
                return False
            if s.end_vel < -_EPS:
                return False
            if prev is not None and (s.end_time - prev.end_time < -_EPS or s.end_pos - prev.end_pos < -_EPS):
                return False
            prev = s
        return _zero(self.seg[-1].end_accel)

    # --- reading ------------------------------------------------------------------------------------

    @property
    def full(self) -> bool:
        """Whether the leg has a path (a zero-length leg has none: ``num_segs != segments_max``)."""
        return self._full

    def time_end(self) -> float:
        return self.seg[SEG_DECEL_END].end_time if self._full else 0.0

    def time_remaining(self) -> float:
        return self.seg[SEG_DECEL_END].end_time - self.time if self._full else 0.0

    def time_accel_end(self) -> float:
        """End of the acceleration (``SCurve::time_accel_end``)."""
        return self.seg[SEG_ACCEL_END].end_time if self._full else 0.0

    def time_decel_start(self) -> float:
        """Start of the braking (``SCurve::time_decel_start``)."""
        return self.seg[SEG_DECEL_START].end_time if self._full else 0.0

    def braking(self) -> bool:
        return self.time >= self.seg[SEG_CONST].end_time if self._full else True

    def finished(self) -> bool:
        """``SCurve::finished``: the end of the profile, or of the track."""
        return self.time >= self.time_end() or self.position_sq >= self.length * self.length

    def state_at(self, t: float) -> tuple[float, float, float, float]:
        """(jerk, acceleration, speed, distance) at time ``t`` (``SCurve::get_jerk_accel_vel_pos_at_time``)."""
        if not self._full:
            return 0.0, 0.0, 0.0, 0.0
        seg = self.seg
        pnt = SEGMENTS_MAX
        for i in range(SEGMENTS_MAX):
            if t < seg[i].end_time:
                pnt = i
                break
        if pnt == 0:
            s = seg[0]
            kind, jm, tj, t0, a0, v0, p0 = CONSTANT_JERK, 0.0, 0.0, s.end_time, s.end_accel, s.end_vel, s.end_pos
        elif pnt == SEGMENTS_MAX:
            s = seg[-1]
            kind, jm, tj, t0, a0, v0, p0 = CONSTANT_JERK, 0.0, 0.0, s.end_time, s.end_accel, s.end_vel, s.end_pos
        else:
            s, p = seg[pnt], seg[pnt - 1]
            kind, jm, tj, t0, a0, v0, p0 = s.kind, s.jerk, s.end_time - p.end_time, p.end_time, p.end_accel, p.end_vel, p.end_pos
        x = t - t0
        if kind == CONSTANT_JERK or not _pos(tj):
            if kind != CONSTANT_JERK:
                return 0.0, a0, v0, max(0.0, p0)
            return (jm, a0 + jm * x, v0 + a0 * x + 0.5 * jm * x * x,
                    max(0.0, p0 + v0 * x + 0.5 * a0 * x * x + jm * x ** 3 / 6.0))
        alpha, beta = jm * 0.5, math.pi / tj
        b2 = beta * beta
        if kind == POSITIVE_JERK:
            j = alpha * (1.0 - math.cos(beta * x))
            a = a0 + alpha * x - alpha / beta * math.sin(beta * x)
            v = v0 + a0 * x + alpha * 0.5 * x * x + alpha / b2 * math.cos(beta * x) - alpha / b2
            pos = p0 + v0 * x + 0.5 * a0 * x * x - alpha / b2 * x + alpha * x ** 3 / 6.0 + alpha / (b2 * beta) * math.sin(beta * x)
            return j, a, v, max(0.0, pos)
        at = alpha * tj
        vt = alpha * (tj * tj * 0.5 - 2.0 / b2)
        pt = alpha * (-tj / b2 + tj ** 3 / 6.0)
        y = x + tj
        j = alpha * (1.0 - math.cos(beta * y))
        a = (a0 - at) + alpha * y - alpha / beta * math.sin(beta * y)
        v = (v0 - vt) + (a0 - at) * x + 0.5 * alpha * y * y + alpha / b2 * math.cos(beta * y) - alpha / b2
        pos = ((p0 - pt) + (v0 - vt) * x + 0.5 * (a0 - at) * x * x - alpha / b2 * y + alpha / 6.0 * y ** 3
               + alpha / (b2 * beta) * math.sin(beta * y))
        return j, a, v, max(0.0, pos)

    def _advance(self, dt: float) -> None:
        self.time = min(self.time + dt, self.time_end())

    def _vectors_at(self, t: float) -> tuple[Vec, Vec, Vec, float]:
        _, a, v, p = self.state_at(t)
        u = self.unit
        return vscale(u, p), vscale(u, v), vscale(u, a), p

    def move_from(self, dt: float) -> tuple[Vec, Vec, Vec]:
        """Advance ``dt``; position, velocity, acceleration relative to the origin (``move_from_pos_vel_accel``)."""
        self._advance(dt)
        p, v, a, d = self._vectors_at(self.time)
        self.position_sq = d * d
        return p, v, a

    def move_to(self, dt: float) -> tuple[Vec, Vec, Vec]:
        """Advance ``dt``; the same relative to the destination (``move_to_pos_vel_accel``: what is left of the
        previous leg while the next one has started)."""
        p, v, a = self.move_from(dt)
        return vsub(p, self.track), v, a

    def at_time(self, t: float) -> tuple[Vec, Vec, Vec]:
        """Position, velocity, acceleration relative to the origin at time ``t`` (``move_from_time_pos_vel_accel``)."""
        p, v, a, _ = self._vectors_at(t)
        return p, v, a

    def speed_now(self) -> float:
        return self.state_at(self.time)[2] if self._full else 0.0

    def advance_along_track(self, prev: "SCurve", nxt: "SCurve", wp_radius: float, accel_corner: float, fast: bool,
                            dt: float) -> tuple[bool, Vec, Vec, Vec]:
        """Move the target ``dt`` along this leg, the end of ``prev`` and maybe the start of ``nxt``; returns (finished,
        position relative to this leg's origin, velocity, acceleration) (``SCurve::advance_target_along_track``).

        On a fast waypoint (Copter-4.6) the next leg starts once this one is braking and will end before the next
        one's acceleration does, provided that starting now puts the middle of the turn within ``wp_radius`` of the
        waypoint, slower than both legs' speeds, under ``accel_corner`` sideways and under both legs' vertical
        acceleration limits; from then on both move together, and this leg counts as finished once the next one
        has run as long as this one had left (half way through the turn)."""
        pp, pv, pa = prev.move_to(dt)
        tp, tv, ta = self.move_from(dt)
        pos, vel, acc = vadd(pp, tp), vadd(pv, tv), vadd(pa, ta)
        done = self.finished()
        remaining = self.time_remaining()
        if (fast and _zero(nxt.time) and self.time >= self.time_decel_start()
                and remaining <= nxt.time_accel_end()):
            half = remaining * 0.5
            a_p, a_v, a_a = self.at_time(self.time + half)
            b_p, b_v, b_a = nxt.at_time(half)
            turn_pos = vadd(vsub(a_p, self.track), b_p)
            turn_vel, turn_acc = vadd(a_v, b_v), vadd(a_a, b_a)
            speed_min = min(self.vel_max, nxt.vel_max)
            accel_z_lim = min(self.accel_z_max, nxt.accel_z_max)
            if (vlen(turn_pos) < wp_radius and vlen(turn_vel) < speed_min and vlen_xy(turn_acc) < accel_corner
                    and abs(turn_acc[2]) < accel_z_lim):
                np_, nv, na = nxt.move_from(dt)
                pos, vel, acc = vadd(pos, np_), vadd(vel, nv), vadd(acc, na)
        elif not _zero(nxt.time):
            np_, nv, na = nxt.move_from(dt)
            pos, vel, acc = vadd(pos, np_), vadd(vel, nv), vadd(acc, na)
            if nxt.time >= self.time_remaining():
                done = True
        return done, pos, vel, acc
