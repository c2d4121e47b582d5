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
  reason. **Paused is a flag, not a state**: a held drone is still in the air,
  still occupies its dock's airspace and its battery, and ends the same ways
  (SUCCEEDED, ABORTED, RECALLED) — a battery failsafe while paused ends it
  without any resume. A PAUSED state would make every reader of "in flight"
  know two states and put a second writer (the operator) on the row the
  monitor moves conditionally; the event plus the vehicle's own telemetry
  (the monitor shows PAUSED) say everything an operator needs.
- ``recall`` records IN_FLIGHT → RECALLING first (a state: it is one-way, and
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

import fcntl
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from flows.context import draft_dir
from flows.ledger import DraftRecord, Ledger
from flows.usecases.actor import Actor, as_actor
from planner.errors import Conflict, DeviceUnavailable, Forbidden, InvalidArgument, SortieError

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
FLIGHT_ROLES = ("dispatcher",)
FLYING = ("DISPATCHED", "IN_FLIGHT")
LOCK_WAIT_S = 30.0
RECALL_HOME_M = 25.0


@dataclass
class ControlResult:
    """What one control action did: the ledger state after it, and per vehicle what was sent and seen."""

    draft_id: str
    version: int
    action: str
    state: str
    changed: bool
    message: str
    vehicles: list[dict[str, Any]] = field(default_factory=list)
    run_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"draft_id": self.draft_id, "version": self.version, "action": self.action, "state": self.state,
                "changed": self.changed, "message": self.message, "vehicles": self.vehicles, "run_id": self.run_id}


# --------------------------------------------------------------------------- helpers


def _authorise(rec: DraftRecord, actor: str, roles: tuple[str, ...], what: str, world_dir: str | Path | None) -> str:
    from flows.usecases.common import load_world_at, user_of

    user = user_of(load_world_at(world_dir or rec.world_dir), actor, what)
    if not any(user.may(role, rec.tenant, rec.region_id) for role in roles):
        raise Forbidden(f"{user.id} may not {what} drafts of tenant {rec.tenant} (needs the {' or '.join(roles)} role)")
    return user.id


def _who(actor: str | Actor | None) -> str:
    """The acting user's id (a plain id is the local, asserted identity)."""
    who = as_actor(actor)
    return "" if who is None else who.id


@contextmanager
def _audited(ledger: Ledger, actor: str, action: str, args: Mapping[str, Any], now: datetime,
             enabled: bool = True) -> Iterator[None]:
    """One audit row per action, whatever its outcome (the code of the error, else OK); off where the caller
    audits every request itself (the authority server)."""
    if not enabled:
        yield
        return
    t0 = time.perf_counter()
    code = "OK"
    try:
        yield
    except SortieError as exc:
        code = exc.code
        raise
    except BaseException:
        code = "INTERNAL"
        raise
    finally:
        try:
            ledger.audit(actor=actor or None, command=f"control.{action}", args=dict(args), result_code=code,
                         duration_s=time.perf_counter() - t0, started=now, draft_id=str(args.get("draft_id")))
        except SortieError:
            pass  # the action's own outcome is what the operator needs


@contextmanager
def _vehicle_lock(draft_id: str, budget_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """One commander per draft at a time (processes and threads): a resume and a recall never interleave."""
    path = draft_dir(draft_id, 1).parent / "control.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + budget_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise Conflict(f"another command to draft {draft_id}'s vehicles is still running "
                                   f"(waited {budget_s:g} s); try again") from None
                time.sleep(0.02)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _links(ledger: Ledger, rec: DraftRecord, link: str | Mapping[str, str] | None) -> dict[str, str]:
    """drone id → MAVLink link of every vehicle the dispatch uploaded to (``link`` overrides)."""
    dispatch = next((d for d in ledger.dispatches(rec.draft_id) if d.version == rec.version), None)
    uploads = [u for u in ((dispatch.result or {}) if dispatch else {}).get("uploads", []) if u.get("status") == "ACCEPTED"]
    if not uploads:
        raise Conflict(f"draft {rec.draft_id} v{rec.version} has no accepted upload: there is no vehicle to command")
    out: dict[str, str] = {}
    for u in uploads:
        conn = u["link"]
        if isinstance(link, str):
            conn = link
        elif isinstance(link, Mapping) and u["drone_id"] in link:
            conn = link[u["drone_id"]]
        out[u["drone_id"]] = conn
    return out


def _transition(ledger: Ledger, rec: DraftRecord, to_state: str, *, actor: str, reason: str, now: datetime) -> DraftRecord:
    """A conditional transition from the freshest record (the monitor may have moved the row meanwhile)."""
    for _ in range(3):
        try:
            return ledger.transition(rec.draft_id, rec.version, expected_state=rec.state,
                                     expected_row_version=rec.row_version, to_state=to_state, actor=actor,
                                     reason=reason, now=now)
        except Conflict:
            fresh = ledger.get_draft(rec.draft_id, rec.version)
            if fresh.state != rec.state:
                raise
            rec = fresh
    raise Conflict(f"draft {rec.draft_id} v{rec.version} keeps changing; nothing was recorded")


def _take_off_seen(ledger: Ledger, rec: DraftRecord, actor: str, now: datetime) -> DraftRecord:
    """DISPATCHED → IN_FLIGHT when the controller saw the vehicle armed (no monitor was running to see it)."""
    if rec.state != "DISPATCHED":
        return rec
    return _transition(ledger, rec, "IN_FLIGHT", actor=actor, now=now,
                       reason="the vehicle is airborne (armed heartbeat seen by the controller)")


# --------------------------------------------------------------------------- cancel


def cancel(
    ledger: Ledger,
    draft_id: str,
    version: int | None = None,
    *,
    actor: str | Actor,
    reason: str,
    now: datetime,
    world_dir: str | Path | None = None,
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
    actor = _who(actor)
    with _audited(ledger, actor, "cancel", args, now, audit):
        if not reason or not reason.strip():
            raise InvalidArgument("a cancel needs a reason (--reason)")
        rec = ledger.get_draft(draft_id, version)
        user = _authorise(rec, actor, CANCEL_ROLES, "cancel", world_dir)
        if rec.state == "CANCELLED":
            return ControlResult(draft_id, rec.version, "cancel", rec.state, False, "already cancelled; nothing changed")
        done = _cancel_once(ledger, rec, user, reason.strip(), now)
        run_id = wake_run(done, user, reason.strip()) if wake_run is not None else None
        return ControlResult(draft_id, done.version, "cancel", done.state, True,
                             f"cancelled by {user}: {reason.strip()}; a later dispatch is refused", run_id=run_id)


def _cancel_once(ledger: Ledger, rec: DraftRecord, actor: str, reason: str, now: datetime) -> DraftRecord:
    """The check and the transition in one ledger transaction: no dispatch claim can slip in between."""
    return ledger.withdraw_unclaimed(rec.draft_id, rec.version, actor=actor,
                                     reason=f"cancelled by {actor}: {reason}", now=now)


# --------------------------------------------------------------------------- pause / resume


def _hold_or_go(
    ledger: Ledger,
    draft_id: str,
    version: int | None,
    *,
    action: str,
    actor: str | Actor,
    reason: str,
    now: datetime,
    link: str | Mapping[str, str] | None,
    world_dir: str | Path | None,
    options: Any | None,
    audit: bool = True,
) -> ControlResult:
    from flows.vehicle.commands import VehicleController, hold_command, pause_command, resume_command

    args = {"draft_id": draft_id, "version": version, "reason": reason, "link": link}
    actor = _who(actor)
    with _audited(ledger, actor, action, args, now, audit):
        rec = ledger.get_draft(draft_id, version)
        user = _authorise(rec, actor, FLIGHT_ROLES, action, world_dir)
        if rec.state in ("RECALLING", "RECALLED"):
            raise Conflict(f"draft {draft_id} v{rec.version} is {rec.state}: a recall is not undone by {action}")
        if rec.state not in FLYING:
            raise Conflict(f"draft {draft_id} v{rec.version} is {rec.state}; only a mission in flight can be {action}d")
        links = _links(ledger, rec, link)

        def still_flying() -> str | None:
            state = ledger.get_draft(draft_id, rec.version).state
            if state in FLYING:
                return None
            return f"the draft became {state} meanwhile; the {action} was abandoned (a recall always wins)"

        vehicles: list[dict[str, Any]] = []
        with _vehicle_lock(draft_id):
            veto = still_flying()
            if veto:
                raise Conflict(veto)
            for drone_id, conn in links.items():
                with VehicleController(conn, options) as vc:
                    view = vc.connect()
                    if not view.armed:
                        raise Conflict(f"{drone_id} is on the ground (mode {view.mode}); there is nothing to {action}")
                    if view.returning:
                        raise Conflict(f"{drone_id} is in {view.mode} on its own (failsafe or recall); it is not "
                                       f"{'held' if action == 'pause' else 'sent back into the mission'}")
                    cmd = pause_command(view.dialect) if action == "pause" else resume_command(view.dialect, view.mode)
                    out = vc.execute(cmd, may_send=still_flying)
                    if action == "pause" and out.outcome == "REFUSED" and cmd.command != hold_command(view.dialect).command:
                        refused = out.detail  # ArduCopter: not on a waypoint leg (holding at one): hold by mode
                        out = vc.execute(hold_command(view.dialect), may_send=still_flying)
                        out.detail = f"DO_PAUSE_CONTINUE refused ({refused}); held in LOITER instead: {out.detail}"
                    vehicles.append({"drone_id": drone_id, "link": conn, **out.to_dict(), "sent": vc.sent})
        failed = [v for v in vehicles if not v["in_effect"]]
        acted = [v for v in vehicles if v["in_effect"] and v["outcome"] != "ALREADY"]
        rec = ledger.get_draft(draft_id, rec.version)
        if acted and rec.state in FLYING:
            rec = _take_off_seen(ledger, rec, user, now)
            said = "; ".join(f"{v['drone_id']} {v['outcome']} at item {v['vehicle']['seq']}" for v in acted)
            rec = _transition(ledger, rec, "IN_FLIGHT", actor=user, now=now,
                              reason=f"{action}d by {user}" + (f": {reason}" if reason else "") + f" ({said})")
        if failed:
            v = failed[0]
            error = DeviceUnavailable if v["outcome"] == "NO_ANSWER" else Conflict
            raise error(f"{v['drone_id']}: {action} not in effect: {v['detail']}",
                        details={"vehicles": vehicles, "state": rec.state})
        verb = "paused" if action == "pause" else "resumed"
        message = f"{verb} by {user}" if acted else f"already {verb}: nothing was sent"
        return ControlResult(draft_id, rec.version, action, rec.state, bool(acted), message, vehicles)


def pause(ledger: Ledger, draft_id: str, version: int | None = None, *, actor: str | Actor, now: datetime,
          reason: str = "", link: str | Mapping[str, str] | None = None, world_dir: str | Path | None = None,
          options: Any | None = None, audit: bool = True) -> ControlResult:
    """Hold the mission's vehicles where they are (the mission is kept); the vehicle must confirm."""
    return _hold_or_go(ledger, draft_id, version, action="pause", actor=actor, reason=reason, now=now, link=link,
                       world_dir=world_dir, options=options, audit=audit)


def resume(ledger: Ledger, draft_id: str, version: int | None = None, *, actor: str | Actor, now: datetime,
           reason: str = "", link: str | Mapping[str, str] | None = None, world_dir: str | Path | None = None,
           options: Any | None = None, audit: bool = True) -> ControlResult:
    """Continue a held mission; abandoned (``Conflict``) as soon as a recall is recorded."""
    return _hold_or_go(ledger, draft_id, version, action="resume", actor=actor, reason=reason, now=now, link=link,
                       world_dir=world_dir, options=options, audit=audit)


# --------------------------------------------------------------------------- recall


def recall(
    ledger: Ledger,
    draft_id: str,
    version: int | None = None,
    *,
    actor: str | Actor,
    now: datetime,
    land_here: bool = False,
    reason: str = "",
    link: str | Mapping[str, str] | None = None,
    world_dir: str | Path | None = None,
    options: Any | None = None,
    wait_s: float = 0.0,
    audit: bool = True,
) -> ControlResult:
    """Bring the mission's vehicles home (RTL) or down where they are (``land_here``).

    The ledger records RECALLING before anything is sent (so a concurrent
    resume sees it and gives up); the command is confirmed from the vehicle's
    heartbeat mode. With ``wait_s`` > 0 this call also follows each vehicle to
    its landing and records RECALLED (landed at its dock in RTL, or in LAND) or
    ABORTED with the reason; otherwise the monitor does. Repeating a recall
    sends nothing the vehicle already shows; ``land_here`` after an RTL recall
    escalates it to a landing in place.
    """
    from flows.vehicle.commands import VehicleController, land_command, rtl_command

    kind = "land in place" if land_here else "return to launch"
    args = {"draft_id": draft_id, "version": version, "land_here": land_here, "reason": reason, "link": link}
    actor = _who(actor)
    with _audited(ledger, actor, "recall", args, now, audit):
        rec = ledger.get_draft(draft_id, version)
        user = _authorise(rec, actor, FLIGHT_ROLES, "recall", world_dir)
        if rec.state == "RECALLED":
            return ControlResult(draft_id, rec.version, "recall", rec.state, False, "already recalled and landed")
        if rec.state not in FLYING + ("RECALLING",):
            raise Conflict(f"draft {draft_id} v{rec.version} is {rec.state}; only a mission in flight can be recalled"
                           + (" (before dispatch: `sortie cancel`)" if rec.state in ("DRAFT", "APPROVED") else ""))
        links = _links(ledger, rec, link)
        why = f"recalled by {user} ({kind})" + (f": {reason}" if reason else "")
        changed = False
        if rec.state == "IN_FLIGHT":
            try:
                rec = _transition(ledger, rec, "RECALLING", actor=user, reason=why, now=now)  # first: a resume yields
            except Conflict:
                rec = ledger.get_draft(draft_id, rec.version)
                if rec.state not in ("SUCCEEDED", "ABORTED", "RECALLED"):
                    raise
                return ControlResult(draft_id, rec.version, "recall", rec.state, False,
                                     f"the mission ended {rec.state} before the recall; nothing was sent")
            changed = True
        vehicles: list[dict[str, Any]] = []
        controllers: list[tuple[str, Any]] = []
        try:
            with _vehicle_lock(draft_id):
                for drone_id, conn in links.items():
                    vc = VehicleController(conn, options)
                    controllers.append((drone_id, vc))
                    view = vc.connect()
                    if not view.armed:
                        vehicles.append({"drone_id": drone_id, "link": conn, "outcome": "ON_GROUND", "in_effect": True,
                                         "detail": f"on the ground (mode {view.mode})", "vehicle": view.to_dict()})
                        continue
                    if rec.state == "DISPATCHED":
                        rec = _take_off_seen(ledger, rec, user, now)
                        rec = _transition(ledger, rec, "RECALLING", actor=user, reason=why, now=now)
                        changed = True
                    out = vc.execute(land_command() if land_here else rtl_command())
                    vehicles.append({"drone_id": drone_id, "link": conn, **out.to_dict(), "sent": vc.sent})
            if rec.state == "RECALLING" and land_here and not changed and any(v.get("outcome") not in ("ALREADY", "ON_GROUND") for v in vehicles):
                rec = _transition(ledger, rec, "RECALLING", actor=user, reason=why, now=now)
                changed = True
            failed = [v for v in vehicles if not v["in_effect"]]
            if failed:
                v = failed[0]
                error = DeviceUnavailable if v["outcome"] == "NO_ANSWER" else Conflict
                raise error(f"{v['drone_id']}: the recall is recorded but the vehicle does not show it: {v['detail']}; "
                            "run the recall again", details={"vehicles": vehicles, "state": rec.state})
            if wait_s > 0 and rec.state == "RECALLING":
                rec = _follow_to_landing(ledger, rec, controllers, vehicles, user, now, wait_s, world_dir)
        finally:
            for _, vc in controllers:
                vc.close()
        sent = any(v.get("outcome") not in ("ALREADY", "ON_GROUND") for v in vehicles)
        message = (f"{why}: the vehicle confirmed" if sent else "already recalled: nothing was sent")
        if rec.state in ("RECALLED", "ABORTED", "SUCCEEDED"):
            message += f"; the mission ended {rec.state}"
        return ControlResult(draft_id, rec.version, "recall", rec.state, changed or sent, message, vehicles)


def _follow_to_landing(ledger: Ledger, rec: DraftRecord, controllers: list[tuple[str, Any]],
                       vehicles: list[dict[str, Any]], actor: str, now: datetime, wait_s: float,
                       world_dir: str | Path | None) -> DraftRecord:
    """Follow each recalled vehicle to its landing (bounded) and record the end the vehicle shows."""
    from flows.usecases.common import load_world_at
    from flows.vehicle.commands import distance_m

    world = load_world_at(world_dir or rec.world_dir)
    deadline = time.monotonic() + wait_s
    verdicts: list[tuple[bool, str]] = []
    for drone_id, vc in controllers:
        landed = vc.wait_landed(max(0.0, deadline - time.monotonic()))
        view = vc.view
        if not landed:
            verdicts.append((False, f"{drone_id} had not landed after {wait_s:g} s (mode {view.mode})"))
            continue
        dock = world.dock(world.drone(drone_id).dock_id)
        off = None if view.lat is None else distance_m(view.lat, view.lon, dock.lat, dock.lon)
        where = "an unknown position" if off is None else f"{off:.0f} m from dock {dock.id}"
        if view.mode == "RTL" and off is not None and off <= RECALL_HOME_M:
            verdicts.append((True, f"{drone_id} landed at dock {dock.id} ({off:.0f} m) in mode RTL"))
        elif view.mode == "LAND":
            verdicts.append((True, f"{drone_id} landed in place at {view.lat:.6f},{view.lon:.6f} ({where})"))
        else:
            verdicts.append((False, f"{drone_id} landed in mode {view.mode} at {where}"))
        for v in vehicles:
            if v["drone_id"] == drone_id:
                v["landed"] = {"mode": view.mode, "lat": view.lat, "lon": view.lon, "dock_distance_m": off}
    if any(not landed_ok and "had not landed" in why for landed_ok, why in verdicts):
        return ledger.get_draft(rec.draft_id, rec.version)  # still in the air: the monitor (or a later call) ends it
    to_state = "RECALLED" if all(ok for ok, _ in verdicts) else "ABORTED"
    reason = "; ".join(why for _, why in verdicts)
    fresh = ledger.get_draft(rec.draft_id, rec.version)
    if fresh.state != "RECALLING":
        return fresh  # the monitor recorded the end first
    try:
        return _transition(ledger, fresh, to_state, actor=actor, reason=reason, now=now)
    except Conflict:
        return ledger.get_draft(rec.draft_id, rec.version)
