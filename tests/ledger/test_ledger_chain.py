"""The ledger's hash chain and signed head on real DuckDB files: every kind of break is named, nothing else is."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from flows.errors import LedgerTampered
from flows.integrity.verify import verify_ledger
from flows.ledger import Ledger, NewVersion
from flows.ledger.chain import GENESIS
from flows.ledger.schema import MIGRATIONS

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


# --------------------------------------------------------------------------- audit and dispatches in the chain


def _fly(ledger: Ledger, draft_id: str, i: int) -> str:
    """Claim, one attempt and an ACKED outcome for an approved draft; the idempotency key."""
    _, h = _plan(i)
    key = ledger.claim_dispatch(draft_id, 1, plan_hash=h, params={"link": "udpout:127.0.0.1:14550"}, actor="c",
                                now=NOW).dispatch.idempotency_key
    ledger.record_attempt(key, {"kind": "upload", "outcome": "ACCEPTED", "items_sent": 3}, now=NOW)
    ledger.finish_dispatch(key, status="ACKED", result={"message": "accepted"}, actor="c", now=NOW)
    return key


@pytest.fixture
def flown(ledger: Ledger) -> Ledger:
    """d-1 dispatched and ACKED; refused and accepted approvals audited with their token, caller and address."""
    _fly(ledger, "d-1", 0)
    for code in ("FORBIDDEN", "OK"):
        ledger.audit(actor="chen.jing", command="server.approve.totp", args={"draft_id": "d-2", "token_id": "tok-7"},
                     result_code=code, duration_s=0.01, started=NOW, draft_id="d-2", token_id="tok-7",
                     client_addr="127.0.0.9", caller="worker", message=None if code == "OK" else "wrong code")
    _draft(ledger, "d-4", 4)  # more entries after them: a deleted row is not the last one
    return ledger


def test_audit_rows_and_dispatch_changes_are_entries(flown: Ledger) -> None:
    report = verify_ledger(flown)
    assert report.ok and report.audit_rows == 2 and report.dispatch_changes == 3  # claim, attempt, outcome
    refused = flown.refusals("d-2")[0]
    assert (refused.token_id, refused.client_addr, refused.caller) == ("tok-7", "127.0.0.9", "worker")
    assert refused.args_redacted["token_id"] == "tok-7" and refused.result_message == "wrong code"


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        ("DELETE FROM audit WHERE result_code = 'FORBIDDEN'", "was expected (an entry was deleted)"),
        ("UPDATE audit SET token_id = 'tok-1' WHERE result_code = 'FORBIDDEN'",
         "server.approve.totp by chen.jing (FORBIDDEN): its content was changed"),
        ("DELETE FROM dispatches WHERE draft_id = 'd-1'", "of d-1 v1: was deleted (its last recorded change: ACKED"),
        ("UPDATE dispatches SET status = 'FAILED' WHERE draft_id = 'd-1'",
         "is not what its last recorded change says"),
        ("UPDATE dispatches SET drone_ids = '[\"D-9\"]' WHERE draft_id = 'd-1'",
         "is not what its last recorded change says"),
        ("DELETE FROM dispatch_log WHERE change = 'attempt'", "was expected (an entry was deleted)"),
        ("UPDATE dispatch_log SET status = 'PENDING' WHERE change = 'finish'", "its content was changed"),
        ("UPDATE dispatch_log SET row_json = replace(row_json, '\"attempts\":1', '\"attempts\":\"x\"')",
         "is not what its last recorded change says"),
        ("INSERT INTO dispatches SELECT * REPLACE ('k2' AS idempotency_key, 'd-2' AS draft_id) FROM dispatches",
         "of d-2 v1: is not in the hash chain"),
    ],
)
def test_a_deleted_or_edited_audit_or_dispatch_row_is_named(flown: Ledger, tamper: str, expected: str) -> None:
    _sql(flown, tamper)
    with pytest.raises(LedgerTampered) as err:
        verify_ledger(flown)
    assert any(expected in b for b in err.value.details["breaks"]), err.value.details["breaks"]


def test_a_forgotten_dispatch_of_another_draft_fails_the_check_before_a_dispatch(flown: Ledger) -> None:
    """With d-1's dispatch row gone its drone would look free: the cheap check of d-2 (every dispatch) sees it."""
    assert flown.check("d-2") == []
    _sql(flown, "DELETE FROM dispatches WHERE draft_id = 'd-1'")
    assert [b.text() for b in flown.check("d-2") if "was deleted" in b.text()]


# --------------------------------------------------------------------------- checkpoints: start-up since the last one


def test_the_start_up_check_walks_only_what_came_after_the_last_checkpoint(flown: Ledger) -> None:
    full = verify_ledger(flown)  # a clean full walk records a signed checkpoint
    assert flown.latest_checkpoint().seq == full.head_seq
    _draft(flown, "d-5", 5)
    since = verify_ledger(flown, full=False)
    assert (since.scope, since.from_seq, since.entries) == ("since", full.head_seq, 3)
    assert since.head_seq == full.head_seq + 3 and flown.latest_checkpoint().seq == since.head_seq
    _draft(flown, "d-6", 6)
    _sql(flown, "UPDATE events SET reason = 'edited' WHERE draft_id = 'd-6' AND to_state = 'DRAFT'")
    with pytest.raises(LedgerTampered, match="its content was changed"):
        verify_ledger(flown, full=False)


def test_a_forged_or_stale_checkpoint_is_not_trusted(flown: Ledger) -> None:
    verify_ledger(flown)
    good = flown.latest_checkpoint()
    # a checkpoint row written by hand (no key) is ignored: the older, signed one is used
    _sql(flown, "INSERT INTO chain_checkpoints (seq, head_hash, scope, statement_json, signature, key_id) SELECT seq + 5, "
                "head_hash, scope, replace(statement_json, '\"seq\":' || seq, '\"seq\":' || (seq + 5)), signature, key_id "
                "FROM chain_checkpoints")
    assert flown.latest_checkpoint() == good
    # history rewritten under the checkpoint (its entry's hash changed): it no longer holds; the full walk runs
    for table in ("events", "approvals", "dispatch_log", "audit"):
        _sql(flown, f"UPDATE {table} SET entry_hash = repeat('f', 64) WHERE chain_seq = {good.seq}")
    assert flown.latest_checkpoint() is None
    with pytest.raises(LedgerTampered) as err:
        verify_ledger(flown, full=False)
    assert err.value.details["scope"] == "full"


def test_without_any_checkpoint_the_start_up_check_is_the_full_walk(flown: Ledger) -> None:
    verify_ledger(flown)
    _sql(flown, "DELETE FROM chain_checkpoints")
    report = verify_ledger(flown, full=False)
    assert report.ok and report.scope == "full" and report.entries == report.head_seq
