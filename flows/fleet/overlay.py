"""The world as the authority's vehicles describe it: ``live_world`` (world × live state → world) and the fleet
view (``fleet_rows``). Pure: no clock, no I/O — the hub's values are passed in.

Why a second world and not a second rule: eligibility and the dispatch
re-check (``rules.eligibility``, the ``drone_available`` and
``battery_reserve`` rules) judge a ``Drone``'s ``status``, ``battery_pct`` and
``last_telemetry_at``. In server mode those three come from the vehicle (a
``LiveDrone``): a drone whose link is configured but silent is OFFLINE
whatever fleet.json says, its battery is the one the vehicle reports (unknown
→ 0 %, so an unreported battery never flies), its telemetry time is its last
heartbeat on the server's clock. A MAINTENANCE drone in the file stays in
maintenance: that is an operator's hold, not telemetry. The navigation
parameters the vehicle reported (``NAV_PARAM_NAMES``: WPNAV_*, MPC_*, …) are laid
over the drone's ``nav_params``, so a live plan's time and energy are the ones this
vehicle flies (issue 43); a name it did not report keeps the file's value, then the
autopilot's default. Everything else of the
file (identity, dock, capabilities, energy model, binding) is kept, and so is
the world's ``snapshot_hash`` (the hash of the folder's files an approval is
bound to: live state is not a file).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from flows.fleet.live import LiveDrone
from planner.world.model import Drone, RefusedDrone, World
from planner.world.nav_params import NAV_PARAM_NAMES

__all__ = ["live_world", "live_drone_of", "fleet_rows", "file_row", "refused_row"]


def live_drone_of(drone: Drone, live: LiveDrone) -> Drone:
    """``drone`` with the status, battery, telemetry time, position, parameters and navigation parameters its vehicle
    reports (a value past its freshness limit is already None in ``live.view``: the vehicle rules then name it
    unknown)."""
    status = "MAINTENANCE" if drone.status == "MAINTENANCE" else live.status
    battery = live.battery_pct if live.battery_pct is not None else 0.0
    seen = live.last_seen if live.last_seen is not None else drone.last_telemetry_at
    v = live.view
    read = {n: v.params[n] for n in NAV_PARAM_NAMES.get(drone.autopilot, ()) if n in v.params}
    nav = drone.nav_params.merged(read) if read else drone.nav_params
    return replace(drone, status=status, battery_pct=float(battery), last_telemetry_at=seen, nav_params=nav, live=True,
                   position=(v.lat, v.lon) if v.lat is not None and v.lon is not None else None,
                   vehicle_params=dict(v.params))


def live_world(world: World, live: Mapping[str, LiveDrone]) -> World:
    """The world whose drones say what their vehicles say; a drone the hub does not hold keeps the file's."""
    drones = tuple(live_drone_of(d, live[d.id]) if d.id in live else d for d in world.drones)
    return replace(world, drones=drones)


def file_row(drone: Drone) -> dict[str, Any]:
    """A drone as the file describes it (embedded mode, or a server that reads its fleet from the file)."""
    return {"id": drone.id, "tenant": drone.tenant, "status": drone.status, "battery_pct": drone.battery_pct,
            "position": None, "mode": None, "armed": None, "last_seen": drone.last_telemetry_at.isoformat(),
            "source": "file", "fault": None, "dock": drone.dock_id, "autopilot": drone.autopilot,
            "signed": bool(drone.signing_key) and drone.mavlink_system_id is not None}


def refused_row(refused: RefusedDrone) -> dict[str, Any]:
    """A drone whose fleet.json entry was refused (``World.refused_drones``): listed, unusable, and why."""
    return {"id": refused.id, "tenant": refused.tenant or "", "status": "REFUSED", "battery_pct": None,
            "position": None, "mode": None, "armed": None, "last_seen": None, "source": "file",
            "fault": {"code": "FLEET_ENTRY_REFUSED", "message": refused.reason}, "dock": None, "autopilot": "",
            "signed": False}


def fleet_rows(world: World, live: Mapping[str, LiveDrone] | None, tenants: Iterable[str]) -> list[dict[str, Any]]:
    """One row per drone of ``tenants`` ("*": all), sorted by id: live where the hub holds it, else the file's;
    a refused fleet entry as REFUSED with its problems."""
    seen = set(tenants)
    rows = [refused_row(r) for r in world.refused_drones if "*" in seen or r.tenant in seen]
    for d in sorted(world.drones, key=lambda d: d.id):
        if "*" not in seen and d.tenant not in seen:
            continue
        if live is None or d.id not in live:
            rows.append(file_row(d))
            continue
        row = {"id": d.id, "tenant": d.tenant, **live[d.id].to_dict(), "dock": d.dock_id, "autopilot": d.autopilot}
        if d.status == "MAINTENANCE":
            row["status"] = "MAINTENANCE"
        rows.append(row)
    return sorted(rows, key=lambda r: str(r["id"]))
