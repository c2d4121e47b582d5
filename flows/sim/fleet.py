"""``sortie sim-fleet``: one simulated vehicle per drone of a world, each on the drone's own link.

So a control room (the server's hub, the demo, the Prefect patrols) runs on
the server's REAL clock against vehicles that talk, with no script rewriting
``last_telemetry_at``. Each vehicle is the existing simulator
(``flows.sim.vehicle.SimVehicle``) as the drone's fleet entry binds it:

- it listens where the ground station connects (``listen_for``: the GCS's
  ``udpout:H:P`` → the vehicle's ``udpin:H:P``; ``tcp:H:P`` → ``tcpin:H:P``;
  a GCS ``udpin:``/``udp:`` → the vehicle sends to it, ``udpout:``);
- its dialect is the entry's ``autopilot`` (ArduPilot streams only on request,
  PX4 by default: ``flows.sim.streams``), its ids the entry's
  ``mavlink_system_id``/``mavlink_component_id`` (default 1/1, ArduCopter's);
- with a ``signing_key`` reference it signs with that key from the key store
  (as a vehicle that was sent SETUP_SIGNING does);
- it stands on its dock (home = the dock's position and ground altitude) with
  the file's battery as its starting charge, on the ground and disarmed;
- it **flies**: its flight has the drone's battery and power figures
  (``flows.sim.flight.SimFlight``), so a control room can launch, follow, pause and
  recall it (``sortie launch`` …); it boots and passes its pre-arm checks like a real
  vehicle (``flows.sim.vehicle``: ~10 s and ~35 s of its clock);
- its clock runs ``speedup`` times the wall clock (1: real time, as a real vehicle).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from flows.sim.flight import SimFlight
from flows.sim.flight_options import FlightOptions
from flows.sim.vehicle import SimVehicle
from planner.errors import InvalidArgument
from planner.world.model import Drone, World

__all__ = ["listen_for", "sim_fleet", "drone_flight"]


def listen_for(link: str) -> str:
    """Where the vehicle listens (or sends) for a ground station that connects with ``link``."""
    kind, sep, rest = link.partition(":")
    vehicle_side = {"udpout": "udpin", "udpin": "udpout", "udp": "udpout", "tcp": "tcpin"}.get(kind)
    if not sep or vehicle_side is None:
        raise InvalidArgument(f"sim-fleet simulates vehicles on udpout:, udpin: and tcp: links, not {link!r}")
    return f"{vehicle_side}:{rest}"


def drone_flight(drone: Drone, **kw: Any) -> FlightOptions:
    """The flight figures of ``drone``: its battery and the power its spec gives for hover and cruise."""
    return FlightOptions(battery_wh=drone.battery_wh, battery_pct=float(drone.battery_pct),
                         cruise_power_w=drone.battery_wh * 3600.0 / drone.flight_time_s,
                         hover_power_w=drone.battery_wh * 3600.0 / drone.hover_time_s, **kw)


def _vehicle(world: World, drone: Drone, key_store: Path, log: Any, speedup: float) -> SimVehicle:
    from flows.vehicle.keys import load_signing_key

    dock = world.dock(drone.dock_id)
    key = load_signing_key(key_store, drone.signing_key) if drone.signing_key else None
    return SimVehicle(listen_for(drone.link), drone.autopilot, system_id=drone.mavlink_system_id or 1,
                      component_id=drone.mavlink_component_id or 1, signing_key=key, speedup=speedup,
                      home=(dock.lat, dock.lon, dock.ground_alt_m), battery_pct=float(drone.battery_pct),
                      flight=SimFlight(drone_flight(drone)),
                      log=None if log is None else (lambda text, d=drone.id: log(f"{d}: {text}")))


def sim_fleet(world: World, key_store: Path, *, only: Iterable[str] = (), links: dict[str, str] | None = None,
              log: Any = None, speedup: float = 1.0) -> dict[str, SimVehicle]:
    """Drone id → a started simulated vehicle on its link (``links``: an admin's overrides, as the server's
    ``links.json``); ``only`` picks drones. A port that cannot be bound stops every vehicle started so far."""
    from dataclasses import replace

    wanted = set(only)
    unknown = sorted(wanted - {d.id for d in world.drones})
    if unknown:
        raise InvalidArgument(f"--only names {', '.join(unknown)}, not in the fleet of world {world.name!r}")
    started: dict[str, SimVehicle] = {}
    try:
        for d in world.drones:
            if wanted and d.id not in wanted:
                continue
            if links and d.id in links:
                d = replace(d, link=links[d.id])
            try:
                started[d.id] = _vehicle(world, d, key_store, log, speedup).start()
            except OSError as exc:
                raise InvalidArgument(f"{d.id}: cannot listen on {listen_for(d.link)!r}: {exc}") from None
    except BaseException:
        for sim in started.values():
            sim.stop()
        raise
    return started
