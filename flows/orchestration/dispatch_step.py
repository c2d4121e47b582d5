"""After the approval gate: dispatch the approved version once, wait while its drone is busy, name what happened.

Why its own module: the end of an approved run is where a drone that is
still flying another mission (``DEVICE_BUSY``), a zone that closed since the
approval (``AIRSPACE_BLOCKED``), an approval that lapsed (``APPROVAL_STALE``)
or a vehicle that refused the upload used to end the run red with a
traceback, and the draft left APPROVED with nothing waiting on it. Here every
refusal is an answer (``dispatch_task`` returns it) and every answer a named
end (``flows.orchestration.named_end``):

- **DEVICE_BUSY** waits (a dry run does not: it reports at once): the dispatch is asked again every ``busy_retry_s``
  while the approval is valid — the authority judges that on its own clock, so
  the wait ends when it answers ``APPROVAL_STALE`` (or after ``busy_wait_s`` of
  wall time, a bound of its own). Still busy then: the run ends DEVICE_BUSY,
  naming the mission that holds the drone and what to do.
- APPROVAL_STALE (without a busy drone first) → EXPIRED; AIRSPACE_BLOCKED and
  DEVICE_UNAVAILABLE → BLOCKED (the rules on a fresh world refused it); a
  dispatch that failed or whose outcome is unknown → DISPATCH_FAILED /
  DISPATCH_UNCERTAIN with the command that settles it; a draft cancelled
  between the gate and the claim → CANCELLED; any other refusal → its code.
"""

from __future__ import annotations

import time
from typing import Any

from prefect import get_run_logger

from flows.orchestration.after_dispatch import monitor_deployment_for, start_monitor_task
from flows.orchestration.mission_tasks import authority_for, dispatch_task, last_approver, read_draft_task

__all__ = ["dispatch_approved", "DISPATCHED_STATES", "BUSY_RETRY_S", "BUSY_WAIT_S"]

DISPATCHED_STATES = frozenset({"DISPATCHED", "LAUNCHED", "IN_FLIGHT", "SUCCEEDED", "RECALLING", "RECALLED"})
#: How often a run asks again while its drone is busy, and the longest it waits in wall time (the approval's own
#: validity, judged by the authority, ends the wait first under the default 30 min policy).
BUSY_RETRY_S = 30.0
BUSY_WAIT_S = 2400.0
_NAMED = {"AIRSPACE_BLOCKED": "BLOCKED", "DEVICE_UNAVAILABLE": "BLOCKED", "APPROVAL_STALE": "EXPIRED"}


def _busy_wait(draft_id: str, version: int, attempt: Any, first: dict[str, Any], *, retry_s: float,
               wait_s: float) -> dict[str, Any]:
    """Ask again while the drone is busy and the approval valid; the last answer, or DEVICE_BUSY's end."""
    logger = get_run_logger()
    busy, out, asked = first, first, 0
    deadline = time.monotonic() + wait_s
    while out.get("refused") == "DEVICE_BUSY" and time.monotonic() < deadline:
        say = logger.warning if asked == 0 else logger.info  # said once; every retry after that is routine
        busy, asked = out, asked + 1
        say("draft %s v%s waits: %s; asking again every %.0f s while the approval is valid", draft_id, version,
            out["message"], retry_s)
        time.sleep(max(0.1, min(retry_s, deadline - time.monotonic())))
        out = attempt()
    if out.get("refused") in ("DEVICE_BUSY", "APPROVAL_STALE"):  # busy to the end: named DEVICE_BUSY
        why = "the approval lapsed" if out.get("refused") == "APPROVAL_STALE" else f"{wait_s:.0f} s passed"
        return {"outcome": "DEVICE_BUSY", "state": read_draft_task(draft_id, version)["state"],
                "message": f"{busy['message']}; still busy when {why}: approve draft {draft_id} v{version} again once "
                           "the drone is free, then dispatch it (sortie approve / sortie dispatch)"}
    return out


def dispatch_approved(draft_id: str, version: int, state: str, actor: str | None, *, world: str | None,
                      now: str | None, dry_run: bool, link: str | dict[str, str] | None, expiry_deployment: str,
                      busy_retry_s: float = BUSY_RETRY_S, busy_wait_s: float = BUSY_WAIT_S,
                      follow_here: bool = False) -> dict[str, Any]:
    """Dispatch an approved version once (the authority's claim), then start following the flight; the outcome.

    ``follow_here``: the calling run follows the flight itself (the one-run ``mission`` flow): no monitor run is
    started, and the outcome names who launches it (``launch_as``)."""
    a = authority_for("approval-gate")
    actor = actor or last_approver(a.show(draft_id, version))
    if state == "APPROVED" and (refusal := a.dispatch_refusal(draft_id, version, actor)) is not None:
        return {"outcome": "NOT_DISPATCHED", "state": "APPROVED", "message": (
            f"approved, but {refusal} and the run names no dispatcher: "
            f"sortie dispatch {draft_id} --version {version} --as <a dispatcher>")}

    def attempt() -> dict[str, Any]:
        return dispatch_task(draft_id, version, actor, world, now, dry_run, link)

    out = attempt()
    if out.get("refused") == "DEVICE_BUSY" and not dry_run:  # a dry run sends nothing: it says so at once
        out = _busy_wait(draft_id, version, attempt, out, retry_s=busy_retry_s, wait_s=busy_wait_s)
    if "outcome" in out:
        return out
    final = read_draft_task(draft_id, version)["state"]
    if "refused" in out:
        code = str(out["refused"])
        if final == "CANCELLED":
            return {"outcome": "CANCELLED", "state": final}  # cancelled between the gate and the claim
        return {"outcome": _NAMED.get(code, code), "state": final, "code": code, "message": out["message"]}
    if final in DISPATCHED_STATES and follow_here:
        out = out | {"launch_as": actor if final == "DISPATCHED" else None}
    elif final in DISPATCHED_STATES:  # monitor-mission launches it at the planned start and follows the flight
        start_monitor_task(draft_id, version, deployment=monitor_deployment_for(expiry_deployment), now=now,
                           dry_run=dry_run, launch_as=actor if final == "DISPATCHED" else None)
    return {"outcome": "DISPATCHED" if final in DISPATCHED_STATES else final, "state": final, "dispatch": out,
            "launch_as": out.get("launch_as")}
