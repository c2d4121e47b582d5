"""A later sortie of a launched mission: uploaded over the drone's link, then launched from the vehicle's own state.

Why here and not through ``dispatching`` / ``launching``: those act on the
whole version from DISPATCHED, once. A vehicle holds one mission at a time, so
sortie n+1 of a drone can only go up after sortie n has landed (its chain,
``flows.usecases.sortie_chain``), while the version is under way (IN_FLIGHT).
The approval and the first launch authorised the whole plan; what is checked
again is what only the vehicle can say now — the same pre-flight as every
launch (``flows.vehicle.launch.preflight``: battery after the dock's turnaround,
home and live position at the dock, the rule set's failsafe checks, the
mission read back equal to the approved one) — and nothing is sent to arm when
one fails. Both go through the follower's own link (one client per port on a
real ArduPilot).
"""

from __future__ import annotations

from typing import Any

from flows.errors import PreflightFailed
from planner.plan import Sortie

#: ``flows.usecases.monitoring.Mission`` (not imported: it imports this module).
Mission = Any

__all__ = ["upload_sortie", "launch_sortie", "UPLOAD_TIMEOUT_S"]

UPLOAD_TIMEOUT_S = 30.0


def upload_sortie(m: Mission, sortie: Sortie, link: Any) -> str:
    """Fence, mission and rally of ``sortie`` to its vehicle over ``link``, each confirmed; what went up."""
    from flows.vehicle.upload import UploadResult, upload_mission_set
    from planner.output.mission_items import mission_set

    if m.world is None:
        raise PreflightFailed(f"sortie {sortie.index}: the draft's world no longer loads; nothing was uploaded")
    ms = mission_set(m.plan, sortie, m.world, dialect=m.dialect_of(sortie.drone_id))  # type: ignore[arg-type]
    result = UploadResult(drone_id=sortie.drone_id, sortie_index=sortie.index, link=link.connection,
                          dialect=ms.dialect)
    upload_mission_set(ms, link, result, timeout_s=UPLOAD_TIMEOUT_S)
    return ", ".join(f"{n} {k}" for k, n in result.counts.items()) + f": {result.status}"


def launch_sortie(m: Mission, sortie: Sortie, link: Any) -> str:
    """The pre-flight checks, then the autopilot's launch sequence; the vehicle's answers, or ``PreflightFailed``
    naming the check or the step (the vehicle disarmed again)."""
    from flows.usecases.launch_plan import launch_plan
    from flows.vehicle.launch import LaunchOptions, launch_vehicle, preflight

    if m.world is None:
        raise PreflightFailed(f"sortie {sortie.index}: the draft's world no longer loads; nothing was sent")
    plan = launch_plan(m.grounds.rule_set(), m.plan, sortie, m.world, m.stamp(), m.dialect_of(sortie.drone_id))
    opts = LaunchOptions()
    checks = preflight(link, plan, opts)
    failing = [c for c in checks if not c.ok]
    if failing:
        c = failing[0]
        raise PreflightFailed(f"{sortie.drone_id} sortie {sortie.index}: pre-flight check {c.name} failed: {c.detail}; "
                              "nothing was sent", details={"check": c.name, "drone_id": sortie.drone_id})
    out = launch_vehicle(link, plan, opts, checks=checks)
    if out.status != "LAUNCHED":
        raise PreflightFailed(out.detail, details={"check": out.failed, "drone_id": sortie.drone_id})
    return out.detail
