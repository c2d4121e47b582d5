"""The Prefect tasks of a mission's flows: each one a few lines asking the authority for one action.

Why a module of tasks: the plan, approval and dispatch flows
(``mission_flows``), the approval gate (``approval_gate``) and the expiry
(``expiry_flow``) share them. Every task asks ``flows.authority.choice.authority``
— the embedded authority on this machine's ledger, or ``sortie server`` when
``SORTIE_SERVER`` is set — and never asks which: a flow's ``world``/``now``
parameters reach the embedded authority, and a server refuses them
(``OVERRIDE_REFUSED``) like the CLI's options. A worker relays for people: the
requester of a plan, the approver of a form input (with their one-time code),
the run's dispatcher (``flows.authority.interface`` says what each means to a
server).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from planner.errors import SortieError

if TYPE_CHECKING:
    from flows.authority import Authority

__all__ = ["authority_for", "plan_draft_task", "publish_artifact_task", "read_draft_task", "deadline_task", "record_decision_task",
           "dispatch_task", "expire_task", "draft_state", "last_approver", "refusal", "EXPIRY_ACTOR"]

#: Who expires a version whose waiting run's deadline passed (embedded; a server acts as the worker's token).
EXPIRY_ACTOR = "prefect:expiry"


def authority_for(command: str, *, world: str | None = None, now: str | None = None) -> Authority:
    """The authority a task asks (``command`` names the task in a refusal)."""
    from flows.authority.choice import authority

    return authority(f"prefect {command}", world=world, now=now, caller="prefect")


def _per_run_key(context: Any, parameters: dict[str, Any]) -> str:
    """Cache a task once per flow run: a resumed (restarted) run gets the first result back."""
    return f"sortie-{context.task.name}-{context.task_run.flow_run_id}"


def draft_state(shown: dict[str, Any]) -> dict[str, Any]:
    """What a waiting run reads of a version: its state, plan, requester, request as written and who read it."""
    keys = ("draft_id", "version", "plan_hash", "verdict", "requested_by", "created_time", "tenant", "region_id",
            "request_text", "extractor", "clarifications", "request_id")
    return {k: shown.get(k) for k in keys} | {"state": shown["status"]}


def last_approver(shown: dict[str, Any]) -> str | None:
    """Who approved this version last (from ``show``'s notes), or None."""
    approvals = [a for a in (shown.get("notes") or {}).get("approvals", []) if a.get("decision") == "APPROVED"]
    return str(approvals[-1]["approver"]) if approvals else None


@task(name="plan-draft", cache_key_fn=_per_run_key, persist_result=True)
def plan_draft_task(text: str, region_id: str | None, area_geojson: dict[str, Any] | None, requested_by: str,
                    world: str | None, now: str | None, coverage_target: float | None = None) -> dict[str, Any]:
    """Extract, plan, evaluate and record a draft for the requester (cached per flow run: a restart does not
    replan). A request the authority kept open for clarification is an answer, not a crash:
    ``{"needs_clarification": details}`` (its request id and questions; ``flows.orchestration.clarify`` waits)."""
    try:
        return authority_for("plan-draft", world=world, now=now).plan(
            text, region_id=region_id, area=area_geojson, coverage_target=coverage_target, on_behalf_of=requested_by)
    except SortieError as exc:
        if exc.code == "NEEDS_CLARIFICATION" and isinstance(exc.details, dict) and exc.details.get("request_id"):
            return {"needs_clarification": exc.details}
        raise


@task(name="publish-draft-artifact", cache_key_fn=_per_run_key, persist_result=True)
def publish_artifact_task(summary: dict[str, Any]) -> str:
    """The markdown artifact ``draft-<id>-v<n>`` (once per flow run)."""
    from flows.orchestration.artifacts import publish_draft_artifact

    return publish_draft_artifact(summary)


@task(name="read-draft", cache_policy=NO_CACHE)
def read_draft_task(draft_id: str, version: int) -> dict[str, Any]:
    """The draft version's current state (never cached: the ledger moves while we wait)."""
    return draft_state(authority_for("read-draft").show(draft_id, int(version)))


@task(name="approval-deadline", cache_key_fn=_per_run_key, persist_result=True)
def deadline_task(window_s: int) -> str:
    """Wall-clock deadline, fixed the first time the run reaches the gate (cached across restarts)."""
    return (datetime.now(timezone.utc) + timedelta(seconds=int(window_s))).isoformat()


@task(name="record-decision", cache_policy=NO_CACHE)
def record_decision_task(decision: dict[str, Any], world: str | None, now: str | None) -> dict[str, Any]:
    """Record a form's approval or rejection through the authority: ``{"state"}``, or its refusal
    ``{"refused": code, "message"}`` (returned, not raised: a refusal is an answer, not a crash)."""
    from flows.authority import Relay

    try:
        a = authority_for(f"{decision['decision']} (approval form)", world=world, now=now)
        when = decision.get("submitted_at")
        relay = Relay(decision["approver"], decision.get("code"), datetime.fromisoformat(when) if when else None)
        if decision["decision"] == "approve":
            out = a.approve(decision["draft_id"], decision["version"], plan_hash=decision["plan_hash"],
                            comment=decision.get("comment") or "", relay=relay)
        else:
            out = a.reject(decision["draft_id"], decision["version"],
                           reason=decision.get("comment") or "rejected in the Prefect UI", relay=relay)
        return {"state": str(out["status"])}
    except SortieError as exc:
        return refusal(exc)


@task(name="dispatch", cache_policy=NO_CACHE)
def dispatch_task(draft_id: str, version: int, actor: str, world: str | None, now: str | None, dry_run: bool,
                  link: str | dict[str, str] | None) -> dict[str, Any]:
    """Dispatch through the authority: matching unexpired approval, rules on a fresh world, one claim ever.
    A refusal is returned as ``{"refused": code, "message", "details"}`` (an answer the run names, not a crash)."""
    try:
        return authority_for("dispatch", world=world, now=now).dispatch(draft_id, version, link=link or None,
                                                                         dry_run=dry_run, on_behalf_of=actor)
    except SortieError as exc:
        return refusal(exc)


def refusal(exc: SortieError) -> dict[str, Any]:
    """A refusal as a task's answer: the run branches on it and names its end; Prefect logs no traceback."""
    return {"refused": exc.code, "message": exc.message, "details": exc.details}


def expire_if_due(draft_id: str, version: int, *, deadline_utc: datetime, now: str | None = None) -> str:
    """Ask the authority to end the wait once the run's wall-clock deadline has passed; the state after.

    The embedded authority expires the version at that deadline (a conditional transition: an approval that
    won the race stands); a server judges on its own clock and policy. Either wakes the waiting run.
    """
    if datetime.now(timezone.utc) < deadline_utc:
        return str(authority_for("read-draft").show(draft_id, int(version))["status"])
    out = authority_for("expire-if-due", now=now).expire(draft_id, int(version), deadline=deadline_utc,
                                                         on_behalf_of=EXPIRY_ACTOR)
    return str(out["status"])


@task(name="expire-if-due", cache_policy=NO_CACHE)
def expire_task(draft_id: str, version: int, deadline_utc: str, now: str | None) -> str:
    return expire_if_due(draft_id, version, deadline_utc=datetime.fromisoformat(deadline_utc), now=now)
