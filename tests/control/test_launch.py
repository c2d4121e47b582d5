"""Launch as its own step, against the vehicle simulator over real UDP, in both dialects.

A dispatched vehicle stays on the ground until a dispatcher launches it
(FACTS.md: nothing flies until a GCS launches it). The launch checks the
vehicle's own state first and sends nothing while a check fails
(``PREFLIGHT_FAILED`` names it); then it sends the dialect's sequence —
ArduPilot GUIDED → arm → AUTO → MISSION_START, PX4 one MISSION_START — and the
ledger records DISPATCHED → LAUNCHED. A launch stopped after arming leaves the
vehicle disarmed again. Only a DISPATCHED version whose approval covers now is
launched.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any
from dataclasses import replace
from datetime import timedelta

import pytest

from control.controlkit import LAUNCH, NOW, OPERATOR, Flight, Template
from flows.sim.flight import FlightFaults
from flows.usecases import launching
from flows.usecases.launching import launch_path
from flows.usecases.grounds import Grounds
from flows.errors import ApprovalStale, Conflict, DeviceBusy, PreflightFailed
from pymavlink.dialects.v20 import common as M

pytestmark = pytest.mark.timeout(90)

# + the rule set's vehicle rules (data/rules.yaml: at-the-dock, failsafes), judged from the vehicle's own state
CHECKS = ["heartbeat", "disarmed", "prearm", "ekf", "gps", "battery", "home", "at-the-dock", "failsafes", "mission", "mode"]
SEQUENCE = {
    "ardupilot": [M.MAV_CMD_DO_SET_MODE, M.MAV_CMD_COMPONENT_ARM_DISARM, M.MAV_CMD_DO_SET_MODE, M.MAV_CMD_MISSION_START],
    "px4": [M.MAV_CMD_MISSION_START],
}


@pytest.mark.parametrize("dialect", ["px4", "ardupilot"])
def test_a_dispatched_vehicle_waits_on_the_ground_until_launched_then_flies_the_mission(
        fly: Callable[..., Flight], dialect: str) -> None:
    f = fly(dialect, launch=False)
    time.sleep(0.5)
    assert f.flight.phase == "READY" and not f.flight.armed and f.flight.alt_m == 0.0 and f.flight.commands == []
    assert f.ledger.get_draft(f.draft_id, f.version).state == "DISPATCHED"
    done = f.launch_with()
    assert done.changed and done.state == "LAUNCHED", done
    v = done.vehicles[0]
    assert v["status"] == "LAUNCHED" and [c["name"] for c in v["checks"]] == CHECKS and all(c["ok"] for c in v["checks"])
    mission = next(c for c in v["checks"] if c["name"] == "mission")
    assert mission["measured"] == mission["limit"]  # read back over the link: the approved count and hash
    assert [c["command"] for c in f.flight.commands] == SEQUENCE[dialect]
    assert all(c["result"] == M.MAV_RESULT_ACCEPTED for c in f.flight.commands)
    if dialect == "ardupilot":
        modes = [c["params"][1] for c in f.flight.commands if c["command"] == M.MAV_CMD_DO_SET_MODE]
        assert modes == [4.0, 3.0]  # GUIDED, then AUTO (ArduCopter custom modes)
    deadline = time.monotonic() + 15.0
    while f.flight.phase != "FLYING":
        assert time.monotonic() < deadline, f.flight.phase
        time.sleep(0.01)
    assert ("DISPATCHED", "LAUNCHED") in [(e[0], e[1]) for e in f.events()]
    record = json.loads(launch_path(f.draft_id, f.version, f.ledger.path.parent).read_text(encoding="utf-8"))
    assert record["vehicles"][0]["status"] == "LAUNCHED" and "approved by" in record["approval"]
    # a repeated launch sends nothing
    sent = len(f.flight.commands)
    again = f.launch_with()
    assert not again.changed and "already launched" in again.message and len(f.flight.commands) == sent
    assert f.monitored().state == "SUCCEEDED"


@pytest.mark.parametrize("check", ["prearm", "battery", "failsafes"])
def test_a_failing_preflight_check_is_named_and_nothing_is_sent(fly: Callable[..., Flight], check: str) -> None:
    f = fly("ardupilot", launch=False, monitor=False)
    if check == "prearm":
        f.sim.prearm_s = None  # its pre-arm checks never pass (SYS_STATUS PREARM_CHECK unhealthy)
    elif check == "battery":
        f.flight.battery_pct = 1.0  # less than the sortie needs with its reserve
    else:  # SITL's defaults for the GCS failsafe (none) on an otherwise configured vehicle: the rule blocks
        f.sim.set_param("FS_GCS_ENABLE", 0.0)
    with pytest.raises(PreflightFailed) as info:
        f.launch_with(options=replace(LAUNCH, prearm_wait_s=1.0))
    err = info.value
    assert err.code == "PREFLIGHT_FAILED" and err.details["check"] == check and f"check {check} failed" in err.message
    assert "nothing was sent" in err.message and "stays DISPATCHED" in err.message
    assert f.flight.commands == [] and not f.flight.armed and f.flight.phase == "READY"
    assert f.ledger.get_draft(f.draft_id, f.version).state == "DISPATCHED"
    failed = [c["name"] for c in err.details["vehicles"][0]["checks"] if not c["ok"]]
    assert failed == {"prearm": ["prearm", "ekf"], "battery": ["battery"], "failsafes": ["failsafes"]}[check]  # the
    # sim's EKF is not ready either while pre-arm fails
    if check == "failsafes":  # refused by the parameter's name, its value and what the mission needs
        detail = next(c["detail"] for c in err.details["vehicles"][0]["checks"] if c["name"] == "failsafes")
        assert "FS_GCS_ENABLE = 0" in detail and "a ground-station failsafe" in detail, detail
        assert "FS_GCS_ENABLE" in err.message, err.message
    record = json.loads(launch_path(f.draft_id, f.version, f.ledger.path.parent).read_text(encoding="utf-8"))
    assert record["vehicles"][0]["status"] == "PREFLIGHT_FAILED" and record["vehicles"][0]["failed"] == check


def test_a_launch_stopped_after_arming_leaves_the_vehicle_disarmed(fly: Callable[..., Flight]) -> None:
    f = fly("ardupilot", launch=False, monitor=False)
    # every MISSION_START is lost: armed in AUTO on the ground, the start never arrives
    f.flight.options = replace(f.flight.options, faults=FlightFaults(lose_command_of=(M.MAV_CMD_MISSION_START,) * 20))
    with pytest.raises(PreflightFailed) as info:
        f.launch_with()
    err = info.value
    assert err.details["check"] == "mission_start" and "disarmed again" in err.message, err.message
    sent = [c["command"] for c in f.flight.commands]
    assert sent[:3] == SEQUENCE["ardupilot"][:3] and sent[-1] == M.MAV_CMD_COMPONENT_ARM_DISARM
    assert f.flight.commands[-1]["params"][0] == 0.0 and f.flight.commands[-1]["result"] == M.MAV_RESULT_ACCEPTED
    assert not f.flight.armed and f.flight.phase == "READY" and f.flight.alt_m == 0.0
    assert err.details["vehicles"][0]["disarmed"] is True
    assert f.ledger.get_draft(f.draft_id, f.version).state == "DISPATCHED"


def test_only_a_dispatched_version_whose_approval_covers_now_is_launched(
        fly: Callable[..., Flight], approved_home: Template) -> None:
    from flows.ledger import open_ledger

    with pytest.raises(Conflict) as info:  # approved, never dispatched
        launching.launch(approved_home.draft_id, approved_home.version, actor=OPERATOR, now=NOW,
                         grounds=Grounds(ledger=open_ledger()), options=LAUNCH)
    assert "only a DISPATCHED version" in info.value.message
    f = fly("px4", launch=False, monitor=False)
    with pytest.raises(ApprovalStale) as stale:  # dispatched in time, launched after the approval expired
        f.launch_with(now=NOW + timedelta(hours=2))
    assert "expired" in stale.value.message and f.flight.commands == [] and not f.flight.armed
    assert f.ledger.get_draft(f.draft_id, f.version).state == "DISPATCHED"


def test_sortie_launch_exits_2_naming_the_check_then_0_once_the_vehicle_is_ready(
        fly: Callable[..., Flight], monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    monkeypatch.delenv("SORTIE_SERVER", raising=False)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    f = fly("ardupilot", launch=False, monitor=False)
    f.sim.prearm_s = None
    args = ["launch", f.draft_id, "--as", OPERATOR, "--now", NOW.isoformat(), "--prearm-wait", "1",
            "--world", str(f.world_dir)]
    runner = CliRunner()
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2 and "PREFLIGHT_FAILED:" in refused.output and "check prearm failed" in refused.output
    assert "Traceback" not in refused.output and f.flight.commands == []
    f.sim.prearm_s = 0.0  # its pre-arm checks pass now
    ok = runner.invoke(app, args + ["--json"])
    assert ok.exit_code == 0, ok.output
    body = json.loads(ok.output)
    assert body["state"] == "LAUNCHED" and body["vehicles"][0]["status"] == "LAUNCHED"
    assert [c["command"] for c in f.flight.commands] == SEQUENCE["ardupilot"]


def test_a_launched_drafts_drone_cannot_be_dispatched_again(fly: Callable[..., Flight]) -> None:
    """LAUNCHED holds its drone (``flows.ledger.claims.BUSY_STATES``): between the launch and the take-off the
    follower records, a second mission for the same drone is refused, and nothing is claimed or sent."""
    from flows.usecases import decisions, dispatching, planning

    planned: list[Any] = []

    def plan_other() -> None:  # approved while the drone was free (once it is committed, planning leaves it out)
        from flows.ledger import open_ledger

        other = planning.plan_draft(text="check the hydrants today", region_id="region-1002", requested_by="li.wei",
                                    grounds=Grounds(ledger=open_ledger(), world_dir=None), now=NOW)
        decisions.approve(other.draft_id, other.version, approver=OPERATOR, plan_hash=other.plan_hash, comment="ok",
                          now=NOW, grounds=Grounds(ledger=open_ledger()))
        planned.append(other)

    f = fly("px4", monitor=False, before_dispatch=plan_other)  # launched; nobody follows it: the ledger keeps LAUNCHED
    assert f.ledger.get_draft(f.draft_id, f.version).state == "LAUNCHED"
    (other,) = planned
    assert other.draft_id != f.draft_id and [s.drone for s in other.sorties] == ["M3TD-01"], other
    uploads = f.sim.stats.uploads_completed
    for dry_run in (True, False):
        with pytest.raises(DeviceBusy) as info:
            dispatching.dispatch(other.draft_id, other.version, actor=OPERATOR, now=NOW, link=f.sim.address,
                                 dry_run=dry_run, timeout_s=5.0, grounds=Grounds(ledger=f.ledger))
        assert f.draft_id in info.value.message and "LAUNCHED" in info.value.message, info.value.message
    assert f.ledger.dispatches(other.draft_id) == [] and f.sim.stats.uploads_completed == uploads
    assert f.ledger.get_draft(other.draft_id, other.version).state == "APPROVED"
