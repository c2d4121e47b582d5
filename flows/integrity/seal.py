"""The dispatch seal: before anything is sent, prove that what will be sent is what was approved.

Why: the ledger row says "approved", but the bytes that reach the vehicle are
built from the stored plan at dispatch time. Anyone who can edit the ledger or
the draft files could change the plan after approval (raise every altitude by
8 m, keep the hash) and the vehicle would fly it. So dispatch, every time:

1. verifies the approval's Ed25519 signature and that the signed statement
   names this draft, version, plan hash and world hash (``APPROVAL_INVALID``);
2. RECOMPUTES the plan hash from the stored plan (not the stored hash) and
   from the draft's ``plan.json`` file when there is one (``APPROVAL_INVALID``);
3. checks the ledger: the draft's hash chain, its state replay, every dispatch
   row against its logged changes (a deleted or edited dispatch of another
   draft would free a drone that is busy), and the signed chain head against
   ``ledger.duckdb.head`` (``LEDGER_TAMPERED``);
4. builds the mission items from that verified plan and hashes them; the
   dispatch row records the hash, and the plan object returned here is the one
   handed to the uploader.

Any mismatch raises before the claim: nothing is claimed, nothing is sent.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from flows.errors import ApprovalInvalid, LedgerTampered
from flows.ledger import DraftRecord, Ledger
from flows.ledger.checks import approval_problem
from flows.ledger.signing import verify_statement
from planner.plan import Plan, plan_from_dict, plan_hash
from planner.world.model import World

__all__ = ["Seal", "seal_dispatch", "check_ledger", "mission_items_hash"]


@dataclass(frozen=True)
class Seal:
    """What dispatch may send: the verified plan, the hash of its mission items, and the approval used."""

    plan: Plan
    items_hash: str
    approval_id: str
    statement: dict[str, Any]
    checks: tuple[str, ...]


def check_ledger(ledger: Ledger, draft_id: str) -> None:
    """The cheap integrity check: this draft's chain and states, every dispatch row, and the signed head
    (``LedgerTampered``)."""
    breaks = ledger.check(draft_id)
    if breaks:
        raise LedgerTampered(
            f"the ledger fails its integrity check: {breaks[0].text()}; nothing was sent "
            "(run `sortie ledger verify` for every break; restore the latest backup with `sortie ledger restore`)",
            details={"breaks": [b.text() for b in breaks[:20]]},
        )


def _approval_row(ledger: Ledger, approval_id: str) -> dict[str, Any]:
    def work(con: Any) -> dict[str, Any]:
        cur = con.execute(
            "SELECT approval_id, draft_id, version, plan_hash, approver, decision, comment, created_time, "
            "expires_time, statement_json, signature, key_id FROM approvals WHERE approval_id = ?",
            [approval_id],
        )
        names = [d[0] for d in cur.description]
        row = cur.fetchone()
        return {} if row is None else dict(zip(names, row))

    return ledger._read(work, {})


def mission_items_hash(plan: Plan, world: World) -> str:
    """sha256 over the wire form of every sortie's fence, mission, rally and ceiling parameters."""
    from planner.output.mission_items import mission_set
    from planner.output.mission_wire import to_wire

    sets = []
    for s in plan.sorties:
        ms = mission_set(plan, s, world)
        sets.append({
            "drone_id": ms.drone_id,
            "sortie_index": ms.sortie_index,
            "dialect": ms.dialect,
            "fence": [to_wire(i) for i in ms.fence],
            "mission": [to_wire(i) for i in ms.mission],
            "rally": [to_wire(i) for i in ms.rally],
            "params": dict(sorted(ms.params.items())),
        })
    text = json.dumps(sets, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seal_dispatch(
    ledger: Ledger,
    rec: DraftRecord,
    world: World,
    *,
    now: datetime,
    plan_file: Path | None = None,
    require_mode: str | None = None,
    approved_in: str | None = None,
) -> Seal:
    """Verify ledger, approval, plan and files for dispatching ``rec``; the seal, or a typed refusal.

    The approval is the one that covers the dispatch now (``flows.ledger.approvals.covering_approval``; with
    ``approved_in``, one its record says was made in that mode: ``ApprovalRequired`` otherwise); its signed
    statement must then be this authority's, made in ``require_mode`` (``ApprovalInvalid`` otherwise) — on a
    server's home ``server`` whatever the caller said."""
    what = f"the approval of {rec.draft_id} v{rec.version}"
    approval = ledger.valid_approval(rec.draft_id, rec.version, now=now, mode=approved_in)
    if require_mode is None and ledger.keys.mode == "server":
        require_mode = "server"  # an authority never dispatches on an approval signed in local mode
    checks: list[str] = []
    row = _approval_row(ledger, approval.approval_id)
    problem = approval_problem(ledger.keys, row) if row else "is missing"
    if problem:
        raise ApprovalInvalid(f"{what} {problem}; nothing was sent (approve the version again)")
    statement = json.loads(row["statement_json"])
    verify_statement(ledger.keys, statement, row["signature"], row["key_id"], what=what, require_mode=require_mode)
    if statement.get("world_hash") != rec.world_hash:
        raise ApprovalInvalid(f"{what} names world {str(statement.get('world_hash'))[:12]}…, not the draft's")
    checks.append(
        f"approval signed by key {row['key_id']} ({statement.get('mode')} mode, identity "
        f"{statement.get('identity_proof')}) names this version and plan hash"
    )
    if rec.plan is None:
        raise ApprovalInvalid(f"draft {rec.draft_id} v{rec.version} has no stored plan; nothing was sent")
    plan = plan_from_dict(rec.plan)
    recomputed = plan_hash(plan)
    if recomputed != rec.plan_hash or recomputed != statement.get("plan_hash"):
        raise ApprovalInvalid(
            f"the stored plan of {rec.draft_id} v{rec.version} hashes to {recomputed[:12]}…, but the approval "
            f"signed {str(statement.get('plan_hash'))[:12]}…: the plan was changed after approval; nothing was sent",
            details={"recomputed": recomputed, "approved": statement.get("plan_hash"), "stored": rec.plan_hash},
        )
    checks.append("plan hash recomputed from the stored plan equals the approved one")
    if plan_file is not None and plan_file.is_file():
        file_hash = hashlib.sha256(plan_file.read_bytes()).hexdigest()
        if file_hash != recomputed:
            raise ApprovalInvalid(
                f"the plan file {plan_file} hashes to {file_hash[:12]}…, not the approved plan "
                f"{recomputed[:12]}…: the files the approver reviewed were changed; nothing was sent",
                details={"file": str(plan_file), "file_hash": file_hash, "approved": recomputed},
            )
        checks.append("plan.json on disk is the approved plan")
    check_ledger(ledger, rec.draft_id)
    checks.append("ledger hash chain of this draft, its state replay and the signed head verify")
    items = mission_items_hash(plan, world)
    checks.append(f"mission items built from the verified plan (sha256 {items[:12]}…)")
    return Seal(plan=plan, items_hash=items, approval_id=approval.approval_id, statement=statement,
                checks=tuple(checks))
