"""The vehicle hub of ``sortie server``: one held link per drone, its live state, and the fleet's events.

For every drone of the server's world with a link (the admin's ``links.json``
first, else the fleet entry's ``link``: ``flows.server.links``), one
``DroneWatch`` (``flows.fleet.watch``) holds the link ``open_link`` opened with
the drone's binding, on its own thread. ``world(world)`` is how a request sees
the fleet: the hub follows the world it is shown (a drone added, a link
changed, a binding changed → its watch is replaced) and returns the world
whose drones say what their vehicles say (``flows.fleet.overlay.live_world``),
stamped on the server's clock. A request never waits on a vehicle: it copies
values under a lock.

Events (published on the server's feed, for the drone's tenant) when a
drone's value changes: ``fleet.online`` (heard again, or for the first time),
``fleet.offline`` (silent past the limit, or its link cannot be opened; the
fault is named), ``fleet.battery_low`` (the vehicle's battery falls below
``battery_low_pct``; once until it is above again), ``fleet.session`` (the
vehicle restarted: its boot time went back, and nothing of the old session is
read any more).

``fleet.intrusion`` (issue 38), two kinds:

- ``forged``: the link refused traffic that is not its vehicle's — datagrams
  from another source, messages of another system id, frames not signed with
  the drone's key (``flows.vehicle.peer``, ``VehicleLink.foreign``). None of it
  changed the fleet state (it was never read); the counts grow on the fleet
  row, an event goes out at most every ``FORGED_EVENT_S`` while they grow, and
  a ledger record at most every ``FORGED_RECORD_S``;
- ``foreign_control``: the vehicle armed, changed mode, changed its mission or
  moved while no dispatch of this authority was active on it
  (``flows.fleet.custody``). The drone is HELD (not eligible: the rules read
  its status) until an operator clears it with a reason (``clear``); the hold
  is a ledger record, so it outlives a restart (``HubRecords.holds``).

The hub's ledger side is ``HubRecords`` (the server's: ``flows.fleet.records``);
without one (``sortie demo``'s hub) the vehicles are watched for their state only.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from flows.fleet.custody import Custody, Finding
from flows.fleet.link_claim import LinkClaim, claim_link
from flows.fleet.live import Freshness, LiveDrone, live_drone
from flows.fleet.overlay import live_world
from flows.fleet.watch import FOREIGN_KEYS, DroneWatch, HoldTimes
from flows.vehicle.binding import VehicleBinding, binding_for
from flows.vehicle.vehicles import HeldLinks
from planner.errors import NotFound
from planner.world.model import Drone, World

__all__ = ["VehicleHub", "Target", "HubRecords", "FORGED_EVENT_S", "FORGED_RECORD_S"]

Publish = Callable[[str, str | None, dict[str, Any]], Any]
#: While a link keeps refusing forged traffic: one ``fleet.intrusion`` event at most this often, per drone.
FORGED_EVENT_S = 5.0
#: ... and one ledger record at most this often (the audit is a hash chain: a flood must not flood it).
FORGED_RECORD_S = 60.0


class HubRecords(Protocol):
    """What the hub needs of its authority's ledger."""

    def busy(self, drone_id: str) -> bool:
        """Whether a dispatch of this authority holds the drone (uploading, dispatched, launched, in flight)."""
        ...

    def record(self, kind: str, drone_id: str, tenant: str, data: Mapping[str, Any]) -> None:
        """Write one ledger record of the hub: ``fleet.intrusion`` or ``fleet.cleared``."""
        ...

    def holds(self) -> dict[str, dict[str, Any]]:
        """The drones held after foreign control and not cleared since (drone → the intrusion's data)."""
        ...


@dataclass(frozen=True)
class Target:
    """What a drone's watch is opened with: the link, and the fleet entry whose binding it applies."""

    drone_id: str
    tenant: str
    link: str
    binding_key: tuple[Any, ...]


class VehicleHub:
    """Every held link of the server, and the fleet's live state on the server's clock."""

    def __init__(self, *, now: Callable[[], datetime], links: Callable[[], Mapping[str, str]], key_store: Path,
                 publish: Publish | None = None, silent_after_s: float = 10.0, battery_low_pct: float = 25.0,
                 times: HoldTimes = HoldTimes(), records: HubRecords | None = None,
                 freshness: Freshness | None = None, bind: Callable[[World], World] | None = None,
                 owner: str = "") -> None:
        self.now = now
        self.links = links
        self.bind = bind  # the admin's bindings over the fleet file's (``flows.server.links.LinkStore.apply``)
        self.owner = owner  # who holds the links, for another holder's refusal (a server's home)
        self.key_store = key_store
        self.publish = publish
        self.silent_after_s = silent_after_s
        self.battery_low_pct = battery_low_pct
        self.times = times
        self.records = records
        self.freshness = freshness or Freshness(silent_after_s, silent_after_s, silent_after_s)
        self._lock = threading.Lock()
        self._watches: dict[str, tuple[Target, DroneWatch]] = {}
        self._said: dict[str, tuple[bool | None, bool]] = {}  # drone → (online announced, battery low announced)
        self._sessions: dict[str, int] = {}  # drone → the vehicle session last announced
        self._custody: dict[str, Custody] = {}
        self._held: dict[str, dict[str, Any]] = dict(records.holds()) if records is not None else {}
        self._forged: dict[str, tuple[dict[str, int], float, float]] = {}  # drone → (counts said, event t, record t)
        self._stopped = False
        #: the ``Vehicles`` port of whoever judges with this hub: each held link lent to every part that opens it
        self.vehicles = HeldLinks()

    # --- following the world ---------------------------------------------------------------

    def follow(self, world: World) -> None:
        """Hold one link per drone of ``world`` (new drones, changed links or bindings replace the watch)."""
        if self.bind is not None:
            world = self.bind(world)
        recorded = self.links()
        wanted = {d.id: (d, Target(d.id, d.tenant, recorded.get(d.id) or d.link, _binding_key(d)))
                  for d in world.drones}
        stale: list[DroneWatch] = []
        with self._lock:
            if self._stopped:
                return
            for drone_id in sorted(set(self._watches) - set(wanted)):
                stale.append(self._watches.pop(drone_id)[1])
            for drone_id, (drone, target) in sorted(wanted.items()):
                held = self._watches.get(drone_id)
                if held is not None and held[0] == target:
                    continue
                if held is not None:
                    stale.append(held[1])
                watch = DroneWatch(drone_id, target.link, self._binder(drone), lender=self.vehicles,
                                   on_change=self._changed, times=self.times,
                                   claim=self._claimer(drone_id, target.link))
                self._watches[drone_id] = (target, watch)
                watch.start()
        for w in stale:  # on a request's thread: never wait for a watch to end
            threading.Thread(target=w.stop, name=f"hub-stop-{w.drone_id}", daemon=True).start()

    def world(self, world: World) -> World:
        """``world`` with every drone's status, battery and telemetry time from its vehicle (following it first)."""
        self.follow(world)
        return live_world(world if self.bind is None else self.bind(world), self.snapshot())

    def snapshot(self) -> dict[str, LiveDrone]:
        """Each held drone's live value now (server clock)."""
        now = self.now()
        with self._lock:
            held = [(t, w) for t, w in self._watches.values()]
        return {t.drone_id: self._live(t, w, now) for t, w in held}

    def holds(self) -> dict[str, dict[str, Any]]:
        """The drones held after foreign control, with what was seen."""
        with self._lock:
            return {k: dict(v) for k, v in self._held.items()}

    def clear(self, drone_id: str, *, by: str, reason: str) -> dict[str, Any]:
        """Release a drone held after foreign control (an operator looked: ``reason``); recorded and announced.
        ``NotFound`` when it is not held. Its vehicle's state now is the new baseline."""
        with self._lock:
            held = self._held.get(drone_id)
            target = self._watches.get(drone_id, (None, None))[0]
        if held is None:
            raise NotFound(f"{drone_id} is not held: no foreign control was seen since it was last cleared")
        tenant = target.tenant if target is not None else str(held.get("tenant") or "")
        data = {"drone_id": drone_id, "by": by, "reason": reason, "intrusion": held}
        if self.records is not None:
            self.records.record("fleet.cleared", drone_id, tenant, data)
        with self._lock:
            self._held.pop(drone_id, None)
            self._custody.pop(drone_id, None)
        if self.publish is not None:
            self.publish("fleet.cleared", tenant or None, {"drone_id": drone_id, "by": by, "reason": reason})
        return data

    def watch_of(self, drone_id: str) -> DroneWatch | None:
        with self._lock:
            held = self._watches.get(drone_id)
        return None if held is None else held[1]

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            watches = [w for _, w in self._watches.values()]
            self._watches.clear()
        for w in watches:
            w.stop()

    # --- inside ----------------------------------------------------------------------------

    def _claimer(self, drone_id: str, link: str) -> Callable[[], LinkClaim]:
        return lambda: claim_link(link, drone_id=drone_id, owner=self.owner or f"pid {os.getpid()}")

    def _binder(self, drone: Drone) -> Callable[[], VehicleBinding]:
        return lambda: binding_for(drone, self.key_store)

    def _live(self, target: Target, watch: DroneWatch, now: datetime) -> LiveDrone:
        h = watch.state()
        with self._lock:
            held = self._held.get(target.drone_id)
        return live_drone(target.drone_id, target.link, h.view, h.heard_s_ago, now,
                          silent_after_s=self.silent_after_s, fault=h.fault, ages=h.ages, freshness=self.freshness,
                          held=held, foreign=h.foreign, signed=target.binding_key[3] is not None)

    def _changed(self, watch: DroneWatch) -> None:
        """Judge and publish what changed for this drone: intrusions, a new session, online, offline (with its
        fault), battery low."""
        with self._lock:
            held = self._watches.get(watch.drone_id)
        if held is None or held[1] is not watch:
            return
        target = held[0]
        self._intrusions(target, watch)
        if self.publish is None:
            return
        live = self._live(target, watch, self.now())
        online = live.status != "OFFLINE"
        low = online and live.battery_pct is not None and live.battery_pct < self.battery_low_pct
        events: list[str] = []
        with self._lock:
            was_online, was_low = self._said.get(target.drone_id, (None, False))
            if was_online is None and not online and live.fault is None:
                return  # still connecting for the first time: nothing to say yet
            if online != was_online:
                events.append("fleet.online" if online else "fleet.offline")
            if low and not was_low:
                events.append("fleet.battery_low")
            self._said[target.drone_id] = (online, low)
        for kind in events:
            self.publish(kind, target.tenant, {"drone_id": target.drone_id, **_event_data(live)})

    def _intrusions(self, target: Target, watch: DroneWatch) -> None:
        """Forged traffic the link refused, a new vehicle session, and foreign control (``flows.fleet.custody``)."""
        h = watch.state()
        drone = target.drone_id
        now = time.monotonic()
        counts = {k: int(h.foreign.get(k, 0)) for k in FOREIGN_KEYS}
        with self._lock:
            said, event_t, record_t = self._forged.get(drone, (dict.fromkeys(FOREIGN_KEYS, 0), -1e9, -1e9))
            grew = any(counts[k] > said[k] for k in FOREIGN_KEYS)
            tell = grew and now - event_t >= FORGED_EVENT_S
            write = grew and now - record_t >= FORGED_RECORD_S
            if tell:
                self._forged[drone] = (counts, now, now if write else record_t)
            session_said = self._sessions.get(drone)
            self._sessions[drone] = h.view.session
            custody = self._custody.setdefault(drone, Custody())
            already_held = drone in self._held
        if tell:
            data = {"drone_id": drone, "kind": "forged", **counts, "sources": h.foreign.get("sources", []),
                    "systems": h.foreign.get("systems", []),
                    "message": "traffic that is not the vehicle's was refused on its link; nothing of it was read"}
            self._say("fleet.intrusion", target, data, record=write)
        if session_said is not None and h.view.session != session_said and self.publish is not None:
            self.publish("fleet.session", target.tenant, {"drone_id": drone, "session": h.view.session,
                                                         "message": "the vehicle restarted (its boot time went back): "
                                                                    "nothing of its previous session is read"})
        if self.records is None or already_held or h.heard_s_ago is None or h.heard_s_ago > self.silent_after_s:
            return
        finding = custody.judge(h.view, now, lambda: self.records is not None and self.records.busy(drone))
        if finding is not None:
            self._hold(target, finding)

    def _hold(self, target: Target, finding: Finding) -> None:
        v = finding.view
        data = {"drone_id": target.drone_id, "kind": "foreign_control", "what": list(finding.what),
                "message": finding.message, "mode": v.mode, "armed": v.armed, "mission_total": v.mission_count_said,
                "position": None if v.lat is None else {"lat": v.lat, "lon": v.lon, "alt_m": v.alt_m},
                "tenant": target.tenant, "at": self.now().isoformat()}
        with self._lock:
            if target.drone_id in self._held:
                return
            self._held[target.drone_id] = data
        self._say("fleet.intrusion", target, data, record=True)

    def _say(self, kind: str, target: Target, data: dict[str, Any], *, record: bool) -> None:
        if record and self.records is not None:
            try:
                self.records.record(kind, target.drone_id, target.tenant, data)
            except Exception:  # noqa: BLE001 - the ledger refused (closed, tampered): the event still goes out
                data = {**data, "recorded": False}
        if self.publish is not None:
            self.publish(kind, target.tenant, data)


def _event_data(live: LiveDrone) -> dict[str, Any]:
    d = live.to_dict()
    return {k: d[k] for k in ("status", "battery_pct", "mode", "armed", "last_seen", "fault") if d.get(k) is not None}


def _binding_key(d: Drone) -> tuple[Any, ...]:
    return (d.autopilot, d.mavlink_system_id, d.mavlink_component_id, d.signing_key)
