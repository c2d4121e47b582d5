"""Prefect: launch a dispatched mission at its planned start, follow it, and publish its report.

Thin (STYLE 10): the ``monitor-flight`` task calls ``flows.vehicle.monitor.monitor_mission``
(the same function ``sortie monitor`` calls) — or, when the run was started to
launch (``launch_as``: the dispatcher the dispatch run named), waits for the
planned start (``launch_at``; never with a fixed ``now``, whose clock does not
run) and calls ``flows.usecases.flying.launch_and_follow``: the launch
(``sortie launch``'s use case) and the follower through one link per vehicle.
The ``publish-report`` task builds the report (``flows.usecases.report``) and
creates the artifact ``report-<draft id>-v<version>`` with the map embedded as
a ``data:`` URI. The flow ``monitor_mission`` only orders them. The monitor is bounded by
its own ``timeout_s``, so a run never hangs on a silent vehicle; it is not
retried (a second monitor of the same version returns the recorded end).
With ``SORTIE_SERVER`` set the server follows the flight (``POST
/v1/drafts/{id}/monitor``) and publishes its ``flight.*`` events; the report
stays on the server host.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows.orchestration.artifacts import MAX_INLINE_PNG_BYTES
from flows.usecases.report import report_artifact_key

__all__ = ["report_artifact_key", "monitor_flight_task", "publish_report_task", "monitor_mission"]


#: The longest a monitor run waits for a planned start before it gives up launching (the operator then runs
#: ``sortie launch``): a worker slot is held meanwhile.
MAX_LAUNCH_WAIT_S = 12 * 3600.0


@task(name="monitor-flight", cache_policy=NO_CACHE)
def monitor_flight_task(
    draft_id: str, version: int | None, link: str | None, actor: str, now: datetime | None, timeout_s: float,
    launch_as: str | None = None, launch_at: str | None = None,
) -> dict[str, Any]:
    from flows.client import flowops
    from flows.vehicle.monitor import MonitorOptions, monitor_mission as follow

    if flowops.server_mode():  # the authority follows (its ledger, its link record) and publishes the flight events
        if link:
            from planner.errors import OverrideRefused

            raise OverrideRefused("link is refused with SORTIE_SERVER set: the server follows each vehicle at its "
                                  "own record of the link address")
        flowops.refuse_local_inputs(None, now.isoformat() if now else None)
        if launch_as:
            _wait_for_start(launch_at, now)
            from flows.client.http import SortieClient

            SortieClient.from_env().request("POST", f"/v1/drafts/{draft_id}/launch", body={"version": version})
        return flowops.monitor(draft_id, version, timeout_s)
    options = MonitorOptions(timeout_s=timeout_s, start_wait_s=min(60.0, timeout_s))
    if launch_as and not link:
        from flows.ledger import open_ledger
        from flows.usecases.flying import launch_and_follow

        ledger = open_ledger()
        _wait_for_start(launch_at or _planned_start(ledger, draft_id, version), now)
        launched, result = launch_and_follow(draft_id, version, launch_as=launch_as, ledger=ledger, now=now,
                                             actor=actor, options=options)
        return result.to_dict() | {"launch": launched}
    return follow(draft_id, version, link=link, actor=actor, now=now, options=options).to_dict()


def _planned_start(ledger: Any, draft_id: str, version: int | None) -> str | None:
    """The first sortie's planned start (ISO 8601) of the version, from its plan."""
    plan = ledger.get_draft(draft_id, version).plan or {}
    starts = sorted(s["start_at"] for s in plan.get("sorties", []) if s.get("start_at"))
    return starts[0] if starts else plan.get("planned_for")


def _wait_for_start(launch_at: str | None, now: datetime | None) -> None:
    """Sleep until the planned start on the real clock (bounded); a fixed ``now`` (a replayed demo) does not wait."""
    import time
    from datetime import timezone

    if not launch_at or now is not None:
        return
    left = (datetime.fromisoformat(launch_at) - datetime.now(timezone.utc)).total_seconds()
    if left > MAX_LAUNCH_WAIT_S:
        from planner.errors import Conflict

        raise Conflict(f"the planned start {launch_at} is more than {MAX_LAUNCH_WAIT_S / 3600:g} h away: launch it "
                       "then with `sortie launch`")
    if left > 0:
        time.sleep(left)


@task(name="publish-report", cache_policy=NO_CACHE)
def publish_report_task(draft_id: str, version: int) -> str:
    from prefect.artifacts import create_markdown_artifact

    from flows.usecases.report import build_report, markdown_for_artifact, write_report

    report = build_report(draft_id, version)
    write_report(report)
    text = markdown_for_artifact(report) if report.map_png and len(report.map_png) <= MAX_INLINE_PNG_BYTES else report.markdown
    key = report_artifact_key(draft_id, version)
    create_markdown_artifact(markdown=text, key=key,
                             description=f"Mission report of draft {draft_id} v{version}: planned vs flown, alerts, map.")
    return key


@flow(name="monitor-mission", log_prints=True)
def monitor_mission(
    draft_id: str,
    version: int | None = None,
    link: str | None = None,
    actor: str = "monitor",
    now: datetime | None = None,
    timeout_s: float = 900.0,
    launch_as: str | None = None,
    launch_at: str | None = None,
) -> dict[str, Any]:
    """Launch at the planned start (when ``launch_as`` names the dispatcher), follow the dispatched version to its
    end (ledger state and alerts), then publish the report."""
    from flows.client import flowops

    result = monitor_flight_task(draft_id, version, link, actor, now, timeout_s, launch_as, launch_at)
    if flowops.server_mode():  # the flight record and its report live on the server host (`sortie report` there)
        return {k: result.get(k) for k in ("draft_id", "version", "outcome", "state", "reason")} | {"artifact_key": None}
    key = publish_report_task(draft_id, result["version"])
    print(f"{draft_id} v{result['version']}: {result['outcome']} — {result['reason']} (artifact {key})")
    return {"draft_id": draft_id, "version": result["version"], "outcome": result["outcome"],
            "state": result["state"], "reason": result["reason"], "artifact_key": key}
