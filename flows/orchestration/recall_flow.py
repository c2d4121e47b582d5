"""The "Recall" Prefect flow: an operator starts it from the UI with a draft id to bring the mission home.

The flow is thin (STYLE 10): one task asks the authority to recall
(``Authority.recall``: embedded, ``flows.usecases.control.recall`` — the same
role check (dispatcher), audit row, ledger RECALLING before any command, RTL
(or LAND with ``land_here``) confirmed from the vehicle's heartbeat; with
``SORTIE_SERVER``, the server does the same at its own link record) and
follows the vehicle to its landing (``wait_s``; a server follows at most 120 s
per request), so the run ends with the draft RECALLED (or ABORTED with the
vehicle's reason). The task is not retried by Prefect: a recall repeats safely
by hand (it sends nothing the vehicle already shows), but an automatic retry
would hide a refusal.

``actor`` is the operator's user id, typed into the run form: the embedded
authority recalls as them (asserted, as everywhere without the authority
server); a server recalls as the worker's token, whose user must hold the
dispatcher role (an identity the server proves for this form is the next step).
"""

from __future__ import annotations

from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

__all__ = ["recall_mission"]


@task(name="recall", cache_policy=NO_CACHE)
def recall_task(draft_id: str, version: int | None, actor: str, land_here: bool, reason: str, wait_s: float,
                now: str | None, link: str | None, world: str | None) -> dict[str, Any]:
    """Recall the draft's vehicles through the authority, as the CLI does."""
    from flows.orchestration.mission_tasks import authority_for

    return authority_for("recall", world=world, now=now).recall(draft_id, version, land_here=land_here, reason=reason,
                                                                link=link, wait_s=wait_s, on_behalf_of=actor)


@flow(name="recall-mission", log_prints=True)
def recall_mission(
    draft_id: str,
    actor: str,
    land_here: bool = False,
    reason: str = "",
    version: int | None = None,
    wait_s: float = 600.0,
    now: str | None = None,
    link: str | None = None,
    world: str | None = None,
) -> dict[str, Any]:
    """Bring a flying mission home (or land it where it is) and follow it to the landing."""
    result = recall_task(draft_id, version, actor, land_here, reason, wait_s, now, link, world)
    get_run_logger().info("draft %s v%s: %s (%s)", draft_id, result["version"], result["state"], result["message"])
    return result
