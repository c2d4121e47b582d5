"""``sortie serve``: everything one machine needs to run the Prefect side of sortie.

It serves, from this one process, the deployments that ``prefect.yaml`` would
put on a work pool: ``plan-mission/sortie``, ``dispatch-mission/sortie``,
``expire-draft/sortie`` (scheduled by a waiting run at its draft's deadline),
``monitor-mission/sortie`` (started by every dispatch: follows the flight to
SUCCEEDED/ABORTED and publishes the report), ``recall-mission/sortie``,
``pause-mission/sortie`` and ``resume-mission/sortie`` (an operator's control,
started from the UI with their user id and one-time code), one ``daily-patrol/<region>`` per
patrol of ``prefect.yaml`` with *its* schedule and dispatcher (each a one-run mission:
``mission_run.daily_patrol``) (``flows.orchestration.deploy_spec``:
the yaml is the one source of truth for regions and crons) and the nightly
backup. Runs execute as subprocesses of this process; a suspended run holds no
process and is picked up again when it is resumed.

In the embedded mode (no ``SORTIE_SERVER``) this long-lived process also runs
the authority's sweeper on ``SORTIE_HOME``'s ledger
(``flows.authority.sweeper.embedded_sweeper``): overdue drafts expire and a
version whose waiting run was cancelled in the UI is withdrawn.

It needs a running Prefect server and ``PREFECT_API_URL`` pointing at it (in
the environment or the Prefect profile): without it Prefect would start a
throw-away ephemeral server whose runs vanish with the process, so the
command refuses instead. It also refuses to take over a deployment of the
same name that ``prefect deploy`` put on a work pool (both would claim it and
every run would break): serve under another ``--name``, or delete those.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from flows.cli.app import app, run
from planner.errors import InvalidArgument

__all__ = ["serve", "build_deployments", "DAILY_CRON", "DAILY_TIMEZONE", "DEPLOYMENT_NAME", "refuse_pool_conflicts"]

DEPLOYMENT_NAME = "sortie"
DAILY_CRON = "0 6 * * *"  # only when prefect.yaml is absent (flows.orchestration.deploy_spec)
DAILY_TIMEZONE = "Europe/Helsinki"


def build_deployments(
    *,
    name: str = DEPLOYMENT_NAME,
    regions: tuple[str, ...] | list[str] | None = None,
    cron: str | None = None,
    timezone: str | None = None,
    world: str | None = None,
    requested_by: str | None = None,
    approval_window_s: int | None = None,
    poll_interval_s: int | None = None,
) -> list[Any]:
    """The ``RunnerDeployment`` objects ``prefect.serve`` runs: the same set and schedules as ``prefect.yaml``.

    ``regions`` picks patrols (a region not in the yaml gets the default 06:00 Helsinki schedule);
    ``cron``/``timezone``/``requested_by`` override every patrol's.
    """
    from prefect.schedules import Cron

    from flows.orchestration.deploy_spec import DEFAULT_TIMEZONE, PatrolSpec, Schedule, backup_schedule, patrols
    from flows.orchestration.expiry_flow import expire_draft
    from flows.orchestration.mission_flows import dispatch_mission, plan_mission
    from flows.orchestration.mission_run import daily_patrol, mission
    from flows.orchestration.monitor_flow import monitor_mission
    from flows.orchestration.control_flows import pause_mission, recall_mission, resume_mission

    common: dict[str, Any] = {"world": world} if world else {}
    gate: dict[str, Any] = dict(common, expiry_deployment=f"expire-draft/{name}")
    if approval_window_s is not None:
        gate["approval_window_s"] = approval_window_s
    if poll_interval_s is not None:
        gate["poll_interval_s"] = poll_interval_s
    deployments = [
        mission.to_deployment(name=name, parameters=gate, tags=["sortie", "mission"],
                              description="One run per mission: plan, clarify, approve, dispatch, launch, follow, "
                                          "report."),
        plan_mission.to_deployment(name=name, parameters=common, tags=["sortie"]),
        dispatch_mission.to_deployment(name=name, parameters=gate, tags=["sortie"]),
        expire_draft.to_deployment(name=name, tags=["sortie"]),
        monitor_mission.to_deployment(name=name, tags=["sortie", "monitor"],
                                      description="Started by every dispatch: follow the flight, record its end, publish the report."),
        recall_mission.to_deployment(name=name, parameters=common, tags=["sortie", "control"]),
        pause_mission.to_deployment(name=name, parameters=common, tags=["sortie", "control"]),
        resume_mission.to_deployment(name=name, parameters=common, tags=["sortie", "control"]),
    ]
    declared = {p.region_id: p for p in patrols()}
    chosen = [declared.get(r) or PatrolSpec(r, r, "li.wei", Schedule(DAILY_CRON, DAILY_TIMEZONE)) for r in regions] \
        if regions is not None else list(declared.values())
    for p in chosen:
        sched = Schedule(cron or p.schedule.cron, timezone or p.schedule.timezone)
        deployments.append(
            daily_patrol.to_deployment(
                name=p.name,
                parameters=dict(gate, region_id=p.region_id, requested_by=requested_by or p.requested_by)
                | ({"dispatcher": p.dispatcher} if p.dispatcher else {}),
                schedules=[Cron(sched.cron, timezone=sched.timezone)],
                tags=["sortie", "daily-patrol"],
                description=f"Daily patrol of {p.region_id} ({sched.cron}, {sched.timezone}) as one mission run: plan, "
                            "clarification and approval forms, dispatch, launch, follow, report.",
            )
        )
    from flows.orchestration.backup_flow import backup_ledger  # the nightly ledger backup (prefect.yaml: nightly)

    backup = backup_schedule()
    deployments.append(
        backup_ledger.to_deployment(
            name="nightly", schedules=[Cron(backup.cron, timezone=backup.timezone or DEFAULT_TIMEZONE)],
            tags=["sortie", "backup"],
            description="Back up the ledger (consistent copy, verified, manifest); keeps the newest 14.",
        )
    )
    return deployments


def refuse_pool_conflicts(deployments: list[Any]) -> None:
    """``CONFLICT`` if a deployment serve would create already belongs to a work pool (``prefect deploy``)."""
    from flows.orchestration.deploy_spec import pool_conflicts
    from flows.errors import Conflict

    owned = pool_conflicts([f"{d.flow_name}/{d.name}" for d in deployments])
    if owned:
        raise Conflict(
            "these deployments were made by `prefect deploy` and run on a work pool: " + ", ".join(owned)
            + ". Serving them too would break every run (the worker and this process would both claim them). "
            "Use one or the other: keep the worker (`prefect worker start --pool sortie-pool`) and do not serve, or "
            "delete those deployments first (`prefect deployment delete <flow>/<name>`) and serve (docs/prefect.md)."
        )


@app.command("serve")
def serve(
    region: Annotated[
        list[str] | None, typer.Option("--region", help="Region with a daily patrol (repeatable; default: the patrols of prefect.yaml).")
    ] = None,
    cron: Annotated[str | None, typer.Option("--cron", help="Override every patrol's schedule (default: prefect.yaml's).")] = None,
    timezone: Annotated[str | None, typer.Option("--timezone", help="Time zone of --cron (default: prefect.yaml's).")] = None,
    world: Annotated[str | None, typer.Option("--world", help="World folder for the served flows (default: $SORTIE_WORLD, then the demo world).")] = None,
    name: Annotated[str, typer.Option("--name", help="Deployment name of plan/dispatch/expire/monitor/recall.")] = DEPLOYMENT_NAME,
    limit: Annotated[int, typer.Option("--limit", help="At most this many runs at once.")] = 4,
    poll_s: Annotated[int, typer.Option("--poll-s", help="Seconds between checks for scheduled or resumed runs.")] = 10,
) -> None:
    """Serve the sortie deployments (plan, dispatch, expiry, monitor, recall, daily patrols) against PREFECT_API_URL."""

    def body() -> dict[str, Any]:
        from flows.authority.prefect_api import prefect_api_url

        api = prefect_api_url()
        if not api:
            raise InvalidArgument(
                "PREFECT_API_URL is not set (neither in the environment nor in the Prefect profile): start a server "
                "(`uv run prefect server start`) and `uv run prefect config set PREFECT_API_URL=http://127.0.0.1:4200/api` "
                "(or export it) first"
            )
        from prefect import serve as prefect_serve

        deployments = build_deployments(name=name, regions=tuple(region) if region else None, cron=cron,
                                        timezone=timezone, world=world)
        refuse_pool_conflicts(deployments)
        from flows.authority.sweeper import embedded_sweeper

        sweeper = embedded_sweeper()  # embedded mode: this long-lived process expires what is overdue
        try:
            prefect_serve(*deployments, limit=limit, query_seconds=poll_s)  # blocks until interrupted
        finally:
            if sweeper is not None:
                sweeper.stop()
        return {"served": [d.name for d in deployments], "api_url": api}

    run(body, as_json=False)
