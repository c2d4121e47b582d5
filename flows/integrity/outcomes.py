"""Honest outcomes: a dispatch answer that is not a success is an error, with the same code every time.

Why: a repeated ``dispatch`` returns the first dispatch's outcome instead of
uploading again. Printed as a normal result, an earlier FAILED or UNCERTAIN
exited 0 and scripts took it for success. Here each non-success status maps to
the error the first call raised, and the advice names the command that
actually moves things on.
"""

from __future__ import annotations

from typing import Any

from planner.errors import Conflict, DispatchFailed, DispatchUncertain, SortieError

__all__ = ["advice", "outcome_error"]


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
