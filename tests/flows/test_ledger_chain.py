"""The ledger's hash chain and signed head on real DuckDB files: every kind of break is named, nothing else is."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from flows.integrity.verify import verify_ledger
from flows.ledger import Ledger, NewVersion
from flows.ledger.chain import GENESIS
from flows.ledger.schema import MIGRATIONS
from planner.errors import LedgerTampered

NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")


def _plan(i: int) -> tuple[dict, str]:
    plan = {"sorties": [{"drone_id": f"D-{i}"}], "n": i}
    text = json.dumps(plan, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return plan, hashlib.sha256(text.encode()).hexdigest()


def _draft(ledger: Ledger, draft_id: str, i: int = 0, *, approve: bool = True) -> None:
    plan, h = _plan(i)
    ledger.record_versions([NewVersion(
        draft_id=draft_id, version=1, state="DRAFT", request_key=draft_id, tenant="t", region_id=None,
        requested_by="a", request_text="r", intent=None, plan=plan, plan_hash=h, findings=[], verdict="pass",
        missing=[], world_name="w", world_dir="w", world_hash="wh")], actor="a", now=NOW)
    if approve:
        ledger.approve(draft_id, 1, approver_id="b", may_approve=lambda t, r: True, plan_hash=h, comment="",
                       now=NOW)


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    led = Ledger(tmp_path / "ledger.duckdb")
    for i, d in enumerate(("d-1", "d-2", "d-3")):
        _draft(led, d, i)
    return led


def _sql(ledger: Ledger, sql: str, args: list | None = None) -> None:
    con = duckdb.connect(str(ledger.path))
    con.execute(sql, args or [])
    con.close()


def _first_break(ledger: Ledger) -> str:
    with pytest.raises(LedgerTampered) as err:
        verify_ledger(ledger)
    return err.value.details["first_break"]


def test_a_clean_ledger_verifies_and_is_chained_per_draft_and_globally(ledger: Ledger) -> None:
    report = verify_ledger(ledger)
    assert report.ok and report.entries == 9 and report.approvals == 3 and report.head_seq == 9
    con = duckdb.connect(str(ledger.path), read_only=True)
    rows = con.execute(
        "SELECT chain_seq, prev_hash, draft_prev_hash, entry_hash, draft_id FROM (SELECT chain_seq, prev_hash, "
        "draft_prev_hash, entry_hash, draft_id FROM events UNION ALL SELECT chain_seq, prev_hash, draft_prev_hash, "
        "entry_hash, draft_id FROM approvals) ORDER BY chain_seq").fetchall()
    con.close()
    assert [r[0] for r in rows] == list(range(1, 10))
    assert rows[0][1] == GENESIS and all(rows[i][1] == rows[i - 1][3] for i in range(1, 9))
    first_of_d2 = next(r for r in rows if r[4] == "d-2")
    assert first_of_d2[2] == GENESIS  # each draft's own chain starts at genesis
    head = json.loads((ledger.path.parent / "ledger.duckdb.head").read_text())
    assert head["seq"] == 9 and head["head_hash"] == rows[-1][3]


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        ("UPDATE events SET reason = 'edited' WHERE draft_id = 'd-2' AND to_state = 'APPROVED'",
         "DRAFT→APPROVED: its content was changed"),
        ("UPDATE approvals SET approver = 'mallory' WHERE draft_id = 'd-1'", "APPROVED by mallory: its content"),
        ("DELETE FROM events WHERE draft_id = 'd-2' AND to_state = 'APPROVED'", "d-2"),
        ("INSERT INTO approvals (approval_id, draft_id, version, plan_hash, approver, decision, comment, created_time, "
         "expires_time) VALUES ('forged', 'd-3', 1, 'x', 'b', 'APPROVED', '', '2026', NULL)",
         "is not in the hash chain"),
        ("UPDATE drafts SET state = 'APPROVED', row_version = 2 WHERE draft_id = 'd-1'", ""),
        ("UPDATE drafts SET plan_hash = 'f' || substr(plan_hash, 2) WHERE draft_id = 'd-3'", "d-3"),
        ("UPDATE chain_head SET seq = 8", "chain head"),
    ],
)
def test_each_kind_of_tampering_is_named(ledger: Ledger, tamper: str, expected: str) -> None:
    if "UPDATE drafts SET state" in tamper:
        _draft(ledger, "d-4", 4, approve=False)  # a DRAFT made APPROVED by hand, without its event
        tamper = tamper.replace("d-1", "d-4")
        expected = "state APPROVED is not what its events say (DRAFT)"
    _sql(ledger, tamper)
    assert expected in _first_break(ledger)


def test_deleting_the_last_entry_is_caught_by_the_signed_head(ledger: Ledger) -> None:
    _sql(ledger, "DELETE FROM approvals WHERE draft_id = 'd-3'")
    assert "chain head" in _first_break(ledger) or "d-3" in _first_break(ledger)


def test_an_older_copy_of_the_ledger_is_named(ledger: Ledger, tmp_path: Path) -> None:
    shutil.copyfile(ledger.path, tmp_path / "old.duckdb")
    _draft(ledger, "d-9", 9)
    shutil.copyfile(tmp_path / "old.duckdb", ledger.path)
    assert "older copy" in _first_break(ledger)


def test_a_head_file_one_commit_behind_is_a_crash_not_tampering(ledger: Ledger, tmp_path: Path) -> None:
    """Killed between the commit and writing ``ledger.duckdb.head``: the ledger is ahead; fine, and repaired."""
    head = ledger.path.parent / "ledger.duckdb.head"
    saved = head.read_text()
    _draft(ledger, "d-9", 9)
    head.write_text(saved)
    assert verify_ledger(ledger).ok
    _draft(ledger, "d-10", 10)
    assert json.loads(head.read_text())["seq"] == verify_ledger(ledger).head_seq


def test_a_missing_or_forged_head_file_is_named(ledger: Ledger) -> None:
    head = ledger.path.parent / "ledger.duckdb.head"
    data = json.loads(head.read_text())
    head.write_text(json.dumps({**data, "seq": data["seq"] + 5}))
    assert "signature does not verify" in _first_break(ledger)
    head.unlink()
    assert "is missing" in _first_break(ledger)


def test_another_installations_key_does_not_verify(ledger: Ledger) -> None:
    shutil.rmtree(ledger.path.parent / "keys")
    Ledger(ledger.path).keys.key_id  # a new key is made
    assert "signature does not verify" in _first_break(Ledger(ledger.path))


def test_a_ledger_from_before_the_chain_is_adopted_on_upgrade(tmp_path: Path) -> None:
    """A schema-1 file with rows: the upgrade chains them as they are; its approvals must be signed anew."""
    path = tmp_path / "ledger.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
                "applied_time VARCHAR NOT NULL)")
    for statement in MIGRATIONS[0][2].split(";"):
        if statement.strip():
            con.execute(statement)
    con.execute("INSERT INTO schema_migrations VALUES (1, 'v1', '2026')")
    plan, h = _plan(1)
    con.execute("INSERT INTO drafts VALUES ('d-old', 1, 'APPROVED', 2, 'rk', 't', NULL, 'a', 'r', NULL, ?, ?, '[]', "
                "'pass', '[]', '{}', 'w', 'w', 'wh', ?, ?)",
                [json.dumps(plan, sort_keys=True, separators=(",", ":")), h, NOW.isoformat(), NOW.isoformat()])
    con.execute("INSERT INTO events (draft_id, version, actor, from_state, to_state, reason, event_time, row_version) "
                "VALUES ('d-old', 1, 'a', NULL, 'DRAFT', 'x', ?, 1), ('d-old', 1, 'b', 'DRAFT', 'APPROVED', 'y', ?, 2)",
                [NOW.isoformat(), NOW.isoformat()])
    con.execute("INSERT INTO approvals VALUES ('ap-old', 'd-old', 1, ?, 'b', 'APPROVED', '', ?, ?)",
                [h, NOW.isoformat(), "2026-11-29T07:30:00+02:00"])
    con.close()
    ledger = Ledger(path)
    report = verify_ledger(ledger, strict=False)
    assert report.ok and report.entries == 3 and report.legacy_unsigned == 1
    # the unsigned approval does not count as "already approved": approving again signs one
    ledger.approve("d-old", 1, approver_id="b", may_approve=lambda t, r: True, plan_hash=h, comment="", now=NOW)
    con = duckdb.connect(str(path), read_only=True)
    signed = con.execute("SELECT count(*) FROM approvals WHERE signature IS NOT NULL").fetchone()[0]
    con.close()
    assert signed == 1
