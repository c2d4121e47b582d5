"""Stopping a mission: cancel before dispatch, pause and resume in flight, recall home or land in place.

Each function is one operator action over explicit arguments — the ledger,
the acting user, ``now`` — so the CLI, the Prefect "recall" flow and an
authority server call the same thing. Each is role-checked, writes one audit
row (``control.<action>``, whatever the outcome) and is idempotent: repeating
it changes nothing and sends nothing the vehicle already shows.

Who may (``users.json`` roles, for the draft's tenant and region; ``admin``
may everything):

- **cancel**: an approver or a dispatcher. Withdrawing an approval is the
  approver's call; a dispatcher who will not fly it must be able to stop it too.
- **pause, resume, recall**: a dispatcher. Commanding a vehicle in the air is
  the job of whoever sends vehicles up; an approver signs plans, not sticks.

Every command goes through the drone's link as its dispatch reached it, bound
and signed as its fleet entry says (``flows.usecases.control_kit.bindings``),
with the telemetry that confirms it asked for on that connection.

Cancelling a flying mission is not a database update: it goes through the
vehicle's own safe-handling path (RTL or LAND) and the record follows what
the vehicle confirms:

- ``cancel`` (DRAFT or APPROVED → CANCELLED) checks in the same transaction
  that no dispatch of the version was claimed, so it can never race an
  upload; a waiting Prefect run is woken and ends CANCELLED; a later dispatch
  is refused by the ledger (a CANCELLED version has no valid approval).
- ``pause``/``resume`` hold or continue the vehicle (``flows.vehicle.commands``:
  ArduPilot DO_PAUSE_CONTINUE, PX4 AUTO.LOITER/AUTO.MISSION) and, once the
  vehicle confirms, record an IN_FLIGHT → IN_FLIGHT event with actor and
  reason. **A pause the autopilot refuses is reported as refused** (ArduCopter
  answers FAILED during take-off and while it holds at a waypoint) and the
  vehicle flies on: it is never replaced by LOITER or POSHOLD, which follow the
  pilot's throttle and, with none, descend until the vehicle hits the ground
  (FACTS.md). ``force=True`` (``sortie pause --force``) holds a refusing
  ArduCopter in BRAKE instead, which holds position by itself, and says so;
  resume then switches back to AUTO, which continues the current item. **Paused is a flag, not a state**: a held drone is still in the air,
  still occupies its dock's airspace and its battery, and ends the same ways
  (SUCCEEDED, ABORTED, RECALLED) — a battery failsafe while paused ends it
  without any resume. A PAUSED state would make every reader of "in flight"
  know two states and put a second writer (the operator) on the row the
  monitor moves conditionally; the event plus the vehicle's own telemetry
  (the monitor shows PAUSED) say everything an operator needs.
- ``recall`` (``flows.usecases.recalling``) records IN_FLIGHT → RECALLING first (a state: it is one-way, and
  what may follow depends on it), then commands RTL (or LAND with
  ``land_here``). The draft ends RECALLED when the vehicle has landed where it
  was sent (mode RTL at its dock, or LAND), ABORTED with the reason if not;
  the monitor records it, or ``recall(wait_s=…)`` itself.
- **A recall always wins over a resume.** Commands to one draft's vehicles
  are serialised by a lock file; a resume asks the ledger before every send
  and gives up once RECALLING is recorded, and RECALLING has no way back to
  IN_FLIGHT. A resume is also refused while the vehicle flies RTL/LAND on its
  own (on PX4 "resume" is a mode switch that would take it back into the
  mission).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
from flows.usecases.recalling import recall
from planner.errors import InvalidArgument

__all__ = [
    "ControlResult",
    "cancel",
    "pause",
    "resume",
    "recall",
    "CANCEL_ROLES",
    "FLIGHT_ROLES",
]

CANCEL_ROLES = ("approver", "dispatcher")
FLYING = ("DISPATCHED", "LAUNCHED", "IN_FLIGHT", "LINK_LOST")
#: Ends the ledger may have recorded while the vehicle still flies (issue 42: an ABORTED draft whose drone flew on
#: and could not be stopped): a hold or a recall is still sent to a vehicle that is armed, the ledger unchanged.
ENDED_YET_MAYBE_FLYING = ("SUCCEEDED", "ABORTED", "INCOMPLETE")


# --------------------------------------------------------------------------- cancel


def cancel(
    grounds: Grounds,
    draft_id: str,
    version: int | None = None,
    *,
    actor: str | Actor,
    reason: str,
    now: datetime,
    wake_run: Callable[[DraftRecord, str, str], str | None] | None = None,
    audit: bool = True,
) -> ControlResult:
    """Withdraw a draft version before dispatch (DRAFT/APPROVED → CANCELLED); a second cancel is a no-op.

    Refused (``Conflict``) once a dispatch was claimed: a dispatched or flying
    mission is stopped by ``recall``. ``wake_run(rec, actor, reason)``, given by
    the caller (the authority: ``flows.authority.local``), wakes a Prefect run
    waiting on the version; it re-reads the ledger and ends CANCELLED.
    """
    args = {"draft_id": draft_id, "version": version, "reason": reason}
    actor = who(actor)
    ledger = grounds.ledger
    with audited(ledger, actor, "cancel", args, now, audit):
        if not reason or not reason.strip():
            raise InvalidArgument("a cancel needs a reason (--reason)")
        rec = ledger.get_draft(draft_id, version)
        user = authorise(rec, actor, CANCEL_ROLES, "cancel", grounds)
        if rec.state == "CANCELLED":
            return ControlResult(draft_id, rec.version, "cancel", rec.state, False, "already cancelled; nothing changed")
        done = ledger.withdraw_unclaimed(rec.draft_id, rec.version, actor=user,
                                         reason=f"cancelled by {user}: {reason.strip()}", now=now)
        run_id = wake_run(done, user, reason.strip()) if wake_run is not None else None
        return ControlResult(draft_id, done.version, "cancel", done.state, True,
                             f"cancelled by {user}: {reason.strip()}; a later dispatch is refused", run_id=run_id)


# --------------------------------------------------------------------------- pause / resume


def _hold_or_go(
    grounds: Grounds,
    draft_id: str,
    version: int | None,
    *,
    action: str,
    actor: str | Actor,
    reason: str,
    now: datetime,
    link: str | Mapping[str, str] | None,
    options: Any | None,
    audit: bool = True,
    force: bool = False,
) -> ControlResult:
    from flows.usecases.command_journal import LedgerJournal
    from flows.vehicle.commands import VehicleController, brake_command, pause_command, resume_command

    args = {"draft_id": draft_id, "version": version, "reason": reason, "link": link, "force": force}
    actor = who(actor)
    ledger = grounds.ledger
    with audited(ledger, actor, action, args, now, audit):
        rec = ledger.get_draft(draft_id, version)
        user = authorise(rec, actor, FLIGHT_ROLES, action, grounds)
        if rec.state in ("RECALLING", "RECALLED"):
            raise Conflict(f"draft {draft_id} v{rec.version} is {rec.state}: a recall is not undone by {action}")
        if rec.state not in FLYING + ENDED_YET_MAYBE_FLYING:
            raise Conflict(f"draft {draft_id} v{rec.version} is {rec.state}; only a mission in flight can be {action}d")
        links = dispatched_links(ledger, rec, link)
        bound = bindings(grounds, rec, list(links))
        ended = rec.state if rec.state in ENDED_YET_MAYBE_FLYING else None

        def still_flying() -> str | None:
            state = ledger.get_draft(draft_id, rec.version).state
            if state in FLYING or state == ended:
                return None
            return f"the draft became {state} meanwhile; the {action} was abandoned (a recall always wins)"

        vehicles: list[dict[str, Any]] = []
        with vehicle_lock(grounds.home, draft_id):
            veto = still_flying()
            if veto:
                raise Conflict(veto)
            for drone_id, conn in links.items():
                with VehicleController(conn, options, binding=bound.get(drone_id), vehicles=grounds.vehicles,
                                       journal=LedgerJournal(ledger, drone_id, action, user, now, draft_id,
                                                             rec.version)) as vc:
                    view = vc.connect()
                    if not view.armed:
                        raise Conflict(f"{drone_id} is on the ground (mode {view.mode}); there is nothing to {action}")
                    if view.returning:
                        raise Conflict(f"{drone_id} is in {view.mode} on its own (failsafe or recall); it is not "
                                       f"{'held' if action == 'pause' else 'sent back into the mission'}")
                    cmd = pause_command(view.dialect) if action == "pause" else resume_command(view.dialect, view.mode)
                    out = vc.execute(cmd, may_send=still_flying)
                    entry: dict[str, Any] = {}
                    if action == "pause" and out.outcome == "REFUSED":
                        entry["refused"] = {"command": cmd.name, "result": out.result, "detail": out.detail}
                        if force:
                            refused = out.detail
                            out = vc.execute(brake_command(view.dialect), may_send=still_flying)
                            out.detail = (f"the pause was refused ({refused}); forced: held in "
                                          f"{'BRAKE' if view.dialect == 'ardupilot' else 'AUTO.LOITER'}, which holds "
                                          f"position by itself; `sortie resume` continues the mission: {out.detail}")
                            entry["forced_hold"] = True
                    vehicles.append({"drone_id": drone_id, "link": conn, **out.to_dict(), **entry, "sent": vc.sent})
        failed = [v for v in vehicles if not v["in_effect"]]
        acted = [v for v in vehicles if v["in_effect"] and v["outcome"] != "ALREADY"]
        rec = ledger.get_draft(draft_id, rec.version)
        if acted and rec.state in FLYING:
            rec = take_off_seen(ledger, rec, user, now)
            said = "; ".join(f"{v['drone_id']} {v['outcome']} at item {v['vehicle']['seq']}"
                             + (" (forced hold in BRAKE after the pause was refused)" if v.get("forced_hold") else "")
                             for v in acted)
            rec = transition(ledger, rec, "LINK_LOST" if rec.state == "LINK_LOST" else "IN_FLIGHT", actor=user, now=now,
                             reason=f"{action}d by {user}" + (f": {reason}" if reason else "") + f" ({said})")
        if failed:
            v = failed[0]
            if v.get("refused") and not v.get("forced_hold"):
                raise Conflict(
                    f"{v['drone_id']}: the vehicle refused the pause ({v['result']}, mode {v['vehicle']['mode']}, item "
                    f"{v['vehicle']['seq']}) and flies on with its mission; nothing else was sent. ArduCopter refuses "
                    "a pause during take-off and while it holds at a waypoint: pause again on the next leg, or "
                    "`sortie pause --force` to hold it in BRAKE (never LOITER: without a pilot it descends)",
                    details={"vehicles": vehicles, "state": rec.state, "refused": True})
            error = DeviceUnavailable if v["outcome"] == "NO_ANSWER" else Conflict
            raise error(f"{v['drone_id']}: {action} not in effect: {v['detail']}",
                        details={"vehicles": vehicles, "state": rec.state})
        verb = "paused" if action == "pause" else "resumed"
        message = f"{verb} by {user}" if acted else f"already {verb}: nothing was sent"
        if any(v.get("forced_hold") for v in acted):
            message += " (the pause was refused; held in BRAKE instead, as forced)"
        if ended and acted:
            message += (f"; the ledger says {ended} but the vehicle was in the air, so it was sent (the ledger is "
                        "unchanged; the audit row records it)")
        return ControlResult(draft_id, rec.version, action, rec.state, bool(acted), message, vehicles)


def pause(grounds: Grounds, draft_id: str, version: int | None = None, *, actor: str | Actor, now: datetime,
          reason: str = "", link: str | Mapping[str, str] | None = None, options: Any | None = None,
          audit: bool = True, force: bool = False) -> ControlResult:
    """Hold the mission's vehicles where they are (the mission is kept); the vehicle must confirm.

    A refusal is reported as refused (``Conflict``, ``details["refused"]``); with ``force`` a refusing
    ArduCopter is held in BRAKE instead."""
    return _hold_or_go(grounds, draft_id, version, action="pause", actor=actor, reason=reason, now=now, link=link,
                       options=options, audit=audit, force=force)


def resume(grounds: Grounds, draft_id: str, version: int | None = None, *, actor: str | Actor, now: datetime,
           reason: str = "", link: str | Mapping[str, str] | None = None, options: Any | None = None,
           audit: bool = True) -> ControlResult:
    """Continue a held mission; abandoned (``Conflict``) as soon as a recall is recorded."""
    return _hold_or_go(grounds, draft_id, version, action="resume", actor=actor, reason=reason, now=now, link=link,
                       options=options, audit=audit)
