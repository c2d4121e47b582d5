"""The ``mission`` and ``daily-patrol`` flows: the whole life of one request as one Prefect run (issue 39's "one run
per mission"); a daily patrol is the same run on a schedule, for its region's patrol text.

Why one run: with ``plan-mission`` then ``dispatch-mission`` then ``monitor-mission`` an operator copied a draft id
from one run into the next and followed a flight through runs linked only by tags. Here one run does, in order:

    plan        the authority plans and records the draft (``mission_tasks.plan_draft_task``); a request kept open
                for clarification waits on the run's own form with its questions (``clarify``) and is planned with
                the answers — or the run ends EXPIRED / REFUSED
    artifact    ``draft-<id>-v<n>``: sorties, findings, map, which drones could fly it
    approval    the run waits on its approval form (``approval_gate``: the same checks, the same deadline and
                expiry run as ``dispatch-mission``); REJECTED / EXPIRED / CANCELLED end it
    dispatch    once, via the ledger (``dispatch_step``; a busy drone waits while the approval is valid)
    launch      at the planned start, as the dispatcher (the approver unless ``dispatcher`` names one)
    follow      every sortie to the draft's end (``Authority.monitor``), then the report ``report-<id>-v<n>``

The run ends named after the mission (``named_end``): SUCCEEDED, RECALLED, ABORTED, INCOMPLETE …, or the step that
stopped it (EXPIRED, REJECTED, BLOCKED, PREFLIGHT_FAILED …). Recall, pause and cancel act on the same draft: the
page (``/ops``), the CLI or the control deployments; the run follows what they did and ends named by it.
``plan-mission``/``dispatch-mission`` stay for a CLI-first user who plans in one place and approves in another.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from prefect import flow

from flows.orchestration.approval_gate import gate_and_dispatch
from flows.orchestration.approval_wait import MAX_REFUSED_INPUTS
from flows.orchestration.cancel_hook import withdraw_on_cancel
from flows.orchestration.clarify import DEFAULT_CLARIFICATION_WINDOW_S
from flows.orchestration.dispatch_step import BUSY_RETRY_S
from flows.orchestration.mission_flows import (DEFAULT_APPROVAL_WINDOW_S, DEFAULT_PATROL_TEXT, check_request,
                                              planned_request, unplanned_end)
from flows.orchestration.mission_tasks import publish_artifact_task
from flows.orchestration.monitor_flow import follow_and_report
from flows.orchestration.named_end import ended, name_the_end

__all__ = ["mission", "daily_patrol", "run_mission", "DEFAULT_FLIGHT_WATCH_S"]

#: The longest the run follows one mission's flights (all sorties and turnarounds), wall clock.
DEFAULT_FLIGHT_WATCH_S = 4 * 3600.0


def run_mission(text: str, requested_by: str, region_id: str | None, area_geojson: dict[str, Any] | None, *,
                dispatcher: str | None, world: str | None, now: str | None, coverage_target: float | None,
                link: str | dict[str, str] | None, approval_window_s: int, clarification_window_s: int,
                expiry_deployment: str, poll_interval_s: int, max_refused_inputs: int, busy_retry_s: float,
                watch_s: float, dry_run: bool = False) -> Any:
    """The body of a one-run mission (``mission`` and ``daily_patrol``): plan, clarify, approve, dispatch, launch,
    follow, report; the outcome ``ended`` names. ``dry_run`` checks everything at dispatch and sends nothing (the
    run then ends DRY_RUN, before any launch)."""
    check_request(region_id, area_geojson, coverage_target)
    summary = planned_request(text, region_id, area_geojson, requested_by, world, now, coverage_target,
                              window_s=clarification_window_s, poll_interval_s=poll_interval_s,
                              max_refused=max_refused_inputs)
    if summary.get("outcome"):
        return ended(summary)
    key = publish_artifact_task(summary)
    if (unplanned := unplanned_end(summary, key)) is not None:
        return ended(unplanned)
    draft_id, version = str(summary["draft_id"]), int(summary["version"])
    gate = gate_and_dispatch(draft_id, version, world=world, now=now, approval_window_s=approval_window_s,
                             dry_run=dry_run, link=link, dispatched_by=dispatcher, expiry_deployment=expiry_deployment,
                             poll_interval_s=poll_interval_s, max_refused_inputs=max_refused_inputs,
                             busy_retry_s=busy_retry_s, follow_here=True)
    if gate.get("outcome") != "DISPATCHED":
        return ended(gate | {"artifact_key": key})
    flown = follow_and_report(draft_id, version, link=link, actor="monitor",
                              now=datetime.fromisoformat(now) if now else None, timeout_s=watch_s,
                              launch_as=gate.get("launch_as"))
    return ended(flown | {"artifact_key": key, "report_artifact_key": flown.get("artifact_key")})


@flow(name="mission", log_prints=True, persist_result=True, on_completion=[name_the_end],
      on_cancellation=[withdraw_on_cancel])
def mission(
    text: str,
    requested_by: str,
    region_id: str | None = None,
    area_geojson: dict[str, Any] | None = None,
    dispatcher: str | None = None,
    world: str | None = None,
    now: str | None = None,
    coverage_target: float | None = None,
    link: str | dict[str, str] | None = None,
    approval_window_s: int = DEFAULT_APPROVAL_WINDOW_S,
    clarification_window_s: int = DEFAULT_CLARIFICATION_WINDOW_S,
    expiry_deployment: str = "expire-draft/sortie",
    poll_interval_s: int = 10,
    max_refused_inputs: int = MAX_REFUSED_INPUTS,
    busy_retry_s: float = BUSY_RETRY_S,
    watch_s: float = DEFAULT_FLIGHT_WATCH_S,
) -> Any:
    """Plan the request, ask its clarification and its approval on this run, dispatch, launch at the planned start,
    follow every sortie and publish the report — one run, ended named after the mission."""
    return run_mission(text, requested_by, region_id, area_geojson, dispatcher=dispatcher, world=world, now=now,
                       coverage_target=coverage_target, link=link, approval_window_s=approval_window_s,
                       clarification_window_s=clarification_window_s, expiry_deployment=expiry_deployment,
                       poll_interval_s=poll_interval_s, max_refused_inputs=max_refused_inputs,
                       busy_retry_s=busy_retry_s, watch_s=watch_s)


@flow(name="daily-patrol", log_prints=True, persist_result=True, on_completion=[name_the_end],
      on_cancellation=[withdraw_on_cancel])
def daily_patrol(
    region_id: str,
    requested_by: str = "li.wei",
    text: str = DEFAULT_PATROL_TEXT,
    dispatcher: str | None = None,
    world: str | None = None,
    now: str | None = None,
    link: str | dict[str, str] | None = None,
    approval_window_s: int = DEFAULT_APPROVAL_WINDOW_S,
    clarification_window_s: int = DEFAULT_CLARIFICATION_WINDOW_S,
    expiry_deployment: str = "expire-draft/sortie",
    poll_interval_s: int = 10,
    max_refused_inputs: int = MAX_REFUSED_INPUTS,
    busy_retry_s: float = BUSY_RETRY_S,
    watch_s: float = DEFAULT_FLIGHT_WATCH_S,
    dry_run: bool = False,
) -> Any:
    """Today's patrol of a region as one mission run (the ``mission`` path on a schedule): plan, its clarification
    form when the text asks, the approval form, dispatch, launch at the planned start, follow, report.

    ``dispatcher`` names who dispatches and launches the approved patrol (checked for the role before the run
    waits); without one, the approver does, and an approval from someone without the dispatcher role is refused.
    Never dispatches without an approval. ``dry_run``: check everything at dispatch, send nothing (ends DRY_RUN).
    """
    return run_mission(text, requested_by, region_id, None, dispatcher=dispatcher, world=world, now=now,
                       coverage_target=None, link=link, approval_window_s=approval_window_s,
                       clarification_window_s=clarification_window_s, expiry_deployment=expiry_deployment,
                       poll_interval_s=poll_interval_s, max_refused_inputs=max_refused_inputs,
                       busy_retry_s=busy_retry_s, watch_s=watch_s, dry_run=dry_run)
