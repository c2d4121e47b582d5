"""Prefect flows of a mission in steps: plan it, wait for its approval, dispatch it (the one-run path and the daily
patrols are ``mission_run``'s).

The flows are thin (STYLE 10): the flow body only orders tasks and branches
on their results; each task asks the authority for one action
(``mission_tasks``: ``flows.authority``, embedded or ``sortie server``, never
asked which). The ledger is the source of truth for mission state; Prefect's
database only knows about runs.

    plan_mission     request → the authority plans and records the draft →
                     markdown artifact ``draft-<id>-v<n>``; a request kept open
                     for clarification waits on a form with its questions first
                     (``clarify``: answered, planned, or the run ends EXPIRED)
    dispatch_mission draft id + version → the approval gate (``approval_gate``:
                     wait for a decision the authority accepts) → the
                     authority dispatches (rules again on a fresh world; one
                     dispatch per version, guarded by the ledger); a draft
                     cancelled meanwhile (``sortie cancel``) ends the run CANCELLED
    (``mission_run.mission`` and ``mission_run.daily_patrol``: all of it and the flight as one run; these stay
    for a CLI-first user who plans in one place and approves in another)
    expire_draft     (``expiry_flow``) scheduled at a draft's deadline: the
                     authority expires it and wakes the waiting run

A run ends in a state named after the outcome (DISPATCHED, REJECTED, EXPIRED,
REFUSED, CANCELLED, DEVICE_BUSY, BLOCKED, …), with no traceback
(``flows.orchestration.named_end``: the flow returns the outcome dict and its
``on_completion`` hook names the end). Cancelling a waiting run in the Prefect
UI cancels the version in the ledger (``flows.orchestration.cancel_hook``, and
the authority's sweeper for a suspended run).
"""

from __future__ import annotations

from typing import Any

from prefect import flow

from flows.orchestration.approval_gate import gate_and_dispatch
from flows.orchestration.approval_wait import MAX_REFUSED_INPUTS
from flows.orchestration.clarify import DEFAULT_CLARIFICATION_WINDOW_S
from flows.orchestration.cancel_hook import withdraw_on_cancel
from flows.orchestration.dispatch_step import BUSY_RETRY_S
from flows.orchestration.mission_tasks import plan_draft_task, publish_artifact_task
from flows.orchestration.named_end import ended, name_the_end
from planner.errors import InvalidArgument

__all__ = ["plan_mission", "dispatch_mission", "planned_request", "check_request", "unplanned_end",
           "DEFAULT_APPROVAL_WINDOW_S", "DEFAULT_PATROL_TEXT"]

#: How long an unapproved draft waits before it expires (the ledger's approval TTL, 30 min).
DEFAULT_APPROVAL_WINDOW_S = 1800
DEFAULT_PATROL_TEXT = "巡一遍消防通道"


# --------------------------------------------------------------------------- flows


def planned_request(text: str, region_id: str | None, area_geojson: dict[str, Any] | None, requested_by: str,
             world: str | None, now: str | None, coverage_target: float | None, *, window_s: int,
             poll_interval_s: int, max_refused: int) -> dict[str, Any]:
    """The recorded draft of a request; a request kept open for clarification waits for its answers first
    (``flows.orchestration.clarify``), which may end the run instead (an outcome dict: EXPIRED, REFUSED)."""
    summary = plan_draft_task(text, region_id, area_geojson, requested_by, world, now, coverage_target)
    if "needs_clarification" not in summary:
        return summary
    from flows.orchestration.clarify import clarify

    return clarify(summary["needs_clarification"], world=world, now=now, window_s=window_s,
                   poll_interval_s=poll_interval_s, max_refused=max_refused)


def check_request(region_id: str | None, area_geojson: dict[str, Any] | None, coverage_target: float | None) -> None:
    """A run's request parameters, checked before any task: exactly one of region and area, a valid coverage."""
    if (region_id is None) == (area_geojson is None):
        raise InvalidArgument("give exactly one of region_id and area_geojson")
    if coverage_target is not None:
        from planner.job import check_coverage_target

        check_coverage_target(coverage_target)


def unplanned_end(summary: dict[str, Any], key: str | None) -> dict[str, Any] | None:
    """The outcome of a draft recorded without a plan (nothing to approve: its status names why), else None."""
    if summary.get("plan_hash") is not None:
        return None
    return ({k: summary.get(k) for k in ("draft_id", "version", "status")}
            | {"artifact_key": key, "outcome": summary.get("status")})


@flow(name="plan-mission", log_prints=True, persist_result=True, on_completion=[name_the_end])
def plan_mission(
    text: str,
    requested_by: str,
    region_id: str | None = None,
    area_geojson: dict[str, Any] | None = None,
    world: str | None = None,
    now: str | None = None,
    coverage_target: float | None = None,
    clarification_window_s: int = DEFAULT_CLARIFICATION_WINDOW_S,
    poll_interval_s: int = 10,
    max_refused_inputs: int = MAX_REFUSED_INPUTS,
) -> dict[str, Any]:
    """Plan a request into a recorded draft and publish its artifact ``draft-<id>-v<n>``.

    ``coverage_target`` (area surveys, 0.5-1.0) is the operator's; the default is the planner's 0.99. A request
    that needs clarification waits on a form with its questions (``clarification_window_s``, wall clock) and is
    planned with the answers; unanswered, the run ends EXPIRED (REFUSED after ``max_refused_inputs`` refused inputs).
    """
    check_request(region_id, area_geojson, coverage_target)
    summary = planned_request(text, region_id, area_geojson, requested_by, world, now, coverage_target,
                       window_s=clarification_window_s, poll_interval_s=poll_interval_s, max_refused=max_refused_inputs)
    if summary.get("outcome"):
        return ended(summary)
    key = publish_artifact_task(summary)
    return {k: summary.get(k) for k in ("draft_id", "version", "plan_hash", "status")} | {"artifact_key": key}


@flow(name="dispatch-mission", log_prints=True, persist_result=True, on_completion=[name_the_end],
      on_cancellation=[withdraw_on_cancel])
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
    busy_retry_s: float = BUSY_RETRY_S,
) -> Any:
    """Wait for the approval of one draft version, then dispatch it (exactly once, via the ledger).

    ``now`` (ISO 8601 with offset) fixes the time for ledger stamps and rules (a
    reproducible demo); the approval window is wall-clock seconds regardless.
    ``dispatched_by`` must hold the dispatcher role (default: the approver, who then must hold it too).
    ``link`` overrides the drones' MAVLink links (one string, or per drone id).
    ``dry_run`` checks everything and sends nothing. ``busy_retry_s``: how often a dispatch is asked again while
    the drone flies another mission (while the approval is valid). The run ends in a state named after the outcome
    (``named_end``); it returns the outcome dict (``return_state=True`` gives the named state, whose
    ``result(raise_on_failure=False)`` is the same dict).
    """
    if int(version) < 1:
        raise InvalidArgument("version must be ≥ 1")
    return ended(gate_and_dispatch(
        draft_id, int(version), world=world, now=now, approval_window_s=approval_window_s, dry_run=dry_run,
        link=link, dispatched_by=dispatched_by, expiry_deployment=expiry_deployment, poll_interval_s=poll_interval_s,
        max_refused_inputs=max_refused_inputs, busy_retry_s=busy_retry_s,
    ))
