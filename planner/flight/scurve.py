"""One straight leg as ArduPilot's S-curve generator plans it: 23 time segments, jerk shaped by a raised cosine.

This is a port of ``libraries/AP_Math/SCurve.cpp`` (ArduPilot Copter-4.x), the path generator that
``AC_WPNav`` hands every straight waypoint leg to. The functions followed, one for one:

* ``SCurve::calculate_track``      → ``SCurve.straight`` (limits from ``set_kinematic_limits`` /
  ``kinematic_limit``, then ``add_segments``);
* ``SCurve::add_segments``         → ``_add_segments``: 1 initial segment, 7 accelerating, 7 (empty)
  speed-change segments, 1 constant-speed segment, 7 decelerating; the leg starts and ends at rest —
  whether the vehicle really stops at a corner is decided by the mission's overlap of two legs
  (``planner.flight.ardupilot``), not here;
* ``SCurve::calculate_path``       → ``calculate_path`` (the closed-form segment times, the same branches
  and formulas, including its ``(L + 4·V0·tj)`` bound);
* ``SCurve::add_segment_incr_jerk`` / ``add_segment_decr_jerk`` / ``add_segment_const_jerk`` and
  ``get_jerk_accel_vel_pos_at_time`` / ``calc_javp_for_segment_*`` → ``_Builder`` and ``SCurve.state``.

Units are whatever the caller uses consistently (metres, m/s, m/s², m/s³, m/s⁴ here). Double precision
where the autopilot uses float: the difference is far below a 5 Hz track's resolution. Pure.

Example (WPNAV defaults: 10 m/s, 2.5 m/s², jerk 1 m/s³, snap 5.24 m/s⁴): 100 m take 16.8 s, not 10 s;
13 m (a short lane piece) take 7.9 s and never get faster than 3.3 m/s::

    >>> leg = SCurve.straight(100.0, 10.0, 2.5, 1.0, 5.236)
    >>> round(leg.time_end, 2), round(leg.state(leg.time_end)[3], 2), round(leg.cruise_speed, 2)
    (16.8, 100.0, 10.0)
    >>> short = SCurve.straight(13.0, 7.0, 2.5, 1.0, 5.236)
    >>> round(short.time_end, 2), round(short.cruise_speed, 2)
    (7.89, 3.3)
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

__all__ = ["SegmentProfile", "SCurve", "calculate_path", "kinematic_limit", "SEG_ACCEL_MAX", "SEG_ACCEL_END", "SEG_CONST", "SEG_DECEL_END"]

# Segment indices of SCurve.cpp.
SEG_INIT = 0
SEG_ACCEL_MAX = 4  # end of the constant-acceleration segment (SEG_TURN_IN in older sources)
SEG_ACCEL_END = 7
SEG_SPEED_CHANGE_END = 14
SEG_CONST = 15  # end of the constant-speed segment = start of the deceleration (SEG_TURN_OUT / SEG_DECEL_START)
SEG_DECEL_END = 22
SEGMENTS = 23

CONSTANT_JERK, POSITIVE_JERK, NEGATIVE_JERK = 0, 1, 2


def _cbrt_or_nan(x: float) -> float:
    """``powf(x, 1/3)`` as C computes it: NaN for a negative base."""
    return math.pow(x, 1.0 / 3.0) if x >= 0.0 else math.nan


def _safe_sqrt(x: float) -> float:
    return math.sqrt(x) if x > 0.0 else 0.0


def calculate_path(sm: float, jm: float, v0: float, am: float, vm: float, length: float) -> tuple[float, float, float, float, float]:
    """``SCurve::calculate_path``: (Jm, tj, t2, t4, t6) of the jerk-limited change from ``v0`` towards ``vm``
    within ``length`` (half the leg), for maximum snap ``sm``, jerk ``jm`` and acceleration ``am``."""
    if not (sm > 0 and jm > 0 and am > 0 and vm > 0 and length > 0):
        return 0.0, 0.0, 0.0, 0.0, 0.0
    if v0 >= vm:
        return 0.0, 0.0, 0.0, 0.0, 0.0
    tj = jm * math.pi / (2.0 * sm)
    at = min(am, (vm - v0) / (2.0 * tj), (length + 4.0 * v0 * tj) / (4.0 * tj * tj))
    if abs(at) < jm * tj:
        if v0 == 0.0:
            # no solution for a non-zero initial velocity here: shrink the jerk time (constant snap)
            tj = min(tj, math.pow(length * math.pi / (8.0 * sm), 0.25), math.pow(vm * math.pi / (4.0 * sm), 1.0 / 3.0),
                     _safe_sqrt(am * math.pi / (2.0 * sm)))
            jm = 2.0 * sm * tj / math.pi
            am = jm * tj
        else:
            am = at
            jm = am / tj
        if vm <= v0 + 2.0 * am * tj or length <= 4.0 * v0 * tj + 4.0 * am * tj * tj:
            t2 = t4 = t6 = 0.0  # solution 0: jerk pulses only
        else:
            t2, t6 = 0.0, 0.0  # solution 2: jerk pulses and a constant acceleration
            t4 = max(_t4(jm, v0, am, vm, length, tj), 0.0)
    else:
        if vm < v0 + am * tj + am * am / jm or length < (am**3 + am * jm * (v0 * 2.0 + am * tj * 2.0)) / (jm * jm) + v0 * tj * 2.0 + am * tj * tj:
            # solution 5: constant jerk, no constant acceleration
            r = _safe_sqrt((v0 * -4.0 + vm * 4.0 + jm * tj * tj) / jm)
            a_v = max(jm * (tj + r) * -0.5, jm * (tj - r) * -0.5)
            x = -(jm * jm) * length * 0.5 + jm**3 * tj**3 * (8.0 / 27.0) - jm * tj * (jm * jm * tj * tj + jm * v0 * 2.0) / 3.0 + jm * jm * v0 * tj
            y = jm * jm * tj * tj / 9.0 - jm * v0 * (2.0 / 3.0)
            c = _cbrt_or_nan(_safe_sqrt(x * x - y**3) - x)
            a_l = jm * tj * (-2.0 / 3.0) + y / c + c
            am = min(am, a_v, a_l)
            t2 = am / jm - tj
            t4 = 0.0
            t6 = t2
        else:
            # solution 7: jerk, constant acceleration and constant speed
            t2 = am / jm - tj
            t4 = max(_t4(jm, v0, am, vm, length, tj), 0.0)
            t6 = t2
    out = (jm, tj, t2, t4, t6)
    if not all(math.isfinite(v) and v >= 0.0 for v in out):
        return 0.0, tj if math.isfinite(tj) else 0.0, 0.0, 0.0, 0.0
    return out


def _t4(jm: float, v0: float, am: float, vm: float, length: float, tj: float) -> float:
    """The constant-acceleration time of ``calculate_path`` (solutions 2 and 7)."""
    root = _safe_sqrt(
        am**4 * 0.25 + jm * jm * v0 * v0 + am * am * jm * jm * tj * tj * 0.25 + am * jm * jm * length * 2.0
        - am * am * jm * v0 + am**3 * jm * tj * 0.5 - am * jm * jm * v0 * tj
    )
    base = am * am * -1.5 - jm * v0 - am * jm * tj * 1.5
    return min(-(v0 - vm + am * tj + am * am / jm) / am, max((base + root) / (am * jm), (base - root) / (am * jm)))


def kinematic_limit(dx: float, dy: float, dz: float, max_xy: float, max_up: float, max_down: float) -> float:
    """``kinematic_limit`` (AP_Math/vector3 helpers): the largest magnitude along (dx, dy, dz), z up,
    that keeps the horizontal part within ``max_xy`` and the vertical within ``max_up``/``max_down``."""
    n = math.sqrt(dx * dx + dy * dy + dz * dz)
    if n == 0.0:
        return 0.0
    xy = math.hypot(dx, dy) / n
    z = dz / n
    if xy == 0.0:
        return max_up if z > 0 else max_down
    if z == 0.0:
        return max_xy
    slope = z / xy
    if slope > 0:
        return max_xy / xy if abs(slope) < max_up / max_xy else abs(max_up / z)
    return max_xy / xy if abs(slope) < max_down / max_xy else abs(max_down / z)


def _half_cosine(tj: float, jm: float) -> tuple[float, float, float]:
    """(AT, VT, PT) of SCurve.cpp's raised-cosine jerk segments: what a rising half-cosine of peak
    ``jm`` over ``tj`` adds to the acceleration, speed and position."""
    beta, alpha = math.pi / tj, jm * 0.5
    return alpha * tj, alpha * (tj * tj * 0.5 - 2.0 / (beta * beta)), alpha * (-tj / (beta * beta) + tj**3 / 6.0)


class _Builder:
    """Appends segments as ``SCurve::add_segment*`` do (``index`` is ``num_segs``)."""

    def __init__(self) -> None:
        # columns: end_time, type, jerk_ref, end_accel, end_vel, end_pos
        self.rows: list[list[float]] = [[0.0, CONSTANT_JERK, 0.0, 0.0, 0.0, 0.0]]

    def _prev(self) -> list[float]:
        return self.rows[-1]

    def const_jerk(self, tj: float, j0: float) -> None:
        t, _, _, a, v, p = self._prev()
        if not tj > 0:
            self.rows.append([t, CONSTANT_JERK, j0, a, v, p])
            return
        self.rows.append([t + tj, CONSTANT_JERK, j0, a + j0 * tj, v + a * tj + 0.5 * j0 * tj * tj,
                          p + v * tj + 0.5 * a * tj * tj + j0 * tj**3 / 6.0])

    def incr_jerk(self, tj: float, jm: float) -> None:
        """``add_segment_incr_jerk``: jerk rising as a raised cosine from 0 to ``jm`` over ``tj``."""
        t, _, _, a, v, p = self._prev()
        if not tj > 0:
            self.rows.append([t, CONSTANT_JERK, 0.0, a, v, p])
            return
        at, vt, pt = _half_cosine(tj, jm)
        self.rows.append([t + tj, POSITIVE_JERK, jm, a + at, v + a * tj + vt, p + v * tj + 0.5 * a * tj * tj + pt])

    def decr_jerk(self, tj: float, jm: float) -> None:
        """``add_segment_decr_jerk``: jerk falling as a raised cosine from ``jm`` to 0 over ``tj``."""
        t, _, _, a, v, p = self._prev()
        if not tj > 0:
            self.rows.append([t, CONSTANT_JERK, 0.0, a, v, p])
            return
        at, vt, pt = _half_cosine(tj, jm)
        beta = math.pi / tj
        a2t, v2t = jm * tj, jm * tj * tj
        p2t = jm * 0.5 * (-2.0 * tj / (beta * beta) + (4.0 / 3.0) * tj**3)
        self.rows.append([t + tj, NEGATIVE_JERK, jm, (a - at) + a2t, (v - vt) + (a - at) * tj + v2t,
                          (p - pt) + (v - vt) * tj + 0.5 * (a - at) * tj * tj + p2t])

    def jerk(self, tj: float, jm: float, tcj: float) -> None:
        """``add_segments_jerk``: raised-cosine jerk up, constant jerk, jerk down."""
        self.incr_jerk(tj, jm)
        self.const_jerk(tcj, jm)
        self.decr_jerk(tj, jm)


def _add_segments(length: float, snap: float, jerk: float, accel: float, vel: float) -> np.ndarray:
    """``SCurve::add_segments``: the 23 segments of a rest-to-rest leg of ``length``."""
    jm, tj, t2, t4, t6 = calculate_path(snap, jerk, 0.0, accel, vel, length * 0.5)
    b = _Builder()
    b.jerk(tj, jm, t2)
    b.const_jerk(t4, 0.0)
    b.jerk(tj, -jm, t6)
    b.rows[SEG_ACCEL_END][3] = 0.0
    for _ in range(7):
        b.const_jerk(0.0, 0.0)
    v14 = b.rows[SEG_SPEED_CHANGE_END][4]
    t15 = max(0.0, (length - 2.0 * b.rows[SEG_SPEED_CHANGE_END][5]) / v14) if v14 > 0 else 0.0
    b.const_jerk(t15, 0.0)
    b.jerk(tj, -jm, t6)
    b.const_jerk(t4, 0.0)
    b.jerk(tj, jm, t2)
    b.rows[SEG_DECEL_END][3] = 0.0
    b.rows[SEG_DECEL_END][4] = 0.0
    return np.array(b.rows, dtype=float)


@dataclass(frozen=True, eq=False)
class SegmentProfile:
    """A speed profile along a straight leg as time segments (columns: end_time, type, jerk_ref,
    end_accel, end_vel, end_pos), evaluated as ``SCurve::get_jerk_accel_vel_pos_at_time`` does."""

    segments: np.ndarray  # shape (n, 6); n = 0: an empty leg
    length: float
    vel_max: float
    accel_max: float

    @classmethod
    def build(cls, pieces: list[tuple[float, float]], v0: float = 0.0, vel_max: float = 0.0, accel_max: float = 0.0) -> SegmentProfile:
        """A profile of constant-jerk ``pieces`` (duration s, jerk) starting at speed ``v0``."""
        b = _Builder()
        b.rows[0][4] = v0
        for duration, jerk in pieces:
            b.const_jerk(duration, jerk)
        seg = np.array(b.rows, dtype=float)
        return cls(seg, float(seg[-1, 5]), vel_max, accel_max)

    @property
    def is_empty(self) -> bool:
        return self.segments.shape[0] == 0

    @property
    def time_end(self) -> float:
        return 0.0 if self.is_empty else float(self.segments[-1, 0])

    def state(self, t: float) -> tuple[float, float, float, float]:
        """(jerk, accel, speed, position) along the leg at time ``t`` (``get_jerk_accel_vel_pos_at_time``),
        in plain floats (the blend check asks for single instants many times)."""
        if self.is_empty:
            return 0.0, 0.0, 0.0, 0.0
        rows = self._rows
        n = len(rows)
        pnt = bisect.bisect_right(self._ends, t)
        if pnt == 0 or pnt == n:
            t0, _, _, a0, v0, p0 = rows[0 if pnt == 0 else n - 1]
            kind, jm, tj = CONSTANT_JERK, 0.0, 0.0
        else:
            t0, _, _, a0, v0, p0 = rows[pnt - 1]
            end, kind, jm = rows[pnt][0], rows[pnt][1], rows[pnt][2]
            tj = end - t0
        dt = t - t0
        if kind == POSITIVE_JERK:
            j, a, v, p = _incr_jerk(dt, tj, jm, a0, v0, p0)
        elif kind == NEGATIVE_JERK:
            j, a, v, p = _decr_jerk(dt, tj, jm, a0, v0, p0)
        else:
            j, a, v, p = _const_jerk(dt, jm, a0, v0, p0)
        return float(j), float(a), float(v), max(0.0, float(p))

    @cached_property
    def _rows(self) -> list[list[float]]:
        return self.segments.tolist()

    @cached_property
    def _ends(self) -> list[float]:
        return [r[0] for r in self._rows]

    def states(self, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``state`` for many times at once (arrays of jerk, accel, speed, position)."""
        ts = np.asarray(ts, dtype=float)
        if self.is_empty:
            z = np.zeros_like(ts)
            return z, z, z, z
        seg = self.segments
        n = seg.shape[0]
        ends = seg[:, 0]
        pnt = np.searchsorted(ends, ts, side="right")  # the first segment whose end is after t
        inside = (pnt > 0) & (pnt < n)
        at = np.minimum(pnt, n - 1)
        base = np.maximum(pnt - 1, 0)  # before the start: segment 0; after the end: the last
        t0 = ends[base]
        a0, v0, p0 = seg[base, 3], seg[base, 4], seg[base, 5]
        kind = np.where(inside, seg[at, 1], CONSTANT_JERK)
        jm = np.where(inside, seg[at, 2], 0.0)
        tj = np.where(inside, ends[at] - t0, 0.0)
        dt = ts - t0
        j, a, v, p = _const_jerk(dt, jm, a0, v0, p0)
        for code, fn in ((POSITIVE_JERK, _incr_jerk), (NEGATIVE_JERK, _decr_jerk)):
            m = kind == code
            if m.any():
                jj, aa, vv, pp = fn(dt[m], tj[m], jm[m], a0[m], v0[m], p0[m])
                j[m], a[m], v[m], p[m] = jj, aa, vv, pp
        return j, a, v, np.maximum(p, 0.0)


class SCurve(SegmentProfile):
    """A leg's 23 segments (``segment[]`` of SCurve.cpp); an empty one (``num_segs != segments_max``) has none."""

    @classmethod
    def straight(cls, length: float, vel_max: float, accel_max: float, jerk_max: float, snap_max: float) -> SCurve:
        """``SCurve::calculate_track`` for a leg of ``length`` whose limits along the track are given.

        Legs of one length under one set of limits are one ``SCurve`` (a survey's parallel sweeps,
        its connections): the value is immutable, so it is made once."""
        return _straight(float(length), float(vel_max), float(accel_max), float(jerk_max), float(snap_max))

    @classmethod
    def empty(cls) -> SCurve:
        """A zero-length leg: it takes no time and carries no speed."""
        return cls(np.zeros((0, 6)), 0.0, 0.0, 0.0)

    @property
    def is_empty(self) -> bool:
        return self.segments.shape[0] != SEGMENTS

    def _end(self, index: int) -> float:
        return 0.0 if self.is_empty else float(self.segments[index, 0])

    @property
    def time_accel_max_end(self) -> float:
        """End of the constant-acceleration segment (``time_turn_in`` of the older sources)."""
        return self._end(SEG_ACCEL_MAX)

    @property
    def time_accel_end(self) -> float:
        return self._end(SEG_ACCEL_END)

    @property
    def time_decel_start(self) -> float:
        """End of the constant-speed segment (``time_decel_start`` / ``time_turn_out``)."""
        return self._end(SEG_CONST)

    @property
    def cruise_speed(self) -> float:
        """The speed the leg reaches (its constant-speed segment)."""
        return 0.0 if self.is_empty else float(self.segments[SEG_CONST, 4])


@lru_cache(maxsize=4096)
def _straight(length: float, vel_max: float, accel_max: float, jerk_max: float, snap_max: float) -> SCurve:
    if not (length > 0 and vel_max > 0 and accel_max > 0 and jerk_max > 0 and snap_max > 0):
        return SCurve.empty()
    seg = _add_segments(length, snap_max, jerk_max, accel_max, vel_max)
    if not _valid(seg):
        return SCurve.empty()
    return SCurve(seg, length, vel_max, accel_max)


def _valid(seg: np.ndarray) -> bool:
    """``SCurve::valid``: finite, time and position never decreasing, no negative speed, at rest at the end."""
    if seg.shape[0] != SEGMENTS or not np.all(np.isfinite(seg)):
        return False
    if np.any(seg[:, 4] < -1e-9) or np.any(np.diff(seg[:, 0]) < -1e-12) or np.any(np.diff(seg[:, 5]) < -1e-9):
        return False
    return abs(seg[-1, 3]) < 1e-9


def _const_jerk(t, j0, a0, v0, p0):
    return (np.array(j0, dtype=float) + 0 * t, a0 + j0 * t, v0 + a0 * t + 0.5 * j0 * t * t,
            p0 + v0 * t + 0.5 * a0 * t * t + j0 * t**3 / 6.0)


def _incr_jerk(t, tj, jm, a0, v0, p0):
    alpha, beta = jm * 0.5, np.pi / tj
    return (alpha * (1.0 - np.cos(beta * t)),
            a0 + alpha * t - (alpha / beta) * np.sin(beta * t),
            v0 + a0 * t + alpha * 0.5 * t * t + (alpha / beta**2) * np.cos(beta * t) - alpha / beta**2,
            p0 + v0 * t + 0.5 * a0 * t * t - (alpha / beta**2) * t + alpha * t**3 / 6.0 + (alpha / beta**3) * np.sin(beta * t))


def _decr_jerk(t, tj, jm, a0, v0, p0):
    alpha, beta = jm * 0.5, np.pi / tj
    at = alpha * tj
    vt = alpha * (tj * tj * 0.5 - 2.0 / beta**2)
    pt = alpha * (-tj / beta**2 + tj**3 / 6.0)
    u = t + tj
    return (alpha * (1.0 - np.cos(beta * u)),
            (a0 - at) + alpha * u - (alpha / beta) * np.sin(beta * u),
            (v0 - vt) + (a0 - at) * t + 0.5 * alpha * u * u + (alpha / beta**2) * np.cos(beta * u) - alpha / beta**2,
            (p0 - pt) + (v0 - vt) * t + 0.5 * (a0 - at) * t * t - (alpha / beta**2) * u + (alpha / 6.0) * u**3
            + (alpha / beta**3) * np.sin(beta * u))
