"""The control deployments an operator starts from the Prefect UI: ``recall-mission``, ``pause-mission``,
``resume-mission``.

Thin (STYLE 10): one task asks the authority for the action, as the CLI does
(``Authority.recall``/``pause``/``resume``: embedded, ``flows.usecases.control``
— the dispatcher role, the audit row, RECALLING recorded before any command,
each command confirmed by the vehicle; with ``SORTIE_SERVER``, the server does
the same at its own link record).

**For the record, not for an emergency.** A run waits for a worker to pick it
up (seconds, a minute under load); the fast stop is the operations page
(``/ops``) or ``sortie recall``, which reach the vehicle within 2 s. These
deployments leave a Prefect run beside the mission's own run, with its named end.

**Who acts is proven, never typed.** The run form asks for the operator's
user id *and* their one-time code, both required fields (Prefect refuses to
create a run without them). The embedded authority takes the user as asserted
(like every local identity) and does not read the code; a server verifies the
code and acts as that operator (``Relay``), judging the code at the moment the
operator started the run (the run's ``created`` time, Prefect's own record: a
worker may pick the run up later), and refuses a wrong one — a worker's
service token never commands a vehicle as itself.

Every end is named (``flows.orchestration.named_end``): RECALLED (or
RECALLING when not followed down), PAUSED, RESUMED, ABORTED with the
vehicle's reason, NOT_RECALLED when the vehicle was already down and nothing
was sent, NOT_STARTED when the mission never took off (nothing to recall; the
draft ended before take-off), or the refusal's code (UNAUTHENTICATED, FORBIDDEN,
CONFLICT, …) — never a traceback. A task is not retried by Prefect: a control
action repeats safely by hand (it sends nothing the vehicle already shows),
but an automatic retry would hide a refusal.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from pydantic import Field

from flows.orchestration.named_end import ended, name_the_end

__all__ = ["recall_mission", "pause_mission", "resume_mission", "control_task", "Code"]

#: The operator's one-time code: a required field of the run form (never "(Optional)"). A sortie server verifies it
#: (judged at the run's creation); the embedded authority, whose identities are asserted, does not read it.
Code = Annotated[str, Field(pattern=r"^[0-9]{6}$", description="Your one-time code (6 digits).")]


def _started_at() -> datetime | None:
    """When the operator started this run (the flow run's ``created``, stamped by the Prefect server)."""
    from prefect.context import FlowRunContext

    ctx = FlowRunContext.get()
    return ctx.flow_run.created if ctx and ctx.flow_run and ctx.flow_run.created else None


@task(name="control", cache_policy=NO_CACHE)
def control_task(action: str, draft_id: str, version: int | None, operator: str, code: str,
                 submitted_at: datetime | None, now: str | None, world: str | None,
                 options: dict[str, Any]) -> dict[str, Any]:
    """One control action through the authority, relayed for the operator; a refusal is returned, not raised."""
    from flows.authority import Relay
    from flows.orchestration.mission_tasks import authority_for, refusal
    from planner.errors import SortieError

    try:
        a = authority_for(action, world=world, now=now)
        return getattr(a, action)(draft_id, version, relay=Relay(operator, code, submitted_at), **options)
    except SortieError as exc:
        return refusal(exc)


def _end(action: str, draft_id: str, version: int | None, out: dict[str, Any]) -> dict[str, Any]:
    logger = get_run_logger()
    if "refused" in out:
        logger.warning("%s of %s refused: %s (%s)", action, draft_id, out["refused"], out["message"])
        return ended({"draft_id": draft_id, "version": version, "outcome": out["refused"], "message": out["message"]})
    state = str(out.get("state"))
    if out.get("outcome") == "NOT_STARTED":  # a recall before take-off: nothing to recall, ended before take-off
        outcome = "NOT_STARTED"
    elif state == "ABORTED" or action != "recall":
        outcome = state if state == "ABORTED" else {"pause": "PAUSED", "resume": "RESUMED"}[action]
    else:  # a recall that found the vehicle already on the ground (or home) sent nothing: say so, never DISPATCHED
        outcome = state if state in ("RECALLING", "RECALLED", "SUCCEEDED") else "NOT_RECALLED"
    logger.info("draft %s v%s: %s (%s)", draft_id, out.get("version"), outcome, out.get("message"))
    return ended(out | {"outcome": outcome})


@flow(name="recall-mission", log_prints=True, persist_result=True, on_completion=[name_the_end])
def recall_mission(
    draft_id: str,
    operator: str,
    code: Code,
    land_here: bool = False,
    reason: str = "",
    version: int | None = None,
    wait_s: float = 600.0,
    now: str | None = None,
    link: str | None = None,
    world: str | None = None,
) -> dict[str, Any]:
    """Bring a flying mission home (or land it where it is) and follow it to the landing — for the record: a stop in
    an emergency is the operations page's or ``sortie recall``'s (under 2 s; a run waits for a worker first).

    Args:
        draft_id: the flying draft.
        operator: your user id (the dispatcher role for the draft's tenant).
        code: your one-time code (6 digits), verified by the sortie server at the moment you started the run.
        land_here: land where it is instead of returning to its dock.
        reason: why, for the record.
    """
    out = control_task("recall", draft_id, version, operator, code, _started_at(), now, world,
                       {"land_here": land_here, "reason": reason, "link": link, "wait_s": wait_s})
    return _end("recall", draft_id, version, out)


@flow(name="pause-mission", log_prints=True, persist_result=True, on_completion=[name_the_end])
def pause_mission(draft_id: str, operator: str, code: Code, reason: str = "",
                  version: int | None = None, now: str | None = None, link: str | None = None,
                  world: str | None = None) -> dict[str, Any]:
    """Hold a flying mission where it is (the vehicle must confirm).

    Args:
        draft_id: the flying draft.
        operator: your user id (the dispatcher role for the draft's tenant).
        code: your one-time code (6 digits), verified by the sortie server.
        reason: why, for the record.
    """
    out = control_task("pause", draft_id, version, operator, code, _started_at(), now, world,
                       {"reason": reason, "link": link})
    return _end("pause", draft_id, version, out)


@flow(name="resume-mission", log_prints=True, persist_result=True, on_completion=[name_the_end])
def resume_mission(draft_id: str, operator: str, code: Code, reason: str = "",
                   version: int | None = None, now: str | None = None, link: str | None = None,
                   world: str | None = None) -> dict[str, Any]:
    """Continue a held mission (never once a recall is recorded).

    Args:
        draft_id: the held draft.
        operator: your user id (the dispatcher role for the draft's tenant).
        code: your one-time code (6 digits), verified by the sortie server.
        reason: why, for the record.
    """
    out = control_task("resume", draft_id, version, operator, code, _started_at(), now, world,
                       {"reason": reason, "link": link})
    return _end("resume", draft_id, version, out)
