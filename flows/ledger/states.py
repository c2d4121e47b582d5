"""The mission state machine: the states, the one table of allowed changes, and how a change is made.

Why here and nowhere else: a transition is legal only if ``TRANSITIONS`` lists
it, and it is made only by ``apply_transition`` — a conditional update on
(id, version, state, row_version) plus its event row, in the caller's
transaction. Everything that moves a draft (drafts, approvals, claims, the
flight monitor) goes through it, so the event log is a complete replay.

    (new) ─► DRAFT ─► APPROVED ─► DISPATCHED ─► LAUNCHED ─► IN_FLIGHT ─► SUCCEEDED | INCOMPLETE | ABORTED
    (new) ─► WAITING_RESOURCE        plus REJECTED, EXPIRED, SUPERSEDED
    DRAFT | APPROVED ─► CANCELLED    (withdrawn before dispatch)
    IN_FLIGHT ─► RECALLING ─► RECALLED | ABORTED | SUCCEEDED   (an operator's recall, or the energy guard's)
    LAUNCHED | IN_FLIGHT | RECALLING ─► LINK_LOST ─► IN_FLIGHT | RECALLING | an end   (telemetry stopped)

LAUNCHED is recorded when the vehicle answered the launch sequence (pre-flight
checks passed, armed, mission started); the follower moves it to IN_FLIGHT once
the vehicle is seen airborne. DISPATCHED → IN_FLIGHT stays for a vehicle seen
airborne without sortie's launch (launched from another ground station).

A pause is not a state: the mission is still in flight and ends the same ways;
it is an IN_FLIGHT → IN_FLIGHT event (actor, reason) and the vehicle's own
telemetry shows it (``flows.usecases.control`` says why). So is each step of a
mission of several sorties between its launch and its end (a sortie landed, the
dock's turnaround, the next sortie uploaded and launched): the mission is under
way and its drones are committed to it.

LINK_LOST is a state, not an end (issue 42): the telemetry stopped, and the
vehicle may still be flying its mission. Pause, recall and land stay allowed;
telemetry that returns takes the flight back to IN_FLIGHT (or RECALLING) where
the vehicle is; it ends only from the vehicle's own evidence (landed and
disarmed, seen when telemetry returns) or ABORTED after a named timeout longer
than the vehicle's remaining endurance. INCOMPLETE is a landed mission whose
planned work was not all flown (measured from the track), naming what was not.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import duckdb

from flows.errors import Conflict
from flows.ledger.chain import chain_values, event_content
from flows.ledger.records import DraftRecord, _iso, replace_state
from flows.ledger.signing import current_keys

__all__ = ["STATES", "TRANSITIONS", "DISPATCH_STATUSES", "DISPATCH_FINAL", "apply_transition", "insert_event"]

STATES = frozenset(
    {
        "DRAFT",
        "WAITING_RESOURCE",
        "APPROVED",
        "REJECTED",
        "EXPIRED",
        "SUPERSEDED",
        "DISPATCHED",
        "LAUNCHED",
        "IN_FLIGHT",
        "SUCCEEDED",
        "ABORTED",
        "CANCELLED",
        "RECALLING",
        "RECALLED",
        "LINK_LOST",
        "INCOMPLETE",
    }
)

#: The one table of allowed state changes, with what each means. ``None`` is "not yet recorded".
TRANSITIONS: Mapping[tuple[str | None, str], str] = {
    (None, "DRAFT"): "a plan version is recorded",
    (None, "WAITING_RESOURCE"): "no eligible fleet could serve the job; the missing resources are listed",
    ("DRAFT", "APPROVED"): "an authorised approver approved this version and plan hash",
    ("DRAFT", "REJECTED"): "an approver rejected this version",
    ("DRAFT", "EXPIRED"): "nobody approved it in time",
    ("DRAFT", "SUPERSEDED"): "a newer version of the draft exists",
    ("WAITING_RESOURCE", "SUPERSEDED"): "a newer version was planned",
    ("WAITING_RESOURCE", "REJECTED"): "an approver closed the request",
    ("WAITING_RESOURCE", "EXPIRED"): "resources did not become available in time",
    ("APPROVED", "APPROVED"): "re-approved after the earlier approval expired",
    ("APPROVED", "EXPIRED"): "the approval lapsed and the draft was closed",
    ("APPROVED", "SUPERSEDED"): "a newer version exists; this approval no longer applies",
    ("APPROVED", "DISPATCHED"): "the vehicle accepted the mission",
    ("APPROVED", "ABORTED"): "the vehicle refused the mission",
    ("DISPATCHED", "IN_FLIGHT"): "the vehicle took off",
    ("DISPATCHED", "ABORTED"): "the mission was cancelled before take-off",
    ("DISPATCHED", "LAUNCHED"): "the vehicle passed its pre-flight checks, armed and started the mission",
    ("LAUNCHED", "IN_FLIGHT"): "the launched vehicle is airborne",
    ("LAUNCHED", "ABORTED"): "the launched vehicle did not fly the mission (it landed or was recalled on the ground)",
    ("IN_FLIGHT", "SUCCEEDED"): "the mission completed and the drone is back at its dock",
    ("IN_FLIGHT", "ABORTED"): "the mission was aborted in flight",
    ("DRAFT", "CANCELLED"): "withdrawn before approval by an approver or dispatcher",
    ("APPROVED", "CANCELLED"): "the approval was withdrawn before dispatch; this version can no longer be dispatched",
    ("IN_FLIGHT", "IN_FLIGHT"): "held or resumed in flight by an operator, as the vehicle confirmed; or a sortie of "
                                "the mission landed, was uploaded or launched (the mission is under way)",
    ("IN_FLIGHT", "INCOMPLETE"): "the vehicles landed with planned work not flown (named, measured from the track)",
    ("LAUNCHED", "LINK_LOST"): "the launched vehicle's telemetry stopped: it may be flying",
    ("IN_FLIGHT", "LINK_LOST"): "the vehicle's telemetry stopped: it may still be flying its mission",
    ("RECALLING", "LINK_LOST"): "the recalled vehicle's telemetry stopped: it may still be returning",
    ("LINK_LOST", "LINK_LOST"): "a command was sent to a vehicle whose telemetry is lost",
    ("LINK_LOST", "IN_FLIGHT"): "the telemetry is back: the flight goes on where the vehicle is",
    ("LINK_LOST", "RECALLING"): "recalled while its telemetry is lost, or the telemetry of a recalled vehicle is back",
    ("LINK_LOST", "SUCCEEDED"): "the telemetry is back and shows the mission flown, landed and disarmed",
    ("LINK_LOST", "INCOMPLETE"): "the telemetry is back and shows the vehicle landed with planned work not flown",
    ("LINK_LOST", "RECALLED"): "the telemetry is back and shows the recalled vehicle landed where it was sent",
    ("LINK_LOST", "ABORTED"): "the telemetry is back and shows the vehicle landed elsewhere, or none came back "
                              "within the vehicle's endurance (named)",
    ("IN_FLIGHT", "RECALLING"): "an operator recalled the vehicle (return to launch or land in place)",
    ("RECALLING", "RECALLING"): "the recall was changed (return to launch → land in place)",
    ("RECALLING", "RECALLED"): "the recalled vehicle landed where it was sent",
    ("RECALLING", "ABORTED"): "the recalled vehicle ended elsewhere or was lost (the vehicle's reason)",
    ("RECALLING", "SUCCEEDED"): "the mission completed before the recall took effect",
}

DISPATCH_STATUSES = frozenset({"PENDING", "SENT", "ACKED", "UNCERTAIN", "FAILED"})
DISPATCH_FINAL = {"ACKED": "DISPATCHED", "SENT": "DISPATCHED", "FAILED": "ABORTED"}


def insert_event(
    con: duckdb.DuckDBPyConnection,
    draft_id: str,
    version: int,
    *,
    actor: str,
    from_state: str | None,
    to_state: str,
    reason: str,
    stamp: str,
    row_version: int,
    plan_hash: str | None,
    world_hash: str | None,
) -> None:
    """The event row of one state change (the only writer of ``events``), linked into the hash chain."""
    row = {
        "draft_id": draft_id,
        "version": int(version),
        "actor": actor,
        "from_state": from_state,
        "to_state": to_state,
        "reason": reason,
        "event_time": stamp,
        "row_version": int(row_version),
        "plan_hash": plan_hash,
        "world_hash": world_hash,
    }
    seq, prev, draft_prev, entry = chain_values(con, current_keys(), draft_id, event_content(row))
    con.execute(
        "INSERT INTO events (draft_id, version, actor, from_state, to_state, reason, event_time, row_version, "
        "chain_seq, prev_hash, draft_prev_hash, entry_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [draft_id, int(version), actor, from_state, to_state, reason, stamp, int(row_version), seq, prev, draft_prev,
         entry],
    )


def apply_transition(
    con: duckdb.DuckDBPyConnection,
    draft: DraftRecord,
    to_state: str,
    *,
    actor: str,
    reason: str,
    now: datetime,
) -> DraftRecord:
    """Conditional update on (id, version, state, row_version) + its event, inside ``con``'s transaction."""
    if (draft.state, to_state) not in TRANSITIONS:
        raise Conflict(
            f"draft {draft.draft_id} v{draft.version} is {draft.state}; it cannot become {to_state}",
            details={"draft_id": draft.draft_id, "version": draft.version, "state": draft.state, "to": to_state},
        )
    stamp = _iso(now)
    rows = con.execute(
        "UPDATE drafts SET state = ?, row_version = row_version + 1, updated_time = ? "
        "WHERE draft_id = ? AND version = ? AND state = ? AND row_version = ? RETURNING row_version",
        [to_state, stamp, draft.draft_id, draft.version, draft.state, draft.row_version],
    ).fetchall()
    if len(rows) != 1:
        current = con.execute(
            "SELECT state, row_version FROM drafts WHERE draft_id = ? AND version = ?",
            [draft.draft_id, draft.version],
        ).fetchone()
        raise Conflict(
            f"draft {draft.draft_id} v{draft.version} changed meanwhile: expected {draft.state} "
            f"(row {draft.row_version}), found {current[0] if current else 'nothing'}"
            f"{f' (row {current[1]})' if current else ''}; nothing was changed"
        )
    insert_event(con, draft.draft_id, draft.version, actor=actor, from_state=draft.state, to_state=to_state,
                 reason=reason, stamp=stamp, row_version=rows[0][0], plan_hash=draft.plan_hash,
                 world_hash=draft.world_hash)
    return replace_state(draft, to_state, rows[0][0], stamp)
