"""A recall recorded while the vehicle could not hear it is sent again when its telemetry returns.

Why: a recall (or a land in place) made while the flight is LINK_LOST is
recorded first (LINK_LOST → RECALLING) and then sent on the vehicle's link; when
that link is the one that stalled, the command never arrives — the ledger says
RECALLING while the vehicle flies its mission on (issue 42: "pause, recall and
land stay allowed"). So once the follower hears the vehicle again it reads what
the vehicle now reports and, unless it already returns or lands, sends the
recorded recall again, as the authority acting on an operator's recorded
decision (the event and the audit row say so).

What decides, from the vehicle's own report and the ledger's record:

- **which command**: the last recall recorded for the version (its RECALLING
  event names "return to launch" or "land in place", ``recalling.KIND``);
- **not again into what it already flies**: the vehicle's first HEARTBEAT after
  the gap (waited for, bounded: the view's mode is from before the gap until
  then) showing RTL or LAND for a recall, LAND for a land in place, or the
  vehicle disarmed — nothing is sent. A recall still being sent by another
  process holds the draft's command lock (``control_kit.vehicle_lock``): this one
  waits for it and reads the vehicle again after it, so the same recall never
  goes out twice.

ArduCopter's RTL and LAND are modes (``Copter::set_mode``, ``ArduCopter/mode.cpp``);
a MAV_CMD_NAV_RETURN_TO_LAUNCH is a request to enter ``Mode::Number::RTL``
(``GCS_MAVLINK_Copter::handle_command_long_packet``), so the mode in the
heartbeat is the vehicle's own word on whether it returns.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from flows.ledger import Ledger
from flows.usecases.control_kit import audited, transition, vehicle_lock
from flows.usecases.grounds import Grounds
from flows.usecases.recalling import KIND
from flows.errors import Conflict

__all__ = ["RESEND_ACTOR", "HEARTBEAT_WAIT_S", "recorded_recall", "resend_recall"]

RESEND_ACTOR = "authority (recall re-sent)"
#: Wall seconds to wait for the vehicle's first heartbeat after the gap (ArduPilot sends it at 1 Hz).
HEARTBEAT_WAIT_S = 5.0
#: The modes in which a vehicle already does what a recall of each kind asked (land_here → modes).
DOING = {False: ("RTL", "LAND"), True: ("LAND",)}


def recorded_recall(ledger: Ledger, draft_id: str, version: int) -> bool | None:
    """The last recall recorded for the version: True a land in place, False a return to launch, None none."""
    for e in reversed([e for e in ledger.events(draft_id) if e.version == version and e.to_state == "RECALLING"]):
        for land_here, phrase in KIND.items():
            if f"({phrase})" in e.reason:
                return land_here
    return None


def _fresh_heartbeat(link: Any, since: float, budget_s: float) -> bool:
    """Wait (bounded) for a heartbeat of the vehicle received after ``since`` (monotonic); the follower reads the
    link meanwhile."""
    deadline = time.monotonic() + budget_s
    while time.monotonic() < deadline:
        if link.seen.get("HEARTBEAT", 0.0) > since:
            return True
        time.sleep(0.05)
    return False


def resend_recall(grounds: Grounds, draft_id: str, version: int, *, drone_id: str, link: Any, now: datetime,
                  since: float, heartbeat_wait_s: float = HEARTBEAT_WAIT_S) -> dict[str, Any]:
    """Send the recorded recall to ``drone_id`` over ``link`` (the follower's, connected) unless the vehicle's
    report after ``since`` (the moment its telemetry returned) shows it done already; what was decided."""
    from flows.usecases.command_journal import LedgerJournal
    from flows.vehicle.commands import VehicleController, land_command, rtl_command

    ledger = grounds.ledger
    if not _fresh_heartbeat(link, since, heartbeat_wait_s):
        return {"drone_id": drone_id, "outcome": "NO_HEARTBEAT",
                "detail": f"no heartbeat within {heartbeat_wait_s:g} s of the telemetry's return: nothing was sent"}
    with vehicle_lock(grounds.home, draft_id):  # a recall still being sent elsewhere goes first
        land_here = recorded_recall(ledger, draft_id, version)
        view = link.view
        if land_here is None or not view.armed or view.mode in DOING[land_here]:
            what = "no recall is recorded" if land_here is None else (
                f"the vehicle is {'disarmed' if not view.armed else 'in ' + str(view.mode)}")
            return {"drone_id": drone_id, "outcome": "ALREADY", "mode": view.mode,
                    "detail": f"{what}: nothing was sent"}
        kind = KIND[land_here]
        why = (f"{RESEND_ACTOR}: the recall ({kind}) recorded while {drone_id}'s telemetry was lost had not reached "
               f"it: back in mode {view.mode}, armed; sent again")
        args = {"draft_id": draft_id, "version": version, "land_here": land_here, "reason": why, "link": None}
        rec = ledger.get_draft(draft_id, version)
        with audited(ledger, RESEND_ACTOR, "recall", args, now):
            vc = VehicleController(link, journal=LedgerJournal(ledger, drone_id, "land" if land_here else "recall",
                                                         RESEND_ACTOR, now, draft_id, version, required=False))
            try:
                out = vc.execute(land_command() if land_here else rtl_command())
            finally:
                vc.close()
        if out.outcome != "ALREADY" and rec.state == "RECALLING":
            try:  # the event says it was sent again; the follower may have recorded an end meanwhile: that stands
                transition(ledger, rec, "RECALLING", actor=RESEND_ACTOR,
                           reason=f"{why}: {out.outcome} ({out.detail})", now=now)
            except Conflict:
                pass
    return {"drone_id": drone_id, **out.to_dict(), "sent": vc.sent}
