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
- a new session of the vehicle (a reboot: ``VehicleView.session``; a battery
  swap at the dock) is the same vehicle, judged as an operator would
  (issue 43): its mode is whatever it boots in (ArduCopter's STABILIZE,
  ``Copter::init_ardupilot``; PX4's Hold), so the mode starts afresh, but where
  it stands and its mission count carry over from before the reboot (the mission
  is kept in storage: ``AP_Mission``), so a vehicle that comes back elsewhere or
  with another mission is foreign control; armed at its first sight, or armed
  when it went down (a reboot in flight), is too (``rebooted``), busy or not;
- a reboot's first HEARTBEAT reaches the hub before any message that carries the
  new boot time (SYSTEM_TIME, GLOBAL_POSITION_INT), so for a moment the old
  session's view shows the boot mode: a deviation is judged only once the
  vehicle's clock was heard after it (or ``CLOCK_WAIT_S`` passed) — a reboot
  then shows as the new session it is, not as a mode change.

``busy`` is asked only when there is a deviation (it reads the ledger).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from flows.vehicle.view import SESSION_SLACK_MS, VehicleView

__all__ = ["Custody", "Finding", "Baseline", "MOVE_M", "CLIMB_M", "GRACE_S", "CLOCK_WAIT_S"]

#: Horizontal movement that is more than GPS noise on a drone standing on its dock.
MOVE_M = 15.0
#: Height gained above the baseline that is a take-off, not barometric drift.
CLIMB_M = 5.0
#: After a dispatch was last seen holding the drone, its vehicle's changes are still its own for this long.
GRACE_S = 20.0
#: A deviation waits at most this long for the vehicle's clock to say which session it is of: a rebooted vehicle
#: streams nothing until asked again, which its link does once the asked streams stopped for 2.5 s
#: (``flows.vehicle.link.STREAMS_FORGOTTEN_S``); SYSTEM_TIME then comes within a second on an idle server. 5 s was
#: once too short on a loaded one (load ~14 on 2 cores: a dock's battery swap HELD as a mode change); waiting longer
#: delays only a change judged while the vehicle's clock is silent, never one on a streaming link.
CLOCK_WAIT_S = 10.0


@dataclass(frozen=True)
class Baseline:
    mode: str
    armed: bool
    total: int | None
    lat: float | None
    lon: float | None
    alt_m: float | None
    session: int
    boot_ms: int | None = None  # the vehicle's clock when last judged: a link reopened counts sessions from 0 again

    @classmethod
    def of(cls, v: VehicleView) -> "Baseline":
        return cls(v.mode, v.armed, v.mission_count_said, v.lat, v.lon, v.alt_m, v.session, v.boot_ms)

    def rebooted(self, v: VehicleView) -> bool:
        """Whether ``v`` is of another session of the vehicle: the link says so, or its clock went back (a link
        reopened during the reboot's silence starts its own count again)."""
        went_back = None not in (v.boot_ms, self.boot_ms) and v.boot_ms < self.boot_ms - SESSION_SLACK_MS  # type: ignore[operator]
        return v.session != self.session or went_back

    def after_reboot(self, v: VehicleView) -> "Baseline":
        """The baseline of ``v``'s new session: its boot mode and armed flag, this baseline's place and mission."""
        return replace(self, mode=v.mode, armed=v.armed, session=v.session, boot_ms=v.boot_ms)

    def known_from(self, v: VehicleView) -> "Baseline":
        """This baseline with what it did not know yet taken from ``v`` (the first mission count, the first fix, the
        clock now): learning a value is not a change of it."""
        total = self.total if self.total is not None else v.mission_count_said
        boot_ms = v.boot_ms if v.boot_ms is not None else self.boot_ms
        if self.lat is None and v.lat is not None:
            return replace(self, total=total, lat=v.lat, lon=v.lon, alt_m=v.alt_m, boot_ms=boot_ms)
        return self if (total, boot_ms) == (self.total, self.boot_ms) else replace(self, total=total, boot_ms=boot_ms)


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
        self._unsure: tuple[float, int | None, int] | None = None  # a deviation seen: (when, boot_ms, session) then

    def judge(self, v: VehicleView, now: float, busy: Callable[[], bool]) -> Finding | None:
        """A ``Finding`` when ``v`` shows foreign control, else None (the baseline moves when the change is ours)."""
        if not v.mode:
            return None  # no heartbeat yet this session: nothing to judge
        base = self.baseline
        if base is None:
            self.baseline = Baseline.of(v)
            if not v.armed:
                return None
            base = Baseline.of(VehicleView(autopilot=v.autopilot, mode=v.mode, session=v.session))  # armed at first sight
        elif base.rebooted(v):
            self._unsure = None
            self.baseline = base.after_reboot(v)
            if v.armed or base.armed:
                self.baseline = Baseline.of(v)
                return self._found(("rebooted",), ["rebooted " + ("while armed (in flight?)" if base.armed else
                                                                  "and armed at once")], v)
            base = self.baseline = self.baseline.known_from(v)
        else:
            base = self.baseline = base.known_from(v)
        changed = deviations(base, v)
        if not changed:
            self._unsure = None
            return None
        if busy():
            self.busy_seen_at = now
            self.baseline = Baseline.of(v)
            return None
        if self.busy_seen_at is not None and now - self.busy_seen_at <= GRACE_S:
            self.baseline = Baseline.of(v)
            return None
        if self._clock_not_heard_since(v, now):
            return None
        self.baseline = Baseline.of(v)  # judged once: the next finding is a further change
        return self._found(tuple(w for w, _ in changed), [h for _, h in changed], v)

    def _clock_not_heard_since(self, v: VehicleView, now: float) -> bool:
        """Whether the vehicle's clock has not been heard since this deviation was first seen (a reboot's first
        heartbeat comes before its boot time does), for at most ``CLOCK_WAIT_S``."""
        if self._unsure is None or self._unsure[2] != v.session:
            self._unsure = (now, v.boot_ms, v.session)
            return True
        first, boot_ms, _ = self._unsure
        if v.boot_ms == boot_ms and now - first < CLOCK_WAIT_S:
            return True
        self._unsure = None
        return False

    @staticmethod
    def _found(what: tuple[str, ...], how: list[str], v: VehicleView) -> Finding:
        return Finding(what, "; ".join(how) + " while no dispatch of this authority is active on it"
                       if what != ("rebooted",) else "; ".join(how), v)
