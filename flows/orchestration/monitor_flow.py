"""The ``monitor-mission`` Prefect flow: launch a dispatched mission at its planned start, follow it, then publish
its report as an artifact.

Which monitor: this is the Prefect flow a dispatch run starts
(``after_dispatch``); following the vehicles themselves is
``flows.usecases.monitoring``. Thin (STYLE 10): the ``monitor-flight`` task asks
the authority to follow the flight (embedded: over MAVLink in this process;
with ``SORTIE_SERVER``: the server follows it with its own link record and
publishes its ``flight.*`` events, and this waits for the end). Nothing flies
until a ground station launches it: a run started to launch (``launch_as``:
the dispatcher the dispatch run named) first waits for the planned start
(``launch_at``, else — embedded, on this machine's clock — the first sortie's
start; never with a fixed ``now``, whose clock does not run) and asks the
authority to launch as it follows (``Authority.monitor(launch_as=…)``: the
embedded authority launches through the very links its follower watches; a
server launches as the worker's token, then follows). The
``publish-report`` task asks the authority for the report
(``flows.usecases.report``: planned vs flown, alerts, map) and creates the
artifact ``report-<draft id>-v<version>`` with the map embedded as a
``data:`` URI — in both modes: with a server the report is the server's
(``GET /v1/drafts/{id}/report``, written where the flight record is). The
flight is bounded by ``timeout_s``, so a run never hangs on a silent vehicle;
it is not retried (a second monitor of the same version returns the recorded
end).

The run ends named after the flight (``flows.orchestration.named_end``):
SUCCEEDED (Completed), RECALLED (Cancelled: an operator's order), ABORTED
(Failed, with the vehicle's reason); still flying when the watch ran out ends
it named by the ledger's state (LAUNCHED, IN_FLIGHT, …: Failed, someone must
look); a launch that was refused ends it named by the refusal's code
(PREFLIGHT_FAILED naming the check: the mission stays on the vehicle,
DISPATCHED, and the vehicle disarmed); a vehicle that never took off ends it
NOT_STARTED; any other refusal ends it named by its code. Never a green
Completed whatever happened.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows.authority.views import report_artifact_key
from flows.orchestration.artifacts import MAX_INLINE_PNG_BYTES
from flows.orchestration.mission_tasks import authority_for, refusal
from flows.orchestration.named_end import ended, name_the_end
from planner.errors import SortieError

__all__ = ["report_artifact_key", "monitor_flight_task", "publish_report_task", "monitor_mission",
           "follow_and_report"]


#: The longest a monitor run waits for a planned start before it gives up launching (the operator then runs
#: ``sortie launch``): a worker slot is held meanwhile.
MAX_LAUNCH_WAIT_S = 12 * 3600.0


@task(name="monitor-flight", cache_policy=NO_CACHE)
def monitor_flight_task(
    draft_id: str, version: int | None, link: str | dict[str, str] | None, actor: str, now: datetime | None, timeout_s: float,
    launch_as: str | None = None, launch_at: str | None = None,
) -> dict[str, Any]:
    """Follow the flight through the authority — with ``launch_as``, launch it at the planned start first; a
    refusal is returned (the run names its end), not raised."""
    from flows.authority import MonitorRequest

    try:
        a = authority_for("monitor-flight", now=now)
        if launch_as:
            _wait_for_start(launch_at or (_planned_start(a.show(draft_id, version)) if a.mode == "local" else None),
                            now)
        return a.monitor(draft_id, version, request=MonitorRequest(timeout_s=timeout_s), link=link,
                         on_behalf_of=actor, launch_as=launch_as)
    except SortieError as exc:
        return refusal(exc)


def _planned_start(shown: dict[str, Any]) -> str | None:
    """The first sortie's planned start (ISO 8601) of the version, as the authority shows it. Asked only of the
    embedded authority: a server's times are on its clock, which this machine's need not match."""
    starts = sorted(s["start_at"] for s in shown.get("sorties", []) if s.get("start_at"))
    return starts[0] if starts else shown.get("planned_for")


def _wait_for_start(launch_at: str | None, now: datetime | None) -> None:
    """Sleep until the planned start on the real clock (bounded); a fixed ``now`` (a replayed demo) does not wait."""
    import time
    from datetime import timezone

    if not launch_at or now is not None:
        return
    left = (datetime.fromisoformat(launch_at) - datetime.now(timezone.utc)).total_seconds()
    if left > MAX_LAUNCH_WAIT_S:
        from flows.errors import Conflict

        raise Conflict(f"the planned start {launch_at} is more than {MAX_LAUNCH_WAIT_S / 3600:g} h away: launch it "
                       "then with `sortie launch`")
    if left > 0:
        time.sleep(left)


@task(name="publish-report", cache_policy=NO_CACHE)
def publish_report_task(draft_id: str, version: int) -> str | None:
    """The report artifact's key; None (and a warning, no traceback) when the authority could not give the report."""
    from prefect import get_run_logger
    from prefect.artifacts import create_markdown_artifact

    try:
        report = authority_for("publish-report").report(draft_id, version)
    except SortieError as exc:
        get_run_logger().warning("no report for %s v%s: %s: %s", draft_id, version, exc.code, exc.message)
        return None
    text = report["markdown"]
    png = report.get("map_png_b64")
    if png and len(png) * 3 // 4 <= MAX_INLINE_PNG_BYTES:  # inline the map: an artifact has no files beside it
        text = text.replace("](flown.png)", f"](data:image/png;base64,{png})")
    key = report_artifact_key(draft_id, version)
    create_markdown_artifact(markdown=text, key=key,
                             description=f"Mission report of draft {draft_id} v{version}: planned vs flown, alerts, map.")
    return key


@flow(name="monitor-mission", log_prints=True, persist_result=True, on_completion=[name_the_end])
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
    return ended(follow_and_report(draft_id, version, link=link, actor=actor, now=now, timeout_s=timeout_s,
                                   launch_as=launch_as, launch_at=launch_at))


def follow_and_report(draft_id: str, version: int | None, *, link: str | dict[str, str] | None, actor: str,
                      now: datetime | None, timeout_s: float, launch_as: str | None,
                      launch_at: str | None = None) -> dict[str, Any]:
    """The flight's outcome dict (for ``ended``): launched at the planned start as ``launch_as``, followed to its end,
    its report published; a refusal (of the watch or of the launch) named by its code."""
    result = monitor_flight_task(draft_id, version, link, actor, now, timeout_s, launch_as, launch_at)
    if "refused" in result:
        print(f"{draft_id}: {result['refused']} — {result['message']}")
        return {"draft_id": draft_id, "version": version, "outcome": result["refused"], "message": result["message"]}
    refused = (result.get("launch") or {}).get("error")
    if refused:  # the launch was refused: nothing took off, the mission stays on the vehicle (DISPATCHED)
        print(f"{draft_id}: launch refused: {refused['code']} — {refused['message']}")
        return {"draft_id": draft_id, "version": result["version"], "outcome": refused["code"],
                "state": result.get("state"), "launch": result["launch"],
                "message": f"launch refused: {refused['message']}"}
    key = publish_report_task(draft_id, result["version"])
    state = str(result["state"])
    outcome = "NOT_STARTED" if state == "DISPATCHED" else state  # never launched (or never seen to take off)
    print(f"{draft_id} v{result['version']}: {state} — {result['reason']} (artifact {key})")
    return {"draft_id": draft_id, "version": result["version"], "outcome": outcome, "state": state,
            "reason": result["reason"], "launch": result.get("launch"),
            "message": f"{outcome}: {result['reason']} (report: artifact {key})", "artifact_key": key}
