"""Settling what a crash left unsaid: commands the journal says were sent by a process that is gone, with no answer.

Why: a launch is arm → AUTO → start (ArduPilot) or one MISSION_START (PX4),
each written to the ledger's vehicle command journal before it goes out
(``flows.ledger.command_journal``). If the authority dies in between, the
vehicle may be flying a mission the ledger still calls DISPATCHED, or be
armed on its pad halfway through the sequence. The authority that starts
next (``flows.server.rounds``: right after the start, then every few seconds
while a command stays unsettled) asks each such vehicle for its state over
its bound link and settles from what the vehicle shows, never from a guess:

- a **launch** whose vehicle is armed and in the air or in its mission
  (AUTO): it flew — the draft moves DISPATCHED → LAUNCHED, the reason naming
  the crash and the vehicle's state; the follower takes it from there;
- a launch whose vehicle is armed on the ground outside AUTO (the sequence
  was cut after the arm): it is disarmed (journaled like any command) and the
  draft stays DISPATCHED — launch it again;
- a launch whose vehicle is disarmed on the ground: nothing flew; DISPATCHED;
- any other command (a recall, a pause, a resume, a land): its state was
  recorded before it was sent (RECALLING …), so only the vehicle's state is
  written to its settlement.

Each unsettled command gets a ``settled`` entry (outcome + the vehicle's
state + what was done). A vehicle that does not answer leaves its commands
unsettled: the next round asks again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from flows.errors import Conflict
from flows.ledger.command_journal import JournaledCommand
from flows.usecases.command_journal import LedgerJournal
from flows.usecases.control_kit import bindings, dispatched_links, transition, vehicle_lock
from flows.usecases.grounds import Grounds
from planner.errors import SortieError

__all__ = ["settle_commands", "orphaned", "SETTLER", "Settlement"]

log = logging.getLogger(__name__)

SETTLER = "authority:settler"


@dataclass
class Settlement:
    """What one settlement found and did, for one drone of one draft's action."""

    draft_id: str | None
    version: int | None
    drone_id: str
    action: str
    outcome: str
    detail: str
    commands: list[str] = field(default_factory=list)
    vehicle: dict[str, Any] = field(default_factory=dict)
    state: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _orphans(grounds: Grounds) -> dict[tuple[Any, ...], list[JournaledCommand]]:
    groups: dict[tuple[Any, ...], list[JournaledCommand]] = {}
    for c in grounds.ledger.unsettled_commands():
        if not c.owner_alive():
            groups.setdefault((c.draft_id, c.version, c.drone_id, c.action), []).append(c)
    return groups


def orphaned(grounds: Grounds) -> int:
    """How many commands of gone processes are unsettled now."""
    return sum(len(c) for c in _orphans(grounds).values())


def settle_commands(grounds: Grounds, *, now: datetime, options: Any | None = None,
                    publish: Callable[[str, dict[str, Any]], None] | None = None) -> list[Settlement]:
    """Settle every unsettled command whose sender is gone (module docstring); what was settled."""
    done: list[Settlement] = []
    for (draft_id, version, drone_id, action), commands in _orphans(grounds).items():
        try:
            s = _settle(grounds, draft_id, version, drone_id, action, commands, now, options)
        except SortieError as exc:  # the vehicle silent, the ledger busy: the next round asks again
            log.info("could not settle %s of %s v%s on %s yet: %s", action, draft_id, version, drone_id, exc)
            continue
        done.append(s)
        if publish is not None:
            publish("vehicle.settled", s.to_dict())
    return done


def _settle(grounds: Grounds, draft_id: str | None, version: int | None, drone_id: str, action: str,
            commands: list[JournaledCommand], now: datetime, options: Any | None) -> Settlement:
    from flows.vehicle.commands import VehicleController, disarm_command

    ledger = grounds.ledger
    if draft_id is None or version is None:
        raise Conflict(f"a {action} command to {drone_id} names no draft: nothing to settle it against")
    rec = ledger.get_draft(draft_id, version)
    conn = dispatched_links(ledger, rec, None)[drone_id]
    sent = ", ".join(c.command for c in commands)
    crash = (f"the {action} of {draft_id} v{version} was cut short (process {commands[0].owner_pid} on "
             f"{commands[0].owner_host} ended after sending {sent}, before the answer was recorded)")
    with vehicle_lock(grounds.home, draft_id):
        with VehicleController(conn, options, binding=bindings(grounds, rec, [drone_id]).get(drone_id),
                               vehicles=grounds.vehicles,
                               journal=LedgerJournal(ledger, drone_id, "settle", SETTLER, now, draft_id, version)) as vc:
            view = vc.connect()
            seen = f"the vehicle shows {'armed' if view.armed else 'disarmed'}, mode {view.mode or '?'}" + (
                f", airborne {view.airborne}" if view.airborne is not None else "")
            s = Settlement(draft_id, version, drone_id, action, "VEHICLE_STATE", f"{crash}; {seen}",
                           [c.command_id for c in commands], view.to_dict())
            if action == "launch":
                rec = ledger.get_draft(draft_id, version)
                if view.armed and (view.airborne or view.mode == "AUTO"):
                    s.outcome = "LAUNCHED"
                    if rec.state == "DISPATCHED":
                        rec = transition(ledger, rec, "LAUNCHED", actor=SETTLER, now=now,
                                         reason=f"settled after a crash: {crash}; {seen}: it flies its mission")
                elif view.armed:
                    down = vc.execute(disarm_command())  # the sequence stopped after the arm: never left armed
                    s.outcome = "NOT_LAUNCHED"
                    s.detail += (f": disarmed again; draft {draft_id} v{version} stays {rec.state} (launch it again)"
                                 if down.in_effect else f"; the disarm did not take effect ({down.detail})")
                else:
                    s.outcome = "NOT_LAUNCHED"
                    s.detail += f": nothing flew; draft {draft_id} v{version} stays {rec.state} (launch it again)"
            s.state = ledger.get_draft(draft_id, version).state
    for c in commands:
        try:
            ledger.journal_end(c.command_id, "settled", outcome=s.outcome, actor=SETTLER, now=now,
                               detail={"detail": s.detail, "vehicle": s.vehicle, "state": s.state})
        except Conflict:
            pass  # settled by another round meanwhile
    return s
