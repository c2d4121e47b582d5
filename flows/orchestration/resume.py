"""Resume the Prefect run that waits for a draft's approval, from any process.

``sortie approve`` records the approval in the ledger (the source of truth)
and then calls :func:`resume_waiting_run`, so a ``dispatch_mission`` or
``daily_patrol`` run waiting on that draft version wakes up at once instead
of waiting for someone to click Resume in the UI. Prefect has no CLI command
for this; ``resume_flow_run(flow_run_id, run_input=...)`` works from any
process and the server validates the input against the form's schema.

A waiting run is found by its tag ``draft:<id>:v<version>`` (the flow tags
itself before it waits) and a Paused state (Prefect's Suspended is a Paused
state by type). Nothing here may start Prefect's ephemeral server (~8 s,
FACTS): without a ``PREFECT_API_URL`` this is a no-op. The URL may be in the
environment or only in the active Prefect profile (``prefect config set
PREFECT_API_URL=…`` writes the profile, FACTS): it is read through Prefect's
settings, which only get imported when a profile file mentions it.
"""

from __future__ import annotations

import logging
from typing import Any
from uuid import UUID

__all__ = ["draft_tags", "find_waiting_runs", "resume_waiting_run", "wake_cancelled_run", "prefect_api_url"]

from flows.orchestration.prefect_api import prefect_api_url

log = logging.getLogger(__name__)


def draft_tags(draft_id: str, version: int) -> list[str]:
    """The tags a run waiting on this draft version carries."""
    return [f"draft:{draft_id}", f"draft:{draft_id}:v{int(version)}"]


def _api_configured() -> bool:
    return prefect_api_url() is not None


def find_waiting_runs(draft_id: str, version: int) -> list[Any]:
    """Flow runs in a Paused/Suspended state tagged with this draft version (oldest first); [] without a server."""
    if not _api_configured():
        return []
    from prefect import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
        FlowRunFilterTags,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.client.schemas.sorting import FlowRunSort

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(
                tags=FlowRunFilterTags(all_=[draft_tags(draft_id, version)[1]]),
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED])),
            ),
            sort=FlowRunSort.START_TIME_ASC,
            limit=20,
        )
    return list(runs)


def resume_waiting_run(
    draft_id: str,
    version: int,
    *,
    plan_hash: str,
    approver: str,
    decision: str = "approve",
    comment: str = "",
) -> UUID | None:
    """Resume the run waiting for this draft version with the decision as its input.

    Returns the resumed flow run's id, or ``None`` when there is nothing to do:
    no ``PREFECT_API_URL`` (environment or profile), the server unreachable, no run waiting, or the
    server refused the resume (for example the run's pause timed out). Never
    raises for those: the ledger already holds the decision, and a run that
    resumes later re-reads the ledger anyway.
    """
    if not _api_configured():
        return None
    try:
        from prefect import get_client

        runs = find_waiting_runs(draft_id, version)
        if not runs:
            return None
        run_input = {
            "draft_id": draft_id,
            "version": int(version),
            "plan_hash": plan_hash,
            "decision": decision,
            "approver": approver,
            "comment": comment,
        }
        with get_client(sync_client=True) as client:
            for run in runs:
                result = client.resume_flow_run(run.id, run_input=run_input)
                status = getattr(result.status, "value", str(result.status))
                if str(status).upper() == "ACCEPT":
                    return run.id
                log.warning("resume of flow run %s refused: %s", run.id, getattr(result.details, "reason", result))
    except Exception as exc:  # noqa: BLE001 - the ledger decision stands; resuming is a convenience
        log.warning("could not resume the run waiting for %s v%s: %s", draft_id, version, exc)
    return None


def wake_cancelled_run(rec: Any, actor: str, reason: str) -> str | None:
    """After ``flows.usecases.control.cancel``: wake the run waiting on this version; it re-reads the ledger,
    finds CANCELLED and ends as Prefect's CANCELLED (its input is ignored). Returns the run id, or None."""
    run_id = resume_waiting_run(rec.draft_id, rec.version, plan_hash=rec.plan_hash or "0" * 64, approver=actor,
                                decision="reject", comment=f"cancelled: {reason}"[:500])
    return None if run_id is None else str(run_id)
