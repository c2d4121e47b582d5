"""Cancel in the Prefect UI = cancel in the ledger: the ``on_cancellation`` hook of the runs that wait on a version.

Why two ways: a run that waits *paused* in a live process (a worker or
``serve()`` running it) is cancelled by its runner, which kills the process and
runs this hook (``prefect.runner._cancellation_manager``); a *suspended* run
holds no process, Prefect moves it straight to Cancelled, and no hook runs —
the authority's sweeper sees that run and withdraws the version
(``flows.authority.sweeper``). Either way the version is withdrawn through the
authority (``Authority.run_cancelled``: DRAFT/APPROVED → CANCELLED unless a
dispatch claimed it), its ``expire-draft`` run is retired, and a later
approval or dispatch is refused by the ledger.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["withdraw_on_cancel"]

log = logging.getLogger(__name__)


def withdraw_on_cancel(flow: Any, flow_run: Any, state: Any) -> None:
    """``on_cancellation`` hook: withdraw the version the cancelled run waited on (named by its tags)."""
    from flows.authority.sweeper import version_of_tags
    from flows.orchestration.mission_tasks import authority_for
    from planner.errors import SortieError

    found = version_of_tags(list(flow_run.tags or []))
    if found is None:
        return  # cancelled before it reached its approval wait: no version waited
    try:
        out = authority_for("prefect-cancel").run_cancelled(found[0], found[1], run_id=str(flow_run.id))
        log.info("draft %s v%s: %s", found[0], found[1], out.get("message") or out.get("state"))
    except SortieError as exc:  # dispatched meanwhile (recall it), or the authority is down: its sweeper looks again
        log.warning("could not withdraw draft %s v%s after the cancel: %s", found[0], found[1], exc)
