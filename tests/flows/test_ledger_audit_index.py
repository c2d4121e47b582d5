"""The audit indexed by draft (schema migration 7) and the audit written a batch at a time, on real DuckDB files.

An old home (schema 6: no index) opens, is migrated once, and still verifies; a draft's refused decision
attempts are found among many audit rows of other drafts and of reads of the same draft; a batch of audit rows
takes one id range and one insert, in chain order.
"""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import duckdb

from flows.integrity.verify import verify_ledger
from flows.ledger import Ledger, NewVersion
from flows.ledger.audit import AuditEntry
from flows.ledger.records import sha256_json
from flows.ledger.schema import SCHEMA_VERSION

NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")


def _version(draft_id: str) -> NewVersion:
    plan = {"sorties": [{"drone_id": f"D-{draft_id}"}]}
    return NewVersion(draft_id=draft_id, version=1, state="DRAFT", request_key=f"rk-{draft_id}", tenant="t",
                      region_id=None, requested_by="a", request_text="r", intent=None, plan=plan,
                      plan_hash=sha256_json(plan), findings=[], verdict="pass", missing=[], world_name="w",
                      world_dir="w", world_hash="wh")


def _entry(draft_id: str, command: str = "server.show", code: str = "OK", version: int = 1) -> AuditEntry:
    return AuditEntry(actor="li.wei", command=command, args={"draft_id": draft_id, "version": version},
                      result_code=code, duration_s=0.001, started=NOW, draft_id=draft_id,
                      message=None if code == "OK" else f"why {code}")


def _fill(ledger: Ledger) -> None:
    """Twenty drafts, 400 reads of each in batches, and two refused decisions on d-7 among approvals of others."""
    ledger.record_versions([_version(f"d-{i}") for i in range(20)], actor="a", now=NOW)
    for _ in range(20):
        ledger.audit_many([_entry(f"d-{i}") for i in range(20) for _ in range(20)])
    ledger.audit_many([_entry("d-7", "server.approve", "FORBIDDEN"), _entry("d-8", "server.approve", "FORBIDDEN"),
                       _entry("d-7", "server.approve", "OK"), _entry("d-7", "server.show", "NOT_FOUND"),
                       _entry("d-7", "prefect.reject", "APPROVAL_STALE", version=2)])


def _indexes(path: Path) -> list[tuple[str, str]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("SELECT index_name, table_name FROM duckdb_indexes() ORDER BY 1").fetchall()
    finally:
        con.close()


def _as_schema_6(path: Path) -> None:
    """What a home written before migration 7 holds: no index on the audit, schema versions 1–6."""
    con = duckdb.connect(str(path))
    try:
        con.execute("DROP INDEX audit_draft")
        con.execute("DELETE FROM schema_migrations WHERE version = 7")
    finally:
        con.close()


def test_a_draft_s_refusals_are_found_among_many_reads(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.duckdb")
    _fill(ledger)
    assert [(r.command, r.result_code) for r in ledger.refusals("d-7")] == [
        ("server.approve", "FORBIDDEN"), ("prefect.reject", "APPROVAL_STALE")]
    assert [r.command for r in ledger.refusals("d-7", 1)] == ["server.approve"]
    assert [r.result_message for r in ledger.refusals("d-8")] == ["why FORBIDDEN"]
    assert ledger.refusals("d-9") == [] and ledger.refusals("d-unknown") == []


def test_the_audit_is_indexed_by_draft_and_a_draft_s_rows_are_read_by_it(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.duckdb")
    _fill(ledger)
    assert ("audit_draft", "audit") in _indexes(ledger.path)
    con = duckdb.connect(str(ledger.path), read_only=True)
    try:
        plan = "\n".join(r[1] for r in con.execute(
            "EXPLAIN ANALYZE SELECT audit_id FROM audit WHERE draft_id = ?", ["d-3"]).fetchall())
    finally:
        con.close()
    assert "Index Scan" in plan, plan


def test_an_old_home_opens_migrates_once_and_verifies(tmp_path: Path) -> None:
    built = Ledger(tmp_path / "built" / "ledger.duckdb")
    _fill(built)
    old = tmp_path / "old"
    shutil.copytree(built.path.parent, old)  # another path: this process has not migrated it yet
    _as_schema_6(old / "ledger.duckdb")
    assert ("audit_draft", "audit") not in _indexes(old / "ledger.duckdb")

    ledger = Ledger(old / "ledger.duckdb").shared()  # as a server opens it
    try:
        assert ledger.schema_versions() == list(range(1, SCHEMA_VERSION + 1))
        assert [r.result_code for r in ledger.refusals("d-7")] == ["FORBIDDEN", "APPROVAL_STALE"]
        verify_ledger(ledger, full=True)  # the chain as it was: an index changes no row
    finally:
        ledger.close()
    assert ("audit_draft", "audit") in _indexes(old / "ledger.duckdb")

    again = tmp_path / "again"
    shutil.copytree(old, again)  # opened afresh: nothing left to migrate
    con = duckdb.connect(str(again / "ledger.duckdb"), read_only=True)
    try:
        applied = con.execute("SELECT version, applied_time FROM schema_migrations WHERE version = 7").fetchall()
    finally:
        con.close()
    reopened = Ledger(again / "ledger.duckdb")
    assert reopened.schema_versions() == list(range(1, SCHEMA_VERSION + 1))
    con = duckdb.connect(str(again / "ledger.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT version, applied_time FROM schema_migrations WHERE version = 7").fetchall() == applied
    finally:
        con.close()
    verify_ledger(reopened, full=True)


def test_a_batch_of_audit_rows_is_chained_in_order(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.duckdb").shared()
    try:
        ledger.audit_many([_entry(f"d-{i}") for i in range(50)])
        ledger.audit_many([_entry("d-x", "server.log")])
        rows = ledger.audit_rows(limit=100)[::-1]
        assert [r.draft_id for r in rows] == [f"d-{i}" for i in range(50)] + ["d-x"]
        assert [r.audit_id for r in rows] == sorted(r.audit_id for r in rows)
        verify_ledger(ledger, full=True)
    finally:
        ledger.close()
