"""Honest outcomes: a dispatch answer that is not a success is an error, with the same code every time.

Why: a repeated ``dispatch`` returns the first dispatch's outcome instead of
uploading again. Printed as a normal result, an earlier FAILED or UNCERTAIN
exited 0 and scripts took it for success. Here each non-success status maps to
the error the first call raised, and the advice names the command that
actually moves things on. A repeat that arrives while the first is still
uploading waits for it (bounded) and answers with its outcome.
"""

from __future__ import annotations

import time
from typing import Any

from flows.errors import Conflict, DispatchFailed, DispatchUncertain
from flows.ledger import DispatchRecord, Ledger
from planner.errors import SortieError

__all__ = ["advice", "outcome_error", "wait_while_pending"]


def advice(status: str, draft_id: str) -> str:
    """The next command that works after a dispatch ended in ``status``."""
    return {
        "FAILED": f"the draft is ABORTED; plan it again with `sortie replan {draft_id}` (if part of the upload "
        f"reached the vehicle, its drone stays busy until `sortie reconcile {draft_id}` has read it back)",
        "UNCERTAIN": f"what the vehicle holds is unknown; settle it with `sortie reconcile {draft_id}` "
        "(reads the vehicle back; never re-send blind)",
        "PENDING": f"wait for it and run `sortie dispatch {draft_id}` again for its outcome; if its process died, "
        f"`sortie reconcile {draft_id}`",
    }.get(status, "")


def outcome_error(status: str, draft_id: str, message: str, details: Any = None) -> SortieError | None:
    """The error a dispatch answer with ``status`` is reported as (None for success)."""
    text = f"{message}; {advice(status, draft_id)}" if advice(status, draft_id) else message
    if status == "FAILED":
        return DispatchFailed(text, details=details)
    if status == "UNCERTAIN":
        return DispatchUncertain(text, details=details)
    if status == "PENDING":
        return Conflict(text, details=details)
    return None


def wait_while_pending(ledger: Ledger, d: DispatchRecord, wait_s: float, *, poll_s: float = 0.25) -> DispatchRecord:
    """The dispatch row once it is no longer PENDING, its owner has died, or ``wait_s`` has passed.

    Why: a repeat that arrives while the first dispatch is uploading should
    answer with the first one's outcome (and exit code), not with "in progress".
    Bounded by ``wait_s`` (the upload's own time budget and a margin).
    """
    deadline = time.monotonic() + max(0.0, wait_s)
    while d.status == "PENDING" and d.owner_alive() and time.monotonic() < deadline:
        time.sleep(poll_s)
        d = ledger.get_dispatch(d.idempotency_key) or d
    return d
