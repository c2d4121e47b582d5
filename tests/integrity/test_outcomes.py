"""The exit-code contract, the drone lock, reconcile, and what the approver sees — through the real ``sortie``.

Every command that can report a non-success outcome exits non-zero with its
code; a repeated dispatch answers with the first one's code; the advice names
a command that works next (and it is run to prove it). Real DuckDB files, a
real simulated vehicle over UDP on 127.0.0.1, the real entry point.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from flows.ledger import Ledger, NewVersion, open_ledger
from integrity import kit

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"


def _sortie(home: Path, world: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SORTIE), *args], env={**kit.env_for(home, world), **env}, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def _err(p: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert p.returncode == 2, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    return json.loads(p.stdout)["error"]


def _clone(home: Path, draft: str, new_id: str, *, approve: bool = True) -> str:
    """A second draft with the same plan (so the same drone), recorded and approved through the ledger API."""
    ledger = Ledger(home / "ledger.duckdb")
    r = ledger.get_draft(draft, 1)
    ledger.record_versions([NewVersion(
        draft_id=new_id, version=1, state="DRAFT", request_key=f"rk-{new_id}", tenant=r.tenant,
        region_id=r.region_id, requested_by=r.requested_by, request_text=r.request_text, intent=r.intent,
        plan=r.plan, plan_hash=r.plan_hash, findings=r.findings, verdict=r.verdict, missing=[],
        world_name=r.world_name, world_dir=r.world_dir, world_hash=r.world_hash, notes=r.notes)],
        actor="li.wei", now=kit.now())
    if approve:
        ledger.approve(new_id, 1, approver_id="chen.jing", may_approve=lambda t, g: True, plan_hash=None,
                       comment="ok", now=kit.now())
    return new_id


def _vehicle(approved: tuple[Path, Path, str], **faults: Any) -> Any:
    """A simulator speaking the planned drone's autopilot dialect, on a free UDP port of 127.0.0.1."""
    from testkit import sim_vehicle
    from flows.usecases.common import load_world_at

    home, world, draft = approved
    drone_id = open_ledger(home).get_draft(draft).plan["sorties"][0]["drone_id"]
    return sim_vehicle("udpin:127.0.0.1:0", load_world_at(world).drone(drone_id).autopilot, **faults)


def test_failed_dispatch_exits_2_every_time_and_replan_works(home: Path, approved: tuple[Path, Path, str]) -> None:
    from planner.output.mission_items import FENCE

    _, world, draft = approved
    with _vehicle(approved, reject="MAV_MISSION_ERROR") as sim:
        first = _err(_sortie(home, world, "dispatch", draft, "--as", "chen.jing", "--link", sim.address, "--json"))
        sent = sim.stats.uploads_completed
        again = _err(_sortie(home, world, "dispatch", draft, "--as", "chen.jing", "--link", sim.address, "--json"))
        assert sim.stats.uploads_completed == sent  # the repeat sends nothing
        assert first["code"] == again["code"] == "DISPATCH_FAILED"
        assert f"sortie replan {draft}" in first["message"] and f"sortie replan {draft}" in again["message"]
        assert open_ledger().get_draft(draft).state == "ABORTED"
        # the advice works: replan makes version 2, a fresh DRAFT
        rp = _sortie(home, world, "replan", draft, "--as", "li.wei", "--json")
        assert rp.returncode == 0, rp.stderr[-2000:]
        assert json.loads(rp.stdout)["version"] == 2 and json.loads(rp.stdout)["status"] == "DRAFT"
        assert open_ledger().get_draft(draft, 1).state == "ABORTED"  # the failed version keeps its history
        # the fence was accepted before the mission was refused; the uploader cleared it again and read the
        # vehicle back (issue 15: partial uploads leave nothing behind), so the drone is free without a reconcile
        assert all(items == () for items in sim.missions.values())
        ap = _sortie(home, world, "approve", draft, "--version", "2", "--as", "chen.jing", "--json")
        assert ap.returncode == 0, ap.stderr[-2000:]
    d = open_ledger().dispatches(draft)[0]
    assert d.status == "FAILED" and d.result["vehicle_cleared"] is True
    assert d.result["outcome"]["uploads"][0]["cleared"] == ["fence"]
    dry = _sortie(home, world, "dispatch", draft, "--as", "chen.jing", "--dry-run", "--json")
    assert dry.returncode == 0 and json.loads(dry.stdout)["status"] == "DRY_RUN", dry.stdout[-2000:]
    ok = _sortie(home, world, "ledger", "verify", "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["ok"] is True, ok.stdout


def test_uncertain_dispatch_locks_the_drone_until_reconciled(home: Path, approved: tuple[Path, Path, str]) -> None:
    _, world, draft = approved
    other = _clone(home, draft, "d-other")
    with _vehicle(approved) as sim:
        link = sim.address
        killed = _sortie(home, world, "dispatch", draft, "--as", "chen.jing", "--link", link, "--json",
                         SORTIE_TEST_KILL_AT="dispatch:after_claim")
        assert killed.returncode == -9
        first = _err(_sortie(home, world, "dispatch", draft, "--as", "chen.jing", "--link", link, "--json"))
        again = _err(_sortie(home, world, "dispatch", draft, "--as", "chen.jing", "--link", link, "--json"))
        assert first["code"] == again["code"] == "DISPATCH_UNCERTAIN"
        assert f"sortie reconcile {draft}" in again["message"]
        # the drone is held: another approved draft for it is refused, dry run included, nothing sent
        busy = _err(_sortie(home, world, "dispatch", other, "--as", "chen.jing", "--link", link, "--json"))
        dry = _err(_sortie(home, world, "dispatch", other, "--as", "chen.jing", "--dry-run", "--json"))
        assert busy["code"] == dry["code"] == "DEVICE_BUSY" and f"sortie reconcile {draft}" in busy["message"]
        assert sim.stats.uploads_completed == 0
        # reconcile reads the vehicle back: it holds nothing of the approved mission → FAILED, exit 2
        settled = _err(_sortie(home, world, "reconcile", draft, "--as", "chen.jing", "--link", link, "--json"))
        assert settled["code"] == "DISPATCH_FAILED" and "replan" in settled["message"]
        d = open_ledger().dispatches(draft)[0]
        assert d.status == "FAILED" and d.result["vehicle_holds"]
        assert sim.stats.uploads_completed == 0  # reconcile uploads nothing
        # settled: the drone is free again, and the other draft flies
        ok = _sortie(home, world, "dispatch", other, "--as", "chen.jing", "--link", link, "--json")
        assert ok.returncode == 0, ok.stdout[-2000:] + ok.stderr[-2000:]
        assert json.loads(ok.stdout)["status"] == "ACKED"
        # and while that mission is DISPATCHED (not yet landed) the drone is busy for a third one
        third = _clone(home, draft, "d-third")
        busy = _err(_sortie(home, world, "dispatch", third, "--as", "chen.jing", "--link", link, "--json"))
        assert busy["code"] == "DEVICE_BUSY" and "d-other" in busy["message"]
        # reconcile of an ACKED dispatch not flown yet: the vehicle is read back and holds exactly the mission,
        # as ArduPilot and PX4 hand it back (frame 0 on DO_ commands, NAV_LAND param4, seq 0 home: no difference)
        again = _sortie(home, world, "reconcile", "d-other", "--as", "chen.jing", "--json")
        assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
        checked = json.loads(again.stdout)
        assert checked["status"] == "ACKED" and "holds exactly the approved mission" in checked["message"]
        assert checked["verify"]["matches"] is True and checked["verify"]["vehicles"][0]["differences"] == {}
        assert sim.stats.uploads_completed == 3  # reading back uploads nothing


def test_reconcile_that_cannot_read_the_vehicle_stays_uncertain(home: Path, approved: tuple[Path, Path, str]) -> None:
    _, world, draft = approved
    with _vehicle(approved) as sim:  # the vehicle answers the dispatch's hello; the process dies after its claim
        killed = _sortie(home, world, "dispatch", draft, "--as", "chen.jing", "--link", sim.address, "--json",
                         SORTIE_TEST_KILL_AT="dispatch:after_claim")
    assert killed.returncode == -9
    # the vehicle is gone: nobody answers at the dispatch's link any more
    out = _err(_sortie(home, world, "reconcile", draft, "--as", "chen.jing", "--timeout", "3", "--json"))
    assert out["code"] == "DISPATCH_UNCERTAIN" and "stays UNCERTAIN" in out["message"]
    assert open_ledger().dispatches(draft)[0].status == "UNCERTAIN"


def test_repeated_dispatch_while_the_first_is_in_progress_answers_with_its_code(
        home: Path, approved: tuple[Path, Path, str]) -> None:
    """A claim held by a live process (this one): the repeat waits for it and exits with the first one's code."""
    import threading

    _, world, draft = approved
    ledger = open_ledger()
    rec = ledger.get_draft(draft)
    link = "udpout:127.0.0.1:9"
    claim = ledger.claim_dispatch(draft, 1, plan_hash=rec.plan_hash, params={"link": link}, actor="chen.jing",
                                  now=kit.now())
    assert claim.claimed

    def first_ends() -> None:
        ledger.finish_dispatch(claim.dispatch.idempotency_key, status="FAILED",
                               result={"message": "the vehicle refused the mission"}, actor="chen.jing", now=kit.now())

    import time

    from flows.usecases.dispatching import first_outcome
    from flows.errors import DispatchFailed

    timer = threading.Timer(2.0, first_ends)
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(DispatchFailed):
            first_outcome(ledger, claim.dispatch, now=kit.now(), wait_s=60.0)
    finally:
        timer.join()
    assert time.monotonic() - t0 >= 2.0  # it waited for the first one to end
    out = _err(_sortie(home, world, "dispatch", draft, "--as", "chen.jing", "--link", link, "--json"))
    assert out["code"] == "DISPATCH_FAILED" and f"sortie replan {draft}" in out["message"]
    assert out["details"]["first"] is False


def test_reject_reason_with_escape_sequences_is_printed_harmless(home: Path, approved: tuple[Path, Path, str]) -> None:
    _, world, draft = approved
    fresh = _clone(home, draft, "d-fresh", approve=False)
    evil = "no\x1b[2J\x1b[1;1HAPPROVED by chen.jing\x07\u202e"
    r = _sortie(home, world, "reject", fresh, "--version", "1", "--as", "chen.jing", "--reason", evil)
    assert r.returncode == 0, r.stderr
    log = _sortie(home, world, "log", fresh)
    assert log.returncode == 0
    assert "\x1b" not in log.stdout and "\x07" not in log.stdout and "\u202e" not in log.stdout
    assert "no\\x1b[2J\\x1b[1;1HAPPROVED by chen.jing\\x07\\u202e" in log.stdout
    as_json = _sortie(home, world, "log", fresh, "--json")
    assert "\u202e" not in as_json.stdout  # JSON keeps the data, escaped
    assert any(e["reason"].endswith(evil) for e in json.loads(as_json.stdout)["events"])


def test_show_and_the_artifact_show_the_request_and_who_read_it(home: Path, approved: tuple[Path, Path, str]) -> None:
    from flows.orchestration.artifacts import draft_markdown
    from flows.usecases.reading import show_draft

    _, world, draft = approved
    shown = _sortie(home, world, "show", draft)
    assert shown.returncode == 0, shown.stderr
    assert f"request (as written): {kit.TEXT}" in shown.stdout
    extractor = open_ledger().get_draft(draft).intent["extractor"]
    assert f"read by: {extractor}" in shown.stdout and "clarifications answered: none" in shown.stdout
    summary = replace(show_draft(draft, ledger=open_ledger()), request_text="patrol <img src=x onerror=alert(1)> **now**\x1b[2J")
    md = draft_markdown(summary.to_dict())
    assert "**Request (as written):** patrol &lt;img src=x onerror=alert\\(1\\)&gt; \\*\\*now\\*\\*" in md
    assert "\x1b" not in md and f"**Read by:** {extractor}" in md
    from flows.orchestration.approval_input import approval_form

    form = approval_form(draft, 1, "ab" * 32, request_text="patrol <b>x</b>\x1b[2J", extractor=extractor)
    text = form._description  # what the Prefect UI shows above the approval form
    assert "patrol &lt;b&gt;x&lt;/b&gt;" in text and "\x1b" not in text and f"read by {extractor}" in text


def test_ledger_commands_exit_2_on_failure(home: Path, approved: tuple[Path, Path, str], tmp_path: Path) -> None:
    _, world, _ = approved
    not_backup = tmp_path / "empty"
    not_backup.mkdir()
    assert _err(_sortie(home, world, "ledger", "restore", str(not_backup), "--json"))["code"] == "INVALID_ARGUMENT"
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    assert _err(_sortie(home, world, "ledger", "backup", str(full), "--json"))["code"] == "INVALID_ARGUMENT"
    assert _err(_sortie(home, world, "reconcile", "d-nope", "--as", "chen.jing", "--json"))["code"] == "NOT_FOUND"
