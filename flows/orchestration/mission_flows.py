"""Prefect flows: plan a mission, wait for its approval, dispatch it; daily patrols.

The flows are thin (STYLE 10): each task is a few lines calling the same
service function the CLI calls, and the flow body only orders them and
branches on their results. The ledger is the source of truth for mission
state; Prefect's database only knows about runs.

    plan_mission     request → flows.usecases.service.plan_draft (extract, plan, evaluate,
                     record the draft) → markdown artifact ``draft-<id>-v<n>``
    dispatch_mission draft id + version → wait for approval → record it in the
                     ledger → flows.usecases.service.dispatch (rules again on a fresh
                     world; one dispatch per version, guarded by the ledger); a
                     draft cancelled meanwhile (``sortie cancel``) ends the run
                     CANCELLED
    daily_patrol     plan today's patrol of a region + artifact + the same wait;
                     never dispatches without an approval
    expire_draft     scheduled at a draft's deadline: DRAFT → EXPIRED in the
                     ledger (with its event), then wakes the waiting run

The approval gate
-----------------
A run started from a deployment (a worker or ``serve()``) *suspends*: no
process is held, and on resume the flow starts again from the top. So
everything before the gate is either a cached task (the plan, keyed by flow
run id, so a resumed ``daily_patrol`` does not plan a second version) or a
read (the ledger state), and the gate's waits have fixed keys
(``approval-1``, ``approval-2``, …): a wait that already fired hands back its
recorded input instead of waiting again. A run without a deployment (a
plain call of the flow) *pauses* in its process instead.

Before waiting, the gate asks the ledger: a version already APPROVED (say by
``sortie approve``) is dispatched without waiting; REJECTED, EXPIRED or
SUPERSEDED ends the run; a draft with blocking findings ends it as BLOCKED
(the ledger would refuse every approval: replan it). An input is validated again with every constraint
(``with_initial_data`` drops them), must name this draft version and plan
hash, and goes through the ledger's own checks (approver role, four-eyes,
the decision deadline). How an input is answered, remembered across restarts
and bounded, and the named state a run ends in (DISPATCHED, REJECTED,
EXPIRED, REFUSED, CANCELLED, …): ``flows.orchestration.approval_wait``.

Who dispatches: the run's ``dispatcher`` (``dispatched_by`` of
``dispatch_mission``) when named — checked for the dispatcher role before the
run waits — else the approver, and then an approval from someone without the
dispatcher role is refused at the form (it would never fly). A run never
records an approval it cannot dispatch.

Expiry
------
A timed-out Prefect pause always ends the run Failed (FACTS), so Prefect's
timeout is only a safety net here, set well past the approval window. The
window itself is enforced by the ledger (a decision after the version's
deadline is refused on every path and EXPIRES it) and made visible by us: at the deadline the draft goes DRAFT →
EXPIRED in the ledger (a conditional transition, so it loses cleanly to an
approval that came first) and the waiting run is resumed; it re-reads the
ledger, sees EXPIRED and ends as EXPIRED. The deadline is armed by a timer
thread for a paused run, and by a scheduled run of the ``expire-draft``
deployment for a suspended one (no process is left to hold a timer). The
window is wall-clock time from the first time the run reached the gate
(cached, so a restart does not extend it), and never later than the ledger's
deadline of the version when the run uses the wall clock; a fixed ``now``
(a reproducible demo) stamps the ledger and the rules only.
"""

from __future__ import annotations

import contextvars
import threading
from datetime import datetime, timedelta, timezone
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.context import FlowRunContext

from flows.orchestration.after_dispatch import monitor_deployment_for, start_monitor_task
from flows.orchestration.approval_input import approval_form
from flows.orchestration.approval_wait import MAX_REFUSED_INPUTS, Gate, GateOps, ended, wait_for_decision
from flows.orchestration.pending_board import refresh_pending_task
from flows.orchestration.artifacts import publish_draft_artifact, summary_dict
from flows.context import resolve_now, resolve_world_dir
from flows.orchestration.ledger_access import audit_attempt as _audit_attempt
from flows.orchestration.ledger_access import draft_state as _draft_state
from flows.orchestration.ledger_access import last_approver as _last_approver
from flows.orchestration.ledger_access import ledger as _ledger
from flows.orchestration.ledger_access import may_dispatch as _may_dispatch
from flows.orchestration.ledger_access import server as _server
from flows.orchestration.ledger_access import service as _service
from flows.orchestration.ledger_access import strands
from flows.orchestration.resume import draft_tags, resume_waiting_run
from planner.errors import Forbidden, InvalidArgument, SortieError

__all__ = [
    "plan_mission",
    "dispatch_mission",
    "daily_patrol",
    "expire_draft",
    "expire_if_due",
    "ended",
    "DEFAULT_APPROVAL_WINDOW_S",
    "DEFAULT_PATROL_TEXT",
    "EXPIRY_ACTOR",
    "TERMINAL_STATES",
]

#: How long an unapproved draft waits before it expires (the ledger's approval TTL, 30 min).
DEFAULT_APPROVAL_WINDOW_S = 1800
DEFAULT_PATROL_TEXT = "巡一遍消防通道"
EXPIRY_ACTOR = "prefect:expiry"
#: Prefect's own pause timeout = our window + this; only fires if our expiry machinery is gone.
SAFETY_MARGIN_S = 600
TERMINAL_STATES = frozenset({"REJECTED", "EXPIRED", "SUPERSEDED", "WAITING_RESOURCE", "ABORTED", "SUCCEEDED",
                             "CANCELLED", "RECALLED"})
DISPATCHED_STATES = frozenset({"DISPATCHED", "LAUNCHED", "IN_FLIGHT", "SUCCEEDED", "RECALLING", "RECALLED"})


# --------------------------------------------------------------------------- helpers


def _per_run_key(context: Any, parameters: dict[str, Any]) -> str:
    """Cache a task once per flow run: a resumed (restarted) run gets the first result back."""
    return f"sortie-{context.task.name}-{context.task_run.flow_run_id}"


def expire_if_due(draft_id: str, version: int, *, deadline_utc: datetime, now: datetime | None = None) -> str:
    """DRAFT → EXPIRED in the ledger if the deadline (wall clock) has passed; returns the state after.

    A conditional transition: if an approval or a rejection won the race, the
    ledger says ``Conflict`` and nothing changes; the current state is returned.
    """
    from planner.errors import Conflict

    wall = datetime.now(timezone.utc)
    if (srv := _server()) is not None:
        # The authority judges the deadline on its own clock and policy; the run's deadline only says when to ask.
        return srv.expire(draft_id, version) if wall >= deadline_utc else srv.draft_state(draft_id, version)["state"]
    state = _draft_state(draft_id, version)
    if state["state"] not in ("DRAFT", "WAITING_RESOURCE") or wall < deadline_utc:
        return state["state"]
    try:
        rec = _ledger().transition(
            draft_id,
            int(version),
            expected_state=state["state"],
            expected_row_version=state["row_version"],
            to_state="EXPIRED",
            actor=EXPIRY_ACTOR,
            reason=f"not approved by {deadline_utc.isoformat(timespec='seconds')}",
            now=now or resolve_now(None),
        )
        return rec.state
    except Conflict:
        return _draft_state(draft_id, version)["state"]


def _wake_expired(draft_id: str, version: int, plan_hash: str | None) -> None:
    """Resume a run waiting on an EXPIRED draft so it can end; its input is ignored (the ledger decides)."""
    resume_waiting_run(
        draft_id,
        version,
        plan_hash=plan_hash or "0" * 64,
        approver=EXPIRY_ACTOR,
        decision="reject",
        comment="the approval window closed; the draft is EXPIRED in the ledger",
    )


# --------------------------------------------------------------------------- tasks


@task(name="plan-draft", cache_key_fn=_per_run_key, persist_result=True)
def plan_draft_task(
    text: str,
    region_id: str | None,
    area_geojson: dict[str, Any] | None,
    requested_by: str,
    world: str | None,
    now: str | None,
    coverage_target: float | None = None,
) -> dict[str, Any]:
    """Extract, plan, evaluate and record a draft (cached per flow run: a restart does not replan)."""
    if (srv := _server()) is not None:
        srv.refuse_local_inputs(world, now)
        return srv.plan(text, region_id, area_geojson, requested_by, coverage_target)
    summary = _service().plan_draft(
        text=text,
        region_id=region_id,
        area_geojson=area_geojson,
        requested_by=requested_by,
        world_dir=resolve_world_dir(world),
        now=resolve_now(now),
        coverage_target=coverage_target,
    )
    return summary_dict(summary)


@task(name="publish-draft-artifact", cache_key_fn=_per_run_key, persist_result=True)
def publish_artifact_task(summary: dict[str, Any]) -> str:
    """The markdown artifact ``draft-<id>-v<n>`` (once per flow run)."""
    return publish_draft_artifact(summary)


@task(name="read-draft", cache_policy=NO_CACHE)
def read_draft_task(draft_id: str, version: int) -> dict[str, Any]:
    """The draft version's current ledger state (never cached: the ledger moves while we wait)."""
    return _draft_state(draft_id, version)


@task(name="approval-deadline", cache_key_fn=_per_run_key, persist_result=True)
def deadline_task(window_s: int) -> str:
    """Wall-clock deadline, fixed the first time the run reaches the gate (cached across restarts)."""
    return (datetime.now(timezone.utc) + timedelta(seconds=int(window_s))).isoformat()


@task(name="record-decision", cache_policy=NO_CACHE)
def record_decision_task(decision: dict[str, Any], world: str | None, now: str | None) -> dict[str, Any]:
    """Record an approval or a rejection through the service: ``{"state"}``, or the ledger's refusal
    ``{"refused": code, "message"}`` (returned, not raised: a refusal is an answer, not a crash)."""
    try:
        return {"state": _record_decision(decision, world, now)}
    except SortieError as exc:
        return {"refused": exc.code, "message": exc.message}


def _record_decision(decision: dict[str, Any], world: str | None, now: str | None) -> str:
    if (srv := _server()) is not None:
        srv.refuse_local_inputs(world, now)
        return srv.decide(decision)
    svc = _service()
    common = dict(world_dir=resolve_world_dir(world), now=resolve_now(now))
    if decision["decision"] == "approve":
        svc.approve(
            decision["draft_id"],
            version=decision["version"],
            plan_hash=decision["plan_hash"],
            approver=decision["approver"],
            comment=decision["comment"],
            **common,
        )
    else:
        svc.reject(
            decision["draft_id"],
            version=decision["version"],
            approver=decision["approver"],
            reason=decision["comment"] or "rejected in the Prefect UI",
            **common,
        )
    return _draft_state(decision["draft_id"], decision["version"])["state"]


@task(name="dispatch", cache_policy=NO_CACHE)
def dispatch_task(draft_id: str, version: int, actor: str, world: str | None, now: str | None, dry_run: bool, link: str | dict[str, str] | None) -> dict[str, Any]:
    """Dispatch through the service: matching unexpired approval, rules on a fresh world, one claim ever."""
    if (srv := _server()) is not None:
        srv.refuse_local_inputs(world, now)
        return srv.dispatch(draft_id, version, dry_run, link)
    kwargs: dict[str, Any] = dict(version=version, actor=actor, world_dir=resolve_world_dir(world), now=resolve_now(now), dry_run=dry_run)
    if link:
        kwargs["link"] = link
    result = _service().dispatch(draft_id, **kwargs)
    return summary_dict(result) if not isinstance(result, dict) else result


@task(name="expire-if-due", cache_policy=NO_CACHE)
def expire_task(draft_id: str, version: int, deadline_utc: str, now: str | None) -> str:
    return expire_if_due(draft_id, version, deadline_utc=datetime.fromisoformat(deadline_utc), now=resolve_now(now))


# --------------------------------------------------------------------------- the gate


def _tag_run(draft_id: str, version: int) -> None:
    """Tag the current run ``draft:<id>`` / ``draft:<id>:v<n>`` so ``sortie approve`` can find it."""
    from prefect import get_client

    ctx = FlowRunContext.get()
    if ctx is None or ctx.flow_run is None:
        return
    tags = sorted(set(ctx.flow_run.tags or []) | set(draft_tags(draft_id, version)))
    with get_client(sync_client=True) as client:
        client.update_flow_run(ctx.flow_run.id, tags=tags)


def _deployed() -> bool:
    ctx = FlowRunContext.get()
    return bool(ctx and ctx.flow_run and ctx.flow_run.deployment_id)


def _schedule_expiry_run(deployment: str, draft_id: str, version: int, deadline: str, now: str | None) -> bool:
    """A scheduled run of ``expire-draft`` at the deadline; False if that deployment does not exist."""
    from prefect.deployments import run_deployment

    logger = get_run_logger()
    try:
        run_deployment(
            deployment,
            parameters={"draft_id": draft_id, "version": version, "deadline_utc": deadline, "now": now},
            scheduled_time=datetime.fromisoformat(deadline),
            timeout=0,
            as_subflow=False,
            idempotency_key=f"expire-{draft_id}-v{version}",
            tags=draft_tags(draft_id, version)[:1] + ["sortie-expiry"],
        )
        return True
    except Exception as exc:  # noqa: BLE001 - missing deployment: fall back to an in-process timer
        logger.warning("cannot schedule %s (%s); waiting in this process instead", deployment, exc)
        return False


def _deadline(window_s: int, state: dict[str, Any], now: str | None) -> str:
    """The run's wall-clock deadline: its window from the gate, never past the ledger's own deadline of the
    version (when the run stamps with the wall clock, the frame the ledger judges in)."""
    from flows.ledger.approvals import APPROVAL_TTL

    mine = deadline_task(window_s)
    if now is not None or _server() is not None or not state.get("created_time"):
        return mine
    ledger = datetime.fromisoformat(state["created_time"]) + APPROVAL_TTL
    return min(datetime.fromisoformat(mine), ledger).astimezone(timezone.utc).isoformat()


def _gate_and_dispatch(
    draft_id: str,
    version: int,
    *,
    world: str | None,
    now: str | None,
    approval_window_s: int,
    dry_run: bool,
    link: str | dict[str, str] | None,
    dispatched_by: str | None,
    expiry_deployment: str,
    poll_interval_s: int,
    max_refused_inputs: int = MAX_REFUSED_INPUTS,
) -> dict[str, Any]:
    """Wait for a valid decision on this draft version, record it, dispatch if approved."""
    logger = get_run_logger()
    state = read_draft_task(draft_id, version)
    outcome: dict[str, Any] = {"draft_id": draft_id, "version": version, "plan_hash": state["plan_hash"]}
    approver: str | None = None
    local = _server() is None
    if dispatched_by and local and not _may_dispatch(draft_id, version, dispatched_by, world):
        raise Forbidden(f"{dispatched_by} does not hold the dispatcher role for draft {draft_id}; name a dispatcher "
                        "who does (the run would wait for an approval it can never dispatch)")

    if state["state"] == "DRAFT" and state["verdict"] == "block":
        # The ledger refuses to approve a plan with blocking findings: waiting would only run out the clock.
        logger.warning("draft %s v%s has blocking findings; replan it (see its artifact)", draft_id, version)
        return outcome | {"outcome": "BLOCKED", "state": "DRAFT", "message": "blocking findings: replan it"}
    if state["state"] == "DRAFT":
        deadline = _deadline(approval_window_s, state, now)
        if expire_task(draft_id, version, deadline, now) == "EXPIRED":
            return outcome | {"outcome": "EXPIRED", "state": "EXPIRED"}
        _tag_run(draft_id, version)
        refresh_pending_task(now)  # the pending-approvals board shows this wait (flows.orchestration.pending_board)
        remaining_s = max(1, int((datetime.fromisoformat(deadline) - datetime.now(timezone.utc)).total_seconds()) + 1)
        suspend = _deployed() and _schedule_expiry_run(expiry_deployment, draft_id, version, deadline, now)
        timer: threading.Timer | None = None
        if not suspend:
            def _on_deadline() -> None:
                if expire_if_due(draft_id, version, deadline_utc=datetime.fromisoformat(deadline), now=resolve_now(now)) == "EXPIRED":
                    _wake_expired(draft_id, version, state["plan_hash"])

            # A copy of this context, so the timer thread talks to the same Prefect API as the run.
            timer = threading.Timer(remaining_s, contextvars.copy_context().run, args=(_on_deadline,))
            timer.daemon = True
            timer.start()
        form = approval_form(draft_id, version, state["plan_hash"] or "", request_text=state.get("request_text"),
                             extractor=state.get("extractor"))
        gate = Gate(draft_id, version, state["plan_hash"] or "", deadline, bool(suspend), remaining_s + SAFETY_MARGIN_S,
                    poll_interval_s, max(1, int(max_refused_inputs)), dispatched_by, not local)
        ops = GateOps(
            state=lambda: expire_task(draft_id, version, deadline, now),
            record=lambda d: record_decision_task(d, world, now),
            strands=lambda user: strands(draft_id, version, user, world),
            audit=_audit_attempt(draft_id, version),
        )
        try:
            decided = wait_for_decision(gate, ops, form, logger)
        finally:
            if timer is not None:
                timer.cancel()
            refresh_pending_task(now)  # decided, expired or given up: the board shows it
        if decided.get("outcome") == "REFUSED":
            return outcome | decided
        approver = decided.get("approver")
        state = read_draft_task(draft_id, version)

    if state["state"] in TERMINAL_STATES or state["state"] == "DRAFT":
        return outcome | {"outcome": state["state"], "state": state["state"]}
    if state["state"] == "APPROVED" or state["state"] in DISPATCHED_STATES:
        actor = dispatched_by or approver or _last_approver(draft_id, version)
        if local and state["state"] == "APPROVED" and not _may_dispatch(draft_id, version, actor, world):
            return outcome | {"outcome": "NOT_DISPATCHED", "state": "APPROVED", "message": (
                f"approved, but {actor} does not hold the dispatcher role and the run names no dispatcher: "
                f"sortie dispatch {draft_id} --version {version} --as <a dispatcher>")}
        try:
            result = dispatch_task(draft_id, version, actor, world, now, dry_run, link)
        except SortieError:
            if read_draft_task(draft_id, version)["state"] != "CANCELLED":
                raise
            return outcome | {"outcome": "CANCELLED", "state": "CANCELLED"}  # cancelled between the gate and the claim
        final = read_draft_task(draft_id, version)["state"]
        if final in DISPATCHED_STATES:  # monitor-mission launches it at the planned start and follows the flight
            start_monitor_task(draft_id, version, deployment=monitor_deployment_for(expiry_deployment), now=now,
                               dry_run=dry_run, launch_as=actor if final == "DISPATCHED" else None)
        return outcome | {"outcome": "DISPATCHED" if final in DISPATCHED_STATES else final, "state": final, "dispatch": result}
    return outcome | {"outcome": state["state"], "state": state["state"]}


# --------------------------------------------------------------------------- flows


@flow(name="plan-mission", log_prints=True)
def plan_mission(
    text: str,
    requested_by: str,
    region_id: str | None = None,
    area_geojson: dict[str, Any] | None = None,
    world: str | None = None,
    now: str | None = None,
    coverage_target: float | None = None,
) -> dict[str, Any]:
    """Plan a request into a recorded draft and publish its artifact ``draft-<id>-v<n>``.

    ``coverage_target`` (area surveys, 0.5-1.0) is the operator's; the default is the planner's 0.99.
    """
    if (region_id is None) == (area_geojson is None):
        raise InvalidArgument("give exactly one of region_id and area_geojson")
    if coverage_target is not None:
        from planner.job import check_coverage_target

        check_coverage_target(coverage_target)  # a bad parameter fails the run before any task
    summary = plan_draft_task(text, region_id, area_geojson, requested_by, world, now, coverage_target)
    key = publish_artifact_task(summary)
    return {k: summary.get(k) for k in ("draft_id", "version", "plan_hash", "status")} | {"artifact_key": key}


@flow(name="dispatch-mission", log_prints=True, persist_result=True)
def dispatch_mission(
    draft_id: str,
    version: int,
    world: str | None = None,
    now: str | None = None,
    approval_window_s: int = DEFAULT_APPROVAL_WINDOW_S,
    dry_run: bool = False,
    link: str | dict[str, str] | None = None,
    dispatched_by: str | None = None,
    expiry_deployment: str = "expire-draft/sortie",
    poll_interval_s: int = 10,
    max_refused_inputs: int = MAX_REFUSED_INPUTS,
) -> Any:
    """Wait for the approval of one draft version, then dispatch it (exactly once, via the ledger).

    ``now`` (ISO 8601 with offset) fixes the time for ledger stamps and rules (a
    reproducible demo); the approval window is wall-clock seconds regardless.
    ``dispatched_by`` must hold the dispatcher role (default: the approver, who then must hold it too).
    ``link`` overrides the drones' MAVLink links (one string, or per drone id).
    ``dry_run`` checks everything and sends nothing. The run ends in a state named after the outcome
    (``approval_wait.ended``; call with ``return_state=True`` to read one that is not Completed).
    """
    if int(version) < 1:
        raise InvalidArgument("version must be ≥ 1")
    return ended(_gate_and_dispatch(
        draft_id, int(version), world=world, now=now, approval_window_s=approval_window_s, dry_run=dry_run,
        link=link, dispatched_by=dispatched_by, expiry_deployment=expiry_deployment, poll_interval_s=poll_interval_s,
        max_refused_inputs=max_refused_inputs,
    ))


@flow(name="daily-patrol", log_prints=True, persist_result=True)
def daily_patrol(
    region_id: str,
    requested_by: str = "li.wei",
    text: str = DEFAULT_PATROL_TEXT,
    world: str | None = None,
    now: str | None = None,
    approval_window_s: int = DEFAULT_APPROVAL_WINDOW_S,
    dry_run: bool = False,
    link: str | dict[str, str] | None = None,
    expiry_deployment: str = "expire-draft/sortie",
    poll_interval_s: int = 10,
    dispatcher: str | None = None,
    max_refused_inputs: int = MAX_REFUSED_INPUTS,
) -> Any:
    """Plan today's patrol of a region, publish the draft, wait for approval; dispatch only if approved.

    ``dispatcher`` names who dispatches the approved patrol (checked for the role before the run waits);
    without one, the approver dispatches and an approval from someone without the dispatcher role is refused.
    """
    summary = plan_draft_task(text, region_id, None, requested_by, world, now)
    key = publish_artifact_task(summary)
    if summary.get("plan_hash") is None:
        return ended({k: summary.get(k) for k in ("draft_id", "version", "status")}
                     | {"artifact_key": key, "outcome": summary.get("status")})
    result = _gate_and_dispatch(
        summary["draft_id"], int(summary["version"]), world=world, now=now, approval_window_s=approval_window_s,
        dry_run=dry_run, link=link, dispatched_by=dispatcher, expiry_deployment=expiry_deployment,
        poll_interval_s=poll_interval_s, max_refused_inputs=max_refused_inputs,
    )
    return ended(result | {"artifact_key": key})


@flow(name="expire-draft")
def expire_draft(draft_id: str, version: int, deadline_utc: str, now: str | None = None) -> str:
    """At a draft's deadline: expire it if still unapproved, then wake the run waiting on it."""
    state = expire_task(draft_id, version, deadline_utc, now)
    if state == "EXPIRED":
        _wake_expired(draft_id, version, read_draft_task(draft_id, version)["plan_hash"])
    return state

