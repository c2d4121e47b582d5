"""A stored mission as the autopilot's mission engine runs it: nav points, the speed each leg really gets.

The vehicle's timeline (``planner.flight``) depends on which speed commands take effect, and that is
decided by the mission engine, not by what the plan meant:

ArduPilot (``AP_Mission::advance_current_nav_cmd`` / ``advance_current_do_cmd``, Copter-4.6):

* When a nav command completes, the engine walks to the next nav command and starts the *first* "do"
  command on the way at once; the others start one per loop after the new nav command has started.
  Starting a nav command clears the pending "do" commands, so when the new nav command completes at
  once — a waypoint at the place just reached, a zero-length leg — only the first "do" before it runs.
  (On the recorded lane patrol the ``DO_CHANGE_SPEED 12`` after each lane's camera-off was dropped
  this way: every transit after the first lane flew at the lanes' 7 m/s.)
* ``ModeAuto::wp_start`` starts the waypoint controller (``wp_and_spline_init``) at the first waypoint
  after the take-off with the speed a ``DO_CHANGE_SPEED`` set before it (``desired_speed_override``), or
  ``WPNAV_SPEED`` without one: a speed set between the take-off and the first waypoint holds.
* ``ModeAuto::do_change_speed``: speed type 0/1 sets the horizontal speed (``AC_WPNav::set_speed_xy``),
  2 and 3 the climb and descent speed (not used by sortie's missions); a speed ≤ 0 is ignored.

PX4 (``Navigator``/``MissionBlock``): every DO_CHANGE_SPEED runs and sets the cruise speed of the legs
after it; a mission without one flies ``MPC_XY_CRUISE``.

Positions are metres east/north of the dock (home) on the equirectangular projection the fence uses
(``planner.output.mission_items``), altitudes relative to home. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from planner.output import mav_ids as _M

from planner.errors import InvalidArgument
from planner.flight.timeline import NavPoint
from planner.output.mission_items import M_PER_DEG_LAT, M_PER_DEG_LON_EQUATOR, Dialect, MissionItem
from planner.world.model import Dock

__all__ = ["NAV_COMMANDS", "nav_points"]

NAV_COMMANDS = {
    _M.MAV_CMD_NAV_TAKEOFF: "takeoff",
    _M.MAV_CMD_NAV_WAYPOINT: "waypoint",
    _M.MAV_CMD_NAV_LAND: "land",
    _M.MAV_CMD_NAV_RETURN_TO_LAUNCH: "rtl",
}


def _xy(item: MissionItem, dock: Dock) -> tuple[float, float]:
    kx = M_PER_DEG_LON_EQUATOR * math.cos(math.radians(dock.lat))
    return ((item.lon - dock.lon) * kx, (item.lat - dock.lat) * M_PER_DEG_LAT)


def _speed(item: MissionItem) -> float | None:
    """The horizontal speed a DO_CHANGE_SPEED sets, or ``None`` (another speed type, or ≤ 0)."""
    if item.command != _M.MAV_CMD_DO_CHANGE_SPEED:
        return None
    if int(item.param1) not in (0, 1) or not item.param2 > 0:
        return None
    return float(item.param2)


def nav_points(items: Sequence[MissionItem], dialect: Dialect, dock: Dock) -> tuple[tuple[NavPoint, ...], tuple[int, ...]]:
    """The nav points the vehicle flies for the mission ``items`` (seq order), and each one's item seq.

    ArduPilot's seq 0 (the home slot) is skipped. A NAV_RETURN_TO_LAUNCH is the return to home (ArduPilot's
    ``ModeRTL``, PX4: flown as a landing at home); a nav command without a position (lat and lon 0) stays
    where the vehicle is.
    """
    rows = sorted(items, key=lambda it: it.seq)
    if dialect == "ardupilot":
        rows = [r for r in rows if r.seq != 0]
    points: list[NavPoint] = []
    seqs: list[int] = []
    pending: list[float | None] = []  # the do commands since the last nav command (their speeds)
    here = (0.0, 0.0, 0.0)
    for r in rows:
        kind = NAV_COMMANDS.get(r.command)
        if kind is None:
            if r.command in (_M.MAV_CMD_NAV_LOITER_TIME, _M.MAV_CMD_NAV_LOITER_UNLIM, _M.MAV_CMD_NAV_LOITER_TURNS,
                             _M.MAV_CMD_NAV_SPLINE_WAYPOINT, _M.MAV_CMD_NAV_DELAY):
                raise InvalidArgument(f"mission item {r.seq}: {r.command} is a nav command sortie does not time")
            pending.append(_speed(r))
            continue
        if r.command == _M.MAV_CMD_NAV_RETURN_TO_LAUNCH:
            x, y = 0.0, 0.0
        elif r.lat == 0.0 and r.lon == 0.0:
            x, y = here[0], here[1]
        else:
            x, y = _xy(r, dock)
        z = r.alt_m if r.alt_m > 0 or kind == "takeoff" else here[2]
        if kind in ("land", "rtl"):
            z = here[2]
        hold = float(r.param1) if kind == "waypoint" and r.param1 > 0 else 0.0
        speed = _applied_speed(pending, dialect, zero_leg=(kind == "waypoint" and hold == 0 and (x, y, z) == here))
        points.append(NavPoint(kind, x, y, z, hold, speed))
        seqs.append(r.seq)
        pending = []
        here = (x, y, z if kind not in ("land", "rtl") else 0.0)
    return tuple(points), tuple(seqs)


def _applied_speed(pending: list[float | None], dialect: Dialect, *, zero_leg: bool) -> float | None:
    """The horizontal speed in force for the leg to this nav command after the "do" commands before it."""
    run = pending[:1] if dialect == "ardupilot" and zero_leg else pending  # ArduPilot drops the rest (docstring)
    speeds = [s for s in run if s is not None]
    return speeds[-1] if speeds else None
