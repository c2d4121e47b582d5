"""A mission as the vehicle flies it: nav points in, a timeline of motions and arrival times out.

``NavPoint`` is one navigation command as the autopilot executes it (take-off, waypoint, landing), in
metres east/north/up of home, with the hold there and the horizontal speed in force for the leg that
ends at it. ``planner.output.mission_flight`` makes them from the mission items the vehicle stores
(which speed commands actually run is the autopilot's mission engine's business, not the plan's);
``planner.flight.ardupilot`` and ``planner.flight.px4`` turn them into a ``FlightTimeline``:

* ``arrivals_s[i]`` — when the vehicle reaches point ``i`` (ArduPilot: the "Reached command" instant,
  at a pass-through corner the middle of the turn), ``departures_s[i]`` — when it leaves (after a hold);
* ``motions`` — each straight leg's speed profile placed on the mission clock (consecutive legs overlap
  at a pass-through corner: the velocities add), and ``verticals`` — take-off climb, landing descent
  and hovers, which the energy model prices differently.

``FlightTimeline.velocity`` gives the commanded ground velocity at any instants; ``planner.flight.energy``
integrates power over it. Times are seconds from the start of the take-off command. Pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

__all__ = ["NavKind", "NavPoint", "Profile", "HorizontalMotion", "VerticalMotion", "FlightTimeline"]

NavKind = Literal["takeoff", "waypoint", "land", "rtl"]


@dataclass(frozen=True)
class NavPoint:
    """One navigation command as flown: where (m east, north, up of home), the hold, the speed in force."""

    kind: NavKind
    east_m: float
    north_m: float
    up_m: float
    hold_s: float = 0.0
    speed_mps: float | None = None  # horizontal speed for the leg ending here; None: unchanged

    @property
    def xyz(self) -> tuple[float, float, float]:
        return (self.east_m, self.north_m, self.up_m)


class Profile(Protocol):
    """A speed profile along one straight leg (``planner.flight.scurve.SCurve`` and PX4's)."""

    @property
    def time_end(self) -> float: ...

    def states(self, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...


@dataclass(frozen=True, eq=False)
class HorizontalMotion:
    """One leg's profile on the mission clock, along the unit ``direction`` (east, north, up)."""

    start_s: float
    profile: Profile
    direction: tuple[float, float, float]

    @property
    def end_s(self) -> float:
        return self.start_s + self.profile.time_end


@dataclass(frozen=True)
class VerticalMotion:
    """A take-off climb, a landing descent or a hover, from ``start_s`` to ``end_s``."""

    kind: Literal["climb", "descent", "hover"]
    start_s: float
    end_s: float
    height_m: float = 0.0  # climbed or descended


@dataclass(frozen=True, eq=False)
class FlightTimeline:
    """When each nav point is reached and left, the whole flight's length, and the motions in between."""

    points: tuple[NavPoint, ...]
    arrivals_s: tuple[float, ...]
    departures_s: tuple[float, ...]
    end_s: float
    motions: tuple[HorizontalMotion, ...]
    verticals: tuple[VerticalMotion, ...]

    @property
    def duration_s(self) -> float:
        return self.end_s

    def velocity(self, ts: np.ndarray) -> np.ndarray:
        """Commanded ground velocity (east, north, up) m/s at the instants ``ts`` (shape (n, 3))."""
        ts = np.asarray(ts, dtype=float)
        out = np.zeros((ts.shape[0], 3))
        bounds = np.searchsorted(ts, [x for m in self.motions for x in (m.start_s, m.end_s)])
        for m, lo, hi in zip(self.motions, bounds[0::2], bounds[1::2]):
            if hi <= lo:
                continue
            _, _, v, _ = m.profile.states(ts[lo:hi] - m.start_s)
            out[lo:hi] += v[:, None] * np.asarray(m.direction)
        return out

    def horizontal_distance_m(self) -> float:
        """The horizontal distance the legs cover (corners cut included)."""
        return float(sum(math.hypot(m.direction[0], m.direction[1]) * _length(m.profile) for m in self.motions))


def _length(profile: Profile) -> float:
    _, _, _, p = profile.states(np.array([profile.time_end]))
    return float(p[0])
