"""Approvals: the approval policy (four-eyes, tenant/region role, stale versions, blocking findings,
expiry, the decision deadline) and the approval rows.

The decision deadline is a property of the approval request itself: a version
must be decided within ``window`` (the policy's approval window, 30 min by
default) of being recorded, judged on the deciding caller's clock. Every path
(CLI, server, the Prefect form) decides through :meth:`ApprovalsRoom.approve`
or ``reject``, so a decision after the deadline is refused — and the version
becomes EXPIRED in the same transaction — whether or not a scheduled expiry
run exists; that run only makes the expiry visible sooner.

Why a room: the policy decides inside the same transaction that writes the
decision, so two approvers racing (or an approve racing a replan) cannot both
win; and dispatch asks the same code whether a version is validly approved.

Whether an approval covers an action now is said in one place,
``covering_approval``: the dispatch's check and its claim (inside the claim's
transaction), the dispatch seal (which then checks that approval's signature)
and the launch all ask it, so a fix to what "covered" means reaches every one.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any, Literal

import duckdb

from flows.ledger.chain import approval_content, chain_values
from flows.ledger.records import _APPROVAL_COLS, ApprovalRecord, DraftRecord, _approval, _dumps, _iso
from flows.ledger.states import apply_transition
from flows.ledger.store import Store, kill_point
from flows.errors import ApprovalInvalid, ApprovalRequired, ApprovalStale, Conflict, Forbidden
from planner.errors import InvalidArgument, NotFound

__all__ = ["APPROVAL_TTL", "ApprovalsRoom", "approval_statement", "IDENTITY_PROOFS", "DEADLINE_ACTOR",
           "decide_by", "covering_approval", "Covered"]

APPROVAL_TTL = timedelta(minutes=30)
#: The actor of a DRAFT → EXPIRED change the ledger makes when a decision arrives after the deadline.
DEADLINE_ACTOR = "ledger:deadline"


def decide_by(draft: DraftRecord, window: timedelta = APPROVAL_TTL) -> datetime:
    """When a version stops accepting decisions: its recording time plus the approval window."""
    return datetime.fromisoformat(draft.created_time) + window


#: What an approval is asked to cover: sending the mission to the vehicles (the dispatch, and its claim in the
#: ledger), or the take-off of a dispatched mission.
Covered = Literal["dispatch", "launch"]


def covering_approval(draft: DraftRecord, approvals: Sequence[ApprovalRecord], now: datetime, *,
                      action: Covered, mode: str | None = None) -> ApprovalRecord:
    """The approval of ``draft`` that covers ``action`` at ``now``, or the precise refusal.

    An approval covers when it APPROVED this version's exact plan hash and has not expired at ``now``; with
    ``mode`` ("server": the authority) it must also have been made in that mode — an approval recorded by an
    embedded (local, asserted) sortie never satisfies the authority. Refusals: none at all → ``ApprovalRequired``;
    the newest names another plan hash than the version's (which never changes: the row was edited) →
    ``ApprovalInvalid``; else expired → ``ApprovalStale``; made in the wrong mode → ``ApprovalRequired``.
    ``approvals``: the version's rows, in any order. Whether the version's state allows the action is the
    caller's (``ApprovalsRoom.dispatchable``; the launch's own DISPATCHED check).
    """
    what = f"{draft.draft_id} v{draft.version}"
    rows = sorted((a for a in approvals if a.version == draft.version and a.decision == "APPROVED"),
                  key=lambda a: (a.created_time, a.approval_id), reverse=True)
    covering = next((a for a in rows if a.valid_at(now, draft.plan_hash)), None)
    if covering is not None:
        made_in = covering.evidence.get("mode", "local")
        if mode is not None and made_in != mode:
            raise ApprovalRequired(
                f"the approval of {what} by {covering.approver} was made in {made_in} mode (identity asserted); the "
                f"{'server' if mode == 'server' else mode} accepts only its own approvals: approve it through the "
                "server")
        return covering
    if not rows:
        raise ApprovalRequired(f"draft {what} has no approval" + (": nothing is launched" if action == "launch" else ""))
    last = rows[0]
    if last.plan_hash != draft.plan_hash:
        raise ApprovalInvalid(
            f"the approval of {what} names plan hash {last.plan_hash}, but the version's plan hash is "
            f"{draft.plan_hash}: the ledger was edited after approval; nothing was sent")
    if action == "launch":
        raise ApprovalStale(
            f"the approval of {what} by {last.approver} expired at {last.expires_time} (now {now.isoformat()}): a "
            f"launch needs an approval that covers the moment it flies; replan (`sortie replan {draft.draft_id}`) "
            "and approve the new version")
    raise ApprovalStale(f"the approval of {what} by {last.approver} expired at {last.expires_time}; approve it again")

#: How the approver's identity was established: asserted (local mode, ``--as``), a per-user token, token + TOTP
#: (the authority's ``evidence["identity"]``, which takes precedence, says ``totp`` for the last).
IDENTITY_PROOFS = ("asserted", "token", "token+totp", "totp")


def approval_statement(
    record: ApprovalRecord,
    *,
    world_hash: str,
    identity_proof: str,
    mode: str,
    policy: Mapping[str, Any],
) -> dict[str, Any]:
    """What the authority signs for a decision: the version and plan it names, who, how proven, the policy
    in force, when it was decided and until when it holds."""
    return {
        "format": "sortie-approval/1",
        "approval_id": record.approval_id,
        "draft_id": record.draft_id,
        "version": record.version,
        "plan_hash": record.plan_hash,
        "world_hash": world_hash,
        "approver": record.approver,
        "decision": record.decision,
        "identity_proof": identity_proof,
        "mode": mode,
        "policy": dict(policy),
        "decided_at": record.created_time,
        "expires_at": record.expires_time,
    }


class ApprovalsRoom(Store):
    """The approve/reject decisions of the ledger and the check dispatch relies on."""

    def approve(
        self,
        draft_id: str,
        version: int,
        *,
        approver_id: str,
        may_approve: Callable[[str, str | None], bool],
        plan_hash: str | None,
        comment: str,
        now: datetime,
        ttl: timedelta = APPROVAL_TTL,
        four_eyes: bool = True,
        identity_proof: str = "asserted",
        evidence: Mapping[str, Any] | None = None,
        window: timedelta = APPROVAL_TTL,
    ) -> ApprovalRecord:
        """Approve one draft version bound to its plan hash, or raise.

        ``may_approve(tenant, region_id)`` says whether the approver holds the
        approver role there (``planner.world.model.User.may`` bound to the role).
        Refusals: ``NotFound``; ``ApprovalStale`` for a superseded version or a
        plan hash that is not this version's; ``Forbidden`` for a missing role or
        (four-eyes) the requester approving their own draft; ``Conflict`` for a
        rejected, expired, waiting or already (validly) approved draft, or a
        concurrent decision that won first; ``ApprovalStale`` after the decision
        deadline (``window`` after the version was recorded; the version is
        EXPIRED then, committed, before the refusal is raised).
        """
        return self._decide(
            draft_id,
            version,
            decision="APPROVED",
            approver_id=approver_id,
            may_decide=may_approve,
            plan_hash=plan_hash,
            comment=comment,
            now=now,
            ttl=ttl,
            four_eyes=four_eyes,
            identity_proof=identity_proof,
            evidence=evidence,
            window=window,
        )

    def reject(
        self,
        draft_id: str,
        version: int,
        *,
        approver_id: str,
        may_approve: Callable[[str, str | None], bool],
        reason: str,
        now: datetime,
        identity_proof: str = "asserted",
        evidence: Mapping[str, Any] | None = None,
        window: timedelta = APPROVAL_TTL,
    ) -> ApprovalRecord:
        """Reject one draft version (DRAFT or WAITING_RESOURCE) before its decision deadline.

        An APPROVED version is not rejected (so a racing approve and reject
        cannot both win); it expires, or a replan supersedes it.
        """
        if not reason.strip():
            raise InvalidArgument("a rejection needs a reason")
        return self._decide(
            draft_id,
            version,
            decision="REJECTED",
            approver_id=approver_id,
            may_decide=may_approve,
            plan_hash=None,
            comment=reason,
            now=now,
            ttl=APPROVAL_TTL,
            four_eyes=False,
            identity_proof=identity_proof,
            evidence=evidence,
            window=window,
        )

    def _decide(
        self,
        draft_id: str,
        version: int,
        *,
        decision: str,
        approver_id: str,
        may_decide: Callable[[str, str | None], bool],
        plan_hash: str | None,
        comment: str,
        now: datetime,
        ttl: timedelta,
        four_eyes: bool,
        identity_proof: str,
        evidence: Mapping[str, Any] | None = None,
        window: timedelta = APPROVAL_TTL,
    ) -> ApprovalRecord:
        if ttl <= timedelta(0) or window <= timedelta(0):
            raise InvalidArgument("the approval time-to-live must be positive")
        if identity_proof not in IDENTITY_PROOFS:
            raise InvalidArgument(f"identity proof {identity_proof!r}: expected one of {', '.join(IDENTITY_PROOFS)}")

        def work(con: duckdb.DuckDBPyConnection) -> ApprovalRecord | str:
            draft = self._get(con, draft_id, version)
            latest = self._get(con, draft_id, None)
            if draft.state == "SUPERSEDED" or latest.version != draft.version:
                raise ApprovalStale(
                    f"draft {draft_id} v{version} is superseded by v{latest.version}: review and decide on that one"
                )
            if decision == "APPROVED" and four_eyes and approver_id == draft.requested_by:
                raise Forbidden(f"four-eyes rule: {approver_id} requested draft {draft_id} and cannot approve it")
            if not may_decide(draft.tenant, draft.region_id):
                raise Forbidden(
                    f"{approver_id} may not approve drafts of tenant {draft.tenant}"
                    f"{'' if draft.region_id is None else f' in region {draft.region_id}'}"
                )
            deadline = decide_by(draft, window)
            if draft.state in ("DRAFT", "WAITING_RESOURCE") and now >= deadline:
                why = (f"not decided by its deadline {_iso(deadline)} ({int(window.total_seconds())} s after it was "
                       f"planned); {approver_id}'s {decision.lower()[:-1]} came at {_iso(now)}")
                apply_transition(con, draft, "EXPIRED", actor=DEADLINE_ACTOR, reason=why, now=now)
                return f"draft {draft_id} v{version} is EXPIRED: {why}; replan it"
            if decision == "APPROVED":
                if draft.state == "WAITING_RESOURCE":
                    raise Conflict(f"draft {draft_id} v{version} is WAITING_RESOURCE: it has no plan to approve")
                if draft.plan_hash is None:
                    raise Conflict(f"draft {draft_id} v{version} has no plan to approve")
                if plan_hash is not None and plan_hash != draft.plan_hash:
                    raise ApprovalStale(
                        f"plan hash {plan_hash} is not the hash of draft {draft_id} v{version} "
                        f"({draft.plan_hash}): the plan you reviewed is not this one"
                    )
                if draft.verdict == "block":
                    raise Conflict(
                        f"draft {draft_id} v{version} has blocking findings; it cannot be approved (replan it)"
                    )
                if draft.state == "APPROVED":
                    current = [
                        _approval(r)
                        for r in con.execute(
                            f"SELECT {_APPROVAL_COLS} FROM approvals WHERE draft_id = ? AND version = ? "
                            "AND decision = 'APPROVED' AND signature IS NOT NULL",  # unsigned (pre-chain): approve anew
                            [draft_id, int(version)],
                        ).fetchall()
                    ]
                    if any(a.valid_at(now, draft.plan_hash) for a in current):
                        raise Conflict(f"draft {draft_id} v{version} is already approved")
                reason = f"approved by {approver_id}" + (f": {comment}" if comment else "")
            else:
                reason = f"rejected by {approver_id}: {comment}"
            apply_transition(con, draft, decision, actor=approver_id, reason=reason, now=now)
            record = ApprovalRecord(
                approval_id=uuid.uuid4().hex,
                draft_id=draft_id,
                version=int(version),
                plan_hash=draft.plan_hash if decision == "APPROVED" else plan_hash,
                approver=approver_id,
                decision=decision,
                comment=comment,
                created_time=_iso(now),
                expires_time=_iso(now + ttl) if decision == "APPROVED" else None,
                evidence=dict(evidence or {}),
            )
            statement = approval_statement(
                record,
                world_hash=draft.world_hash,
                identity_proof=str(record.evidence.get("identity") or identity_proof),
                mode=str(record.evidence.get("mode") or self.keys.mode),
                policy={"four_eyes": bool(four_eyes), "ttl_s": int(ttl.total_seconds()),
                        **({"in_force": record.evidence["policy"]} if record.evidence.get("policy") else {})},
            )
            signature, key_id = self.keys.sign(statement)
            row = {**asdict(record), "evidence_json": _dumps(record.evidence), "statement_json": _dumps(statement),
                   "signature": signature, "key_id": key_id}
            seq, prev, draft_prev, entry = chain_values(con, self.keys, draft_id, approval_content(row))
            con.execute(
                f"INSERT INTO approvals ({_APPROVAL_COLS}, statement_json, signature, key_id, chain_seq, prev_hash, "
                "draft_prev_hash, entry_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    record.approval_id,
                    record.draft_id,
                    record.version,
                    record.plan_hash,
                    record.approver,
                    record.decision,
                    record.comment,
                    record.created_time,
                    record.expires_time,
                    row["evidence_json"],
                    row["statement_json"],
                    signature,
                    key_id,
                    seq,
                    prev,
                    draft_prev,
                    entry,
                ],
            )
            kill_point("ledger:approve:in_transaction")
            return record

        out = self._write(work, what=f"{decision.lower()} {draft_id} v{version}")
        if isinstance(out, str):  # the deadline passed: EXPIRED is committed, the decision refused
            raise ApprovalStale(out, details={"draft_id": draft_id, "version": int(version), "state": "EXPIRED"})
        return out

    @staticmethod
    def dispatchable(draft: DraftRecord) -> None:
        """Refuse unless the version's state lets it be dispatched (APPROVED): a DRAFT is approved first, a
        SUPERSEDED version's latest is dispatched instead, anything else is a ``Conflict``."""
        if draft.state in ("DRAFT", "WAITING_RESOURCE"):
            raise ApprovalRequired(f"draft {draft.draft_id} v{draft.version} is {draft.state}: approve it first")
        if draft.state == "SUPERSEDED":
            raise ApprovalStale(f"draft {draft.draft_id} v{draft.version} is superseded; dispatch the latest version")
        if draft.state != "APPROVED":
            raise Conflict(f"draft {draft.draft_id} v{draft.version} is {draft.state}; it cannot be dispatched")

    @classmethod
    def _valid_approval(cls, con: duckdb.DuckDBPyConnection, draft: DraftRecord, now: datetime, *,
                        mode: str | None = None) -> ApprovalRecord:
        """The approval that lets this version be dispatched now, read in ``con``'s transaction
        (``covering_approval``), or the precise refusal."""
        cls.dispatchable(draft)
        rows = [_approval(r) for r in con.execute(
            f"SELECT {_APPROVAL_COLS} FROM approvals WHERE draft_id = ? AND version = ?",
            [draft.draft_id, draft.version]).fetchall()]
        return covering_approval(draft, rows, now, action="dispatch", mode=mode)

    def valid_approval(self, draft_id: str, version: int, *, now: datetime, mode: str | None = None) -> ApprovalRecord:
        """The approval that lets a version be dispatched now (``covering_approval``; with ``mode``, one made in
        that mode), else ``ApprovalRequired``/``ApprovalStale``/``ApprovalInvalid``/``Conflict``."""
        if not self.path.exists():
            self._check_missing()
            raise NotFound(f"draft {draft_id!r} is not in the ledger")
        with self._connection() as con:
            draft = self._get(con, draft_id, version)
            return self._valid_approval(con, draft, now, mode=mode)
