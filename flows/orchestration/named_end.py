"""The named end of a run: its final Prefect state says what happened to the mission, and nothing is a traceback.

Why its own module: a flow that returns a Failed or Cancelled state ends its
run that way, but Prefect then asks that state for the flow's result
(``prefect.flow_engine.FlowRunEngine.result``, ``raise_on_failure=True``) and
raises it: the worker logs "Engine execution exited with unexpected exception"
with a traceback on the run (a dict as the state's data even makes it
``TypeError: Unexpected result for failed state``; FACTS, issue 25). So a flow
returns its outcome as a plain dict, marked by :func:`ended` with the state it
should end in, and the ``on_completion`` hook :func:`name_the_end` — run by
the engine right after it recorded Completed — puts that named state on the
run (forced, with the same persisted result as its data) and hands it to the
engine, so ``return_state=True`` callers get it too. The run's history shows
Completed for that instant; its final state is the named one.

The names, by what happened (Prefect's state type in brackets):

- flown: DISPATCHED, DRY_RUN (Completed); a monitored flight SUCCEEDED
  (Completed), RECALLED (Cancelled: an operator's order, or the energy guard's),
  ABORTED (Failed) or what named it (FAILSAFE_BATTERY, LOST: Failed), INCOMPLETE
  (Failed: planned work was not flown), LINK_LOST (Failed: it may still be flying);
  launched but its end not seen within the watch: LAUNCHED, IN_FLIGHT (Failed:
  someone must look); a launch refused: PREFLIGHT_FAILED (Failed: the mission
  stays on the vehicle, which is left disarmed); a dispatched vehicle that
  never took off: NOT_STARTED (Failed);
  an operator's control done: PAUSED, RESUMED, RECALLING (Completed);
- nothing flew and nothing is wrong: REJECTED, EXPIRED, CANCELLED, SUPERSEDED
  (Cancelled);
- someone must act: REFUSED, BLOCKED, DEVICE_BUSY, NOT_DISPATCHED,
  WAITING_RESOURCE and any refusal's code (Failed).
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["ended", "end_state", "name_the_end", "COMPLETED_ENDS", "CANCELLED_ENDS"]

COMPLETED_ENDS = frozenset({"DISPATCHED", "DRY_RUN", "SUCCEEDED", "RECALLING", "PAUSED", "RESUMED"})
CANCELLED_ENDS = frozenset({"REJECTED", "EXPIRED", "CANCELLED", "SUPERSEDED", "RECALLED"})
#: Failed ends after which something may be on (or in the air with) the vehicle: never "nothing was sent".
_SENT = frozenset({"ABORTED", "DISPATCH_FAILED", "DISPATCH_UNCERTAIN", "LAUNCHED", "IN_FLIGHT", "PREFLIGHT_FAILED",
                   "NOT_STARTED", "INCOMPLETE", "LINK_LOST", "LOST"})  # + FAILSAFE_* (a flight's named end)
_KEY = "sortie_end"
_pending: dict[str, Any] = {}  # flow run id → the named state to put on the run (set by ``ended``, taken by the hook)
_lock = threading.Lock()


def _outcome(result: dict[str, Any]) -> str:
    outcome = str(result.get("outcome") or result.get("state") or "UNKNOWN")
    return "DRY_RUN" if (result.get("dispatch") or {}).get("dry_run") else outcome


def end_state(result: dict[str, Any]) -> Any:
    """The named Prefect state for an outcome dict (``outcome`` or ``state``; ``message`` when given)."""
    from prefect.states import Cancelled, Completed, Failed

    outcome = _outcome(result)
    where = (f"request {result['request_id']}" if result.get("request_id") and not result.get("draft_id")
             else f"draft {result.get('draft_id')} v{result.get('version')}")
    told = result.get("message")
    if outcome in COMPLETED_ENDS:
        return Completed(name=outcome, message=told or f"{where}: {outcome.lower().replace('_', ' ')}")
    if outcome == "CANCELLED":
        return Cancelled(name=outcome, message=told or f"{where} was cancelled in the ledger")
    if outcome in CANCELLED_ENDS:
        return Cancelled(name=outcome, message=told or f"{where} is {outcome} in the ledger; nothing was sent")
    message = f"{where}: {told or outcome}"
    if outcome not in _SENT and not outcome.startswith("FAILSAFE_") and "nothing was sent" not in message:
        message += "; nothing was sent"
    return Failed(name=outcome[:40], message=message)


def ended(result: dict[str, Any]) -> dict[str, Any]:
    """The flow's return value: ``result`` marked with its end (``sortie_end``), kept for :func:`name_the_end`."""
    from prefect.context import FlowRunContext

    state = end_state(result)
    out = dict(result) | {_KEY: {"type": state.type.value, "name": state.name}}
    ctx = FlowRunContext.get()
    if ctx is not None and ctx.flow_run is not None:
        with _lock:
            _pending[str(ctx.flow_run.id)] = state
    return out


def name_the_end(flow: Any, flow_run: Any, state: Any) -> None:
    """``on_completion`` hook: put the named state :func:`ended` chose on the run, with the run's result as its data.

    The engine passes its own ``flow_run``; giving it the named state makes the engine report that state
    (``return_state=True``, "Finished in state …") while its return value stays the plain dict.
    """
    from prefect import get_client

    with _lock:
        named = _pending.pop(str(flow_run.id), None)
    if named is None or state.name == named.name:
        return
    named.data = state.data  # the persisted result record: ``state.result()`` reads the outcome dict back
    with get_client(sync_client=True) as client:
        got = client.set_flow_run_state(flow_run.id, named, force=True)
    final = got.state if got.state is not None else named
    if final.data is None:
        final.data = state.data
    flow_run.state = final
    flow_run.state_name, flow_run.state_type = final.name, final.type
