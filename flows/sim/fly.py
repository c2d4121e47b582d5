"""For ``sortie demo`` and tests: give running simulators their flight, launch, follow, write the report.

This joins the simulator (``flows.sim``) to the production launch, monitor and
report; it lives beside the simulator so that no production module imports it.
The simulated vehicles wait on the ground like real ones: nothing flies until
the launch use case (``flows.usecases.launching``) has checked and launched it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from flows.ledger import open_ledger
from flows.vehicle.monitor import MonitorOptions, Notify, monitor_mission
from planner.errors import SortieError

__all__ = ["fly_and_report", "attach_flights"]


def fly_and_report(
    draft_id: str,
    version: int,
    vehicles: Mapping[str, Any] | list[Any],
    *,
    actor: str = "monitor",
    launch_as: str | None = None,
    now: datetime | None = None,
    speedup: float = 100.0,
    faults: Any | None = None,
    options: MonitorOptions | None = None,
    on_update: Notify | None = None,
    on_launched: Any | None = None,
) -> dict[str, Any]:
    """For ``sortie demo`` and tests: fly the missions already on running simulators, monitor them, report.

    Call after the dispatch succeeded and BEFORE the simulators are
    stopped. ``vehicles`` maps drone id → running ``SimVehicle`` (a plain list
    is matched to the dispatched links by address). Each gets a ``SimFlight``
    (battery and speeds from the world's drone), which waits on the ground for
    a launch: with ``launch_as`` (a dispatcher) the launch use case runs here
    (``{"launch": …}`` in the result; ``on_launched(result)`` is called as soon
    as it is known, while the flight goes on — the demo prints it as its own
    step); without it the caller launches. The monitor follows the dispatched
    links — with ``launch_as``, through the very links the launch uses. Returns
    ``{"monitor": MonitorResult.to_dict(), "report": Report.to_dict()}``: the
    report's Markdown is ``["report"]["markdown"]``, its files
    ``["report"]["files"]`` (report.md, flown.png).
    """
    from flows.usecases.report import build_report, write_report

    ledger = open_ledger()
    rec = ledger.get_draft(draft_id, version)
    attach_flights(draft_id, version, vehicles, speedup=speedup, faults=faults)
    out: dict[str, Any] = {}
    if launch_as is None:
        result = monitor_mission(draft_id, rec.version, actor=actor, now=now, options=options, on_update=on_update)
    else:
        from flows.usecases.flying import launch_and_follow

        out["launch"], result = launch_and_follow(draft_id, rec.version, launch_as=launch_as, ledger=ledger, now=now,
                                                  actor=actor, options=options, on_update=on_update,
                                                  on_launched=on_launched)
    report = build_report(draft_id, rec.version)
    write_report(report)
    return {**out, "monitor": result.to_dict(), "report": report.to_dict()}


def attach_flights(draft_id: str, version: int, vehicles: Mapping[str, Any] | list[Any], *, speedup: float = 100.0,
                   faults: Any | None = None, charge_pct: Mapping[str, float] | None = None) -> dict[str, Any]:
    """Give each running simulator of a dispatched version its ``SimFlight`` (the world's drone figures), once;
    returns drone id → simulator. The flights wait on the ground for a launch. ``charge_pct``: a drone's
    starting charge when its vehicle reports another than the world file's (``sortie demo``'s live fleet)."""
    from flows.sim.flight import FlightFaults, FlightOptions, attach_flight

    ledger = open_ledger()
    rec = ledger.get_draft(draft_id, version)
    if not isinstance(vehicles, Mapping):
        dispatch = next((d for d in ledger.dispatches(draft_id) if d.version == rec.version), None)
        links = {u["drone_id"]: u["link"] for u in ((dispatch.result or {}) if dispatch else {}).get("uploads", [])}
        by_port = {str(v.address).rsplit(":", 1)[-1]: v for v in vehicles}
        vehicles = {d: by_port[link.rsplit(":", 1)[-1]] for d, link in links.items() if link.rsplit(":", 1)[-1] in by_port}
    try:
        from flows.usecases.common import load_world_at

        drones = {d.id: d for d in load_world_at(rec.world_dir).drones}
    except SortieError:
        drones = {}
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
