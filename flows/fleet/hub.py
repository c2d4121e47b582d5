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
``battery_low_pct``; once until it is above again).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from flows.fleet.live import LiveDrone, live_drone
from flows.fleet.overlay import live_world
from flows.fleet.watch import DroneWatch, HoldTimes
from flows.vehicle.binding import VehicleBinding, binding_for
from flows.vehicle.vehicles import HeldLinks
from planner.world.model import Drone, World

__all__ = ["VehicleHub", "Target"]

Publish = Callable[[str, str | None, dict[str, Any]], Any]


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
                 times: HoldTimes = HoldTimes()) -> None:
        self.now = now
        self.links = links
        self.key_store = key_store
        self.publish = publish
        self.silent_after_s = silent_after_s
        self.battery_low_pct = battery_low_pct
        self.times = times
        self._lock = threading.Lock()
        self._watches: dict[str, tuple[Target, DroneWatch]] = {}
        self._said: dict[str, tuple[bool | None, bool]] = {}  # drone → (online announced, battery low announced)
        self._stopped = False
        #: the ``Vehicles`` port of whoever judges with this hub: each held link lent to every part that opens it
        self.vehicles = HeldLinks()

    # --- following the world ---------------------------------------------------------------

    def follow(self, world: World) -> None:
        """Hold one link per drone of ``world`` (new drones, changed links or bindings replace the watch)."""
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
                                   on_change=self._changed, times=self.times)
                self._watches[drone_id] = (target, watch)
                watch.start()
        for w in stale:  # on a request's thread: never wait for a watch to end
            threading.Thread(target=w.stop, name=f"hub-stop-{w.drone_id}", daemon=True).start()

    def world(self, world: World) -> World:
        """``world`` with every drone's status, battery and telemetry time from its vehicle (following it first)."""
        self.follow(world)
        return live_world(world, self.snapshot())

    def snapshot(self) -> dict[str, LiveDrone]:
        """Each held drone's live value now (server clock)."""
        now = self.now()
        with self._lock:
            held = [(t, w) for t, w in self._watches.values()]
        return {t.drone_id: self._live(t, w, now) for t, w in held}

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

    def _binder(self, drone: Drone) -> Callable[[], VehicleBinding]:
        return lambda: binding_for(drone, self.key_store)

    def _live(self, target: Target, watch: DroneWatch, now: datetime) -> LiveDrone:
        view, heard_s_ago, fault = watch.state()
        return live_drone(target.drone_id, target.link, view, heard_s_ago, now, silent_after_s=self.silent_after_s,
                          fault=fault)

    def _changed(self, watch: DroneWatch) -> None:
        """Publish what changed for this drone: online, offline (with its fault), battery low."""
        if self.publish is None:
            return
        with self._lock:
            held = self._watches.get(watch.drone_id)
        if held is None or held[1] is not watch:
            return
        target = held[0]
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


def _event_data(live: LiveDrone) -> dict[str, Any]:
    d = live.to_dict()
    return {k: d[k] for k in ("status", "battery_pct", "mode", "armed", "last_seen", "fault") if d.get(k) is not None}


def _binding_key(d: Drone) -> tuple[Any, ...]:
    return (d.autopilot, d.mavlink_system_id, d.mavlink_component_id, d.signing_key)
