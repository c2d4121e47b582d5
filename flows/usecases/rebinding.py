"""A way out of a stuck binding: a dispatched version whose vehicle was bound anew before it flew.

Why (issue 38): the commands of a dispatch go to the vehicle it uploaded to,
signed as the upload was (``control_kit.bindings``: the binding the dispatch
recorded). When the drone is bound anew before the launch — another system
id, another key (``sortie admin vehicle bind``), another autopilot — every
launch, recall and monitor of that version is DEVICE_MISMATCH, a cancel is
refused (a dispatch was claimed), and the DISPATCHED version holds the drone
(every new dispatch DEVICE_BUSY): stuck for good.

``sortie reconcile`` releases it: the vehicle is asked under the binding it
has *now* (the fleet's, with the admin's bindings), and when it is on the
ground and disarmed the version becomes ABORTED — recorded with both
bindings, the vehicle's state and who released it — which frees the drone; a
new version is dispatched to the vehicle as it is bound now. A vehicle that is
armed is never released this way (a mission may be flying it): recall it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flows.errors import Conflict
from flows.ledger import DispatchRecord
from flows.usecases.control_kit import bindings, dispatched_links, transition, vehicle_lock
from flows.usecases.grounds import Grounds
from planner.errors import SortieError

__all__ = ["binding_changes", "release_rebound"]

_IDENTITY = ("system_id", "component_id", "autopilot", "key_ref")


def _said(b: dict[str, Any]) -> str:
    return ", ".join(f"{k} {b.get(k)}" for k in _IDENTITY)


def binding_changes(grounds: Grounds, rec: Any) -> dict[str, tuple[dict[str, Any], Any]]:
    """drone id → (the binding the dispatch recorded, the binding of now) for each drone bound anew since."""
    from flows.vehicle.binding import binding_for

    dispatch = next((d for d in grounds.ledger.dispatches(rec.draft_id) if d.version == rec.version), None)
    uploads = ((dispatch.result or {}) if dispatch else {}).get("uploads", [])
    world = grounds.world(rec.world_dir)
    out: dict[str, tuple[dict[str, Any], Any]] = {}
    for u in uploads:
        recorded = u.get("binding") or {}
        if u.get("status") != "ACCEPTED" or not recorded:
            continue
        try:
            now_bound = binding_for(world.drone(u["drone_id"]), grounds.key_store)
        except SortieError:
            continue  # no longer in the fleet, or its key is gone: nothing to release it to
        if any(recorded.get(k) != now_bound.to_dict().get(k) for k in _IDENTITY):
            out[u["drone_id"]] = (recorded, now_bound)
    return out


def release_rebound(grounds: Grounds, d: DispatchRecord, changed: dict[str, tuple[dict[str, Any], Any]], *,
                    actor: str, now: datetime, options: Any | None = None) -> dict[str, Any]:
    """Release a DISPATCHED version whose vehicles were bound anew (module docstring); the reconcile's answer."""
    from flows.vehicle.commands import VehicleController

    ledger = grounds.ledger
    rec = ledger.get_draft(d.draft_id, d.version)
    links = dispatched_links(ledger, rec, None)
    seen: list[str] = []
    with vehicle_lock(grounds.home, d.draft_id):
        for drone_id, (recorded, now_bound) in sorted(changed.items()):
            with VehicleController(links[drone_id], options, binding=now_bound, vehicles=grounds.vehicles) as vc:
                view = vc.connect()
            if view.armed:
                raise Conflict(f"{drone_id} was bound anew since the dispatch of {d.draft_id} v{d.version}, and it "
                               f"is armed (mode {view.mode}): it is not released; recall it",
                               details={"drone_id": drone_id, "vehicle": view.to_dict()})
            seen.append(f"{drone_id}: the dispatch recorded {_said(recorded)}; bound now {_said(now_bound.to_dict())}; "
                        f"on the ground, disarmed (mode {view.mode})")
        rec = ledger.get_draft(d.draft_id, d.version)
        if rec.state != "DISPATCHED":
            raise Conflict(f"draft {d.draft_id} v{d.version} became {rec.state} meanwhile; nothing was released")
        reason = (f"released by {actor} (reconcile): the vehicle was bound anew after the dispatch, so no command of "
                  f"this dispatch reaches it any more; {'; '.join(seen)}. The drone is free: dispatch a new version")
        rec = transition(ledger, rec, "ABORTED", actor=actor, reason=reason, now=now)
    return {"draft_id": d.draft_id, "version": d.version, "idempotency_key": d.idempotency_key, "status": d.status,
            "draft_status": rec.state, "message": reason, "verify": None, "released": sorted(changed)}
