"""What the flight-control use cases share: the result, role checks, audit, the per-draft lock, links and bindings.

``flows.usecases.control`` (cancel, pause, resume), ``flows.usecases.recalling``
(recall) and ``flows.usecases.launching`` (launch) act on a draft's vehicles the
same way: the dispatcher role for the draft's tenant, one audit row per action,
one commander per draft at a time (a lock file), each vehicle reached at the
link its dispatch used and bound as its fleet entry says (system id, autopilot,
signing key from the ledger's key store) — so every command is signed when the
drone has a key.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from flows.context import draft_dir
from flows.errors import Conflict, Forbidden
from flows.ledger import DraftRecord, Ledger
from flows.usecases.actor import Actor, as_actor
from flows.usecases.grounds import Grounds
from planner.errors import SortieError

__all__ = ["ControlResult", "FLIGHT_ROLES", "LOCK_WAIT_S", "authorise", "who", "audited", "vehicle_lock",
           "dispatched_links", "bindings", "transition", "take_off_seen"]

FLIGHT_ROLES = ("dispatcher",)
LOCK_WAIT_S = 30.0


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
    outcome: str | None = None  # a named end other than the action done: NOT_STARTED (a recall before take-off)

    def to_dict(self) -> dict[str, Any]:
        out = {"draft_id": self.draft_id, "version": self.version, "action": self.action, "state": self.state,
               "changed": self.changed, "message": self.message, "vehicles": self.vehicles, "run_id": self.run_id}
        return out | ({"outcome": self.outcome} if self.outcome else {})


def authorise(rec: DraftRecord, actor: str, roles: tuple[str, ...], what: str, grounds: Grounds) -> str:
    from flows.usecases.common import user_of

    user = user_of(grounds.world(rec.world_dir), actor, what)
    if not any(user.may(role, rec.tenant, rec.region_id) for role in roles):
        raise Forbidden(f"{user.id} may not {what} drafts of tenant {rec.tenant} (needs the {' or '.join(roles)} role)")
    return user.id


def who(actor: str | Actor | None) -> str:
    """The acting user's id (a plain id is the local, asserted identity)."""
    who = as_actor(actor)
    return "" if who is None else who.id


@contextmanager
def audited(ledger: Ledger, actor: str, action: str, args: Mapping[str, Any], now: datetime,
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
def vehicle_lock(home: Path, draft_id: str, budget_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """One commander per draft at a time (processes and threads): a resume and a recall never interleave; the lock
    file is in the draft's folder of the authority's ``home``."""
    path = draft_dir(draft_id, 1, home).parent / "control.lock"
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


def dispatched_links(ledger: Ledger, rec: DraftRecord, link: str | Mapping[str, str] | None) -> dict[str, str]:
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


def transition(ledger: Ledger, rec: DraftRecord, to_state: str, *, actor: str, reason: str, now: datetime) -> DraftRecord:
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


def take_off_seen(ledger: Ledger, rec: DraftRecord, actor: str, now: datetime) -> DraftRecord:
    """DISPATCHED/LAUNCHED → IN_FLIGHT when the controller saw the vehicle airborne (no follower saw it first)."""
    if rec.state not in ("DISPATCHED", "LAUNCHED"):
        return rec
    try:
        return transition(ledger, rec, "IN_FLIGHT", actor=actor, now=now,
                           reason="the vehicle is airborne (armed heartbeat seen by the controller)")
    except Conflict:
        fresh = ledger.get_draft(rec.draft_id, rec.version)
        if fresh.state == "IN_FLIGHT":  # the follower saw the take-off first: the same fact, recorded once
            return fresh
        raise


def bindings(grounds: Grounds, rec: DraftRecord, drone_ids: list[str] | Any) -> dict[str, Any]:
    """drone id → ``VehicleBinding`` as the dispatch bound each vehicle (its record: system and component id,
    autopilot, signing key reference), the key read from the authority's key store (``<home>/keys``): commands go
    to the vehicle the mission was uploaded to, signed as the upload was. A dispatch recorded without bindings
    falls back to the fleet entry."""
    from flows.vehicle.binding import binding_for, binding_from_record

    ledger, store = grounds.ledger, grounds.key_store
    dispatch = next((d for d in ledger.dispatches(rec.draft_id) if d.version == rec.version), None)
    recorded = {u["drone_id"]: u.get("binding") or {} for u in ((dispatch.result or {}) if dispatch else {}).get("uploads", [])}
    out: dict[str, Any] = {}
    world = None
    for drone_id in drone_ids:
        b = recorded.get(drone_id) or {}
        if b:
            out[drone_id] = binding_from_record(b, store)
            continue
        if world is None:
            world = grounds.world(rec.world_dir)
        try:
            out[drone_id] = binding_for(world.drone(drone_id), store)
        except SortieError:
            continue  # a drone no longer in the fleet: its link is used unbound (nothing to check it against)
    return out
