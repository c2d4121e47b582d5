"""A draft's refusals among many audit rows, and the audit written a batch at a time, on real DuckDB files.

A draft's refused decision attempts are found among many audit rows of other drafts and of reads of the same
draft; a batch of audit rows takes one id range and one insert, in chain order, and the chain verifies.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from flows.integrity.verify import verify_ledger
from flows.ledger import Ledger
from flows.ledger.audit import AuditEntry
from testkit import ledger_version

NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")


def _entry(draft_id: str, command: str = "server.show", code: str = "OK", version: int = 1) -> AuditEntry:
    return AuditEntry(actor="li.wei", command=command, args={"draft_id": draft_id, "version": version},
                      result_code=code, duration_s=0.001, started=NOW, draft_id=draft_id,
                      message=None if code == "OK" else f"why {code}")


def _fill(ledger: Ledger) -> None:
    """Twenty drafts, 400 reads of each in batches, and two refused decisions on d-7 among approvals of others."""
    ledger.record_versions([ledger_version(f"d-{i}") for i in range(20)], actor="a", now=NOW)
    for _ in range(20):
        ledger.audit_many([_entry(f"d-{i}") for i in range(20) for _ in range(20)])
    ledger.audit_many([_entry("d-7", "server.approve", "FORBIDDEN"), _entry("d-8", "server.approve", "FORBIDDEN"),
                       _entry("d-7", "server.approve", "OK"), _entry("d-7", "server.show", "NOT_FOUND"),
                       _entry("d-7", "prefect.reject", "APPROVAL_STALE", version=2)])


def test_a_draft_s_refusals_are_found_among_many_reads(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.duckdb")
    _fill(ledger)
    assert [(r.command, r.result_code) for r in ledger.refusals("d-7")] == [
        ("server.approve", "FORBIDDEN"), ("prefect.reject", "APPROVAL_STALE")]
    assert [r.command for r in ledger.refusals("d-7", 1)] == ["server.approve"]
    assert [r.result_message for r in ledger.refusals("d-8")] == ["why FORBIDDEN"]
    assert ledger.refusals("d-9") == [] and ledger.refusals("d-unknown") == []


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
