"""After a dispatch, start ``monitor-mission`` so every dispatched draft reaches SUCCEEDED/ABORTED.

The dispatch run does not follow the flight itself (a flight lasts far longer
than an approval run should hold a worker slot): it starts a run of the
``monitor-mission`` deployment that sits next to its own deployments — the
deployment name of ``expire-draft/<name>`` that the gate already knows, so
``sortie serve --name X`` and ``prefect deploy --all`` (``sortie``) both find
theirs — and returns. The monitor run follows the vehicles, moves the draft
to SUCCEEDED or ABORTED in the ledger and publishes ``report-<id>-v<n>``.

One monitor per version: the run is created with the idempotency key
``monitor-<id>-v<n>``, so a dispatch run restarted after a crash does not start
a second one. Without a ``monitor-mission`` deployment (a plain local run with
nothing served) nothing is started and the run log says how to follow the
flight by hand (``sortie monitor``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MONITOR_FLOW", "monitor_deployment_for", "start_monitor"]

MONITOR_FLOW = "monitor-mission"


def monitor_deployment_for(expiry_deployment: str) -> str:
    """``expire-draft/<name>`` → ``monitor-mission/<name>`` (a bare name is taken as the deployment name)."""
    name = expiry_deployment.split("/", 1)[1] if "/" in expiry_deployment else expiry_deployment
    return f"{MONITOR_FLOW}/{name}"


def start_monitor(draft_id: str, version: int, *, deployment: str, now: str | None = None,
                  dry_run: bool = False, launch_as: str | None = None, launch_at: str | None = None) -> str | None:
    """Create the monitor run of a dispatched version (at most one ever); its id, or None if none was started.

    ``launch_as``/``launch_at``: the run launches the mission at its planned start as that dispatcher (the
    launch step of the dispatch flow and the daily patrol), then follows it."""
    from prefect import get_run_logger
    from prefect.deployments import run_deployment

    logger = get_run_logger()
    if dry_run:
        return None  # nothing flies after a dry run
    parameters: dict[str, Any] = {"draft_id": draft_id, "version": int(version)}
    if now:
        parameters["now"] = now  # the same fixed ledger time as the dispatch (a reproducible demo)
    if launch_as:
        parameters["launch_as"] = launch_as
        if launch_at:
            parameters["launch_at"] = launch_at
    try:
        run = run_deployment(deployment, parameters=parameters, timeout=0, as_subflow=False,
                             idempotency_key=f"monitor-{draft_id}-v{int(version)}",
                             tags=[f"draft:{draft_id}", f"draft:{draft_id}:v{int(version)}", "sortie-monitor"])
    except Exception as exc:  # noqa: BLE001 - the dispatch stands; following it is the monitor's job
        logger.warning("no %s run started (%s: %s): follow the flight with `sortie monitor %s --version %s`",
                       deployment, type(exc).__name__, exc, draft_id, version)
        return None
    logger.info("monitoring %s v%s in run %s (%s)", draft_id, version, run.name, deployment)
    return str(run.id)


def _task() -> Any:
    from prefect import task
    from prefect.cache_policies import NO_CACHE

    return task(name="start-monitor", cache_policy=NO_CACHE)(start_monitor)


#: ``start_monitor`` as a Prefect task; call it inside the dispatch run.
start_monitor_task = _task()
