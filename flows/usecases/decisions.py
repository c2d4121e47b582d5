"""Use cases that decide on a version: ``approve`` and ``reject``.

gather: the version and the deciding user, looked up in the world the version
was planned in (or, in server mode, the server's own world, strictly loaded);
decide and apply: ``Ledger.approve``/``reject``, where the state machine, the
plan-hash binding and four-eyes are checked inside one transaction. The
approval row records how it was made: the mode (local | server), how the
approver's identity was proven (asserted | token | totp), the policy applied
and the world snapshot it was approved on. The policy's approval window is
also the version's decision deadline (``flows.ledger.approvals.decide_by``):
a decision after it is refused on every path and the version is EXPIRED.

``record_attempt`` is the audit row of a decision that came through a path
without its own (the Prefect approval form): who, how their identity was
proven, when, the outcome and — refused — why; the CLI and the server write
the same row for their own commands.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from flows.errors import Conflict
from flows.ledger import Ledger, kill_point
from flows.ledger.approvals import decide_by
from flows.usecases.actor import Actor, Policy
from flows.usecases.common import user_of
from flows.usecases.grounds import Grounds
from flows.usecases.reading import show_draft
from flows.usecases.views import DraftSummary
from planner.world.model import User

__all__ = ["approve", "reject", "expire_if_due", "record_attempt"]


def _decider(grounds: Grounds, draft_id: str, version: int, actor: Actor, what: str) -> tuple[User, str]:
    """The deciding user and the world snapshot hash they decide on."""
    rec = grounds.ledger.get_draft(draft_id, version)
    world = grounds.world(rec.world_dir)
    return user_of(world, actor.id, what), world.snapshot_hash


def _evidence(actor: Actor, policy: Policy | None, world_hash: str, extra: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {**actor.stamp(), "world_hash": world_hash}
    if policy is not None:
        out["policy"] = policy.to_dict()
    out.update(dict(extra or {}))
    return out


def approve(
    draft_id: str,
    version: int,
    *,
    approver: str | Actor,
    plan_hash: str | None = None,
    comment: str = "",
    now: datetime,
    grounds: Grounds,
    ttl: timedelta | None = None,
    four_eyes: bool | None = None,
    policy: Policy | None = None,
    evidence: Mapping[str, Any] | None = None,
) -> DraftSummary:
    """Approve one version, bound to its plan hash, for the policy's time to live; see ``Ledger.approve``.

    ``policy`` (four-eyes, time to live) is what the caller's configuration
    says; ``ttl``/``four_eyes`` override single fields (tests, the old call
    style). ``evidence`` adds to what the approval row records (say the server's clock).
    """
    actor = approver if isinstance(approver, Actor) else Actor(approver)
    pol = policy or Policy()
    if ttl is not None or four_eyes is not None:
        pol = Policy(four_eyes=pol.four_eyes if four_eyes is None else four_eyes,
                     approval_ttl=pol.approval_ttl if ttl is None else ttl)
    ledger = grounds.ledger
    user, world_hash = _decider(grounds, draft_id, int(version), actor, "approve")
    ledger.approve(
        draft_id,
        int(version),
        approver_id=user.id,
        may_approve=lambda tenant, region: user.may("approver", tenant, region),
        plan_hash=plan_hash,
        comment=comment,
        now=now,
        ttl=pol.approval_ttl,
        four_eyes=pol.four_eyes,
        evidence=_evidence(actor, pol, world_hash, evidence),
        window=pol.approval_ttl,
    )
    kill_point("approve:after_commit")
    return show_draft(draft_id, version, ledger=ledger)


def reject(
    draft_id: str,
    version: int,
    *,
    approver: str | Actor,
    reason: str,
    now: datetime,
    grounds: Grounds,
    evidence: Mapping[str, Any] | None = None,
    policy: Policy | None = None,
) -> DraftSummary:
    """Reject one version (the approver role for its tenant and region is needed; a reason is required)
    before its decision deadline (the policy's approval window)."""
    actor = approver if isinstance(approver, Actor) else Actor(approver)
    pol = policy or Policy()
    ledger = grounds.ledger
    user, world_hash = _decider(grounds, draft_id, int(version), actor, "reject")
    ledger.reject(
        draft_id,
        int(version),
        approver_id=user.id,
        may_approve=lambda tenant, region: user.may("approver", tenant, region),
        reason=reason,
        now=now,
        evidence=_evidence(actor, None, world_hash, evidence),
        window=pol.approval_ttl,
    )
    return show_draft(draft_id, version, ledger=ledger)


def expire_if_due(draft_id: str, version: int, *, actor: str | Actor, now: datetime, window: timedelta,
                  ledger: Ledger) -> str:
    """DRAFT/WAITING_RESOURCE → EXPIRED when ``window`` has passed since the version was recorded; the state after.

    The authority's form of the Prefect flows' expiry: the deadline is judged
    on the caller's ``now`` (the server's clock) and the recorded creation time,
    never on a time the requester sends. A conditional transition: an approval
    or rejection that won the race leaves the state as it is.
    """
    who = actor if isinstance(actor, Actor) else Actor(actor)
    rec = ledger.get_draft(draft_id, int(version))
    if rec.state not in ("DRAFT", "WAITING_RESOURCE") or now < decide_by(rec, window):
        return rec.state
    try:
        return ledger.transition(
            draft_id, int(version), expected_state=rec.state, expected_row_version=rec.row_version, to_state="EXPIRED",
            actor=who.id, reason=f"not approved within {int(window.total_seconds())} s of being planned", now=now,
        ).state
    except Conflict:
        return ledger.get_draft(draft_id, int(version)).state


def record_attempt(
    draft_id: str,
    version: int,
    *,
    command: str,
    actor: str | Actor,
    args: Mapping[str, Any],
    started: datetime,
    code: str = "OK",
    message: str | None = None,
    ledger: Ledger,
) -> None:
    """The audit row of one decision attempt made outside the CLI and the server (the Prefect form).

    ``code``/``message`` are the refusal's stable code and text (``OK``/None for a decision the ledger
    took). The row carries the mode and how the identity was proven, like every other audit row.
    """
    who = actor if isinstance(actor, Actor) else Actor(actor)
    ledger.audit(actor=who.id, command=command, args={**dict(args), "draft_id": draft_id, "version": int(version),
                                                      **who.stamp()},
                 result_code=code, duration_s=0.0, started=started, draft_id=draft_id, message=message)
