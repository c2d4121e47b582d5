"""A daily patrol deployed from ``prefect.yaml`` runs on a real worker as one mission: clarification, approval,
dispatch, launch, follow, report — one flow run, ended named after the flight.

All real and on 127.0.0.1, as docs/prefect.md "With a work pool" sets it up: the session's Prefect server
(``conftest.py``), ``prefect work-pool create sortie-pool --type process``, ``prefect deploy`` of the patrol of
region-1001 and of ``expire-draft/sortie`` from this repository's ``prefect.yaml`` (its pull step, its pool), and
``prefect worker start --pool sortie-pool`` in its own process with its own SORTIE_HOME (the embedded authority on
a ledger file this test reads). The run is started like a scheduled one (``run_deployment``, the patrol's text
overridden by one that asks: "40 m above the roofs" and "especially the north gate"); it suspends on its
clarification form (no process held), is answered as the Prefect UI does (``resume_flow_run`` with the input), is
started again by the worker, plans, publishes its draft and suspends on its approval form; approved by chen.jing,
the worker starts it again: it dispatches as the patrol's dispatcher, launches at the planned start, follows the
flight of a simulated vehicle (500×) and publishes the report (ended named after the flight). The run the worker
started is the one that flew.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestration.missionkit import fleet_vehicles
from testkit import stop_process_group

pytestmark = [pytest.mark.prefect, pytest.mark.slow, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[2]
PREFECT_BIN = Path(sys.executable).with_name("prefect")
NOW = "2026-11-29T06:58:10+02:00"  # the demo telemetry (06:57:30) is fresh enough to dispatch
TEXT = "patrol the fire lanes now at 40 m above the roofs, especially the north gate"
CITY_FIRE = ("M30T-01", "M30T-02", "M3TD-01", "M3TD-02")
SPEEDUP = 500.0
#: How the flown patrol ends: its work flown (flows/usecases/flown_work.py). It read INCOMPLETE under load (94.7 %
#: of the lanes within 5 m) while the simulator sent one position per loop turn — one a vehicle second at 500× —
#: and the follower's UDP queue dropped positions in a stall; now 5 a vehicle second, none dropped (issue 43).
FLOWN = ("SUCCEEDED",)


def _until(what: str, probe: Callable[[], Any], budget_s: float, every_s: float = 0.5) -> Any:
    deadline = time.monotonic() + budget_s
    while not (value := probe()):
        assert time.monotonic() < deadline, f"timed out after {budget_s} s waiting for {what}"
        time.sleep(every_s)
    return value


def _prefect(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([str(PREFECT_BIN), *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_a_daily_patrol_on_a_worker_is_one_run_from_its_clarification_to_its_report(
        prefect_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect import get_client
    from prefect.artifacts import Artifact
    from prefect.deployments import run_deployment

    from flows.authority.views import report_artifact_key
    from flows.context import DEMO_WORLD_DIR
    from flows.ledger import open_ledger

    home, world = tmp_path / "home", tmp_path / "world"
    shutil.copytree(DEMO_WORLD_DIR, world)
    monkeypatch.setenv("SORTIE_HOME", str(home))
    env = {k: v for k, v in prefect_server.env.items() if not k.startswith("SORTIE_")}
    env.update(SORTIE_HOME=str(home), PYTHONPATH=str(REPO), PREFECT_WORKER_QUERY_SECONDS="1",
               PREFECT_WORKER_PREFETCH_SECONDS="1")
    _prefect(env, "work-pool", "create", "sortie-pool", "--type", "process", "--overwrite")
    _prefect(env, "--no-prompt", "deploy", "--name", "daily-patrol/region-1002", "--name", "expire-draft/sortie")
    sims = fleet_vehicles(world, CITY_FIRE, speedup=SPEEDUP)
    with open(tmp_path / "worker.log", "wb") as log:
        worker = subprocess.Popen([str(PREFECT_BIN), "worker", "start", "--pool", "sortie-pool", "--limit", "2"],
                                  env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        with get_client(sync_client=True) as client:
            started = run_deployment("daily-patrol/region-1002", timeout=0, parameters={
                "text": TEXT, "world": str(world), "now": NOW, "poll_interval_s": 1, "watch_s": 150})
            assert started.work_pool_name == "sortie-pool"

            def suspended() -> Any:
                run = client.read_flow_run(started.id)
                assert not run.state.is_final(), (run.state.name, run.state.message, _log(tmp_path))
                return run if run.state.name == "Suspended" else None

            # 1. the clarification form of this run (Suspended: no process holds the wait)
            t0 = time.monotonic()
            run = _until("the run suspended on its clarification form", suspended, 180)
            asked_s = time.monotonic() - t0
            print(f"worker patrol: suspended on its clarification form after {asked_s:.0f} s", flush=True)
            rid = next(t.split(":", 1)[1] for t in run.tags if t.startswith("request:"))
            asked = open_ledger().latest_request(rid).questions
            said = {"height_reference": "above ground", "focus": "evenly"}
            assert [q["kind"] for q in asked] == list(said), asked
            answers = {f"answer_{i}": said[q["kind"]] for i, q in enumerate(asked, start=1)}
            client.resume_flow_run(started.id, run_input={"request_id": rid, "answerer": "li.wei", **answers})

            # 2. the same run, started again by the worker: planned with the answers, suspended on its approval form
            def on_approval() -> Any:
                run = suspended()
                return run if run is not None and any(t.startswith("draft:") for t in run.tags) else None

            run = _until("the same run suspended on its approval form", on_approval, 180)
            approval_s = time.monotonic() - t0
            print(f"worker patrol: suspended on its approval form after {approval_s:.0f} s", flush=True)
            d = open_ledger().list_drafts(limit=1)[0]
            assert f"draft:{d.draft_id}:v{d.version}" in run.tags and d.state == "DRAFT"
            assert [c["answer"] for c in d.intent["clarifications_answered"]] == ["above ground", "evenly"]
            assert d.intent["intent"]["altitude_m"] == 40
            client.resume_flow_run(started.id, run_input={
                "draft_id": d.draft_id, "version": d.version, "plan_hash": d.plan_hash, "decision": "approve",
                "approver": "chen.jing", "comment": "patrol on the worker"})

            # 3. dispatched, launched, flown and reported by the run the worker started
            final = _until("the run's end, named", lambda: (r := client.read_flow_run(started.id)).state.is_final()
                           and r.state.name != "Completed" and r, 300, every_s=1.0)  # its on_completion names it
            print(f"worker patrol: ended {final.state.name} after {time.monotonic() - t0:.0f} s", flush=True)
        assert final.state.name in FLOWN, (final.state.message, _log(tmp_path))
        assert final.deployment_id == started.deployment_id and final.work_pool_name == "sortie-pool"
    finally:
        stop_process_group(worker, term_timeout_s=15.0)
        for sim in sims.values():
            sim.stop()
    events = [(e.to_state, e.actor) for e in open_ledger().events(d.draft_id)]
    assert [s for s, _ in events][-5:] == ["APPROVED", "DISPATCHED", "LAUNCHED", "IN_FLIGHT", final.state.name], events
    assert dict(events)["DISPATCHED"] == "chen.jing"  # the patrol's dispatcher (prefect.yaml)
    dispatches = [x for x in open_ledger().dispatches(d.draft_id) if x.version == d.version]
    assert [x.status for x in dispatches] == ["ACKED"], dispatches  # dispatched once, whatever restarted
    assert [s for s, _ in events].count("DISPATCHED") == 1
    assert sum(sim.stats.uploads_completed for sim in sims.values()) >= 1  # the mission went to a vehicle
    report = Artifact.get(report_artifact_key(d.draft_id, d.version))
    assert report is not None and f"**State:** {final.state.name}" in str(report.data)


def _log(tmp_path: Path) -> str:
    path = tmp_path / "worker.log"
    return path.read_text(errors="replace")[-3000:] if path.exists() else ""

