"""Real processes against one ledger file: races, SIGKILL at every step, locked/missing/corrupt files.

The racing workers import only ``flows.ledger`` (DuckDB), not the CLI, so 50
of them fit in seconds. The crash tests run the use cases in child
processes with ``SORTIE_TEST_KILL_AT`` naming the point where the child
SIGKILLs itself, then run the same command again and check the ledger: no
duplicate, nothing half written, the state equal to the replay of the events.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import pytest

from flows.context import DEMO_WORLD_DIR
from flows.errors import LedgerUnavailable
from flows.ledger import Ledger, NewVersion
from testkit import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
NOW = "2026-11-29T07:00:00+02:00"
HASH = "a" * 64


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_")}
    env.update({"SORTIE_HOME": str(home), "PYTHONPATH": str(ROOT), "SORTIE_LEDGER_LOCK_S": "60"})
    env.update(extra)
    return env


def _py(code: str, env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def _consistent(ledger: Ledger, draft_id: str) -> None:
    """Every version's state is the replay of its events; row versions count the events."""
    for rec in ledger.versions(draft_id):
        events = [e for e in ledger.events(draft_id) if e.version == rec.version]
        state = None
        for e in events:
            assert e.from_state == state, (rec.version, [(x.from_state, x.to_state) for x in events])
            state = e.to_state
        assert state == rec.state
        assert rec.row_version == len(events) == events[-1].row_version


def _tiny_plan() -> dict:
    """A one-sortie plan value (the ledger stores it as given; approve and show only read it)."""
    from shapely.geometry import box

    from planner.plan import Leg, Plan, Sortie, Waypoint, plan_to_dict

    at = datetime.fromisoformat(NOW)
    wps = (Waypoint(24.941, 60.17, 0.0, "TAKEOFF"), Waypoint(24.943, 60.171, 50.0), Waypoint(24.941, 60.17, 0.0, "LAND"))
    sortie = Sortie(0, "M30T-01", "DOCK-A", at, (Leg("transit", wps, 300.0, 60.0, 5.0),), 300.0, 60.0, 5.0, 0.02)
    return plan_to_dict(Plan("FIRE_LANE_PATROL", at, box(24.94, 60.169, 24.945, 60.172), 50.0, (sortie,)))


def _seed(ledger: Ledger, draft_id: str = "d-race", plan: dict | None = None, plan_hash: str = HASH) -> None:
    ledger.record_versions(
        [NewVersion(draft_id=draft_id, version=1, state="DRAFT", request_key=f"rk-{draft_id}", tenant="city-fire",
                    region_id="region-1001", requested_by="li.wei", request_text="patrol", intent={"intent": {}},
                    plan=plan or _tiny_plan(), plan_hash=plan_hash, findings=[],
                    verdict="pass", missing=[], world_name="demo", world_dir=str(DEMO_WORLD_DIR), world_hash="w")],
        actor="li.wei", now=datetime.fromisoformat(NOW))


# --------------------------------------------------------------------------- 50 racing processes

RACER = """
import json, sys, time
from datetime import datetime
from flows.ledger import Ledger
from flows.errors import ApprovalRequired
from planner.errors import SortieError
from pathlib import Path
path, role, who, sync = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])
now = datetime.fromisoformat("2026-11-29T07:00:00+02:00")
ledger = Ledger(path, lock_budget_s=120)
(sync / f"ready-{who}").touch()
limit = time.time() + 300
while not (sync / "go").exists() and time.time() < limit:  # imports done everywhere: start together
    time.sleep(0.02)
if role == "approve":
    try:
        ledger.approve("d-race", 1, approver_id=who, may_approve=lambda t, r: True, plan_hash=None, comment="",
                       now=now)
        (sync / "approved").touch()
        print(json.dumps({"role": role, "result": "APPROVED"}))
    except SortieError as e:
        print(json.dumps({"role": role, "result": e.code}))
else:
    early = None
    for attempt in range(5):
        try:
            c = ledger.claim_dispatch("d-race", 1, plan_hash="a" * 64, params={"link": None}, actor=who, now=now)
            print(json.dumps({"role": role, "result": "CLAIMED" if c.claimed else "FIRST_OUTCOME", "early": early,
                              "status": c.dispatch.status, "key": c.dispatch.idempotency_key}))
            break
        except ApprovalRequired:
            # too early: told so clearly; a dispatcher tries again once the approval is known
            early = "APPROVAL_REQUIRED"
            while not (sync / "approved").exists() and time.time() < limit:
                time.sleep(0.05)
        except SortieError as e:
            print(json.dumps({"role": role, "result": e.code}))
            break
    else:
        print(json.dumps({"role": role, "result": "GAVE_UP"}))
"""


def test_fifty_processes_race_approve_and_dispatch(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.duckdb")
    _seed(ledger)
    env = _env(tmp_path)
    sync = tmp_path / "sync"
    sync.mkdir()
    roles = ["approve"] * 10 + ["dispatch"] * 40
    procs = [
        subprocess.Popen([sys.executable, "-c", RACER, str(ledger.path), role, f"user{i}", str(sync)], env=env,
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i, role in enumerate(roles)
    ]
    limit = time.monotonic() + 300
    while len(list(sync.glob("ready-*"))) < len(roles) and time.monotonic() < limit:
        time.sleep(0.05)
    (sync / "go").touch()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=400)
        assert p.returncode == 0, err[-2000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    approvals = [r["result"] for r in results if r["role"] == "approve"]
    claims = [r for r in results if r["role"] == "dispatch"]
    assert approvals.count("APPROVED") == 1 and set(approvals) <= {"APPROVED", "CONFLICT"}, approvals
    assert sum(r["result"] == "CLAIMED" for r in claims) == 1, claims
    assert all(r["result"] in ("CLAIMED", "FIRST_OUTCOME", "CONFLICT") for r in claims), claims
    assert {r["key"] for r in claims if "key" in r} == {ledger.dispatches("d-race")[0].idempotency_key}
    assert all(r["status"] == "PENDING" for r in claims if "status" in r)
    assert len(ledger.dispatches("d-race")) == 1 and len(ledger.approvals("d-race")) == 1
    assert [e.to_state for e in ledger.events("d-race")] == ["DRAFT", "APPROVED"]
    _consistent(ledger, "d-race")


# --------------------------------------------------------------------------- SIGKILL, then rerun

PLAN = """
import json, sys
from datetime import datetime
from flows.ledger import open_ledger
from flows.usecases import planning
from flows.usecases.grounds import Grounds
s = planning.plan_draft(text="这块地今天巡一遍消防通道", region_id="region-1001", requested_by="li.wei",
                        now=datetime.fromisoformat("2026-11-29T07:00:00+02:00"),
                        grounds=Grounds(ledger=open_ledger(), world_dir=sys.argv[1]))
print(json.dumps({"draft_id": s.draft_id, "version": s.version, "status": s.status, "created": s.created}))
"""


@pytest.fixture(scope="module")
def offline_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo world with every city-fire drone OFFLINE: planning ends quickly in WAITING_RESOURCE."""
    world = tmp_path_factory.mktemp("world") / "offline"
    shutil.copytree(DEMO_WORLD_DIR, world)
    fleet = json.loads((world / "fleet.json").read_text(encoding="utf-8"))
    for d in fleet["drones"]:
        if d["tenant"] == "city-fire":
            d["status"] = "OFFLINE"
    (world / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    return world


@pytest.mark.parametrize("point", ["plan:after_files", "ledger:record:in_transaction", "plan:after_commit"])
def test_plan_killed_then_rerun(tmp_path: Path, offline_world: Path, point: str) -> None:
    killed = _py(PLAN, _env(tmp_path, SORTIE_TEST_KILL_AT=point), str(offline_world))
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    rerun = _py(PLAN, _env(tmp_path), str(offline_world))
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    out = json.loads(rerun.stdout.strip().splitlines()[-1])
    assert out["created"] is (point != "plan:after_commit")
    ledger = Ledger(tmp_path / "ledger.duckdb")
    drafts = ledger.list_drafts()
    assert [d.draft_id for d in drafts] == [out["draft_id"]]  # no duplicate
    assert [v.version for v in ledger.versions(out["draft_id"])] == [1]
    assert drafts[0].state == "WAITING_RESOURCE" and drafts[0].missing
    _consistent(ledger, out["draft_id"])
    files = sorted(p.name for p in (tmp_path / "drafts" / out["draft_id"] / "v1").iterdir())
    assert files == ["draft.json"]
    assert not [p for p in (tmp_path / "drafts" / out["draft_id"]).iterdir() if p.name.startswith(".tmp")]


APPROVE = """
import json, sys
from datetime import datetime
from flows.ledger import open_ledger
from flows.usecases import decisions
from flows.usecases.grounds import Grounds
from planner.errors import SortieError
try:
    s = decisions.approve("d-race", 1, approver="chen.jing", comment="ok",
                          now=datetime.fromisoformat("2026-11-29T07:00:00+02:00"),
                          grounds=Grounds(ledger=open_ledger()))
    print(json.dumps({"result": s.status}))
except SortieError as e:
    print(json.dumps({"result": e.code}))
"""


@pytest.mark.parametrize("point", ["ledger:approve:in_transaction", "approve:after_commit"])
def test_approve_killed_then_rerun(tmp_path: Path, point: str) -> None:
    ledger = Ledger(tmp_path / "ledger.duckdb")
    _seed(ledger)
    killed = _py(APPROVE, _env(tmp_path, SORTIE_TEST_KILL_AT=point))
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    committed = point == "approve:after_commit"
    assert ledger.get_draft("d-race", 1).state == ("APPROVED" if committed else "DRAFT")
    rerun = _py(APPROVE, _env(tmp_path))
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    # the rerun either approves (nothing was committed) or says it is already approved: never a second approval
    assert json.loads(rerun.stdout.strip().splitlines()[-1])["result"] == ("CONFLICT" if committed else "APPROVED")
    assert len(ledger.approvals("d-race")) == 1
    assert ledger.get_draft("d-race", 1).state == "APPROVED"
    _consistent(ledger, "d-race")


DISPATCH = """
import json, sys
from datetime import datetime
from flows.ledger import open_ledger
from flows.usecases import dispatching
from flows.usecases.grounds import Grounds
from planner.errors import SortieError
try:
    s = dispatching.dispatch(sys.argv[1], 1, actor="chen.jing", link=sys.argv[2], timeout_s=15,
                             now=datetime.fromisoformat("2026-11-29T07:00:00+02:00"),
                             grounds=Grounds(ledger=open_ledger()))
    print(json.dumps({"result": s.status, "first": s.first}))
except SortieError as e:
    print(json.dumps({"result": e.code, "message": e.message}))
"""


@pytest.fixture(scope="module")
def approved_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """A SORTIE_HOME holding one planned and approved draft of the demo world (geozones included)."""
    base = tmp_path_factory.mktemp("dispatch")
    world = base / "world"
    shutil.copytree(DEMO_WORLD_DIR, world)
    fleet = json.loads((world / "fleet.json").read_text(encoding="utf-8"))
    for d in fleet["drones"]:  # the fresh snapshot dispatch looks at: the vehicles just reported
        d["last_telemetry_at"] = "2026-11-29T06:59:40+02:00"
    (world / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    home = base / "home"
    home.mkdir()
    code = PLAN + """
from flows.usecases import decisions
decisions.approve(s.draft_id, s.version, approver="chen.jing", plan_hash=s.plan_hash, comment="ok",
                  now=datetime.fromisoformat("2026-11-29T07:00:00+02:00"), grounds=Grounds(ledger=open_ledger()))
"""
    done = _py(code, _env(home), str(world), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["status"] == "DRAFT", out
    return home, out["draft_id"], world


def _sim(world: Path, draft: str, home: Path):
    from flows.usecases.common import load_world_at
    from testkit import sim_vehicle

    rec = Ledger(home / "ledger.duckdb").get_draft(draft, 1)
    drone = load_world_at(world).drone(rec.plan["sorties"][0]["drone_id"])
    port = free_port("udp")
    return sim_vehicle(f"udpin:127.0.0.1:{port}", drone.autopilot).start(), f"udpout:127.0.0.1:{port}"


RECONCILE = """
import json, sys
from datetime import datetime
from flows.ledger import open_ledger
from flows.usecases.grounds import Grounds
from flows.usecases.reconciling import reconcile
from planner.errors import SortieError
try:
    out = reconcile(sys.argv[1], actor="chen.jing", link=sys.argv[2], timeout_s=15,
                    now=datetime.fromisoformat("2026-11-29T07:00:00+02:00"), grounds=Grounds(ledger=open_ledger()))
    print(json.dumps({"result": out["status"], "draft_status": out["draft_status"]}))
except SortieError as e:
    print(json.dumps({"result": e.code, "message": e.message}))
"""


@pytest.mark.parametrize(
    "point",
    ["ledger:claim:in_transaction", "dispatch:after_claim", "upload:after_fence", "upload:after_mission",
     "dispatch:after_upload"],
)
def test_dispatch_killed_then_rerun_then_reconciled(tmp_path: Path, approved_home: tuple[Path, str, Path],
                                                    point: str) -> None:
    """SIGKILL at each step of dispatch; a rerun never re-sends; ``reconcile`` settles to what the vehicle holds."""
    src, draft, world = approved_home
    home = tmp_path / "home"
    shutil.copytree(src, home)
    ledger = Ledger(home / "ledger.duckdb")
    if len({s["drone_id"] for s in ledger.get_draft(draft, 1).plan["sorties"]}) != 1:
        pytest.skip("the demo plan flies several drones; one simulator per drone is the demo's job")
    sim, link = _sim(world, draft, home)
    try:
        killed = _py(DISPATCH, _env(home, SORTIE_TEST_KILL_AT=point, SORTIE_WORLD=str(world)), draft, link)
        assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
        uploads_after_kill = sim.stats.uploads_completed
        held_after_kill = {t: len(items) for t, items in sim.missions.items()}
        rerun = _py(DISPATCH, _env(home, SORTIE_WORLD=str(world)), draft, link)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        out = json.loads(rerun.stdout.strip().splitlines()[-1])
        assert sim.stats.uploads_completed == (uploads_after_kill if point != "ledger:claim:in_transaction"
                                               else sim.stats.uploads_completed)
        settled = _py(RECONCILE, _env(home, SORTIE_WORLD=str(world)), draft, link)
        assert settled.returncode == 0, settled.stderr[-2000:]
        rec = json.loads(settled.stdout.strip().splitlines()[-1])
        uploads_final = sim.stats.uploads_completed
    finally:
        sim.stop()
    dispatches = ledger.dispatches(draft)
    assert len(dispatches) == 1  # never two dispatches of one version
    if point == "ledger:claim:in_transaction":
        # the claim never committed: the rerun is the first dispatch and it reaches the vehicle
        assert uploads_after_kill == 0 and uploads_final > 0
        assert out == {"result": "ACKED", "first": True}
        assert rec["result"] == "ACKED"  # nothing to settle: the last dispatch is ACKED
        assert dispatches[0].status == "ACKED" and ledger.get_draft(draft, 1).state == "DISPATCHED"
    else:
        # a claim without an outcome: the rerun does not send again; it reports the unknown outcome as an error
        assert out["result"] == "DISPATCH_UNCERTAIN" and "reconcile" in out["message"], out
        assert uploads_final == uploads_after_kill  # nothing re-sent, by the rerun nor by reconcile
        whole = point == "dispatch:after_upload"
        expected = {"dispatch:after_claim": 0, "upload:after_fence": 1, "upload:after_mission": 2}
        assert uploads_after_kill == expected[point] if point in expected else uploads_after_kill >= 2
        if whole:
            # the vehicle holds exactly the approved mission: ACKED, the draft DISPATCHED
            assert rec == {"result": "ACKED", "draft_status": "DISPATCHED"}
            assert dispatches[0].status == "ACKED" and dispatches[0].result["reconciled"] is True
            assert ledger.get_draft(draft, 1).state == "DISPATCHED"
        else:
            # nothing or only part of it reached the vehicle: FAILED, with what the vehicle now holds
            assert rec["result"] == "DISPATCH_FAILED" and "replan" in rec["message"], rec
            assert dispatches[0].status == "FAILED" and ledger.get_draft(draft, 1).state == "ABORTED"
            holds = next(iter(dispatches[0].result["vehicle_holds"].values()))["counts"]
            assert sum(holds.values()) == sum(held_after_kill.values())
    _consistent(ledger, draft)
    from flows.integrity.verify import verify_ledger

    assert verify_ledger(ledger).ok


# --------------------------------------------------------------------------- locked, missing, corrupt

HOLDER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
con.close()
"""


@contextmanager
def _lock_held(ledger: Ledger, tmp_path: Path, *, hold_s: float, wait_s: float | None) -> Iterator[None]:
    """Another process holds the ledger file open for ``hold_s``; the body runs once it has it.

    Afterwards the holder is waited for up to ``wait_s`` (it lets go by itself), or killed when None."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(ledger.path), str(hold_s)], stdout=subprocess.PIPE,
                              text=True, env=_env(tmp_path))
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield
    finally:
        if wait_s is None:
            holder.kill()
            holder.wait(10)
        else:
            holder.wait(wait_s)


def test_locked_ledger_waits_then_fails_clearly_and_loses_nothing(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.duckdb", lock_budget_s=0.8)
    _seed(ledger)
    with _lock_held(ledger, tmp_path, hold_s=30, wait_s=None):
        t0 = time.monotonic()
        with pytest.raises(LedgerUnavailable, match="locked by another process"):
            ledger.list_drafts()
        assert 0.7 <= time.monotonic() - t0 < 10
    assert [d.draft_id for d in ledger.list_drafts()] == ["d-race"]


def test_short_lock_is_waited_out(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.duckdb", lock_budget_s=30)
    _seed(ledger)
    with _lock_held(ledger, tmp_path, hold_s=1.0, wait_s=30):
        _seed(ledger, "d-two")  # blocks until the holder lets go, then writes
    assert sorted(d.draft_id for d in ledger.list_drafts()) == ["d-race", "d-two"]


def test_cli_reports_corrupt_and_missing_ledger(tmp_path: Path) -> None:
    sortie = Path(sys.executable).parent / "sortie"
    home = tmp_path / "home"
    (home / "drafts" / "d-1").mkdir(parents=True)
    missing = subprocess.run([str(sortie), "drafts"], env=_env(home), capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "LEDGER_UNAVAILABLE" in missing.stderr and "missing" in missing.stderr
    assert "Traceback" not in missing.stderr and not (home / "ledger.duckdb").exists()
    (home / "ledger.duckdb").write_bytes(b"not a database at all" * 10)
    corrupt = subprocess.run([str(sortie), "drafts", "--json"], env=_env(home), capture_output=True, text=True,
                             timeout=120)
    assert corrupt.returncode == 2
    assert json.loads(corrupt.stdout)["error"]["code"] == "LEDGER_UNAVAILABLE"
    assert (home / "ledger.duckdb").read_bytes() == b"not a database at all" * 10
