"""The documented control room, stood up for one shift (docs/ops.md "A shift", docs/prefect.md, docs/server.md).

Every part is the real one, on 127.0.0.1, in the order the docs give:

- PostgreSQL (``orchestration.pgkit``) and ``prefect server start`` on it (``orchestration/conftest.py``'s
  starter), its scheduler looking every ``SCHEDULER_LOOP_S`` seconds (Prefect's default is 60 s);
- ``sortie server`` on the REAL clock (no ``--clock``) with ``PREFECT_API_URL`` (it wakes waiting runs), on a copy
  of the demo world whose drones talk on free UDP ports and whose forecast covers the hours around now (the demo's
  ``weather.json`` ends on 2026-12-06: a control room keeps its forecast current; a calm hour of it is repeated);
- people with their own tokens and one-time codes, and the worker's narrow service token (``prefect-worker``,
  ``--scope service,plan,read,dispatch`` as docs/server.md issues it);
- ``sortie sim-fleet`` (the vehicles), started by the test;
- ``prefect work-pool create sortie-pool --type process``, ``prefect deploy`` of the patrol and ``expire-draft``
  from this repository's ``prefect.yaml``, and ``prefect worker start --pool sortie-pool`` holding the service
  token and no ledger.

``due_patrol`` gives the deployed patrol a schedule of its own that falls due seconds from now (Prefect's
scheduler, not the test, creates the run), with the schedule's parameters (the text the operator's patrol reads).
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ops.opskit import REPO, free_link_world

__all__ = ["PREFECT_BIN", "SCHEDULER_LOOP_S", "current_forecast_world", "deploy", "due_patrol", "start_worker",
           "worker_env"]

PREFECT_BIN = Path(sys.executable).with_name("prefect")
SCHEDULER_LOOP_S = 2
#: The demo forecast's calm hour repeated over the hours around now (gusts 1.0 m/s, no rain).
CALM_HOUR = "2026-12-06T01:00"


def current_forecast_world(dest: Path, hours_before: int = 3, hours_after: int = 24) -> Path:
    """A free-link copy of the demo world whose ``weather.json`` has hourly values (one calm hour of the demo's
    own forecast) from ``hours_before`` hours before now to ``hours_after`` after, in its own GMT time zone."""
    world = free_link_world(dest)
    path = world / "weather.json"
    forecast = json.loads(path.read_text(encoding="utf-8"))
    hourly = forecast["hourly"]
    calm = hourly["time"].index(CALM_HOUR)
    start = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0) - timedelta(hours=hours_before)
    n = hours_before + hours_after
    forecast["hourly"] = {key: ([(start + timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M") for i in range(n)]
                                if key == "time" else [values[calm]] * n) for key, values in hourly.items()}
    path.write_text(json.dumps(forecast, indent=1), encoding="utf-8")
    return world


def worker_env(prefect_env: dict[str, str], server_url: str, token: str) -> dict[str, str]:
    """A worker's environment as docs/server.md sets it: the Prefect API, the sortie server and the service token;
    no ``SORTIE_HOME`` (a worker never opens the ledger)."""
    env = {k: v for k, v in prefect_env.items() if not k.startswith("SORTIE_")}
    env.update(SORTIE_SERVER=server_url, SORTIE_TOKEN=token, PYTHONPATH=str(REPO), COLUMNS="200",
               PREFECT_WORKER_QUERY_SECONDS="1", PREFECT_WORKER_PREFETCH_SECONDS="1")
    return env


def prefect(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([str(PREFECT_BIN), *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def deploy(env: dict[str, str], *names: str) -> None:
    """docs/prefect.md "With a work pool": the pool, then ``prefect deploy`` of ``names`` from ``prefect.yaml``."""
    prefect(env, "work-pool", "create", "sortie-pool", "--type", "process", "--overwrite")
    prefect(env, "--no-prompt", "deploy", *(a for n in names for a in ("--name", n)))


def due_patrol(client: Any, deployment: str, parameters: dict[str, Any], in_s: float) -> tuple[Any, datetime]:
    """A schedule of the deployed ``deployment`` whose first run falls due ``in_s`` seconds from now (a daily
    interval anchored then), carrying ``parameters``; (the deployment, the due time). Prefect's scheduler service
    makes the run; the worker starts it when it is due."""
    from prefect.client.schemas.actions import DeploymentScheduleCreate
    from prefect.client.schemas.schedules import IntervalSchedule

    dep = client.read_deployment_by_name(deployment)
    due = (datetime.now(timezone.utc) + timedelta(seconds=in_s)).replace(microsecond=0)
    client.create_deployment_schedules(dep.id, [DeploymentScheduleCreate(
        schedule=IntervalSchedule(interval=timedelta(days=1), anchor_date=due, timezone="UTC"), active=True,
        parameters=parameters)])
    return dep, due


def start_worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``prefect worker start --pool sortie-pool`` in its own session (stop it with ``stop_process_group``)."""
    with open(log, "wb") as out:
        return subprocess.Popen([str(PREFECT_BIN), "worker", "start", "--pool", "sortie-pool", "--limit", "3"],
                                env=env, cwd=log.parent, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
