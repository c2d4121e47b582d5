"""Tampering as an insider would, against a real ledger file and a real simulated vehicle over UDP.

One draft is planned and approved once per session (``conftest.py``) (real planner, real
DuckDB file, signed approval); each test copies that SORTIE_HOME, tampers with
it the way the issue describes, dispatches to a simulator on 127.0.0.1 and
checks that the refusal is typed and that the vehicle holds NOTHING.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from integrity import kit
from flows.ledger import open_ledger
from flows.usecases.grounds import Grounds
from planner.errors import SortieError

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"


def _dispatch(draft: str, sim: Any) -> Any:
    from flows.usecases import dispatching

    # the link's whole budget: a patrol's upload takes ~1 s idle, and ran past 15 s once at load 14 in a full suite
    return dispatching.dispatch(draft, actor="chen.jing", now=kit.now(), link=sim.address, timeout_s=45,
                                grounds=Grounds(ledger=open_ledger()))


def _refused(draft: str, sim: Any, code: str) -> SortieError:
    with pytest.raises(SortieError) as err:
        _dispatch(draft, sim)
    assert err.value.code == code, err.value
    assert sim.stats.uploads_completed == 0
    assert all(items == () for items in sim.missions.values()), sim.missions  # the vehicle holds nothing
    return err.value


def _sql(home: Path, *statements: tuple[str, list[Any]]) -> None:
    con = duckdb.connect(str(home / "ledger.duckdb"))
    try:
        for sql, args in statements:
            con.execute(sql, args)
    finally:
        con.close()


def _raised_plan(plan: dict[str, Any], metres: float) -> dict[str, Any]:
    out = json.loads(json.dumps(plan))
    for s in out["sorties"]:
        for leg in s["legs"]:
            for w in leg["waypoints"]:
                if w["alt_m"] > 0:
                    w["alt_m"] += metres
    return out


def _verify_cli(home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in kit.env_for(home, home).items() if k != "SORTIE_WORLD"}
    return subprocess.run([str(SORTIE), "ledger", "verify", "--json"], env=env, capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def test_untouched_ledger_verifies_and_dispatches(home: Path, approved: tuple[Path, Path, str], sim: Any) -> None:
    draft = approved[2]
    ok = _verify_cli(home)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["ok"] is True
    out = _dispatch(draft, sim)
    assert out.status == "ACKED" and sim.stats.uploads_completed > 0
    d = open_ledger().dispatches(draft)[0]
    from flows.integrity.seal import mission_items_hash
    from flows.usecases.common import load_world_at
    from planner.plan import plan_from_dict

    rec = open_ledger().get_draft(draft)
    assert open_ledger().get_dispatch(d.idempotency_key) is not None
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    items_hash, approval_id = con.execute("SELECT items_hash, approval_id FROM dispatches").fetchone()
    con.close()
    assert items_hash == mission_items_hash(plan_from_dict(rec.plan), load_world_at(approved[1]))
    assert approval_id == open_ledger().approvals(draft)[-1].approval_id
    # and the ledger still verifies after the dispatch's events
    assert json.loads(_verify_cli(home).stdout)["ok"] is True


def test_plan_json_raised_8m_after_approval_is_refused(home: Path, approved: tuple[Path, Path, str], sim: Any) -> None:
    draft = approved[2]
    plan = open_ledger().get_draft(draft).plan
    _sql(home, ("UPDATE drafts SET plan_json = ? WHERE draft_id = ?", [json.dumps(_raised_plan(plan, 8.0)), draft]))
    err = _refused(draft, sim, "APPROVAL_INVALID")
    assert "changed after approval" in err.message
    v = _verify_cli(home)
    assert v.returncode == 2 and json.loads(v.stdout)["error"]["code"] == "LEDGER_TAMPERED"
    assert "plan was edited" in json.loads(v.stdout)["error"]["message"]


def test_plan_and_its_hash_both_edited_is_refused(home: Path, approved: tuple[Path, Path, str], sim: Any) -> None:
    from planner.plan import plan_from_dict, plan_hash

    draft = approved[2]
    raised = _raised_plan(open_ledger().get_draft(draft).plan, 8.0)
    new_hash = plan_hash(plan_from_dict(raised))
    _sql(home, ("UPDATE drafts SET plan_json = ?, plan_hash = ? WHERE draft_id = ?",
                [json.dumps(raised), new_hash, draft]))
    _refused(draft, sim, "APPROVAL_INVALID")


def test_plan_file_edited_is_refused(home: Path, approved: tuple[Path, Path, str], sim: Any) -> None:
    draft = approved[2]
    path = home / "drafts" / draft / "v1" / "plan.json"
    raised = _raised_plan(json.loads(path.read_text(encoding="utf-8")), 8.0)
    path.write_text(json.dumps(raised, sort_keys=True, separators=(",", ":")), encoding="utf-8")
    err = _refused(draft, sim, "APPROVAL_INVALID")
    assert "plan file" in err.message


def test_forged_approval_row_is_refused(home: Path, approved: tuple[Path, Path, str], sim: Any) -> None:
    """A fresh (unapproved) version, then an approval row and an APPROVED state written by hand."""
    draft = approved[2]
    _sql(
        home,
        ("DELETE FROM approvals WHERE draft_id = ?", [draft]),
        ("DELETE FROM events WHERE draft_id = ? AND to_state = 'APPROVED'", [draft]),
        ("UPDATE drafts SET state = 'DRAFT', row_version = 1 WHERE draft_id = ?", [draft]),
    )
    plan_hash = open_ledger().get_draft(draft).plan_hash
    _sql(
        home,
        ("UPDATE drafts SET state = 'APPROVED', row_version = 2 WHERE draft_id = ?", [draft]),
        ("INSERT INTO approvals (approval_id, draft_id, version, plan_hash, approver, decision, comment, "
         "created_time, expires_time) VALUES ('forged', ?, 1, ?, 'chen.jing', 'APPROVED', 'ok', ?, ?)",
         [draft, plan_hash, kit.NOW, "2026-11-29T09:00:00+02:00"]),
    )
    err = _refused(draft, sim, "APPROVAL_INVALID")
    assert "not signed" in err.message
    v = json.loads(_verify_cli(home).stdout)
    assert v["error"]["code"] == "LEDGER_TAMPERED"


def test_forged_signature_copied_from_another_row_is_refused(home: Path, approved: tuple[Path, Path, str],
                                                             sim: Any) -> None:
    """The signed statement kept, the row's expiry moved a day later: the row no longer matches what was signed."""
    draft = approved[2]
    _sql(home, ("UPDATE approvals SET expires_time = ? WHERE draft_id = ?", ["2026-11-30T07:30:00+02:00", draft]))
    _refused(draft, sim, "APPROVAL_INVALID")


def test_deleted_event_is_refused(home: Path, approved: tuple[Path, Path, str], sim: Any) -> None:
    draft = approved[2]
    _sql(home, ("DELETE FROM events WHERE draft_id = ? AND from_state IS NULL", [draft]))
    err = _refused(draft, sim, "LEDGER_TAMPERED")
    assert "ledger verify" in err.message
    v = json.loads(_verify_cli(home).stdout)
    assert v["error"]["code"] == "LEDGER_TAMPERED" and "first_break" in v["error"]["details"]


def test_edited_event_reason_is_named_by_verify(home: Path, approved: tuple[Path, Path, str]) -> None:
    draft = approved[2]
    _sql(home, ("UPDATE events SET reason = 'approved by the boss' WHERE draft_id = ? AND to_state = 'APPROVED'",
                [draft]))
    v = _verify_cli(home)
    assert v.returncode == 2
    first = json.loads(v.stdout)["error"]["details"]["first_break"]
    assert "DRAFT→APPROVED" in first and "changed after it was written" in first


def test_older_copy_of_the_ledger_is_refused(home: Path, approved: tuple[Path, Path, str], sim: Any,
                                             tmp_path: Path) -> None:
    """Dispatch once; put the pre-dispatch copy back: the same version would fly again. It does not."""
    draft = approved[2]
    older = tmp_path / "older.duckdb"
    shutil.copyfile(home / "ledger.duckdb", older)
    assert _dispatch(draft, sim).status == "ACKED"
    flown = sim.stats.uploads_completed
    shutil.copyfile(older, home / "ledger.duckdb")
    with pytest.raises(SortieError) as err:
        _dispatch(draft, sim)
    assert err.value.code == "LEDGER_TAMPERED" and "older copy" in err.value.message
    assert sim.stats.uploads_completed == flown  # nothing sent a second time


def test_missing_ledger_beside_its_head_is_an_error_not_a_fresh_start(home: Path, approved: tuple[Path, Path, str],
                                                                      sim: Any) -> None:
    draft = approved[2]
    (home / "ledger.duckdb").unlink()
    shutil.rmtree(home / "drafts")  # not even the draft folders: the signed head alone says a ledger existed
    err = _refused(draft, sim, "LEDGER_UNAVAILABLE")
    assert "restore" in err.message
    assert not (home / "ledger.duckdb").exists()  # nothing was created


def test_truncated_ledger_is_a_typed_error_with_advice(home: Path, approved: tuple[Path, Path, str], sim: Any) -> None:
    draft = approved[2]
    path = home / "ledger.duckdb"
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(size // 2)
    err = _refused(draft, sim, "LEDGER_UNAVAILABLE")
    assert "restore" in err.message
    v = _verify_cli(home)
    assert v.returncode == 2 and json.loads(v.stdout)["error"]["code"] == "LEDGER_UNAVAILABLE"
    assert "INTERNAL" not in v.stdout + v.stderr


def test_a_server_refuses_an_approval_signed_in_local_mode(home: Path, approved: tuple[Path, Path, str]) -> None:
    from flows.integrity.seal import seal_dispatch
    from flows.usecases.common import load_world_at

    draft = approved[2]
    ledger = open_ledger()
    rec = ledger.get_draft(draft)
    with pytest.raises(SortieError) as err:
        seal_dispatch(ledger, rec, load_world_at(approved[1]), now=kit.now(), require_mode="server")
    assert err.value.code == "APPROVAL_INVALID" and "local mode" in err.value.message
    seal = seal_dispatch(ledger, rec, load_world_at(approved[1]), now=kit.now())
    assert seal.statement["identity_proof"] == "asserted" and seal.statement["mode"] == "local"


def test_key_files_are_private(home: Path) -> None:
    keys = home / "keys"
    assert oct(keys.stat().st_mode & 0o777) == "0o700"
    assert oct((keys / "authority.ed25519").stat().st_mode & 0o777) == "0o600"


def test_the_authority_refuses_to_start_from_a_ledger_that_fails(home: Path, approved: tuple[Path, Path, str]) -> None:
    """The start walks what came after the last signed checkpoint, and checks every row that one query can; an
    old entry edited in place is left to the full walk (``sortie ledger verify``, every backup) and to dispatch."""
    from flows.integrity.verify import verify_ledger
    from flows.server.api import create_app
    from flows.server.run import make_config

    def start() -> SortieError | None:
        try:
            create_app(config)
        except SortieError as exc:
            assert not open_ledger(home).is_shared  # a refused start lets the file go
            return exc
        ledger = open_ledger(home)
        assert ledger.is_shared  # the app holds its ledger open (flows.ledger.shared)
        ledger.close()  # as when that server stops
        return None

    config = make_config(approved[1], home, allow_unsigned=True)
    assert start() is None  # a clean ledger: the app is made (and a checkpoint signed)
    open_ledger(home).audit(actor="chen.jing", command="x", args={}, result_code="OK", duration_s=0.0,
                            started=kit.now())  # an entry after the checkpoint
    _sql(home, ("UPDATE audit SET actor = 'mallory' WHERE command = 'x'", []))
    err = start()
    assert err is not None and err.code == "LEDGER_TAMPERED" and "changed after it was written" in err.message
    _sql(home, ("UPDATE audit SET actor = 'chen.jing' WHERE command = 'x'", []))
    assert start() is None
    _sql(home, ("UPDATE drafts SET state = 'DRAFT' WHERE draft_id = ?", [approved[2]]))  # a state, any draft
    err = start()
    assert err is not None and "is not what its events say" in err.message
    _sql(home, ("UPDATE drafts SET state = 'APPROVED' WHERE draft_id = ?", [approved[2]]))
    _sql(home, ("UPDATE events SET actor = 'mallory' WHERE draft_id = ?", [approved[2]]))  # before the checkpoint
    assert start() is None
    with pytest.raises(SortieError) as full:
        verify_ledger(open_ledger(home))
    assert full.value.code == "LEDGER_TAMPERED" and "changed after it was written" in full.value.message
    _sql(home, ("DELETE FROM events WHERE draft_id = ? AND from_state IS NULL", [approved[2]]))
    err = start()
    assert err is not None and err.code == "LEDGER_TAMPERED" and "entries were deleted" in err.message


def test_a_deleted_dispatch_row_is_named_and_frees_no_drone(home: Path, approved: tuple[Path, Path, str],
                                                            sim: Any) -> None:
    """Issue 28: with the ACKED dispatch row of a flying draft gone, a second mission for the same drone passed a
    dry run. Its dispatch log still says the drone flies: verify names the deletion, and the dry run is refused."""
    from datetime import timedelta

    from flows.usecases import decisions, dispatching, planning

    first = approved[2]
    later = kit.now() + timedelta(minutes=1)
    # planned before the first dispatch: a drone committed to a dispatch is no longer planned (issue 42)
    s = planning.plan_draft(text=kit.TEXT, region_id="region-1001", requested_by="li.wei",
                            grounds=Grounds(ledger=open_ledger(), world_dir=str(approved[1])),
                            now=later)
    decisions.approve(s.draft_id, s.version, approver="chen.jing", plan_hash=s.plan_hash, comment="ok", now=later,
                      grounds=Grounds(ledger=open_ledger()))
    assert {x.drone for x in s.sorties} == {open_ledger().get_draft(first).plan["sorties"][0]["drone_id"]}
    assert _dispatch(first, sim).status == "ACKED"

    def dry_run() -> SortieError:
        with pytest.raises(SortieError) as err:
            dispatching.dispatch(s.draft_id, actor="chen.jing", now=later, link=sim.address, timeout_s=15,
                                 dry_run=True, grounds=Grounds(ledger=open_ledger()))
        return err.value

    assert dry_run().code == "DEVICE_BUSY"  # the drone flies the first draft
    _sql(home, ("DELETE FROM dispatches WHERE draft_id = ?", [first]))
    v = _verify_cli(home)
    assert v.returncode == 2 and json.loads(v.stdout)["error"]["code"] == "LEDGER_TAMPERED"
    breaks = json.loads(v.stdout)["error"]["details"]["breaks"]
    assert any(f"of {first} v1: was deleted (its last recorded change: ACKED" in b for b in breaks), breaks
    refused = dry_run()
    assert refused.code == "LEDGER_TAMPERED" and "was deleted" in refused.message


def test_a_deleted_audit_row_fails_verify(home: Path, approved: tuple[Path, Path, str]) -> None:
    """A refused approval is audited (a CLI command, as a user would run it); deleting that row is a break."""
    env = {k: v for k, v in kit.env_for(home, approved[1]).items()}
    again = subprocess.run([str(SORTIE), "approve", approved[2], "--version", "1", "--as", "chen.jing", "--json"],
                           env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert again.returncode == 2  # already approved: refused, and audited
    refused = [a for a in open_ledger().audit_rows() if a.command == "approve" and a.result_code != "OK"]
    assert refused
    open_ledger().audit(actor="later", command="x", args={}, result_code="OK", duration_s=0.0, started=kit.now())
    from flows.integrity.verify import verify_ledger

    assert verify_ledger(open_ledger()).ok
    _sql(home, ("DELETE FROM audit WHERE audit_id = ?", [refused[0].audit_id]))
    v = _verify_cli(home)
    assert v.returncode == 2 and "an entry was deleted" in json.loads(v.stdout)["error"]["message"]
