"""The expiry of a waiting run: ``expire-draft`` at a draft's deadline, and the timer of a paused run.

Why its own module: a timed-out Prefect pause always ends the run Failed
(FACTS), so Prefect's timeout is only a safety net, set well past the approval
window. The window itself is the authority's: a decision after the version's
deadline is refused on every path and EXPIRES it, and at the run's own
deadline the authority is asked to expire it (``mission_tasks.expire_if_due``:
a conditional transition, so it loses cleanly to an approval that came
first). The authority then wakes the waiting run, which re-reads the ledger,
sees EXPIRED and ends as EXPIRED.

The deadline is armed by a timer thread for a paused run (``arm_timer``), and
by a scheduled run of the ``expire-draft`` deployment for a suspended one
(``schedule_expiry_run``: no process is left to hold a timer).
"""

from __future__ import annotations

import contextvars
import threading
from datetime import datetime

from prefect import flow, get_run_logger

from flows.orchestration.mission_tasks import EXPIRY_ACTOR, expire_if_due, expire_task

__all__ = ["expire_draft", "schedule_expiry_run", "arm_timer", "EXPIRY_ACTOR"]


def schedule_expiry_run(deployment: str, draft_id: str, version: int, deadline: str, now: str | None) -> bool:
    """A scheduled run of ``expire-draft`` at the deadline; False if that deployment does not exist."""
    from prefect.deployments import run_deployment

    from flows.authority.waking import draft_tags

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


def arm_timer(draft_id: str, version: int, deadline: str, remaining_s: float, now: str | None) -> threading.Timer:
    """For a paused run: ask the authority to expire the version at the deadline (it wakes this run)."""

    def on_deadline() -> None:
        expire_if_due(draft_id, version, deadline_utc=datetime.fromisoformat(deadline), now=now)

    # A copy of this context, so the timer thread talks to the same Prefect API as the run.
    timer = threading.Timer(remaining_s, contextvars.copy_context().run, args=(on_deadline,))
    timer.daemon = True
    timer.start()
    return timer


@flow(name="expire-draft")
def expire_draft(draft_id: str, version: int, deadline_utc: str, now: str | None = None) -> str:
    """At a draft's deadline: ask the authority to expire it if still unapproved (it wakes the waiting run)."""
    return expire_task(draft_id, version, deadline_utc, now)
