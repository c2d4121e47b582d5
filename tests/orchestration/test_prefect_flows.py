"""The Prefect flows end to end against a real Prefect server on 127.0.0.1.

One server for the session (``tests/orchestration/conftest.py``), a real ledger file,
real plans from ``flows.usecases.planning.plan_draft`` on the demo world, and real
MAVLink uploads to the built-in vehicle simulator over UDP. The suspended
(deployment) path runs through ``prefect.serve`` in a subprocess, exactly as
``sortie serve`` does; the paused (local) path runs the flow in a thread of
the test process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
import yaml

from flows.usecases.grounds import Grounds
from testkit import stop_process_group

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.prefect, pytest.mark.timeout(300)]

#: The demo world's telemetry is from 06:57:30–06:58:00; dispatch needs it younger than 60 s.
BASE_NOW = "2026-11-29T06:58:{s:02d}+02:00"
_now_seconds = iter(range(15, 30))


def fresh_now() -> str:
    """A distinct planning time per test, so the same request is never deduplicated into one draft."""
    return BASE_NOW.format(s=next(_now_seconds))


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A copy of the demo world, geozones included: region-1001's fire-lane plan is made around them."""
    import shutil

    from flows.context import DEMO_WORLD_DIR

    path = tmp_path_factory.mktemp("world") / "demo"
    shutil.copytree(DEMO_WORLD_DIR, path)
    return str(path)


@pytest.fixture(scope="module")
def home(prefect_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One SORTIE_HOME for the module: the test process and the served subprocess share the ledger."""
    path = tmp_path_factory.mktemp("sortie-home")
    saved = os.environ.get("SORTIE_HOME")
    os.environ["SORTIE_HOME"] = str(path)
    yield path
    if saved is None:
        os.environ.pop("SORTIE_HOME", None)
    else:
        os.environ["SORTIE_HOME"] = saved


SERVE_SCRIPT = """
from prefect import serve
from flows.cli.serve_cmds import build_deployments
serve(*build_deployments(name="test", regions=[], poll_interval_s=1), limit=4, query_seconds=1)
"""


class Served:
    """The serve subprocess; it boots in the background while other tests run."""

    def __init__(self, name: str, proc: subprocess.Popen[bytes], log_path: Path) -> None:
        self.name, self.proc, self.log_path = name, proc, log_path

    def wait_ready(self, budget_s: float = 180) -> str:
        """Block until its deployments are registered; returns the deployment name."""
        from prefect import get_client

        deadline = time.monotonic() + budget_s
        with get_client(sync_client=True) as client:
            while True:
                try:
                    client.read_deployment_by_name(f"expire-draft/{self.name}")
                    client.read_deployment_by_name(f"dispatch-mission/{self.name}")
                    return self.name
                except Exception:  # noqa: BLE001 - not registered yet
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"serve did not come up:\n{self.log_path.read_text(errors='replace')[-3000:]}") from None
                    time.sleep(0.5)


@pytest.fixture(scope="module")
def served(prefect_server: Any, home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``prefect.serve`` of the sortie deployments (named ``test``) in a subprocess, as ``sortie serve`` runs it."""
    log_path = tmp_path_factory.mktemp("serve") / "serve.log"
    env = dict(prefect_server.env, SORTIE_HOME=str(home), PYTHONPATH=str(REPO))
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVE_SCRIPT], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        yield Served("test", proc, log_path)
    finally:
        stop_process_group(proc, term_timeout_s=15.0)


@pytest.fixture
def vehicles(world: str) -> Iterator[Callable[[list[str]], dict[str, Any]]]:
    """Simulated vehicles, one per drone of a plan; ``make(drones)`` → {drone_id: SimVehicle}."""
    from flows.usecases.common import load_world_at
    from flows.sim.vehicle import SimVehicle
    from testkit import sim_vehicle

    loaded = load_world_at(world)
    started: list[Any] = []

    def make(drones: list[str]) -> dict[str, Any]:
        out = {}
        for drone_id in sorted(set(drones)):
            sim = sim_vehicle("udpin:127.0.0.1:0", loaded.drone(drone_id).autopilot).start()
            started.append(sim)
            out[drone_id] = sim
        return out

    yield make
    for sim in started:
        sim.stop()


# --------------------------------------------------------------------------- helpers


def plan(now: str, world: str, *, text: str = "巡一遍消防通道", region_id: str = "region-1001") -> dict[str, Any]:
    """A real draft through the use case (what plan_mission's task has the authority call)."""
    from flows.ledger import open_ledger
    from flows.usecases import planning

    summary = planning.plan_draft(
        text=text, region_id=region_id, requested_by="li.wei", grounds=Grounds(ledger=open_ledger(), world_dir=world),
            now=datetime.fromisoformat(now),
    ).to_dict()
    assert summary["plan_hash"], f"the demo request did not plan: {summary['status']} {summary.get('missing')}"
    return summary


def links(sims: dict[str, Any]) -> dict[str, str]:
    return {drone: sim.address for drone, sim in sims.items()}


def wait_for(what: str, probe: Callable[[], Any], budget_s: float, interval_s: float = 0.5) -> Any:
    deadline = time.monotonic() + budget_s
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {budget_s} s waiting for {what}")
        time.sleep(interval_s)


def read_run(run_id: UUID) -> Any:
    from prefect import get_client

    with get_client(sync_client=True) as client:
        return client.read_flow_run(run_id)


def waiting_run(draft_id: str, version: int, budget_s: float) -> Any:
    from flows.authority.waking import find_waiting_runs

    return wait_for(f"a run waiting on {draft_id} v{version}", lambda: find_waiting_runs(draft_id, version), budget_s)[0]


def in_thread(fn: Callable[..., Any], **kwargs: Any) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = fn(**kwargs)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


def ended_run(thread: threading.Thread, box: dict[str, Any], budget_s: float = 90) -> tuple[Any, dict[str, Any]]:
    """(final state, its data) of a flow run started with ``return_state=True`` in ``in_thread``."""
    thread.join(budget_s)
    assert not thread.is_alive() and "error" not in box, box.get("error")
    state = box["result"]
    return state, state.result(raise_on_failure=False)


def refusals(draft_id: str, version: int) -> list[tuple[str | None, str, str | None, str | None, str]]:
    """The ledger's refused decision attempts: (who, command, identity, via, code)."""
    from flows.ledger import open_ledger

    return [(r.actor, r.command, r.args_redacted.get("identity"), r.args_redacted.get("via"), r.result_code)
            for r in open_ledger().refusals(draft_id, version)]


def answer_artifact(draft_id: str, version: int) -> str:
    from prefect.artifacts import Artifact

    from flows.orchestration.artifacts import artifact_key

    artifact = Artifact.get(f"{artifact_key(draft_id, version)}-approval")
    assert artifact is not None
    return str(artifact.data)


def resumed_and_waiting(run: Any, run_input: dict[str, Any], budget_s: float = 60) -> Any:
    """Resume a waiting run with ``run_input``; block until it waits again (a fresh Resume); its new state."""
    from prefect import get_client

    before = read_run(run.id).state.id
    with get_client(sync_client=True) as client:
        out = client.resume_flow_run(run.id, run_input=run_input)
    assert str(out.status.value).upper() == "ACCEPT", out  # the server checks only the schema
    return wait_for("the run to wait again", lambda: (st := read_run(run.id).state).is_paused() and st.id != before
                    and st, budget_s)


def ledger_view(draft_id: str, version: int) -> tuple[str, list[Any], list[Any], list[Any]]:
    from flows.ledger import open_ledger

    ledger = open_ledger()
    return (
        ledger.get_draft(draft_id, version).state,
        ledger.approvals(draft_id, version),
        [d for d in ledger.dispatches(draft_id) if d.version == version],
        ledger.events(draft_id),
    )


def scheduled_expiry_runs(draft_id: str, deployment: str) -> list[Any]:
    from prefect import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId, FlowRunFilter, FlowRunFilterTags

    with get_client(sync_client=True) as client:
        dep = client.read_deployment_by_name(deployment)
        return list(
            client.read_flow_runs(
                flow_run_filter=FlowRunFilter(tags=FlowRunFilterTags(all_=[f"draft:{draft_id}"])),
                deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[dep.id])),
            )
        )


# --------------------------------------------------------------------------- tests


def test_plan_mission_publishes_the_draft_artifact(home: Path, world: str, served: Served) -> None:
    """plan → draft recorded → artifact ``draft-<id>-v<n>`` readable by key with table, findings, map, how to approve."""
    from prefect.artifacts import Artifact

    from flows.orchestration.artifacts import artifact_key
    from flows.orchestration.mission_flows import plan_mission

    out = plan_mission(text="巡一遍消防通道", requested_by="li.wei", region_id="region-1001", world=world, now=fresh_now())
    assert out["artifact_key"] == artifact_key(out["draft_id"], out["version"])
    assert out["artifact_key"].startswith("draft-") and out["artifact_key"].endswith(f"-v{out['version']}")
    artifact = Artifact.get(out["artifact_key"])
    assert artifact is not None and artifact.type == "markdown"
    text = str(artifact.data)
    state, _, _, _ = ledger_view(out["draft_id"], out["version"])
    assert state == out["status"] == "DRAFT"
    assert f"# Draft {out['draft_id']} v{out['version']}" in text
    assert out["plan_hash"] in text
    assert "| # | Drone | Dock | Distance (km) | Duration (min) | Energy (Wh) | Battery % |" in text
    assert "## Findings" in text
    assert "](data:image/png;base64,iVBOR" in text  # a PNG inlined as a data URI
    assert f"sortie approve {out['draft_id']} --version {out['version']}" in text


def test_plan_mission_takes_the_operators_coverage_target(home: Path, world: str, served: Served) -> None:
    """The flow parameter reaches the recorded intent and the plan; out of range fails the run with INVALID_ARGUMENT."""
    from flows.ledger import open_ledger
    from flows.orchestration.mission_flows import plan_mission
    from planner.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="out of range"):
        plan_mission(text="今天航测这块地", requested_by="li.wei", region_id="region-1001", world=world, now=fresh_now(),
                     coverage_target=1.5)
    out = plan_mission(text="今天航测这块地", requested_by="li.wei", region_id="region-1001", world=world,
                       now=fresh_now(), coverage_target=0.995)
    rec = open_ledger().get_draft(out["draft_id"], out["version"])
    assert rec.intent["intent"]["coverage_target"] == 0.995 and rec.plan["parameters"]["coverage_target"] == 0.995


def test_paused_run_refuses_a_wrong_plan_hash_then_dispatches_once(home: Path, world: str, vehicles: Callable[..., Any]) -> None:
    """A local run pauses; a resume naming another plan hash is refused and it waits again; the right one dispatches once."""
    from prefect import get_client

    from flows.orchestration.mission_flows import dispatch_mission
    from flows.usecases import dispatching

    now = fresh_now()
    draft = plan(now, world)
    sims = vehicles([s["drone"] for s in draft["sorties"]])
    thread, box = in_thread(
        dispatch_mission, draft_id=draft["draft_id"], version=draft["version"], world=world, now=now, link=links(sims), poll_interval_s=1
    )
    run = waiting_run(draft["draft_id"], draft["version"], 60)
    assert run.state.name == "Paused"
    base = {"draft_id": draft["draft_id"], "version": draft["version"], "decision": "approve", "approver": "chen.jing", "comment": ""}
    assert resumed_and_waiting(run, dict(base, plan_hash="0" * 64)).name == "Paused"
    state, approvals, dispatches, _ = ledger_view(draft["draft_id"], draft["version"])
    assert (state, approvals, dispatches) == ("DRAFT", [], [])
    # answered in the run: the artifact says why, with both hashes in full, and the ledger audits the attempt
    answer = answer_artifact(draft["draft_id"], draft["version"])
    assert "refused: wrong-hash" in answer and "0" * 64 in answer and draft["plan_hash"] in answer
    assert refusals(draft["draft_id"], draft["version"]) == [
        ("chen.jing", "prefect.approve", "asserted", "prefect-form", "INVALID_ARGUMENT")]
    with get_client(sync_client=True) as client:
        accepted = client.resume_flow_run(run.id, run_input=dict(base, plan_hash=draft["plan_hash"]))
        assert str(accepted.status.value).upper() == "ACCEPT"
    thread.join(90)
    assert not thread.is_alive() and "error" not in box, box.get("error")
    assert box["result"]["outcome"] == "DISPATCHED"
    state, approvals, dispatches, events = ledger_view(draft["draft_id"], draft["version"])
    assert state == "DISPATCHED"
    assert [(a.approver, a.decision, a.plan_hash) for a in approvals] == [("chen.jing", "APPROVED", draft["plan_hash"])]
    assert len(dispatches) == 1 and dispatches[0].status == "ACKED"
    assert sum(sim.stats.uploads_completed for sim in sims.values()) >= len(sims)
    final = read_run(run.id).state
    assert (final.type.value, final.name) == ("COMPLETED", "DISPATCHED")
    from flows.ledger import open_ledger

    again = dispatching.dispatch(
        draft["draft_id"], draft["version"], actor="chen.jing", now=datetime.fromisoformat(now), link=links(sims),
        grounds=Grounds(ledger=open_ledger(), world_dir=world),
    )
    assert again.first is False  # the ledger hands back the first outcome; nothing is sent twice
    assert len(ledger_view(draft["draft_id"], draft["version"])[2]) == 1
    # A drone flies one mission at a time (DEVICE_BUSY otherwise): this mission ends, as the monitor
    # would record a flight that never took off, before the module's next test dispatches to the drone.
    from flows.ledger import open_ledger

    led = open_ledger()
    rec = led.get_draft(draft["draft_id"], draft["version"])
    led.transition(rec.draft_id, rec.version, expected_state="DISPATCHED", expected_row_version=rec.row_version,
                   to_state="ABORTED", actor="test", reason="cancelled before take-off", now=datetime.fromisoformat(now))


def test_form_input_goes_through_the_ledger_checks_and_a_rejection_ends_the_run(home: Path, world: str) -> None:
    """The requester approving their own draft is refused by the ledger (four-eyes) and the run waits again; a reject ends it."""
    from prefect import get_client

    from flows.orchestration.mission_flows import dispatch_mission

    now = fresh_now()
    draft = plan(now, world, region_id="region-1002")
    thread, box = in_thread(dispatch_mission, draft_id=draft["draft_id"], version=draft["version"], world=world, now=now,
                            poll_interval_s=1, return_state=True)
    run = waiting_run(draft["draft_id"], draft["version"], 60)
    base = {"draft_id": draft["draft_id"], "version": draft["version"], "plan_hash": draft["plan_hash"], "comment": ""}
    resumed_and_waiting(run, dict(base, decision="approve", approver="li.wei"))
    assert ledger_view(draft["draft_id"], draft["version"])[:3] == ("DRAFT", [], [])
    # a self-approval attempt is auditable: who, how their identity was proven, through what, why refused
    assert refusals(draft["draft_id"], draft["version"]) == [
        ("li.wei", "prefect.approve", "asserted", "prefect-form", "FORBIDDEN")]
    assert "refused: four-eyes" in answer_artifact(draft["draft_id"], draft["version"])
    with get_client(sync_client=True) as client:
        client.resume_flow_run(run.id, run_input=dict(base, decision="reject", approver="chen.jing", comment="wrong day"))
    final, result = ended_run(thread, box, 60)
    assert result["outcome"] == "REJECTED"
    assert (final.type.value, final.name) == ("CANCELLED", "REJECTED")  # not flown: never a green Completed
    state, approvals, dispatches, _ = ledger_view(draft["draft_id"], draft["version"])
    assert (state, dispatches) == ("REJECTED", [])
    assert [(a.approver, a.decision, a.comment) for a in approvals] == [("chen.jing", "REJECTED", "wrong day")]
    assert read_run(run.id).state.name == "REJECTED"


def test_five_refused_inputs_end_the_run_refused_and_the_draft_stays_approvable(home: Path, world: str) -> None:
    """Junk, another draft, a self-approval and an approver who cannot dispatch: each answered, the run waits again;
    the fifth ends it REFUSED (Failed, reasons in its message), the ledger says so, and the draft is still approvable."""
    from typer.testing import CliRunner

    from flows.cli import app
    from flows.orchestration.mission_flows import dispatch_mission

    now = fresh_now()
    draft = plan(now, world, region_id="region-1002")
    d, v = draft["draft_id"], draft["version"]
    thread, box = in_thread(dispatch_mission, draft_id=d, version=v, world=world, now=now, poll_interval_s=1,
                            return_state=True)
    run = waiting_run(d, v, 60)
    base = {"draft_id": d, "version": v, "plan_hash": draft["plan_hash"], "decision": "approve", "comment": ""}
    inputs = [dict(base, version=0, approver="chen.jing"),  # junk the pre-filled form lets through (FACTS)
              dict(base, version=-1, approver="chen.jing"),
              dict(base, draft_id="someone-else", approver="chen.jing"),
              dict(base, approver="li.wei"),  # the requester: four-eyes
              dict(base, approver="demo.approver")]  # may approve, may not dispatch, and the run names no dispatcher
    for run_input in inputs[:-1]:
        resumed_and_waiting(run, run_input)
    from prefect import get_client

    with get_client(sync_client=True) as client:
        client.resume_flow_run(run.id, run_input=inputs[-1])
    final, result = ended_run(thread, box)
    assert (final.type.value, final.name) == ("FAILED", "REFUSED")
    assert result["refused"] == ["junk", "junk", "wrong-draft", "four-eyes", "no-dispatcher"]
    assert "junk, wrong-draft, four-eyes, no-dispatcher" in final.message and "still DRAFT" in final.message
    assert [r[1] for r in refusals(d, v)] == ["prefect.approve"] * 5 + ["prefect.approval-wait"]
    shown = CliRunner().invoke(app, ["show", d, "--version", str(v), "--world", world, "--json"])
    assert shown.exit_code == 0, shown.output
    notes = json.loads(shown.stdout)["notes"]
    assert notes["refused"][-1]["code"] == "REFUSED" and "5 refused inputs" in notes["refused"][-1]["why"]
    assert json.loads(shown.stdout)["status"] == "DRAFT"
    approved = CliRunner().invoke(app, ["approve", d, "--version", str(v), "--plan-hash", draft["plan_hash"],
                                        "--as", "chen.jing", "--world", world, "--now", now, "--json"])
    assert approved.exit_code == 0, approved.output
    assert json.loads(approved.stdout)["status"] == "APPROVED"


def sortie_with_profile_only(args: list[str], api_url: str, home: Path, prefect_home: Path) -> Any:
    """`sortie` in a fresh process whose Prefect API is only in the active profile, as `prefect config set
    PREFECT_API_URL=…` leaves it: nothing PREFECT_* in its environment."""
    prefect_home.mkdir(exist_ok=True)
    (prefect_home / "profiles.toml").write_text(f'active = "ops"\n\n[profiles.ops]\nPREFECT_API_URL = "{api_url}"\n',
                                                encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PREFECT_HOME=str(prefect_home), SORTIE_HOME=str(home), PYTHONPATH=str(REPO))
    return subprocess.run([str(Path(sys.executable).with_name("sortie")), *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_a_late_decision_is_refused_by_the_ledger_without_any_expiry_run_and_the_run_ends_expired(
        prefect_server: Any, home: Path, world: str, tmp_path: Path) -> None:
    """No expire-draft run and a run window far away: the ledger's own deadline refuses a late CLI approval and a
    late form approval alike; both runs end EXPIRED and the versions are EXPIRED. The CLI runs with the Prefect
    API only in its profile, and still wakes the run (the env-var way: the suspended-run test below)."""
    from flows.orchestration.mission_flows import dispatch_mission

    runs = []
    for late_in_the_flow in (False, True):
        now = fresh_now()
        late = (datetime.fromisoformat(now) + timedelta(minutes=31)).isoformat()
        draft = plan(now, world, region_id="region-1003")
        thread, box = in_thread(dispatch_mission, draft_id=draft["draft_id"], version=draft["version"], world=world,
                                now=late if late_in_the_flow else now, poll_interval_s=1, return_state=True)
        run = waiting_run(draft["draft_id"], draft["version"], 60)
        if late_in_the_flow:  # the form: the flow stamps the ledger 31 min after planning
            from prefect import get_client

            with get_client(sync_client=True) as client:
                client.resume_flow_run(run.id, run_input={
                    "draft_id": draft["draft_id"], "version": draft["version"], "plan_hash": draft["plan_hash"],
                    "decision": "approve", "approver": "chen.jing", "comment": ""})
        else:  # the CLI, 31 min after planning: refused, and it wakes the run
            out = sortie_with_profile_only(
                ["approve", draft["draft_id"], "--version", str(draft["version"]), "--plan-hash", draft["plan_hash"],
                 "--as", "chen.jing", "--world", world, "--now", late], prefect_server.api_url, home,
                tmp_path / "prefect-home")
            assert out.returncode == 2 and "APPROVAL_STALE" in out.stderr + out.stdout, out.stderr + out.stdout
            assert "deadline" in out.stderr + out.stdout
        final, result = ended_run(thread, box, 60)
        assert (final.type.value, final.name, result["outcome"]) == ("CANCELLED", "EXPIRED", "EXPIRED")
        state, approvals, _, events = ledger_view(draft["draft_id"], draft["version"])
        assert (state, approvals) == ("EXPIRED", []) and events[-1].actor == "ledger:deadline"
        runs.append(run.id)
    assert len(set(runs)) == 2


def test_a_patrol_names_its_dispatcher_so_an_approver_without_that_role_does_not_stall_it(
        home: Path, world: str) -> None:
    """demo.approver may approve but not dispatch: with the patrol's dispatcher named, their approval flies
    (here a dry run) as the dispatcher's dispatch."""
    from prefect import get_client

    from flows.orchestration.mission_run import daily_patrol

    from flows.ledger import open_ledger

    now = fresh_now()
    thread, box = in_thread(daily_patrol, region_id="region-1002", world=world, now=now, poll_interval_s=1,
                            dry_run=True, dispatcher="chen.jing", return_state=True)
    planned = wait_for("the patrol's draft", lambda: [
        r for r in open_ledger().list_drafts() if r.region_id == "region-1002"
        and datetime.fromisoformat(r.created_time) == datetime.fromisoformat(now)], 120)[0]
    draft_id, version, plan_hash = planned.draft_id, planned.version, planned.plan_hash
    run = waiting_run(draft_id, version, 60)
    with get_client(sync_client=True) as client:
        client.resume_flow_run(run.id, run_input={"draft_id": draft_id, "version": version, "plan_hash": plan_hash,
                                                  "decision": "approve", "approver": "demo.approver", "comment": ""})
    final, result = ended_run(thread, box, 90)
    assert (final.type.value, final.name) == ("COMPLETED", "DRY_RUN"), final.message
    assert ledger_view(draft_id, version)[0] == "APPROVED"
    assert [a.approver for a in ledger_view(draft_id, version)[1]] == ["demo.approver"]


def test_sortie_approve_resumes_a_suspended_deployment_run(home: Path, world: str, served: Served, vehicles: Callable[..., Any]) -> None:
    """A served run suspends (no process held); `sortie approve` records the approval and resumes it → it dispatches once."""
    from prefect.deployments import run_deployment
    from typer.testing import CliRunner

    from flows.cli import app
    from flows.authority.waking import resume_waiting_run

    now = fresh_now()
    draft = plan(now, world)
    sims = vehicles([s["drone"] for s in draft["sorties"]])
    started = run_deployment(
        f"dispatch-mission/{served.wait_ready()}",
        parameters={"draft_id": draft["draft_id"], "version": draft["version"], "world": world, "now": now, "link": links(sims)},
        timeout=0,
    )
    run = waiting_run(draft["draft_id"], draft["version"], 240)
    assert run.id == started.id and run.state.name == "Suspended"
    assert f"draft:{draft['draft_id']}:v{draft['version']}" in run.tags
    # no process holds the wait: the deadline is a scheduled run of expire-draft, once per draft version
    expiry = scheduled_expiry_runs(draft["draft_id"], f"expire-draft/{served.name}")
    assert len(expiry) == 1 and expiry[0].parameters["draft_id"] == draft["draft_id"]
    # a refused form input restarts the run (a deployed run starts again from the top on resume): it answers and
    # suspends again with a fresh Resume; the restart after the CLI approval below does not replay that answer
    base = {"draft_id": draft["draft_id"], "version": draft["version"], "plan_hash": draft["plan_hash"], "comment": ""}
    assert resumed_and_waiting(run, dict(base, decision="approve", approver="li.wei"), 240).name == "Suspended"
    # `sortie approve`: the authority records the approval in the ledger, then wakes the run (flows.authority.waking)
    result = CliRunner().invoke(
        app,
        ["approve", draft["draft_id"], "--version", str(draft["version"]), "--plan-hash", draft["plan_hash"],
         "--as", "chen.jing", "--world", world, "--now", now, "--json"],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["resumed_run"] == str(run.id)
    final = wait_for("the resumed run to finish", lambda: (r := read_run(run.id)).state.is_final() and r.state.name != "Completed" and r, 240)
    assert (final.state.type.value, final.state.name) == ("COMPLETED", "DISPATCHED"), final.state.message
    state, approvals, dispatches, _ = ledger_view(draft["draft_id"], draft["version"])
    assert state == "DISPATCHED"
    assert refusals(draft["draft_id"], draft["version"]) == [
        ("li.wei", "prefect.approve", "asserted", "prefect-form", "FORBIDDEN")]  # answered once, never replayed
    assert len(approvals) == 1 and len(dispatches) == 1 and dispatches[0].status == "ACKED"
    assert resume_waiting_run(draft["draft_id"], draft["version"], plan_hash=draft["plan_hash"], approver="chen.jing") is None


def test_daily_patrol_waits_and_an_unapproved_draft_expires(home: Path, world: str) -> None:
    """daily_patrol plans, publishes and waits; nobody approves → the draft is EXPIRED with an event, the run ends EXPIRED."""
    from prefect.artifacts import Artifact

    from flows.orchestration.expiry_flow import EXPIRY_ACTOR
    from flows.orchestration.mission_run import daily_patrol

    thread, box = in_thread(daily_patrol, region_id="region-1001", world=world, now=fresh_now(), approval_window_s=3,
                            poll_interval_s=1, return_state=True)
    final, result = ended_run(thread, box)
    assert result["outcome"] == "EXPIRED"
    assert (final.type.value, final.name) == ("CANCELLED", "EXPIRED")
    assert Artifact.get(result["artifact_key"]) is not None
    state, approvals, dispatches, events = ledger_view(result["draft_id"], result["version"])
    assert (state, approvals, dispatches) == ("EXPIRED", [], [])
    assert [(e.from_state, e.to_state, e.actor) for e in events][-1] == ("DRAFT", "EXPIRED", EXPIRY_ACTOR)


def test_expire_draft_flow_expires_and_wakes_the_waiting_run(home: Path, world: str) -> None:
    """What the scheduled ``expire-draft`` run does at the deadline: DRAFT → EXPIRED, then the waiting run ends cleanly."""
    from flows.orchestration.expiry_flow import EXPIRY_ACTOR, expire_draft
    from flows.orchestration.mission_flows import dispatch_mission

    now = fresh_now()
    draft = plan(now, world, region_id="region-1003")
    thread, box = in_thread(dispatch_mission, draft_id=draft["draft_id"], version=draft["version"], world=world, now=now,
                            poll_interval_s=1, return_state=True)
    waiting_run(draft["draft_id"], draft["version"], 60)
    not_yet = expire_draft(draft["draft_id"], draft["version"], deadline_utc="2999-01-01T00:00:00+00:00", now=now)
    assert not_yet == "DRAFT" and thread.is_alive()  # before the deadline nothing happens
    assert expire_draft(draft["draft_id"], draft["version"], deadline_utc="2000-01-01T00:00:00+00:00", now=now) == "EXPIRED"
    final, result = ended_run(thread, box, 60)
    assert result["outcome"] == "EXPIRED" and final.name == "EXPIRED"
    state, approvals, dispatches, events = ledger_view(draft["draft_id"], draft["version"])
    assert (state, approvals, dispatches) == ("EXPIRED", [], [])
    assert [(e.from_state, e.to_state, e.actor) for e in events if e.to_state == "EXPIRED"] == [("DRAFT", "EXPIRED", EXPIRY_ACTOR)]


def test_daily_deployments_create_scheduled_runs(prefect_server: Any) -> None:
    """The daily patrol deployments (as prefect.yaml and `sortie serve` define them) get cron runs at 06:00 Helsinki."""
    from zoneinfo import ZoneInfo

    from prefect import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

    from flows.cli.serve_cmds import build_deployments

    deployment = [d for d in build_deployments(name="sched", regions=["region-1001"]) if d.flow_name == "daily-patrol"][0]
    deployment_id = deployment.apply()

    def scheduled() -> list[Any]:
        with get_client(sync_client=True) as client:
            runs = client.read_flow_runs(deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment_id])))
        return [r for r in runs if r.state and r.state.name == "Scheduled"]

    runs = wait_for("scheduled daily patrol runs", scheduled, 60)
    local = sorted(r.expected_start_time.astimezone(ZoneInfo("Europe/Helsinki")) for r in runs)
    assert all((t.hour, t.minute) == (6, 0) for t in local)
    assert len({t.date() for t in local}) == len(local) >= 2
    assert all(r.parameters["region_id"] == "region-1001" for r in runs)


def test_prefect_yaml_matches_the_served_deployments() -> None:
    """prefect.yaml and `sortie serve` define the same flows, pool type, pull step and daily crons."""
    from flows.cli.serve_cmds import DAILY_CRON, DAILY_TIMEZONE, build_deployments

    spec = yaml.safe_load((REPO / "prefect.yaml").read_text(encoding="utf-8"))
    assert spec["pull"] == [{"prefect.deployments.steps.set_working_directory": {"directory": "{{ $PWD }}"}}]
    by_entry = {}
    for d in spec["deployments"]:
        assert d["work_pool"]["name"] == "sortie-pool"
        by_entry.setdefault(d["entrypoint"], []).append(d)
    served = {d.entrypoint for d in build_deployments()}
    assert served == set(by_entry)
    patrols = by_entry["flows/orchestration/mission_run.py:daily_patrol"]
    assert {p["parameters"]["region_id"] for p in patrols} >= {"region-1001", "region-1002"}
    first = [p for p in patrols if p["parameters"]["region_id"] == "region-1001"][0]
    assert first["schedules"] == [{"cron": DAILY_CRON, "timezone": DAILY_TIMEZONE}]
    gate = by_entry["flows/orchestration/mission_flows.py:dispatch_mission"][0]["parameters"]
    assert gate["expiry_deployment"] == "expire-draft/sortie"
