"""Foreign control of a vehicle: it arms, changes mode, changes its mission or moves while no dispatch of this
authority is active on it. Pure: the hub passes the view, the time and whether a dispatch holds the drone.

Why (issue 38): a second sortie server on the same machine uploaded a 358-item
mission to a room's M3TD-02 and flew it; that room's authority showed it
IN_FLIGHT / AUTO / armed with no alert, and its next patrol was blocked by it.
A vehicle that does something its authority did not ask for is an alarm, and
it stays out of planning until an operator has looked (``VehicleHub.clear``).

How it is decided, per drone (``Custody.judge``):

- a **baseline** is what the vehicle said when the authority last accounted
  for it: its mode, armed flag, mission item count (MISSION_CURRENT ``total``
  as sent: ArduPilot's ``GCS_MAVLINK::send_mission_current`` counts the items
  without home)
  and position;
- a **deviation** is a difference from it: armed, another mode, another item
  count, or a position more than ``MOVE_M`` away (or ``CLIMB_M`` higher);
- a deviation while a dispatch of this authority holds the drone (``busy``:
  uploading, dispatched, launched, in flight, recalling) is ours: it becomes
  the new baseline, and so does one within ``GRACE_S`` after a dispatch was
  last seen holding it (the landing and disarm at the end of a flight race
  the ledger's end of it);
- any other deviation is foreign control: a ``Finding`` naming what changed.
- a new session of the vehicle (a reboot: ``VehicleView.session``) starts a new
  baseline; it is not itself foreign control (the hub says so as
  ``fleet.session``).

``busy`` is asked only when there is a deviation (it reads the ledger).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from flows.vehicle.view import VehicleView

__all__ = ["Custody", "Finding", "Baseline", "MOVE_M", "CLIMB_M", "GRACE_S"]

#: Horizontal movement that is more than GPS noise on a drone standing on its dock.
MOVE_M = 15.0
#: Height gained above the baseline that is a take-off, not barometric drift.
CLIMB_M = 5.0
#: After a dispatch was last seen holding the drone, its vehicle's changes are still its own for this long.
GRACE_S = 20.0


@dataclass(frozen=True)
class Baseline:
    mode: str
    armed: bool
    total: int | None
    lat: float | None
    lon: float | None
    alt_m: float | None
    session: int

    @classmethod
    def of(cls, v: VehicleView) -> "Baseline":
        return cls(v.mode, v.armed, v.mission_count_said, v.lat, v.lon, v.alt_m, v.session)

    def known_from(self, v: VehicleView) -> "Baseline":
        """This baseline with what it did not know yet taken from ``v`` (the first mission count, the first fix):
        learning a value is not a change of it."""
        total = self.total if self.total is not None else v.mission_count_said
        if self.lat is None and v.lat is not None:
            return replace(self, total=total, lat=v.lat, lon=v.lon, alt_m=v.alt_m)
        return self if total == self.total else replace(self, total=total)


@dataclass(frozen=True)
class Finding:
    """What the vehicle did that no dispatch of this authority asked for."""

    what: tuple[str, ...]  # "armed", "mode", "mission", "moved"
    message: str
    view: VehicleView


def _distance_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    k = math.pi / 180.0
    dx = (lon2 - lon1) * k * math.cos((lat1 + lat2) * k / 2.0) * 6_371_000.0
    dy = (lat2 - lat1) * k * 6_371_000.0
    return math.hypot(dx, dy)


def deviations(base: Baseline, v: VehicleView) -> list[tuple[str, str]]:
    """What differs between ``base`` and ``v``: (what, how) pairs."""
    out: list[tuple[str, str]] = []
    if v.armed and not base.armed:
        out.append(("armed", f"armed in mode {v.mode or '?'}"))
    if v.mode and base.mode and v.mode != base.mode:
        out.append(("mode", f"mode {base.mode} → {v.mode}"))
    if v.mission_count_said is not None and base.total is not None and v.mission_count_said != base.total:
        out.append(("mission", f"mission of {_items(base.total)} → {_items(v.mission_count_said)}"))
    if None not in (v.lat, v.lon, base.lat, base.lon):
        moved = _distance_m(base.lat, base.lon, v.lat, v.lon)  # type: ignore[arg-type]
        climbed = (v.alt_m or 0.0) - (base.alt_m or 0.0)
        if moved > MOVE_M or climbed > CLIMB_M:
            out.append(("moved", f"moved {moved:.0f} m, {climbed:+.0f} m in height"))
    return out


def _items(total: int) -> str:
    return "no items" if total in (0, 65535) else f"{total} items"


class Custody:
    """One drone's baseline and the judgement of each new view (not thread-safe: the hub calls it under a lock
    or from the drone's own watch thread)."""

    def __init__(self) -> None:
        self.baseline: Baseline | None = None
        self.busy_seen_at: float | None = None  # monotonic time a dispatch was last seen holding the drone

    def judge(self, v: VehicleView, now: float, busy: Callable[[], bool]) -> Finding | None:
        """A ``Finding`` when ``v`` shows foreign control, else None (the baseline moves when the change is ours)."""
        if not v.mode:
            return None  # no heartbeat yet this session: nothing to judge
        base = self.baseline
        if base is None or base.session != v.session:
            self.baseline = Baseline.of(v)
            if not v.armed:
                return None
            base = Baseline.of(VehicleView(autopilot=v.autopilot, mode=v.mode, session=v.session))  # armed at first sight
        else:
            base = self.baseline = base.known_from(v)
        changed = deviations(base, v)
        if not changed:
            return None
        if busy():
            self.busy_seen_at = now
            self.baseline = Baseline.of(v)
            return None
        if self.busy_seen_at is not None and now - self.busy_seen_at <= GRACE_S:
            self.baseline = Baseline.of(v)
            return None
        self.baseline = Baseline.of(v)  # judged once: the next finding is a further change
        return Finding(tuple(w for w, _ in changed), "; ".join(h for _, h in changed)
                       + " while no dispatch of this authority is active on it", v)
