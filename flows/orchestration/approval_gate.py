"""The approval gate of a run: wait for a decision on one draft version, then dispatch what was approved.

A run started from a deployment (a worker or ``serve()``) *suspends*: no
process is held, and on resume the flow starts again from the top. So
everything before the gate is either a cached task (the plan, keyed by flow
run id, so a resumed ``daily_patrol`` does not plan a second version) or a
read (the version's state), and the gate's waits have fixed keys
(``approval-1``, ``approval-2``, …): a wait that already fired hands back its
recorded input instead of waiting again. A run without a deployment (a
plain call of the flow) *pauses* in its process instead.

Before waiting, the gate asks the authority: a version already APPROVED (say
by ``sortie approve``) is dispatched without waiting; REJECTED, EXPIRED or
SUPERSEDED ends the run; a draft with blocking findings ends it as BLOCKED
(every approval would be refused: replan it). An input is validated again
with every constraint (``with_initial_data`` drops them), must name this
draft version and plan hash, and goes through the authority's own checks
(approver role, four-eyes, the decision deadline, a server's one-time code).
How an input is answered, remembered across restarts and bounded, and the
named state a run ends in: ``flows.orchestration.approval_wait``. The
deadline: ``flows.orchestration.expiry_flow``.

What happens after an approval — the dispatch, a busy drone, a refusal and
the end each is named by — is ``flows.orchestration.dispatch_step``. The end of
the wait retires the version's scheduled ``expire-draft`` run
(``flows.authority.waking.retire_expiry_runs``) and tells the notifications
(``notify.announce_end``).

Who dispatches: the run's ``dispatcher`` (``dispatched_by`` of
``dispatch_mission``) when named, else the approver. The authority says
whether that person's dispatch could pass (``Authority.dispatch_refusal``:
the embedded authority dispatches as them and checks their role, before the
run waits for a named dispatcher and at the form for an approver; a server
dispatches as the worker's token), so a run never records an approval it
cannot dispatch.

The window is wall-clock time from the first time the run reached the gate
(cached, so a restart does not extend it), and never later than the version's
own deadline when the authority stamps with this machine's clock
(``Authority.wall_deadline``); a fixed ``now`` (a reproducible demo) stamps
the ledger and the rules only.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from prefect import get_run_logger
from prefect.context import FlowRunContext

from flows.errors import Forbidden
from flows.orchestration.approval_input import approval_form
from flows.orchestration.approval_wait import MAX_REFUSED_INPUTS, Gate, GateOps, wait_for_decision
from flows.orchestration.dispatch_step import BUSY_RETRY_S, DISPATCHED_STATES, dispatch_approved
from flows.orchestration.expiry_flow import arm_timer, schedule_expiry_run
from flows.orchestration.mission_tasks import (
    authority_for,
    deadline_task,
    expire_task,
    read_draft_task,
    record_decision_task,
)
from flows.orchestration.notify import announce_end
from flows.orchestration.pending_board import refresh_pending_task
from planner.errors import SortieError

__all__ = ["gate_and_dispatch", "TERMINAL_STATES", "DISPATCHED_STATES", "SAFETY_MARGIN_S"]

#: Prefect's own pause timeout = our window + this; only fires if our expiry machinery is gone.
SAFETY_MARGIN_S = 600
TERMINAL_STATES = frozenset({"REJECTED", "EXPIRED", "SUPERSEDED", "WAITING_RESOURCE", "ABORTED", "SUCCEEDED", "INCOMPLETE",
                             "CANCELLED", "RECALLED"})


def _tag_run(draft_id: str, version: int) -> None:
    """Tag the current run ``draft:<id>`` / ``draft:<id>:v<n>`` / ``sortie-approval`` so the authority can find it
    to wake it, and can tell a cancel of it in the UI (``flows.authority.sweeper``) from any other run's."""
    from prefect import get_client

    from flows.authority.waking import APPROVAL_TAG, draft_tags

    ctx = FlowRunContext.get()
    if ctx is None or ctx.flow_run is None:
        return
    tags = sorted(set(ctx.flow_run.tags or []) | set(draft_tags(draft_id, version)) | {APPROVAL_TAG})
    with get_client(sync_client=True) as client:
        client.update_flow_run(ctx.flow_run.id, tags=tags)


def _deployed() -> bool:
    ctx = FlowRunContext.get()
    return bool(ctx and ctx.flow_run and ctx.flow_run.deployment_id)


def _run_id() -> str | None:
    ctx = FlowRunContext.get()
    return str(ctx.flow_run.id) if ctx and ctx.flow_run else None


def _deadline(window_s: int, draft_id: str, version: int, now: str | None) -> str:
    """The run's wall-clock deadline: its window from the gate, never past the version's own deadline where the
    authority stamps with this machine's clock (and the run with it: no fixed ``now``)."""
    mine = deadline_task(window_s)
    own = None if now is not None else authority_for("read-draft").wall_deadline(draft_id, version)
    if own is None:
        return mine
    return min(datetime.fromisoformat(mine), own).astimezone(timezone.utc).isoformat()


def _audit(draft_id: str, version: int) -> Any:
    """The audit writer of form inputs: the authority keeps what the run refused before asking it."""
    def write(command: str, actor: str, args: dict[str, Any], code: str, message: str | None) -> None:
        try:
            authority_for("approval-form").record_attempt(draft_id, version, command=command, actor=actor,
                                                          args={**args, "flow_run_id": _run_id()}, code=code,
                                                          message=message)
        except SortieError as exc:  # the answer in the run still stands; the ledger is the problem
            get_run_logger().warning("could not audit %s: %s", command, exc)

    return write


def _wait(draft_id: str, version: int, state: dict[str, Any], *, world: str | None, now: str | None,
          approval_window_s: int, dispatched_by: str | None, expiry_deployment: str, poll_interval_s: int,
          max_refused_inputs: int) -> dict[str, Any]:
    """Wait for a decision the authority accepts (or the end of the wait); what ``wait_for_decision`` returns."""
    deadline = _deadline(approval_window_s, draft_id, version, now)
    if expire_task(draft_id, version, deadline, now) == "EXPIRED":
        return {"outcome": "EXPIRED", "state": "EXPIRED"}
    _tag_run(draft_id, version)
    refresh_pending_task(now)  # the pending-approvals board shows this wait (flows.orchestration.pending_board)
    remaining_s = max(1, int((datetime.fromisoformat(deadline) - datetime.now(timezone.utc)).total_seconds()) + 1)
    suspend = _deployed() and schedule_expiry_run(expiry_deployment, draft_id, version, deadline, now)
    timer = None if suspend else arm_timer(draft_id, version, deadline, remaining_s, now)
    a = authority_for("approval-gate")
    relayed = a.mode == "server"
    form = approval_form(draft_id, version, state["plan_hash"] or "", request_text=state.get("request_text"),
                         extractor=state.get("extractor"), relayed=relayed, clarifications=state.get("clarifications"))
    gate = Gate(draft_id, version, state["plan_hash"] or "", deadline, bool(suspend), remaining_s + SAFETY_MARGIN_S,
                poll_interval_s, max(1, int(max_refused_inputs)), dispatched_by, relayed)
    ops = GateOps(
        state=lambda: expire_task(draft_id, version, deadline, now),
        record=lambda d: record_decision_task(d, world, now),
        strands=lambda user: a.dispatch_refusal(draft_id, version, user, approving=True) is not None,
        audit=_audit(draft_id, version),
    )
    try:
        out = wait_for_decision(gate, ops, form, get_run_logger())  # a suspend leaves here (Pause), no end yet
    finally:
        if timer is not None:
            timer.cancel()
    _wait_over(draft_id, version, str(out.get("outcome") or out.get("state")), now)
    return out


def _wait_over(draft_id: str, version: int, outcome: str, now: str | None) -> None:
    """Decided, expired or given up: no reminder, no expiry run, and the pending board shows it."""
    from flows.authority.waking import retire_expiry_runs

    announce_end(draft_id, version, outcome)
    retire_expiry_runs(draft_id, version)
    refresh_pending_task(now)


def gate_and_dispatch(
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
    busy_retry_s: float = BUSY_RETRY_S,
    follow_here: bool = False,
) -> dict[str, Any]:
    """Wait for a valid decision on this draft version, have it recorded, dispatch if approved (``follow_here``:
    the caller follows the flight; ``flows.orchestration.dispatch_step``).

    Every end is an outcome dict (``outcome``/``state``, a ``message``), never an exception a user caused: a
    refusal of the authority ends the run named by its code (``flows.orchestration.named_end``)."""
    try:
        return _gate_and_dispatch(draft_id, version, world=world, now=now, approval_window_s=approval_window_s,
                                  dry_run=dry_run, link=link, dispatched_by=dispatched_by,
                                  expiry_deployment=expiry_deployment, poll_interval_s=poll_interval_s,
                                  max_refused_inputs=max_refused_inputs, busy_retry_s=busy_retry_s,
                                  follow_here=follow_here)
    except SortieError as exc:
        get_run_logger().warning("%s: %s", exc.code, exc.message)
        return {"draft_id": draft_id, "version": version, "outcome": exc.code, "message": exc.message}


def _gate_and_dispatch(draft_id: str, version: int, *, world: str | None, now: str | None, approval_window_s: int,
                       dry_run: bool, link: str | dict[str, str] | None, dispatched_by: str | None,
                       expiry_deployment: str, poll_interval_s: int, max_refused_inputs: int,
                       busy_retry_s: float, follow_here: bool = False) -> dict[str, Any]:
    logger = get_run_logger()
    state = read_draft_task(draft_id, version)
    outcome: dict[str, Any] = {"draft_id": draft_id, "version": version, "plan_hash": state["plan_hash"]}
    approver: str | None = None
    if (refusal := authority_for("approval-gate").dispatch_refusal(draft_id, version, dispatched_by)) is not None:
        raise Forbidden(f"{refusal}; name a dispatcher who does (the run would wait for an approval it can never "
                        "dispatch)")

    if state["state"] == "DRAFT" and state["verdict"] == "block":
        # Every approval of a plan with blocking findings is refused: waiting would only run out the clock.
        logger.warning("draft %s v%s has blocking findings; replan it (see its artifact)", draft_id, version)
        return outcome | {"outcome": "BLOCKED", "state": "DRAFT", "message": "blocking findings: replan it"}
    if state["state"] == "DRAFT":
        decided = _wait(draft_id, version, state, world=world, now=now, approval_window_s=approval_window_s,
                        dispatched_by=dispatched_by, expiry_deployment=expiry_deployment,
                        poll_interval_s=poll_interval_s, max_refused_inputs=max_refused_inputs)
        if decided.get("outcome") in ("REFUSED", "EXPIRED"):
            return outcome | decided
        approver = decided.get("approver")
        state = read_draft_task(draft_id, version)

    if state["state"] in TERMINAL_STATES or state["state"] == "DRAFT":
        return outcome | {"outcome": state["state"], "state": state["state"]}
    if state["state"] == "APPROVED" or state["state"] in DISPATCHED_STATES:
        return outcome | dispatch_approved(draft_id, version, state["state"], dispatched_by or approver, world=world,
                                           now=now, dry_run=dry_run, link=link, expiry_deployment=expiry_deployment,
                                           busy_retry_s=busy_retry_s, follow_here=follow_here)
    return outcome | {"outcome": state["state"], "state": state["state"]}
