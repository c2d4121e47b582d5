"""How the flows reach the authority: the local ledger file, or ``sortie server`` (``SORTIE_SERVER``).

Why its own module: every task asks the same questions (the state of a
version, who may dispatch it, who approved it, where an attempt is audited)
and the answer depends only on the mode, never on the flow asking.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from prefect import get_run_logger
from prefect.context import FlowRunContext

from flows.context import resolve_world_dir
from planner.errors import InvalidArgument, SortieError

__all__ = ["service", "ledger", "server", "draft_state", "may_dispatch", "strands", "audit_attempt",
           "last_approver"]


def service() -> Any:
    """flows.usecases.service, imported late so importing the flows stays cheap."""
    from flows.usecases import service

    return service


def ledger() -> Any:
    from flows.ledger import open_ledger

    return open_ledger()


def server() -> Any:
    """``flows.client.flowops`` when the flows are clients of ``sortie server`` (``SORTIE_SERVER``), else None."""
    from flows.client import flowops

    return flowops if flowops.server_mode() else None


def draft_state(draft_id: str, version: int) -> dict[str, Any]:
    if (srv := server()) is not None:
        return srv.draft_state(draft_id, version)
    rec = ledger().get_draft(draft_id, int(version))
    return {
        "draft_id": rec.draft_id,
        "version": rec.version,
        "state": rec.state,
        "row_version": rec.row_version,
        "plan_hash": rec.plan_hash,
        "verdict": rec.verdict,
        "requested_by": rec.requested_by,
        "created_time": rec.created_time,
        "tenant": rec.tenant,
        "region_id": rec.region_id,
        "request_text": rec.request_text,
        "extractor": (rec.intent or {}).get("extractor"),
    }


def may_dispatch(draft_id: str, version: int, user: str, world: str | None, role: str = "dispatcher") -> bool:
    """Whether ``user`` holds the dispatcher (or another) role for this version (local mode; the server decides
    its own)."""
    from flows.usecases.dispatching import holds_role

    return holds_role(draft_id, version, user, role, world_dir=resolve_world_dir(world) if world else None,
                      ledger=ledger())


def strands(draft_id: str, version: int, user: str, world: str | None) -> bool:
    """Whether an approval by ``user`` would be stranded: they may approve this version but not dispatch it.
    (Someone who may not approve at all is left to the ledger, which says why.)"""
    return may_dispatch(draft_id, version, user, world, "approver") and not may_dispatch(draft_id, version, user, world)


def audit_attempt(draft_id: str, version: int) -> Any:
    """The audit writer of form inputs: the ledger's own (local mode); with a server, the server audits."""
    def write(command: str, actor: str, args: dict[str, Any], code: str, message: str | None) -> None:
        if server() is not None:
            return
        from flows.usecases.decisions import record_attempt

        ctx = FlowRunContext.get()
        run = str(ctx.flow_run.id) if ctx and ctx.flow_run else None
        try:
            record_attempt(draft_id, version, command=command, actor=actor, args={**args, "flow_run_id": run},
                           started=datetime.now(timezone.utc), code=code, message=message, ledger=ledger())
        except SortieError as exc:  # the answer in the run still stands; the ledger is the problem
            get_run_logger().warning("could not audit %s: %s", command, exc)

    return write


def last_approver(draft_id: str, version: int) -> str:
    if (srv := server()) is not None:
        return srv.last_approver(draft_id, version)
    approvals = [a for a in ledger().approvals(draft_id, version) if a.decision == "APPROVED"]
    if not approvals:
        raise InvalidArgument(f"draft {draft_id} v{version} has no approval to dispatch under")
    return approvals[-1].approver
