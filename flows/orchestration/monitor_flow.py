"""Prefect: follow a dispatched mission and publish its report as a markdown artifact.

Thin (STYLE 10): the ``monitor-flight`` task calls ``flows.vehicle.monitor.monitor_mission``
(the same function ``sortie monitor`` calls), the ``publish-report`` task
builds the report (``flows.usecases.report``) and creates the artifact
``report-<draft id>-v<version>`` with the map embedded as a ``data:`` URI.
The flow ``monitor_mission`` only orders the two. The monitor is bounded by
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


@task(name="monitor-flight", cache_policy=NO_CACHE)
def monitor_flight_task(
    draft_id: str, version: int | None, link: str | None, actor: str, now: datetime | None, timeout_s: float
) -> dict[str, Any]:
    from flows.client import flowops
    from flows.vehicle.monitor import MonitorOptions, monitor_mission as follow

    if flowops.server_mode():  # the authority follows (its ledger, its link record) and publishes the flight events
        if link:
            from planner.errors import OverrideRefused

            raise OverrideRefused("link is refused with SORTIE_SERVER set: the server follows each vehicle at its "
                                  "own record of the link address")
        flowops.refuse_local_inputs(None, now.isoformat() if now else None)
        return flowops.monitor(draft_id, version, timeout_s)
    return follow(draft_id, version, link=link, actor=actor, now=now,
                  options=MonitorOptions(timeout_s=timeout_s, start_wait_s=min(60.0, timeout_s))).to_dict()


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
) -> dict[str, Any]:
    """Follow the dispatched version to its end (ledger state and alerts), then publish the report."""
    from flows.client import flowops

    result = monitor_flight_task(draft_id, version, link, actor, now, timeout_s)
    if flowops.server_mode():  # the flight record and its report live on the server host (`sortie report` there)
        return {k: result.get(k) for k in ("draft_id", "version", "outcome", "state", "reason")} | {"artifact_key": None}
    key = publish_report_task(draft_id, result["version"])
    print(f"{draft_id} v{result['version']}: {result['outcome']} — {result['reason']} (artifact {key})")
    return {"draft_id": draft_id, "version": result["version"], "outcome": result["outcome"],
            "state": result["state"], "reason": result["reason"], "artifact_key": key}
