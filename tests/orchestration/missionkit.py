"""Simulated vehicles for the one-run mission tests: one per drone, each written into the world's fleet.json as
that drone's link.

Each vehicle stands on its drone's dock, speaks ArduPilot or PX4 as the fleet entry says, listens on its own UDP
port of 127.0.0.1 and flies at ``speedup`` (500×: an inspection flies in seconds). The world's own link record
names each vehicle, so a flow run in another process (a worker's) reaches it with no per-run override.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["fleet_vehicles"]


def fleet_vehicles(world: Path, drone_ids: Iterable[str], speedup: float = 500.0) -> dict[str, Any]:
    """Started vehicles by drone id (the caller stops each); ``world/fleet.json`` names their addresses."""
    from flows.sim.flight import attach_flight
    from flows.sim.flight_options import FlightOptions
    from flows.usecases.common import load_world_at
    from testkit import sim_vehicle

    loaded, sims = load_world_at(str(world)), {}
    try:
        for drone_id in drone_ids:
            drone = loaded.drone(drone_id)
            dock = loaded.dock(drone.dock_id)
            sim = sim_vehicle("udpin:127.0.0.1:0", drone.autopilot, home=(dock.lat, dock.lon, dock.ground_alt_m),
                              heartbeat_s=0.1, rerequest_s=0.1).start()
            sims[drone_id] = sim
            attach_flight(sim, FlightOptions(speedup=speedup, battery_wh=drone.battery_wh,
                                             battery_pct=drone.battery_pct, default_speed_mps=drone.cruise_speed_mps))
    except BaseException:
        for sim in sims.values():
            sim.stop()
        raise
    fleet_file = world / "fleet.json"
    fleet = json.loads(fleet_file.read_text(encoding="utf-8"))
    for entry in fleet["drones"]:
        if entry["id"] in sims:
            entry["link"] = sims[entry["id"]].address
    fleet_file.write_text(json.dumps(fleet, ensure_ascii=False, indent=1), encoding="utf-8")
    return sims
