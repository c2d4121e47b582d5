"""Setup that works the first time, and monitoring deployed — against the session's real Prefect server.

* ``sortie serve`` builds its deployments from ``prefect.yaml`` (one source of
  truth for the patrols' schedules) and refuses to take over a deployment that
  ``prefect deploy`` put on a work pool;
* ``PREFECT_API_URL`` set only in the Prefect profile counts as set;
* a dispatch run starts one ``monitor-mission`` run (its deployment applied
  as ``serve`` declares it), which — executed as a worker executes a run
  (``prefect.flow_engine.run_flow`` on the created run, in this process to
  save a Prefect start-up) — launches the simulated vehicle (it waits on the
  ground until then) and follows its flight over MAVLink/UDP on 127.0.0.1 to
  SUCCEEDED, and publishes the report artifact.
"""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from flows.usecases.grounds import Grounds

REPO = Path(__file__).resolve().parents[2]
NOW = "2026-11-29T06:58:02+02:00"  # the demo telemetry (06:57:30) is fresh enough to dispatch

pytestmark = [pytest.mark.timeout(240)]


def test_serve_takes_the_patrols_and_their_schedules_from_prefect_yaml() -> None:
    from flows.cli.serve_cmds import build_deployments

    spec = yaml.safe_load((REPO / "prefect.yaml").read_text(encoding="utf-8"))
    declared = {d["name"]: d["schedules"][0] for d in spec["deployments"] if d["entrypoint"].endswith(":daily_patrol")}
    assert declared["region-1002"]["cron"] != declared["region-1001"]["cron"]  # so the test can tell them apart
    built = build_deployments()
    served = {d.name: (d.schedules[0].schedule.cron, d.schedules[0].schedule.timezone)
              for d in built if d.flow_name == "daily-patrol"}
    assert served == {n: (s["cron"], s["timezone"]) for n, s in declared.items()}
    dispatchers = {d["name"]: d["parameters"].get("dispatcher") for d in spec["deployments"]
                   if d["entrypoint"].endswith(":daily_patrol")}
    assert {d.name: d.parameters.get("dispatcher") for d in built if d.flow_name == "daily-patrol"} == dispatchers
    backup = next(d for d in spec["deployments"] if d["name"] == "nightly")["schedules"][0]
    assert [d.schedules[0].schedule.cron for d in built if d.flow_name == "backup-ledger"] == [backup["cron"]]
    assert {d.entrypoint for d in built} == {d["entrypoint"] for d in spec["deployments"]}  # monitor-mission included
    assert [d.name for d in built if d.flow_name == "monitor-mission"] == ["sortie"]


@pytest.mark.prefect
def test_serve_refuses_deployments_that_belong_to_a_work_pool(prefect_server: Any) -> None:
    from prefect import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from typer.testing import CliRunner

    from flows.cli import app
    from flows.cli.serve_cmds import build_deployments, refuse_pool_conflicts

    with get_client(sync_client=True) as client:
        client.create_work_pool(WorkPoolCreate(name="setup-pool", type="process"))
    pooled = next(d for d in build_deployments(name="pooled", regions=[]) if d.flow_name == "dispatch-mission")
    pooled.apply(work_pool_name="setup-pool")  # what `prefect deploy` leaves behind
    refuse_pool_conflicts(build_deployments(name="other", regions=[]))  # other names: no conflict
    got = CliRunner().invoke(app, ["serve", "--name", "pooled", "--region", "region-1001"])
    assert got.exit_code == 2, got.output
    assert "CONFLICT:" in got.output and "dispatch-mission/pooled (work pool setup-pool)" in got.output


def test_prefect_api_url_from_the_profile_counts(tmp_path: Path) -> None:
    """Only the active profile sets PREFECT_API_URL (`prefect config set …`): sortie sees it as Prefect does,
    and a URL Prefect cached from an earlier environment does not count once the variable is gone."""
    import prefect.context

    from flows.authority.prefect_api import prefect_api_url

    profiles = tmp_path / "profiles.toml"
    profiles.write_text('active = "ops"\n[profiles.ops]\nPREFECT_API_URL = "http://127.0.0.1:9/api"\n', encoding="utf-8")
    mp = pytest.MonkeyPatch()
    try:
        mp.delenv("PREFECT_API_URL", raising=False)
        mp.setenv("PREFECT_PROFILES_PATH", str(profiles))
        assert prefect_api_url() == "http://127.0.0.1:9/api"
        mp.setenv("PREFECT_API_URL", "http://127.0.0.1:8/api")
        assert prefect_api_url() == "http://127.0.0.1:8/api"  # the environment wins, as in Prefect
        prefect.context.refresh_global_settings_context()  # Prefect's settings now hold the :8 URL ...
        mp.delenv("PREFECT_API_URL")
        profiles.write_text('active = "ops"\n[profiles.ops]\n', encoding="utf-8")
        assert prefect_api_url() is None  # ... which is not what this process is configured with any more
    finally:
        mp.undo()
        prefect.context.refresh_global_settings_context()


def _approved_with_vehicle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, Path, Any]:
    """A draft planned and approved on a copy of the demo world in a fresh SORTIE_HOME, its drone, the world
    folder, and a simulator of that drone at its dock on a free 127.0.0.1 UDP port (started; the caller stops it)."""
    from flows.context import DEMO_WORLD_DIR
    from flows.ledger import open_ledger
    from testkit import sim_vehicle
    from flows.usecases import decisions, planning
    from flows.usecases.common import load_world_at

    home, world = tmp_path / "home", tmp_path / "world"
    shutil.copytree(DEMO_WORLD_DIR, world)
    monkeypatch.setenv("SORTIE_HOME", str(home))
    now = datetime.fromisoformat(NOW)
    d = planning.plan_draft(text="inspect the hydrants today", region_id="region-1002", requested_by="li.wei",
                            grounds=Grounds(ledger=open_ledger(), world_dir=str(world)), now=now)
    decisions.approve(d.draft_id, d.version, approver="chen.jing", plan_hash=d.plan_hash, now=now,
                      grounds=Grounds(ledger=open_ledger(), world_dir=str(world)))
    loaded = load_world_at(str(world))
    drone = loaded.drone(d.sorties[0].drone)
    dock = loaded.dock(drone.dock_id)
    sim = sim_vehicle("udpin:127.0.0.1:0", drone.autopilot, home=(dock.lat, dock.lon, dock.ground_alt_m),
                     heartbeat_s=0.1, rerequest_s=0.1).start()
    return d, drone, world, sim


@pytest.mark.prefect
def test_a_dispatch_starts_monitor_mission_which_records_the_end_and_publishes_the_report(
        prefect_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect import get_client
    from prefect.artifacts import Artifact
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterTags
    from prefect.flow_engine import run_flow

    from flows.cli.serve_cmds import build_deployments
    from flows.ledger import open_ledger
    from flows.orchestration.mission_flows import dispatch_mission
    from flows.orchestration.monitor_flow import monitor_mission
    from flows.sim.flight import attach_flight
    from flows.sim.flight_options import FlightOptions
    from flows.authority.views import report_artifact_key

    next(d for d in build_deployments(name="mon", regions=[]) if d.flow_name == "monitor-mission").apply()
    d, drone, world, sim = _approved_with_vehicle(tmp_path, monkeypatch)
    try:
        out = dispatch_mission(draft_id=d.draft_id, version=d.version, world=str(world), now=NOW,
                               link={drone.id: sim.address}, expiry_deployment="expire-draft/mon")
        assert out["outcome"] == "DISPATCHED"
        with get_client(sync_client=True) as client:
            runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(
                tags=FlowRunFilterTags(all_=[f"draft:{d.draft_id}:v{d.version}", "sortie-monitor"])))
        # the monitor run is also the launch step: it launches at the planned start as the dispatcher
        assert len(runs) == 1 and runs[0].parameters == {"draft_id": d.draft_id, "version": d.version, "now": NOW,
                                                         "launch_as": "chen.jing"}
        attach_flight(sim, FlightOptions(speedup=500.0, battery_wh=drone.battery_wh, battery_pct=drone.battery_pct,
                                         default_speed_mps=drone.cruise_speed_mps))
        # What a worker does with the run, in this process (the entrypoint's loading is test_prefect_entrypoints')
        state = run_flow(monitor_mission, flow_run=runs[0], parameters=runs[0].parameters, return_type="state")
        assert state.is_completed(), state.message
    finally:
        sim.stop()
    with get_client(sync_client=True) as client:
        assert client.read_flow_run(runs[0].id).state.name == "SUCCEEDED"  # named after the flight (named_end)
    assert open_ledger().get_draft(d.draft_id, d.version).state == "SUCCEEDED"
    assert [e.to_state for e in open_ledger().events(d.draft_id)][-3:] == ["LAUNCHED", "IN_FLIGHT", "SUCCEEDED"]
    report = Artifact.get(report_artifact_key(d.draft_id, d.version))
    assert report is not None and "**State:** SUCCEEDED" in str(report.data)


@pytest.mark.prefect
def test_a_monitor_run_whose_launch_is_refused_ends_named_preflight_failed(
        prefect_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The launch step through the authority refuses a vehicle short of battery: the run ends Failed, named
    PREFLIGHT_FAILED with the check (never a green DISPATCHED), the draft stays DISPATCHED and nothing was armed."""
    from prefect import get_client
    from prefect.flow_engine import run_flow

    from flows.ledger import open_ledger
    from flows.orchestration.monitor_flow import monitor_mission
    from flows.sim.flight import attach_flight
    from flows.sim.flight_options import FlightOptions
    from flows.usecases import dispatching

    d, drone, world, sim = _approved_with_vehicle(tmp_path, monkeypatch)
    try:
        disp = dispatching.dispatch(d.draft_id, d.version, actor="chen.jing", now=datetime.fromisoformat(NOW),
                                    link=sim.address, timeout_s=15.0,
                                    grounds=Grounds(ledger=open_ledger(), world_dir=str(world)))
        assert disp.status == "ACKED", disp
        flight = attach_flight(sim, FlightOptions(speedup=500.0, battery_pct=1.0))  # less than the sortie needs
        state = run_flow(monitor_mission, parameters={"draft_id": d.draft_id, "version": d.version, "now": NOW,
                                                      "launch_as": "chen.jing", "timeout_s": 8.0},
                         return_type="state")
        assert flight.commands == [] and not flight.armed
    finally:
        sim.stop()
    assert (state.type.value, state.name) == ("FAILED", "PREFLIGHT_FAILED"), state
    assert "check battery failed" in state.message and "nothing was sent" in state.message, state.message
    with get_client(sync_client=True) as client:
        assert client.read_flow_run(state.state_details.flow_run_id).state.name == "PREFLIGHT_FAILED"
    assert open_ledger().get_draft(d.draft_id, d.version).state == "DISPATCHED"
