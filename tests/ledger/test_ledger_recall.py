"""Server mode: read sessions share what they read while the ledger's state is unchanged, and only then.

On a real DuckDB file held by ``shared()``: a second session of the same state recalls the first one's reads; a
write that changes state (a new draft, a transition) makes the next session read afresh; the audit's own rows do
not; a session pinned while a write is open reads the committed state and leaves nothing for later sessions, so
no session ever answers from a state other than its own snapshot.
"""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path

import pytest

from flows.ledger import Ledger
from flows.ledger.audit import AuditEntry
from flows.ledger.shared import SharedConnection, engine_for
from testkit import ledger_version

NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")


@pytest.fixture
def shared(tmp_path: Path) -> Ledger:
    ledger = Ledger(tmp_path / "ledger.duckdb").shared()
    for draft_id in ("d-1", "d-2"):
        ledger.record_versions([ledger_version(draft_id)], actor="a", now=NOW)
    yield ledger
    ledger.close()


def _engine(ledger: Ledger) -> SharedConnection:
    engine = engine_for(ledger.path)
    assert engine is not None
    return engine


def _show(ledger: Ledger, draft_id: str) -> tuple[str, str, list[int], int, int]:
    """What a draft shown reads, in one read session."""
    with ledger.read_session():
        rec = ledger.get_draft(draft_id)
        again = ledger.get_draft(draft_id)
        assert again is rec  # read once per session
        return (rec.state, rec.request_text, ledger.version_numbers(draft_id), len(ledger.approvals(draft_id)),
                len(ledger.list_drafts()))


def test_a_session_of_the_same_state_recalls_and_a_state_write_ends_it(shared: Ledger) -> None:
    engine = _engine(shared)
    first = _show(shared, "d-1")
    before = engine.recalls
    assert _show(shared, "d-1") == first and engine.recalls > before  # nothing changed: recalled

    shared.audit_many([AuditEntry("a", "server.show", {"draft_id": "d-1"}, "OK", 0.0, NOW, draft_id="d-1")])
    before = engine.recalls
    assert _show(shared, "d-1") == first and engine.recalls > before  # the audit's own rows change no state

    shared.record_versions([ledger_version("d-3")], actor="a", now=NOW)
    before = engine.recalls
    assert _show(shared, "d-1")[-1] == 3 and engine.recalls == before  # a new draft: read afresh

    rec = shared.get_draft("d-1")
    shared.transition("d-1", 1, expected_state=rec.state, expected_row_version=rec.row_version, to_state="EXPIRED",
                      actor="b", reason="test", now=NOW)
    assert _show(shared, "d-1")[0] == "EXPIRED"


def test_outside_a_session_nothing_is_recalled(shared: Ledger) -> None:
    engine = _engine(shared)
    shared.get_draft("d-1")
    before = engine.recalls
    assert shared.get_draft("d-1") is not shared.get_draft("d-1") and engine.recalls == before


def test_a_session_pinned_during_a_write_reads_its_snapshot_and_leaves_nothing_behind(shared: Ledger) -> None:
    engine = _engine(shared)
    _show(shared, "d-1")  # the state before the write is recalled from here on
    opened, release, done = threading.Event(), threading.Event(), threading.Event()

    def write() -> None:
        with engine.writing() as cur:
            cur.execute("BEGIN TRANSACTION")
            cur.execute("UPDATE drafts SET request_text = 'rewritten' WHERE draft_id = 'd-1'")
            opened.set()
            release.wait(60)
            cur.execute("COMMIT")
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert opened.wait(30)
        assert _show(shared, "d-1")[1] == "r"  # the committed state: the open write is not seen
    finally:
        release.set()
        writer.join(60)
    assert done.is_set()
    assert _show(shared, "d-1")[1] == "rewritten"  # never the state recalled before the write
    assert _show(shared, "d-1")[1] == "rewritten"


def test_what_is_kept_is_bounded(shared: Ledger) -> None:
    engine = _engine(shared)
    for i in range(SharedConnection.RECALLED + 50):
        with shared.read_session():
            shared.version_numbers(f"d-{i}")
    assert len(engine._recalled) <= SharedConnection.RECALLED
