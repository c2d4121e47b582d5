"""A ledger file written by an older sortie opens, migrates once and verifies; what it held joins the chain.

``fixtures/schema4`` was written by the release at e5326c7 (schema 4: events
and approvals chained, audit and dispatches not), with its own key and head
file (``fixtures/make_schema4.py`` says how). Real DuckDB files throughout.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from flows.errors import LedgerTampered
from flows.integrity.verify import verify_file, verify_ledger
from flows.ledger import Ledger
from flows.ledger.schema import SCHEMA_VERSION

FIXTURE = Path(__file__).parent / "fixtures" / "schema4"


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    with gzip.open(FIXTURE / "ledger.duckdb.gz") as src, open(home / "ledger.duckdb", "wb") as dst:
        shutil.copyfileobj(src, dst)
    shutil.copy(FIXTURE / "ledger.duckdb.head", home)
    shutil.copytree(FIXTURE / "keys", home / "keys")
    (home / "keys").chmod(0o700)
    return home


def _count(path: Path, sql: str) -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return int(con.execute(sql).fetchone()[0])
    finally:
        con.close()


def test_a_schema_4_ledger_migrates_once_and_verifies(tmp_path: Path) -> None:
    home = _home(tmp_path)
    path = home / "ledger.duckdb"
    assert _count(path, "SELECT max(version) FROM schema_migrations") == 4
    before = json.loads((home / "ledger.duckdb.head").read_text())
    ledger = Ledger(path)
    report = verify_ledger(ledger)
    assert ledger.schema_versions() == list(range(1, SCHEMA_VERSION + 1))
    # the 7 audit rows and the 2 dispatch rows it held are now entries after the ones it had
    assert report.ok and report.audit_rows == 7 and report.dispatch_changes == 2
    assert report.head_seq == before["seq"] + 7 + 2
    assert _count(path, "SELECT count(*) FROM audit WHERE chain_seq IS NULL") == 0
    assert _count(path, "SELECT count(*) FROM dispatch_log WHERE change = 'adopted'") == 2
    # the head file moved with it; opening again migrates nothing more
    after = json.loads((home / "ledger.duckdb.head").read_text())
    assert after["seq"] == report.head_seq
    assert Ledger(path).schema_versions() == list(range(1, SCHEMA_VERSION + 1))
    assert verify_ledger(Ledger(path)).head_seq == report.head_seq
    # and it is a working ledger: the drafts read as they were, new entries chain on
    assert [d.state for d in sorted(ledger.list_drafts(), key=lambda d: d.draft_id)] == [
        "SUCCEEDED", "ABORTED", "APPROVED", "DRAFT"]
    from datetime import datetime

    ledger.audit(actor="t", command="x", args={"token_id": "tok-2"}, result_code="OK", duration_s=0.0,
                 started=datetime.fromisoformat("2026-11-30T07:00:00+02:00"), token_id="tok-2")
    assert verify_ledger(ledger).audit_rows == 8
    assert ledger.audit_rows(limit=1)[0].args_redacted["token_id"] == "tok-2"


def test_after_the_upgrade_a_deleted_adopted_row_is_a_break(tmp_path: Path) -> None:
    home = _home(tmp_path)
    ledger = Ledger(home / "ledger.duckdb")
    assert verify_ledger(ledger).ok
    con = duckdb.connect(str(ledger.path))
    con.execute("DELETE FROM dispatches WHERE status = 'ACKED'")
    con.execute("DELETE FROM audit WHERE result_code = 'FORBIDDEN' AND draft_id = 'd-old-1'")
    con.close()
    with pytest.raises(LedgerTampered) as err:
        verify_ledger(ledger)
    breaks = " | ".join(err.value.details["breaks"])
    assert "was expected (an entry was deleted)" in breaks
    assert "of d-old-1 v1: was deleted (its last recorded change: ACKED" in breaks


def test_a_backup_made_by_the_older_release_verifies_before_a_restore(tmp_path: Path) -> None:
    """A backup folder of schema 4 is checked as it would be after its upgrade, the file itself untouched."""
    home = _home(tmp_path)
    raw = (home / "ledger.duckdb").read_bytes()
    report = verify_file(home / "ledger.duckdb", Ledger(home / "ledger.duckdb").keys, home / "ledger.duckdb.head")
    assert report.ok and report.audit_rows == 7
    assert (home / "ledger.duckdb").read_bytes() == raw
    assert not [p for p in home.iterdir() if p.name.startswith(".upgrade-")]
