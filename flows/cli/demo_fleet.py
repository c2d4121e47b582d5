"""``sortie demo``'s fleet: its simulated vehicles, and the vehicle hub its authority judges them by.

Why: the demo used to rewrite ``last_telemetry_at`` in its copy of
``fleet.json`` so its drones looked fresh, and planned on the file's battery.
Now it runs the path ``sortie server`` runs: one simulated vehicle per drone
of its world copy (``flows.sim.fleet.sim_fleet``, what ``sortie sim-fleet``
starts), each on a loopback port the OS picks, recorded in the demo home's
``links.json`` (``flows.server.links.LinkStore``, as ``sortie admin link set``
records one); a ``VehicleHub`` (``flows.fleet.hub``) holds one link per drone
and the demo's embedded authority (``Grounds.hub``) judges availability,
battery and freshness by what the vehicles report (``flows.fleet.overlay``).
Each drone is bound to its vehicle with a signing key of the demo home's own
(``bind_demo_keys``, recorded as ``sortie admin vehicle bind`` records one):
the vehicles sign, and the hub holds their links signed.
No file is rewritten.

The hub stamps on the authority's clock, not the wall clock: the demo runs
at its fixed reference time (``DEMO_NOW``: the demo world's weather and
airspace samples are for it), so a vehicle heard a second ago was last seen
a second before that time, and the dispatch's 60 s freshness rule holds.

``battery_pct`` gives a vehicle another charge than the file's and ``off``
names drones whose vehicle is switched off (started, then stopped before the
hub listens: its recorded port answers nothing) — to show the demo planning
with what the vehicles say.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.errors import InvalidArgument

if TYPE_CHECKING:  # the CLI loads without the world model (tests/cli/test_cli_imports.py)
    from planner.world.model import World

__all__ = ["DemoFleet", "start_demo_fleet", "vehicle_options", "bind_demo_keys", "READY_WAIT_S"]

#: How long the demo waits for its running vehicles to be heard, with a battery, before it plans anyway.
READY_WAIT_S = 20.0
#: The demo's vehicles run their clocks this much faster than the wall clock (boot, pre-arm, flight).
DEMO_SPEEDUP = 100.0


@dataclass
class DemoFleet:
    """The demo's running simulators (drone → ``SimVehicle``), the links recorded for them, the hub, and the world
    whose drones they play."""

    sims: dict[str, Any]
    links: dict[str, str]
    hub: Any
    off: frozenset[str]
    world: Any = None

    def ready(self, wait_s: float = READY_WAIT_S) -> bool:
        """Wait (bounded) until every running vehicle is heard with its battery; False if one is not by then."""
        end = time.monotonic() + wait_s
        while True:
            live = self.hub.snapshot()
            if all(d in live and live[d].status != "OFFLINE" and live[d].battery_pct is not None for d in self.sims):
                return True
            if time.monotonic() >= end:
                return False
            time.sleep(0.2)

    def charges(self) -> dict[str, float]:
        """Each running vehicle's own charge (what its flight starts from)."""
        return {d: float(sim.ground.battery_pct) for d, sim in self.sims.items()}

    def stop(self) -> None:
        """Stop the hub first (its links), then the vehicles."""
        self.hub.stop()
        for sim in self.sims.values():
            sim.stop()


def vehicle_options(battery: list[str] | None, off: list[str] | None, world: World) -> tuple[dict[str, float],
                                                                                      frozenset[str]]:
    """``--vehicle-battery DRONE=PCT`` and ``--vehicle-off DRONE`` → (drone → charge in %, drones switched off),
    each naming a drone of ``world`` (checked before the demo writes anything)."""
    known = {d.id for d in world.drones}
    charges: dict[str, float] = {}
    for text in battery or []:
        drone, sep, pct = text.partition("=")
        try:
            value = float(pct) if sep else float("nan")
        except ValueError:
            value = float("nan")
        if not 0.0 <= value <= 100.0:  # (NaN too)
            raise InvalidArgument(f"--vehicle-battery {text!r}: expected DRONE=PCT with PCT from 0 to 100")
        if drone not in known:
            raise InvalidArgument(f"--vehicle-battery names {drone}, not in the fleet of world {world.name!r}")
        charges[drone] = value
    unknown = sorted(set(off or ()) - known)
    if unknown:
        raise InvalidArgument(f"--vehicle-off names {', '.join(unknown)}, not in the fleet of world {world.name!r}")
    return charges, frozenset(off or ())


def start_demo_fleet(world: World, home: Path, *, now: Callable[[], datetime],
                     battery_pct: Mapping[str, float] | None = None, off: Collection[str] = ()) -> DemoFleet:
    """One simulated vehicle per drone of ``world`` on a loopback port, recorded in ``home``'s links.json, and a
    hub holding one link per drone on the clock ``now`` (the authority's); ``battery_pct`` and ``off`` as
    ``vehicle_options`` returns them. Everything started is stopped if a part fails."""
    from flows.fleet.hub import VehicleHub
    from flows.server.links import LinkStore
    from flows.sim.fleet import sim_fleet

    key_store = home / "keys"
    store = LinkStore(home)
    bind_demo_keys(world, store, key_store)
    charged = replace(world, drones=tuple(
        replace(d, battery_pct=float(battery_pct[d.id])) if battery_pct and d.id in battery_pct else d
        for d in store.apply(world).drones))  # the simulators' starting charge only: the world file is not touched
    # each vehicle binds its own port (``udpout:127.0.0.1:0`` → it listens on ``udpin:127.0.0.1:0``): no
    # pick-then-bind race with the other programs of this machine
    sims = sim_fleet(charged, key_store, links={d.id: "udpout:127.0.0.1:0" for d in world.drones},
                     speedup=DEMO_SPEEDUP)  # the vehicles boot and pass pre-arm in well under a second
    hub = None
    try:
        links = {d: sim.address for d, sim in sorted(sims.items())}
        for drone_id, conn in links.items():
            store.set(drone_id, conn)
        for drone_id in sorted(off):
            sims.pop(drone_id).stop()  # switched off: its recorded port answers nothing
        hub = VehicleHub(now=now, links=store.all, key_store=key_store, bind=store.apply, owner=f"sortie demo, home {home}")
        hub.follow(world)
    except BaseException:
        if hub is not None:
            hub.stop()
        for sim in sims.values():
            sim.stop()
        raise
    return DemoFleet(sims, links, hub, frozenset(off), world)


def bind_demo_keys(world: World, store: Any, key_store: Path) -> None:
    """Each drone of the demo bound to its vehicle with a signing key of the demo home's own (made once, kept):
    the demo's simulated vehicles sign with it and the hub holds their links signed, as a bound server does
    (``sortie admin vehicle bind`` provisions a real vehicle; a simulator here is started with its key)."""
    import secrets

    from flows.server.vehicle_admin import default_key_ref
    from flows.vehicle.keys import key_path, write_signing_key

    bound = store.bindings()
    for d in world.drones:
        ref = d.signing_key or default_key_ref(d.id)
        if not key_path(key_store, ref).is_file():
            write_signing_key(key_store, ref, secrets.token_bytes(32))
        if d.id not in bound:
            store.bind(d.id, system_id=d.mavlink_system_id or 1, component_id=d.mavlink_component_id, key_ref=ref)
