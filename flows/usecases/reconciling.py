"""Settle an unsettled dispatch by reading the vehicle back: never by re-sending, never by forgetting.

Why: a dispatch whose final ack was lost, or whose process was killed
mid-upload, is UNCERTAIN — the vehicle may hold the approved mission, part of
it, or its previous one. Such a dispatch holds its drones (``DEVICE_BUSY`` for
every new dispatch, see ``flows.ledger.claims``) until this runs:

- read fence, mission and rally back (``flows.vehicle.upload.verify_plan``,
  which uploads nothing) and compare them with the items of the approved plan;
- equal → ACKED (the draft becomes DISPATCHED): the vehicle holds exactly what
  was approved;
- different → FAILED (the draft becomes ABORTED), recording what the vehicle
  now holds (counts and the first differences per mission type);
- unreadable → still UNCERTAIN, the attempt recorded, the drone still held;
- a FAILED dispatch that may have left part of its upload on the vehicle
  (``flows.ledger.claims.left_on_vehicle``) also holds its drone: reconcile
  reads it back and records what it holds (it stays FAILED);
- an ACKED dispatch not launched yet (DISPATCHED) whose vehicle was bound anew
  since (another system id, component, autopilot or key than the dispatch
  recorded: every launch, recall and monitor of it is DEVICE_MISMATCH, every
  new dispatch of the drone DEVICE_BUSY) is released when the vehicle, asked
  under its binding of now, is on the ground and disarmed: the draft becomes
  ABORTED, the reason naming both bindings and the vehicle's state
  (``flows.usecases.rebinding``); an armed vehicle is not released;
- an ACKED dispatch whose mission has not flown yet (DISPATCHED, LAUNCHED) is
  checked: the vehicle is read back and the answer says whether it still holds
  exactly the approved mission (nothing is recorded; a vehicle that no longer
  holds it is a ``Conflict`` naming the differences).

The comparison knows the autopilot (``planner.output.mission_wire.compare_items``):
ArduPilot hands DO_ commands back in frame 0, NAV_LAND with param4 = 1 and its
home as seq 0, and none of that is a difference; a real difference is named
by row, field and both values.

A PENDING dispatch whose process is gone is first marked UNCERTAIN (the same
as a repeated ``dispatch`` does). Exit code follows the outcome: 0 only for
ACKED.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from flows.errors import Conflict, DeviceUnavailable, DispatchUncertain, Forbidden, LedgerTampered
from flows.integrity.outcomes import outcome_error
from flows.ledger import DispatchRecord, Ledger
from flows.ledger.claims import left_on_vehicle
from flows.usecases.grounds import Grounds
from flows.usecases.rebinding import binding_changes, release_rebound
from planner.errors import NotFound, SortieError

__all__ = ["reconcile", "vehicle_holds", "clear_held", "UNSETTLED"]

UNSETTLED = ("UNCERTAIN", "PENDING")


def _unsettled(ledger: Ledger, draft_id: str) -> DispatchRecord | None:
    rows = [d for d in ledger.dispatches(draft_id) if d.status in UNSETTLED or left_on_vehicle(d.status, d.result)]
    return rows[-1] if rows else None


def _summary(d: DispatchRecord, state: str, message: str, verify: Any = None) -> dict[str, Any]:
    return {
        "draft_id": d.draft_id,
        "version": d.version,
        "idempotency_key": d.idempotency_key,
        "status": d.status,
        "draft_status": state,
        "message": message,
        "verify": verify,
    }


def reconcile(
    draft_id: str,
    *,
    actor: str,
    now: datetime,
    link: str | Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
    grounds: Grounds,
) -> dict[str, Any]:
    """Read the vehicle(s) of the draft's unsettled dispatch back and record the truth; see the module doc."""
    from planner.plan import plan_from_dict, plan_hash

    ledger = grounds.ledger
    ledger.get_draft(draft_id)  # NotFound for an unknown id
    d = _unsettled(ledger, draft_id)
    if d is None:
        done = ledger.dispatches(draft_id)
        if not done:
            raise NotFound(f"draft {draft_id} has no dispatch to reconcile")
        last = done[-1]
        state = ledger.get_draft(draft_id, last.version).state
        if last.status == "ACKED" and state == "DISPATCHED":
            rec = ledger.get_draft(draft_id, last.version)
            changed = binding_changes(grounds, rec)
            if changed:  # its vehicle was bound anew since: no command of this dispatch reaches it any more
                _world_of_dispatcher(grounds, rec, actor)
                return release_rebound(grounds, last, changed, actor=actor, now=now)
        if last.status == "ACKED" and state in ("DISPATCHED", "LAUNCHED"):
            return _check_acked(grounds, last, state, actor=actor, link=link, timeout_s=timeout_s)
        summary = _summary(last, state, f"nothing to settle: the last dispatch is {last.status}")
        error = outcome_error(last.status, draft_id, summary["message"], summary)
        if error is not None and last.status != "FAILED":
            raise error
        return summary
    if d.status == "PENDING":
        if d.owner_alive():
            raise Conflict(
                f"the dispatch of {draft_id} v{d.version} is still in progress (pid {d.owner_pid}); reconcile it "
                "once it has ended or died"
            )
        msg = (
            f"the dispatch (pid {d.owner_pid}, {d.created_time}) died before recording its outcome; "
            "reading the vehicle back"
        )
        try:
            d = ledger.finish_dispatch(d.idempotency_key, status="UNCERTAIN", result={"message": msg},
                                       actor=actor, now=now, expected_status=("PENDING",))
        except Conflict:
            d = ledger.get_dispatch(d.idempotency_key) or d
            if d.status not in UNSETTLED:
                return reconcile(draft_id, actor=actor, now=now, link=link, timeout_s=timeout_s, grounds=grounds)
    rec = ledger.get_draft(draft_id, d.version)
    if rec.plan is None:
        raise Conflict(f"draft {draft_id} v{d.version} has no plan to compare with")
    plan = plan_from_dict(rec.plan)
    if plan_hash(plan) != d.plan_hash:
        raise LedgerTampered(
            f"the stored plan of {draft_id} v{d.version} no longer hashes to the dispatched plan hash "
            f"{d.plan_hash[:12]}…: the ledger was edited; restore a backup (`sortie ledger restore`)"
        )
    world = _world_of_dispatcher(grounds, rec, actor)
    use_link = link if link is not None else d.params.get("link")

    def on_attempt(entry: dict[str, Any]) -> None:
        try:
            ledger.record_attempt(d.idempotency_key, {**entry, "by": "reconcile"}, now=now)
        except SortieError:
            pass

    from flows.vehicle.upload import verify_plan  # pymavlink is heavy: only a real reconcile loads it

    try:
        result = verify_plan(plan, world, link=use_link, timeout_s=timeout_s, on_attempt=on_attempt,
                             key_store=grounds.key_store, vehicles=grounds.vehicles)
    except (DeviceUnavailable, DispatchUncertain) as exc:
        state = ledger.get_draft(draft_id, d.version).state
        raise DispatchUncertain(
            f"reconcile could not read the vehicle back ({exc.message}); the dispatch of {draft_id} v{d.version} "
            f"stays UNCERTAIN and its drones stay held; run `sortie reconcile {draft_id}` again when the vehicle "
            "answers",
            details=_summary(d, state, exc.message),
        ) from None
    verify = result.to_dict()
    holds = {v["drone_id"]: {"counts": v["counts"], "differences": v["differences"]} for v in verify["vehicles"]}
    if d.status == "FAILED":  # a failed upload that may have left items: record what is there, free the drone
        done = ledger.settle_failed(d.idempotency_key, {"vehicle_holds": holds, "verify": verify}, now=now)
        state = ledger.get_draft(draft_id, d.version).state
        message = "reconciled: the failed dispatch's vehicle was read back and what it holds is recorded"
        summary = _summary(done, state, message, verify)
        error = outcome_error("FAILED", draft_id, f"{message} (it holds: {holds})", summary)
        assert error is not None
        raise error
    if result.matches:
        message = "reconciled: the vehicle holds exactly the approved mission"
        done = ledger.finish_dispatch(d.idempotency_key, status="ACKED",
                                      result={"message": message, "reconciled": True, "verify": verify},
                                      actor=actor, now=now, expected_status=("UNCERTAIN",))
        state = ledger.get_draft(draft_id, d.version).state
        return _summary(done, state, message, verify)
    message = "reconciled: the vehicle does not hold the approved mission"
    done = ledger.finish_dispatch(
        d.idempotency_key, status="FAILED",
        result={"message": message, "reconciled": True, "vehicle_holds": holds, "verify": verify},
        actor=actor, now=now, expected_status=("UNCERTAIN",),
    )
    state = ledger.get_draft(draft_id, d.version).state
    summary = _summary(done, state, message, verify)
    error = outcome_error("FAILED", draft_id, f"{message} (it holds: {holds}); draft {draft_id} v{d.version} is "
                                              f"{state}", summary)
    assert error is not None
    raise error


def _world_of_dispatcher(grounds: Grounds, rec: Any, actor: str) -> Any:
    """The draft's world, once ``actor`` is a user of it who may dispatch for the draft's tenant (Forbidden if not)."""
    world = grounds.world(rec.world_dir)
    try:
        user = world.user(actor)
    except NotFound:
        raise Forbidden(f"{actor!r} is not a user of world {world.name!r}: they may not reconcile") from None
    if not user.may("dispatcher", rec.tenant, rec.region_id):
        raise Forbidden(f"{actor} may not reconcile dispatches of tenant {rec.tenant} (the dispatcher role is needed)")
    return world


def _check_acked(grounds: Grounds, d: DispatchRecord, state: str, *, actor: str,
                 link: str | Mapping[str, str] | None, timeout_s: float) -> dict[str, Any]:
    """An ACKED dispatch not flown yet: read the vehicle back and say whether it still holds the approved mission."""
    from flows.vehicle.upload import verify_plan
    from planner.plan import plan_from_dict

    rec = grounds.ledger.get_draft(d.draft_id, d.version)
    world = _world_of_dispatcher(grounds, rec, actor)
    try:
        result = verify_plan(plan_from_dict(rec.plan or {}), world, link=link if link is not None else d.params.get("link"),
                             timeout_s=timeout_s, key_store=grounds.key_store, vehicles=grounds.vehicles)
    except (DeviceUnavailable, DispatchUncertain) as exc:
        raise DeviceUnavailable(f"the dispatch of {d.draft_id} v{d.version} is ACKED, but the vehicle could not be "
                                f"read back to check it: {exc.message}", details=_summary(d, state, exc.message)) from None
    verify = result.to_dict()
    if result.matches:
        counts = "; ".join(f"{v['drone_id']}: " + ", ".join(f"{k} {n}" for k, n in v["counts"].items())
                           for v in verify["vehicles"])
        return _summary(d, state, f"the dispatch is ACKED and the vehicle holds exactly the approved mission "
                                  f"(read back now: {counts})", verify)
    diffs = "; ".join(f"{v['drone_id']}: {k}: {', '.join(items[:3])}" for v in verify["vehicles"]
                      for k, items in v["differences"].items())
    raise Conflict(f"the dispatch of {d.draft_id} v{d.version} is ACKED but the vehicle no longer holds the approved "
                   f"mission ({diffs}); do not launch it: dispatch a new version", details=_summary(d, state,
                                                                                                    diffs, verify))


def vehicle_holds(*, grounds: Grounds, actor: str | None, drone_id: str | None = None, link: str | None = None,
                  timeout_s: float = 30.0) -> dict[str, Any]:
    """What a vehicle holds — its fence, mission and rally, read back; nothing is uploaded (``sortie read-mission``,
    the first step after an UNCERTAIN dispatch: look, never re-send blind).

    ``drone_id``: a drone of the authority's fleet, read at its link (``link`` overrides it) and bound as its fleet
    entry says (system id, autopilot, signing key from the key store); ``actor`` must then hold the dispatcher role
    for its tenant. Without a drone, the vehicle at ``link``, unbound. Either way the link is had from the grounds'
    ``Vehicles`` port: a hub's held link where it holds one."""
    from flows.usecases.common import user_of
    from flows.vehicle.binding import binding_for
    from flows.vehicle.read_back import read_back
    from planner.errors import InvalidArgument
    from planner.output.mission_items import held_rows

    if timeout_s <= 0:
        raise InvalidArgument("--timeout must be > 0")
    binding = None
    if drone_id is not None:
        world = grounds.world()
        drone = world.drone(drone_id)
        if actor is not None:
            user = user_of(world, actor, "read a vehicle")
            if not user.may("dispatcher", drone.tenant):
                raise Forbidden(f"{user.id} may not read the vehicles of tenant {drone.tenant} (the dispatcher role)")
        binding = binding_for(drone, grounds.key_store)
        link = link or drone.link
    if not link:
        raise InvalidArgument("which vehicle? name a drone of the fleet, or give --link CONN")
    held, vehicle = read_back(link, timeout_s=timeout_s, binding=binding, vehicles=grounds.vehicles)
    return {"drone_id": drone_id, "link": link, "vehicle": vehicle, "missions": held_rows(held)}


def clear_held(*, grounds: Grounds, actor: str, drone_id: str, reason: str) -> dict[str, Any]:
    """Release a drone its vehicle hub holds after foreign control (``HELD``, fault INTRUSION): an operator looked and
    says why (``reason``, recorded in the ledger, ``fleet.cleared`` on the feed). A dispatcher or admin of the drone's
    tenant may; another tenant's drone is ``NOT_FOUND``; without a hub (the embedded mode, ``--fleet file``) nothing
    is held."""
    from flows.usecases.common import user_of

    world = grounds.world()
    user = user_of(world, actor, "clear a held drone")
    drone = world.drone(drone_id)
    if drone.tenant not in user.tenants and "*" not in user.tenants:
        raise NotFound(f"drone {drone_id!r} is not in the fleet")
    if not user.may("dispatcher", drone.tenant):
        raise Forbidden(f"{user.id} may not clear {drone_id}: a dispatcher or admin of {drone.tenant} may")
    if grounds.live is None:
        raise NotFound("this authority holds no vehicle links (--fleet file, or embedded): nothing is held")
    return grounds.live.clear(drone_id, by=user.id, reason=reason)
