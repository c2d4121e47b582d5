"""For ``sortie demo`` and tests: give running simulators the flight of what was dispatched to them.

A simulator is a vehicle: it knows what was uploaded to it and the figures of
the drone it plays (the world's fleet entry: battery, power, speed), never the
ledger or the use cases. The simulated vehicles wait on the ground like real
ones: nothing flies until a ground station launches it (the authority's
``launch`` or ``monitor(launch_as=…)``), and the authority follows and reports
the flight as it would a real one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from planner.world.model import World

__all__ = ["attach_flights"]


def attach_flights(vehicles: Mapping[str, Any], world: World, *, speedup: float = 100.0, faults: Any | None = None,
                   charge_pct: Mapping[str, float] | None = None) -> dict[str, Any]:
    """Give each running simulator (drone id → ``SimVehicle``) its ``SimFlight`` from the world's drone figures,
    once; returns drone id → simulator. The flights wait on the ground for a launch. ``charge_pct``: a drone's
    starting charge when its vehicle reports another than the world file's (``sortie demo``'s live fleet)."""
    from flows.sim.flight import FlightFaults, FlightOptions, attach_flight

    drones = {d.id: d for d in world.drones}
    for drone_id, sim in vehicles.items():
        if getattr(sim.flight, "configured", False):  # it has its drone's flight (sim-fleet): this clock, these faults
            sim.flight.options = replace(sim.flight.options, speedup=speedup, faults=faults or sim.flight.options.faults)
            continue
        kw: dict[str, Any] = {"speedup": speedup, "faults": faults or FlightFaults()}
        drone = drones.get(drone_id)
        if drone is not None:
            kw.update(battery_wh=drone.battery_wh, battery_pct=(charge_pct or {}).get(drone_id, drone.battery_pct),
                      cruise_power_w=drone.battery_wh * 3600.0 / drone.flight_time_s,
                      hover_power_w=drone.battery_wh * 3600.0 / drone.hover_time_s,
                      default_speed_mps=drone.cruise_speed_mps)
        attach_flight(sim, FlightOptions(**kw))
    return dict(vehicles)
