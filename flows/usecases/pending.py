"""What waits for approval, for whom, until when: the control room's to-do list (``sortie pending``).

A version waits when the ledger holds it as DRAFT with a plan and no blocking
finding (a blocked plan cannot be approved: it waits for a replan, not for a
person). For each one the list says who may decide — the users of the
version's world holding the ``approver`` role (or ``admin``) for its tenant and
region, without the requester when four-eyes applies — its deadline (the
decision deadline of the approval request: the time the version was recorded
plus the approval window, in ledger time, the same rule the ledger enforces)
and the time left against ``now``.

Visibility is by tenant, as for ``sortie drafts``: a user sees the pending
versions of their own tenants only. The result is plain data, one builder for
the CLI (local), the server's ``GET /v1/pending`` and the Prefect table
artifact, so the three never disagree.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from flows.ledger.records import DraftRecord
from flows.usecases.actor import Actor, Policy
from flows.usecases.common import user_of
from flows.usecases.grounds import Grounds

__all__ = ["PendingItem", "pending", "decision_deadline", "APPROVER_ROLE"]

APPROVER_ROLE = "approver"


@dataclass(frozen=True)
class PendingItem:
    """One version waiting for a decision."""

    tenant: str
    draft_id: str
    version: int
    region_id: str | None
    requested_by: str
    request_text: str
    plan_hash: str
    verdict: str
    created_time: str
    deadline: str
    seconds_left: int
    approver_role: str
    approvers: list[str]
    four_eyes: bool


def decision_deadline(rec: DraftRecord, window: timedelta) -> datetime:
    """When a decision on this version is too late: the ledger's own rule (``flows.ledger.approvals.decide_by``)."""
    from flows.ledger.approvals import decide_by

    return decide_by(rec, window)


def _eligible(world: Any, rec: DraftRecord, four_eyes: bool) -> list[str]:
    return sorted(
        u.id for u in world.users
        if u.may(APPROVER_ROLE, rec.tenant, rec.region_id) and not (four_eyes and u.id == rec.requested_by)
    )


def pending(
    *, user: str | Actor | None = None, now: datetime, policy: Policy | None = None, grounds: Grounds,
    limit: int = 1000,
) -> dict[str, Any]:
    """Every waiting version (of the user's tenants when ``user`` is given), soonest deadline first."""
    pol = policy or Policy()
    tenants: list[str] | None = None
    if user:
        actor = user if isinstance(user, Actor) else Actor(user)
        u = user_of(grounds.world(), actor.id, "see drafts")
        tenants = None if "*" in u.tenants else sorted(u.tenants)
    worlds: dict[str, Any] = {}
    items: list[PendingItem] = []
    for rec in grounds.ledger.list_drafts(tenants=tenants, limit=limit):
        if rec.state != "DRAFT" or not rec.plan_hash or rec.verdict == "block":
            continue
        key = str(grounds.world_folder(rec.world_dir))
        if key not in worlds:
            worlds[key] = grounds.world(rec.world_dir)
        deadline = decision_deadline(rec, pol.approval_ttl)
        items.append(PendingItem(
            tenant=rec.tenant, draft_id=rec.draft_id, version=rec.version, region_id=rec.region_id,
            requested_by=rec.requested_by, request_text=rec.request_text, plan_hash=rec.plan_hash,
            verdict=rec.verdict, created_time=rec.created_time, deadline=deadline.isoformat(),
            seconds_left=int((deadline - now).total_seconds()), approver_role=APPROVER_ROLE,
            approvers=_eligible(worlds[key], rec, pol.four_eyes), four_eyes=pol.four_eyes,
        ))
    items.sort(key=lambda i: (i.tenant, i.deadline, i.draft_id))
    by_tenant: dict[str, int] = {}
    for i in items:
        by_tenant[i.tenant] = by_tenant.get(i.tenant, 0) + 1
    return {"now": now.isoformat(), "count": len(items), "by_tenant": by_tenant, "pending": [asdict(i) for i in items]}
