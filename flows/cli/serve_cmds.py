"""``sortie serve``: everything one machine needs to run the Prefect side of sortie.

It serves, from this one process, the deployments that ``prefect.yaml`` would
put on a work pool: ``plan-mission/sortie``, ``dispatch-mission/sortie``,
``expire-draft/sortie`` (scheduled by a waiting run at its draft's deadline),
``recall-mission/sortie`` (an operator's recall, started from the UI) and one ``daily-patrol/<region>`` per region with its cron schedule
(``0 6 * * *`` Europe/Helsinki by default). Runs execute as subprocesses of
this process; a suspended run holds no process and is picked up again when it
is resumed.

It needs a running Prefect server (``prefect server start``) and
``PREFECT_API_URL`` pointing at it: without it Prefect would start a
throw-away ephemeral server whose runs vanish with the process, so the
command refuses instead.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from flows.cli.app import app, run
from planner.errors import InvalidArgument

__all__ = ["serve", "build_deployments", "DEFAULT_REGIONS", "DAILY_CRON", "DAILY_TIMEZONE", "DEPLOYMENT_NAME"]

DEPLOYMENT_NAME = "sortie"
DEFAULT_REGIONS = ("region-1001", "region-1002")
DAILY_CRON = "0 6 * * *"
DAILY_TIMEZONE = "Europe/Helsinki"
BACKUP_CRON = "15 2 * * *"


def build_deployments(
    *,
    name: str = DEPLOYMENT_NAME,
    regions: tuple[str, ...] | list[str] = DEFAULT_REGIONS,
    cron: str = DAILY_CRON,
    timezone: str = DAILY_TIMEZONE,
    world: str | None = None,
    requested_by: str = "li.wei",
    approval_window_s: int | None = None,
    poll_interval_s: int | None = None,
) -> list[Any]:
    """The ``RunnerDeployment`` objects ``prefect.serve`` runs (the same set as ``prefect.yaml``)."""
    from prefect.schedules import Cron

    from flows.orchestration.mission_flows import daily_patrol, dispatch_mission, expire_draft, plan_mission
    from flows.orchestration.recall import recall_mission

    common: dict[str, Any] = {"world": world} if world else {}
    gate: dict[str, Any] = dict(common, expiry_deployment=f"expire-draft/{name}")
    if approval_window_s is not None:
        gate["approval_window_s"] = approval_window_s
    if poll_interval_s is not None:
        gate["poll_interval_s"] = poll_interval_s
    deployments = [
        plan_mission.to_deployment(name=name, parameters=common, tags=["sortie"]),
        dispatch_mission.to_deployment(name=name, parameters=gate, tags=["sortie"]),
        expire_draft.to_deployment(name=name, tags=["sortie"]),
        recall_mission.to_deployment(name=name, parameters=common, tags=["sortie", "control"]),
    ]
    for region in regions:
        deployments.append(
            daily_patrol.to_deployment(
                name=region,
                parameters=dict(gate, region_id=region, requested_by=requested_by),
                schedules=[Cron(cron, timezone=timezone)],
                tags=["sortie", "daily-patrol"],
                description=f"Daily patrol of {region}: plan, publish the draft, wait for approval.",
            )
        )
    from flows.orchestration.backup_flow import backup_ledger  # the nightly ledger backup (prefect.yaml: nightly)

    deployments.append(
        backup_ledger.to_deployment(
            name="nightly", schedules=[Cron(BACKUP_CRON, timezone=timezone)], tags=["sortie", "backup"],
            description="Back up the ledger (consistent copy, verified, manifest); keeps the newest 14.",
        )
    )
    return deployments


@app.command("serve")
def serve(
    region: Annotated[
        list[str] | None, typer.Option("--region", help="Region with a daily patrol (repeatable; default region-1001, region-1002).")
    ] = None,
    cron: Annotated[str, typer.Option("--cron", help="Daily patrol schedule.")] = DAILY_CRON,
    timezone: Annotated[str, typer.Option("--timezone", help="Time zone of the cron schedule.")] = DAILY_TIMEZONE,
    world: Annotated[str | None, typer.Option("--world", help="World folder for the served flows (default: $SORTIE_WORLD, then the demo world).")] = None,
    name: Annotated[str, typer.Option("--name", help="Deployment name of plan/dispatch/expire.")] = DEPLOYMENT_NAME,
    limit: Annotated[int, typer.Option("--limit", help="At most this many runs at once.")] = 4,
    poll_s: Annotated[int, typer.Option("--poll-s", help="Seconds between checks for scheduled or resumed runs.")] = 10,
) -> None:
    """Serve the sortie deployments (plan, dispatch, expiry, daily patrols) against PREFECT_API_URL."""

    def body() -> dict[str, Any]:
        api = os.environ.get("PREFECT_API_URL", "").strip()
        if not api:
            raise InvalidArgument(
                "PREFECT_API_URL is not set: start a server (`prefect server start`) and "
                "`export PREFECT_API_URL=http://127.0.0.1:4200/api` first"
            )
        from prefect import serve as prefect_serve

        deployments = build_deployments(name=name, regions=tuple(region or DEFAULT_REGIONS), cron=cron, timezone=timezone, world=world)
        prefect_serve(*deployments, limit=limit, query_seconds=poll_s)  # blocks until interrupted
        return {"served": [d.name for d in deployments], "api_url": api}

    run(body, as_json=False)
