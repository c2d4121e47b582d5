"""The one-run ``mission`` flow against the session's real Prefect server: request → plan → the approval form on
the same run → dispatch → launch → follow → report, one flow run ended named after the flight.

Real parts on 127.0.0.1: the Prefect server (``conftest.py``), a ledger file in a fresh SORTIE_HOME, the planner on
a copy of the demo world, and one simulated vehicle per drone of the requester's tenant on its own UDP port, written
into the world's fleet.json as that drone's link (ArduPilot or PX4 as its entry says, standing on its dock, flying at
500× so the inspection flies in seconds).
The run is a local one (started in a thread of this process): it pauses at the approval form, and the test answers
the form as the Prefect UI does (``resume_flow_run`` with the input).
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from orchestration.missionkit import fleet_vehicles

NOW = "2026-11-29T06:58:03+02:00"  # the demo telemetry (06:57:30) is fresh enough to dispatch
CITY_FIRE = ("M30T-01", "M30T-02", "M3TD-01", "M3TD-02")

pytestmark = [pytest.mark.prefect, pytest.mark.timeout(240)]


def _waiting(budget_s: float) -> tuple[Any, Any]:
    """The draft the run planned and the run paused on its approval (tagged with the draft version)."""
    from flows.authority.waking import find_waiting_runs
    from flows.ledger import open_ledger

    deadline = time.monotonic() + budget_s
    while time.monotonic() < deadline:
        drafts = open_ledger().list_drafts(limit=5)
        if drafts and (runs := find_waiting_runs(drafts[0].draft_id, drafts[0].version)):
            assert len(drafts) == 1 and len(runs) == 1, (drafts, runs)
            return drafts[0], runs[0]
        time.sleep(0.5)
    raise AssertionError(f"no run waited for an approval within {budget_s} s")


def test_one_run_plans_asks_approval_dispatches_launches_follows_and_reports(
        prefect_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect import get_client
    from prefect.artifacts import Artifact

    from flows.context import DEMO_WORLD_DIR
    from flows.ledger import open_ledger
    from flows.orchestration.mission_run import mission
    from flows.authority.views import report_artifact_key

    home, world = tmp_path / "home", tmp_path / "world"
    shutil.copytree(DEMO_WORLD_DIR, world)
    monkeypatch.setenv("SORTIE_HOME", str(home))
    sims = fleet_vehicles(world, CITY_FIRE)
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["state"] = mission(text="inspect the hydrants today", requested_by="li.wei", region_id="region-1002",
                                   world=str(world), now=NOW, poll_interval_s=1, watch_s=150, return_state=True)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    try:
        thread.start()
        d, waiting = _waiting(120)  # planned, its artifact published, paused at the approval form of this very run
        assert d.state == "DRAFT" and waiting.state.is_paused()
        with get_client(sync_client=True) as client:
            answer = {"draft_id": d.draft_id, "version": d.version, "plan_hash": d.plan_hash, "decision": "approve",
                      "approver": "chen.jing", "comment": "one run"}
            assert str(client.resume_flow_run(waiting.id, run_input=answer).status.value).upper() == "ACCEPT"
        thread.join(200)
        assert not thread.is_alive() and "error" not in box, box.get("error")
    finally:
        for sim in sims.values():
            sim.stop()
    state = box["state"]
    result = state.result(raise_on_failure=False)
    assert (state.type.value, state.name) == ("COMPLETED", "SUCCEEDED"), (state.name, state.message, result)
    assert result["draft_id"] == d.draft_id and result["artifact_key"].startswith("draft-")
    with get_client(sync_client=True) as client:
        assert client.read_flow_run(waiting.id).state.name == "SUCCEEDED"  # the run that waited is the one that flew
    events = [e.to_state for e in open_ledger().events(d.draft_id)]
    assert events[-5:] == ["APPROVED", "DISPATCHED", "LAUNCHED", "IN_FLIGHT", "SUCCEEDED"], events
    assert sum(sim.stats.uploads_completed for sim in sims.values()) >= 1  # the mission went to a vehicle
    report = Artifact.get(report_artifact_key(d.draft_id, d.version))
    assert report is not None and "**State:** SUCCEEDED" in str(report.data)
    assert result["report_artifact_key"] == report_artifact_key(d.draft_id, d.version)
