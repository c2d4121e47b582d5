"""vehicle_at_dock: the vehicle is at its sortie's dock — by its own live position, not a stored home.

Why the position and not HOME_POSITION: ArduCopter moves home to where it arms
(``Copter::set_home_to_current_location`` at arming), so a vehicle that landed
329 m away (a ``recall --land-here``) still reports the dock as home until it
arms there, takes off there, flies an unplanned line to its route and returns
there on a failsafe (issue 42). Distances are measured in the plan's local
frame. A drone whose state comes from its link (``Drone.live``) but whose
position is not known (never reported, or older than its freshness limit:
the hub drops it) blocks; a drone known only from the fleet file has no
position to judge and passes here — the launch judges it from the vehicle.
Equality passes.
"""

from __future__ import annotations

import math

from planner.plan import Sortie
from rules.evaluators._common import Env, make_finding
from rules.findings import Finding
from rules.schema import VehicleAtDockRule

__all__ = ["evaluate"]

_AWAY = (
    "Sortie {sortie}: drone {drone_id} is {measured} m from dock {dock_id} (limit {limit} m): it would take off "
    "where it is, not at its dock.",
    "第{sortie}架次：无人机 {drone_id} 距机场 {dock_id} {measured} 米（上限 {limit} 米）：它会在当前位置起飞，而不是在机场。",
)
_UNKNOWN = (
    "Sortie {sortie}: drone {drone_id} reports no current position (none received, or older than its freshness "
    "limit): where it would take off is unknown.",
    "第{sortie}架次：无人机 {drone_id} 没有当前位置（未收到或已过期）：无法确定它从哪里起飞。",
)


def evaluate(rule: VehicleAtDockRule, sortie: Sortie, env: Env) -> list[Finding]:
    drone, dock = env.drone(sortie), env.dock(sortie)
    if drone is None or dock is None or not drone.live:
        return []  # an unknown drone or dock is drone_available's and dock_range's finding; a file drone: at launch
    limit = rule.params.max_distance_m
    if drone.position is None:
        return [make_finding(rule, _UNKNOWN, sortie=sortie, measured="UNKNOWN", limit=limit, unit="m",
                             quantity="distance from dock", quantity_zh="离机场距离")]
    lat, lon = drone.position
    x, y = env.frame.forward(lon, lat)
    dx, dy = env.frame.forward(dock.lon, dock.lat)
    off = round(math.hypot(x - dx, y - dy), 1)
    if off <= limit:
        return []
    return [make_finding(rule, _AWAY, sortie=sortie, measured=off, limit=limit, unit="m",
                         quantity="distance from dock", quantity_zh="离机场距离")]
