"""Recall: bring a mission's vehicles home (RTL) or down where they are (LAND), and record how it ended.

The ledger records IN_FLIGHT → RECALLING before anything is sent (so a
concurrent resume sees it and gives up; ``flows.usecases.control`` has the
rest of the story), then each vehicle gets MAV_CMD_NAV_RETURN_TO_LAUNCH or
MAV_CMD_NAV_LAND over its bound, signed link, confirmed by its heartbeat mode.

How a recall ends is judged the way the autopilot lands, not by a mode name:
ArduCopter's RTL ends with a landing *in mode RTL*, its LAND in mode LAND, and a
mission that finishes first lands in AUTO (FACTS.md). So a recalled vehicle is
RECALLED once it is disarmed on the ground near its dock (home) — whatever the
mode — or, told to land in place, once it is down; anywhere else ABORTED with
the vehicle's own figures. A position the vehicle never sent is never formatted
or compared: the end is then left to the follower.

A mission that never took off (DISPATCHED or LAUNCHED, every vehicle disarmed
on the ground) has nothing to recall, and the answer says exactly that: outcome
``NOT_STARTED`` (never "recalled", never "already recalled"), each vehicle
ON_GROUND with its mode, nothing sent to it. What an operator who asks for a
recall needs is that the mission does not fly, so the draft is ABORTED before
take-off (``DISPATCHED``/``LAUNCHED`` → ``ABORTED``, the ledger's "cancelled
before take-off"): sortie will not launch it, the drone is free for another
dispatch — and the message says the mission items are still loaded on the
vehicle (nothing was sent; the next dispatch replaces them). A second recall asks the vehicle again and, finding it
on the ground, sends nothing.

Whatever end the ledger recorded (SUCCEEDED, INCOMPLETE, ABORTED), a recall is
still sent to a vehicle that is armed — the ledger left as it is, the audit row
recording it (issue 42: a drone flew on while the ledger said ABORTED and
could not be stopped); in LINK_LOST it is recorded (LINK_LOST → RECALLING) and
sent as in flight.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from flows.errors import Conflict, DeviceUnavailable
from flows.ledger import DraftRecord
from flows.usecases.actor import Actor
from flows.usecases.control_kit import (
    FLIGHT_ROLES,
    ControlResult,
    audited,
    authorise,
    bindings,
    dispatched_links,
    take_off_seen,
    transition,
    vehicle_lock,
    who,
)
from flows.usecases.grounds import Grounds
from flows.vehicle.landing_verdict import RECALL_HOME_M  # one rule of "home" with the follower

__all__ = ["recall", "recall_by_authority", "RECALL_HOME_M", "KIND"]

#: What a recall asks, by ``land_here``: the words its RECALLING event carries ("recalled by … (land in place)").
KIND = {False: "return to launch", True: "land in place"}
NOT_FLOWN = ("DISPATCHED", "LAUNCHED")
ENDED = ("SUCCEEDED", "ABORTED", "RECALLED", "INCOMPLETE")
#: Ends the ledger may have recorded while the vehicle still flies: a recall is still sent to an armed vehicle.
ENDED_YET_MAYBE_FLYING = ("SUCCEEDED", "ABORTED", "INCOMPLETE")


def recall(
    grounds: Grounds,
    draft_id: str,
    version: int | None = None,
    *,
    actor: str | Actor,
    now: datetime,
    land_here: bool = False,
    reason: str = "",
    link: str | Mapping[str, str] | None = None,
    options: Any | None = None,
    wait_s: float = 0.0,
    audit: bool = True,
) -> ControlResult:
    """Bring the mission's vehicles home (RTL) or down where they are (``land_here``); see the module docstring.

    With ``wait_s`` > 0 this call also follows each vehicle to its landing and
    records RECALLED or ABORTED; otherwise the follower does. Repeating a recall
    sends nothing the vehicle already shows; ``land_here`` after an RTL recall
    escalates it to a landing in place.
    """
    kind = KIND[land_here]
    args = {"draft_id": draft_id, "version": version, "land_here": land_here, "reason": reason, "link": link}
    actor = who(actor)
    with audited(grounds.ledger, actor, "recall", args, now, audit):
        rec = grounds.ledger.get_draft(draft_id, version)
        user = authorise(rec, actor, FLIGHT_ROLES, "recall", grounds)
        why = f"recalled by {user} ({kind})" + (f": {reason}" if reason else "")
        return _recall_as(grounds, rec, user, why, now=now, land_here=land_here, link=link, options=options,
                          wait_s=wait_s)


def recall_by_authority(grounds: Grounds, draft_id: str, version: int, *, who: str, reason: str,
                        now: datetime) -> ControlResult:
    """The authority's own recall home (the energy guard: ``flows.usecases.energy_guard``): no user's role is
    asked — a rule applied to measured figures decided it — and ``who`` and ``reason`` name that, in the event
    and the audit row."""
    args = {"draft_id": draft_id, "version": version, "land_here": False, "reason": reason, "link": None}
    with audited(grounds.ledger, who, "recall", args, now):
        rec = grounds.ledger.get_draft(draft_id, version)
        return _recall_as(grounds, rec, who, f"recalled by {who} ({KIND[False]}): {reason}", now=now,
                          land_here=False, link=None, options=None, wait_s=0.0)


def _recall_as(grounds: Grounds, rec: DraftRecord, user: str, why: str, *, now: datetime, land_here: bool,
               link: str | Mapping[str, str] | None, options: Any | None, wait_s: float) -> ControlResult:
    """The recall itself, by ``user`` for ``why`` (see the module docstring)."""
    from flows.usecases.command_journal import LedgerJournal
    from flows.vehicle.commands import VehicleController, land_command, rtl_command

    kind = KIND[land_here]
    ledger, draft_id = grounds.ledger, rec.draft_id
    if rec.state == "RECALLED":
        return ControlResult(draft_id, rec.version, "recall", rec.state, False, "already recalled and landed")
    if rec.state not in NOT_FLOWN + ("IN_FLIGHT", "RECALLING", "LINK_LOST") + ENDED_YET_MAYBE_FLYING:
        raise Conflict(f"draft {draft_id} v{rec.version} is {rec.state}; only a mission in flight can be recalled"
                       + (" (before dispatch: `sortie cancel`)" if rec.state in ("DRAFT", "APPROVED") else ""))
    ended = rec.state if rec.state in ENDED_YET_MAYBE_FLYING else None
    links = dispatched_links(ledger, rec, link)
    bound = bindings(grounds, rec, list(links))
    changed = False
    if rec.state in ("IN_FLIGHT", "LINK_LOST"):
        try:
            rec = transition(ledger, rec, "RECALLING", actor=user, reason=why, now=now)  # first: a resume yields
        except Conflict:
            rec = ledger.get_draft(draft_id, rec.version)
            if rec.state not in ENDED:
                raise
            return ControlResult(draft_id, rec.version, "recall", rec.state, False,
                                 f"the mission ended {rec.state} before the recall; nothing was sent")
        changed = True
    vehicles: list[dict[str, Any]] = []
    controllers: list[tuple[str, Any]] = []
    try:
        with vehicle_lock(grounds.home, draft_id):
            for drone_id, conn in links.items():
                vc = VehicleController(conn, options, binding=bound.get(drone_id), vehicles=grounds.vehicles,
                                       journal=LedgerJournal(ledger, drone_id, "land" if land_here else "recall",
                                                             user, now, draft_id, rec.version, required=False))
                controllers.append((drone_id, vc))
                view = vc.connect()
                if not view.armed:
                    vehicles.append({"drone_id": drone_id, "link": conn, "outcome": "ON_GROUND", "in_effect": True,
                                     "detail": f"on the ground, disarmed (mode {view.mode}): nothing was sent",
                                     "vehicle": view.to_dict(), "sent": []})
                    continue
                if rec.state in NOT_FLOWN:
                    rec = take_off_seen(ledger, rec, user, now)
                    rec = transition(ledger, rec, "RECALLING", actor=user, reason=why, now=now)
                    changed = True
                out = vc.execute(land_command() if land_here else rtl_command())
                vehicles.append({"drone_id": drone_id, "link": conn, **out.to_dict(), "sent": vc.sent})
        grounded = all(v["outcome"] == "ON_GROUND" for v in vehicles)
        if rec.state in NOT_FLOWN and grounded:
            was = rec.state
            seen = ", ".join(f"{v['drone_id']} on the ground, disarmed, mode {v['vehicle'].get('mode') or '?'}"
                             for v in vehicles)
            reason_text = (f"{why}: the mission never took off ({seen}); nothing was sent to the vehicles; "
                           "ended before take-off")
            rec = transition(ledger, rec, "ABORTED", actor=user, reason=reason_text, now=now)
            return ControlResult(draft_id, rec.version, "recall", rec.state, True,
                                 f"nothing to recall: the mission never took off ({seen}); nothing "
                                 f"was sent. The draft was {was} and is now ABORTED before take-off, so it will not "
                                 "be launched; its mission items are still loaded on the vehicle (the next "
                                 "dispatch replaces them)", vehicles, outcome="NOT_STARTED")
        if rec.state == "RECALLING" and land_here and not changed and any(
                v.get("outcome") not in ("ALREADY", "ON_GROUND") for v in vehicles):
            rec = transition(ledger, rec, "RECALLING", actor=user, reason=why, now=now)
            changed = True
        failed = [v for v in vehicles if not v["in_effect"]]
        if failed:
            v = failed[0]
            if v["outcome"] == "REFUSED":  # the vehicle's answer, named: never a silent link
                raise Conflict(f"{v['drone_id']}: the vehicle refused the {kind} ({v['result']}): {v['detail']}; "
                               f"the recall is recorded ({rec.state}), the vehicle flies on; run the recall "
                               "again" + ("" if land_here else " or `--land-here`"),
                               details={"vehicles": vehicles, "state": rec.state, "refused": True})
            error = DeviceUnavailable if v["outcome"] == "NO_ANSWER" else Conflict
            raise error(f"{v['drone_id']}: the recall is recorded but the vehicle does not show it: {v['detail']}; "
                        "run the recall again", details={"vehicles": vehicles, "state": rec.state})
        if wait_s > 0 and rec.state == "RECALLING":
            rec = _follow_to_landing(grounds, rec, controllers, vehicles, user, now, wait_s, land_here)
    finally:
        for _, vc in controllers:
            vc.close()
    sent = any(v.get("outcome") not in ("ALREADY", "ON_GROUND") for v in vehicles)
    if sent:
        message = f"{why}: the vehicle confirmed"
    elif grounded:
        message = "the vehicles are already on the ground, disarmed: nothing was sent"
    else:
        message = "already recalled: the vehicle shows it; nothing was sent"
    if ended and sent:
        message += (f"; the ledger says {ended} but the vehicle was in the air, so the {kind} was sent (the ledger "
                    "is unchanged; the audit row records it)")
    elif rec.state in ENDED:
        message += f"; the mission ended {rec.state}"
    return ControlResult(draft_id, rec.version, "recall", rec.state, changed or sent, message, vehicles)


def _verdict(drone_id: str, view: Any, dock: Any, rally: tuple[tuple[float, float], ...],
             land_here: bool) -> tuple[bool | None, str, float | None]:
    """(ok, why, metres from the dock) of one landed vehicle; ok None when its position was never sent. Home is
    judged by the follower's own rule (``flows.vehicle.landing_verdict.returned_home``: its dock, or the nearest
    rally point ArduCopter's RTL chose)."""
    from flows.vehicle.commands import distance_m
    from flows.vehicle.landing_verdict import returned_home

    if view.lat is None or view.lon is None:
        if land_here:
            return True, f"{drone_id} landed in place (mode {view.mode}; it sent no position)", None
        return None, f"{drone_id} landed (mode {view.mode}) but sent no position: where is not known yet", None
    if land_here:
        off = distance_m(view.lat, view.lon, dock.lat, dock.lon)
        here = f"{view.lat:.6f},{view.lon:.6f}"
        return True, f"{drone_id} landed in place at {here} ({off:.0f} m from dock {dock.id}), mode {view.mode}", off
    ok, where, off = returned_home(view.lat, view.lon, (dock.lat, dock.lon), rally)
    return ok, f"{drone_id} {where} (dock {dock.id}) in mode {view.mode}", off


def _rally_of(rec: DraftRecord, world: Any, drone_id: str) -> tuple[tuple[float, float], ...]:
    """The rally points the drone's sortie carried (its dock first), as the follower's expectation has them."""
    from planner.output.mission_items import rally_items
    from planner.plan import plan_from_dict

    plan = plan_from_dict(rec.plan or {})
    sortie = next((s for s in plan.sorties if s.drone_id == drone_id), None)
    return () if sortie is None else tuple((r.lat, r.lon) for r in rally_items(plan, sortie, world))


def _follow_to_landing(grounds: Grounds, rec: DraftRecord, controllers: list[tuple[str, Any]],
                       vehicles: list[dict[str, Any]], actor: str, now: datetime, wait_s: float,
                       land_here: bool) -> DraftRecord:
    """Follow each recalled vehicle to its landing (bounded) and record the end the vehicle shows."""
    ledger = grounds.ledger
    world = grounds.world(rec.world_dir)
    deadline = time.monotonic() + wait_s
    verdicts: list[tuple[bool | None, str]] = []
    for drone_id, vc in controllers:
        landed = vc.wait_landed(max(0.0, deadline - time.monotonic()))
        view = vc.view
        if not landed:
            verdicts.append((None, f"{drone_id} had not landed after {wait_s:g} s (mode {view.mode})"))
            continue
        vc.pump(0.5, lambda: vc.view.lat is not None)  # the position of the landing, if it comes
        view = vc.view
        ok, why, off = _verdict(drone_id, view, world.dock(world.drone(drone_id).dock_id),
                                _rally_of(rec, world, drone_id), land_here)
        verdicts.append((ok, why))
        for v in vehicles:
            if v["drone_id"] == drone_id:
                v["landed"] = {"mode": view.mode, "lat": view.lat, "lon": view.lon, "dock_distance_m": off}
    if any(ok is None for ok, _ in verdicts):
        return ledger.get_draft(rec.draft_id, rec.version)  # not down, or not known where: the follower ends it
    to_state = "RECALLED" if all(ok for ok, _ in verdicts) else "ABORTED"
    reason = "; ".join(why for _, why in verdicts)
    fresh = ledger.get_draft(rec.draft_id, rec.version)
    if fresh.state != "RECALLING":
        return fresh  # the follower recorded the end first
    try:
        return transition(ledger, fresh, to_state, actor=actor, reason=reason, now=now)
    except Conflict:
        return ledger.get_draft(rec.draft_id, rec.version)
