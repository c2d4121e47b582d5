"""Wake the Prefect run that waits on a draft version, after the authority recorded the end of its wait.

Why here: whoever records a decision must wake the run waiting on it, or an
approval from any other client (another terminal, the server's API, a second
worker) leaves the run asleep until its deadline. So the authority does it,
right after it records an approval, a rejection, a cancel or an expiry: the
embedded authority in the process that recorded it, ``sortie server`` in its
own process (it reads the Prefect API the usual way, ``prefect_api``). A
client never wakes anything itself.

The woken run re-reads the ledger (the source of truth), so the input it is
resumed with only has to pass the form's schema. Prefect has no CLI command
for this; ``resume_flow_run(flow_run_id, run_input=...)`` works from any
process and the server validates the input against the form's schema.

A waiting run is found by its tag ``draft:<id>:v<version>`` (the flow tags
itself before it waits) and a Paused state (Prefect's Suspended is a Paused
state by type). Nothing here may start Prefect's ephemeral server (~8 s,
FACTS): without a Prefect API (environment or profile) waking is a no-op.

Waking never blocks or fails the decision: the decision is committed first;
:class:`Waker` wakes on a thread of its own, retries a Prefect API that fails
(``attempts``, with backoff), logs what it could not do, and the caller waits
at most ``report_wait_s`` to report which run it woke. A run that waits on the
version but has not paused yet (it tagged itself and is about to suspend) is
waited for, at most ``settle_s``: it is woken once it pauses, unless it read
the decision itself first and went on (it re-reads the ledger before every
wait). After waking, the version's scheduled ``expire-draft`` run is retired
(``retire_expiry_runs``): a decided, cancelled or expired version has no
deadline left to keep.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any
from uuid import UUID

from flows.authority.prefect_api import prefect_api_url

__all__ = ["draft_tags", "find_waiting_runs", "find_live_runs", "resume_waiting_run", "retire_expiry_runs", "Waker",
           "NO_PLAN_HASH", "NO_CODE", "APPROVAL_TAG", "request_tag", "wake_request_runs"]

log = logging.getLogger(__name__)

#: The plan hash sent with a wake that carries no decision (an expiry, a cancel): the form's pattern accepts it.
NO_PLAN_HASH = "0" * 64
#: The one-time code sent with a wake: the form with a server requires one; the woken run never judges it (it
#: re-reads the ledger first, which holds the decision).
NO_CODE = "000000"
#: The tag of a run that waits for a decision on a draft version (``dispatch-mission``, ``daily-patrol``).
APPROVAL_TAG = "sortie-approval"


def draft_tags(draft_id: str, version: int) -> list[str]:
    """The tags a run waiting on this draft version carries."""
    return [f"draft:{draft_id}", f"draft:{draft_id}:v{int(version)}"]


def request_tag(request_id: str) -> str:
    """The tag of a run that waits for the answers to an open request (``flows.orchestration.clarify``)."""
    return f"request:{request_id}"


def wake_request_runs(request_id: str, why: str) -> list[str]:
    """Resume every run waiting on the answers to this request, after the authority recorded an answer or an expiry
    (the woken run re-reads the request and goes on, or ends); the ids it woke. Best effort: never raises, and
    without a Prefect API does nothing. The input is only the clarification form's wake shape."""
    if prefect_api_url() is None:
        return []
    from prefect import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
        FlowRunFilterTags,
    )
    from prefect.client.schemas.objects import StateType

    woke: list[str] = []
    try:
        with get_client(sync_client=True) as client:
            runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(
                tags=FlowRunFilterTags(all_=[request_tag(request_id)]),
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED]))), limit=20)
            for run in runs:
                result = client.resume_flow_run(run.id, run_input={"request_id": request_id,
                                                                   "answerer": f"sortie:{why}"[:64],
                                                                   "code": NO_CODE})  # the form may require one
                if str(getattr(result.status, "value", result.status)).upper() == "ACCEPT":
                    woke.append(str(run.id))
    except Exception as exc:  # noqa: BLE001 - the ledger holds the answer; the run re-reads it when it resumes
        log.warning("could not wake the runs waiting on request %s: %s", request_id, exc)
    return woke


def find_waiting_runs(draft_id: str, version: int) -> list[Any]:
    """Flow runs in a Paused/Suspended state tagged with this draft version (oldest first); [] without a server."""
    if prefect_api_url() is None:
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


def find_live_runs(draft_id: str, version: int) -> list[Any]:
    """Runs waiting on this version (``sortie-approval``) that are on their way but not paused: they may pause soon."""
    if prefect_api_url() is None:
        return []
    from prefect import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
        FlowRunFilterTags,
    )
    from prefect.client.schemas.objects import StateType

    with get_client(sync_client=True) as client:
        return list(client.read_flow_runs(
            flow_run_filter=FlowRunFilter(
                tags=FlowRunFilterTags(all_=[draft_tags(draft_id, version)[1], APPROVAL_TAG]),
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.RUNNING, StateType.PENDING])),
            ),
            limit=20,
        ))


def retire_expiry_runs(draft_id: str, version: int) -> int:
    """Cancel the version's scheduled ``expire-draft`` run (key ``expire-<id>-v<n>``); how many. Never raises."""
    if prefect_api_url() is None:
        return 0
    from prefect import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterIdempotencyKey,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.states import Cancelled

    try:
        with get_client(sync_client=True) as client:
            runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(
                idempotency_key=FlowRunFilterIdempotencyKey(any_=[f"expire-{draft_id}-v{int(version)}"]),
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.SCHEDULED])),
            ), limit=5)
            for run in runs:
                client.set_flow_run_state(run.id, Cancelled(
                    message=f"not needed: draft {draft_id} v{version} is no longer waiting for a decision"))
        return len(runs)
    except Exception as exc:  # noqa: BLE001 - an expiry run left behind finds the version decided and does nothing
        log.warning("could not retire the expiry run of %s v%s: %s", draft_id, version, exc)
        return 0


def _resume_once(draft_id: str, version: int, run_input: dict[str, Any]) -> UUID | None:
    """Resume the first waiting run that accepts; None when none waits. Raises when the Prefect API fails."""
    from prefect import get_client

    runs = find_waiting_runs(draft_id, version)
    if not runs:
        return None
    with get_client(sync_client=True) as client:
        for run in runs:
            result = client.resume_flow_run(run.id, run_input=run_input)
            status = getattr(result.status, "value", str(result.status))
            if str(status).upper() == "ACCEPT":
                return run.id
            log.warning("resume of flow run %s refused: %s", run.id, getattr(result.details, "reason", result))
    return None


def resume_waiting_run(
    draft_id: str,
    version: int,
    *,
    plan_hash: str,
    approver: str,
    decision: str = "approve",
    comment: str = "",
) -> UUID | None:
    """Resume the run waiting for this draft version with the decision as its input, once.

    Returns the resumed flow run's id, or ``None`` when there is nothing to do:
    no Prefect API (environment or profile), the server unreachable, no run waiting, or the
    server refused the resume (for example the run's pause timed out). Never
    raises for those: the ledger already holds the decision, and a run that
    resumes later re-reads the ledger anyway.
    """
    if prefect_api_url() is None:
        return None
    try:
        return _resume_once(draft_id, version, _run_input(draft_id, version, plan_hash, approver, decision, comment))
    except Exception as exc:  # noqa: BLE001 - the ledger decision stands; resuming is a convenience
        log.warning("could not resume the run waiting for %s v%s: %s", draft_id, version, exc)
    return None


def _run_input(draft_id: str, version: int, plan_hash: str | None, approver: str, decision: str,
               comment: str) -> dict[str, Any]:
    """The approval form's shape (``flows.orchestration.approval_input.ApprovalInput``), within its limits."""
    return {"draft_id": draft_id, "version": int(version), "plan_hash": plan_hash or NO_PLAN_HASH,
            "decision": decision, "approver": (approver or "sortie")[:64], "comment": comment[:2000],
            "code": NO_CODE}


class Waker:
    """Wakes waiting runs in the background: bounded attempts, logged, never raising into the caller."""

    def __init__(self, *, attempts: int = 3, backoff_s: float = 1.0, report_wait_s: float = 10.0,
                 settle_s: float = 30.0) -> None:
        self.attempts = max(1, int(attempts))
        self.backoff_s = backoff_s
        self.report_wait_s = report_wait_s
        self.settle_s = settle_s

    def wake(self, draft_id: str, version: int, *, plan_hash: str | None, actor: str, decision: str,
             comment: str) -> str | None:
        """Wake the run waiting on this version; its id if it woke within ``report_wait_s``, else None.

        ``decision`` (approve | reject) is only the form's shape: the run re-reads the ledger and ends by
        what it holds. Without a Prefect API this returns at once and starts nothing.
        """
        if prefect_api_url() is None:
            return None
        box: dict[str, str | None] = {}
        run_input = _run_input(draft_id, version, plan_hash, actor, decision, comment)
        thread = threading.Thread(target=self._work, args=(draft_id, int(version), run_input, box),
                                  name=f"wake-{draft_id}-v{version}")
        thread.start()  # not a daemon: a CLI process finishes waking (bounded by ``attempts``) before it exits
        thread.join(self.report_wait_s)
        return box.get("run_id")

    def _work(self, draft_id: str, version: int, run_input: dict[str, Any], box: dict[str, str | None]) -> None:
        try:
            self._wake(draft_id, version, run_input, box)
        finally:
            retire_expiry_runs(draft_id, version)

    def _wake(self, draft_id: str, version: int, run_input: dict[str, Any], box: dict[str, str | None]) -> None:
        failures, settle_until = 0, time.monotonic() + self.settle_s
        while True:
            try:
                run_id = _resume_once(draft_id, version, run_input)
                on_its_way = run_id is None and bool(find_live_runs(draft_id, version))
            except Exception as exc:  # noqa: BLE001 - a Prefect API that fails is tried again, then logged
                failures += 1
                log.warning("waking the run waiting on %s v%s failed (attempt %d of %d): %s", draft_id, version,
                            failures, self.attempts, exc)
                if failures >= self.attempts:
                    log.warning("gave up waking the run waiting on %s v%s; it re-reads the ledger when it resumes",
                                draft_id, version)
                    return
                time.sleep(self.backoff_s * 2 ** (failures - 1))
                continue
            if run_id is not None:
                box["run_id"] = str(run_id)
                log.info("woke flow run %s waiting on %s v%s", run_id, draft_id, version)
                return
            if not on_its_way or time.monotonic() >= settle_until:
                return  # nothing waits (or a live run reads the ledger before it waits: it sees the decision)
            time.sleep(min(1.0, self.backoff_s))  # a run about to pause: wake it once it has
