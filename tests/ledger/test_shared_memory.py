"""A server's held ledger answers the same read many times without keeping memory per read (issue 27).

On duckdb 2.0.1 a query with ``x IN (5 or more values)`` goes through the ``in_clause`` optimizer, and every such
query kept ~2.3 kB of the database instance's memory until the file was closed: a server showing drafts (each one
shows its refused decisions, ``Audit.refusals``: nine commands) grew ~2 MB per 1,000 reads. The held connection
turns that optimizer off (``SharedConnection.DISABLED_OPTIMIZERS``). Real DuckDB files; the memory figure is
glibc's ``mallinfo2`` bytes in use, which the leak grew by ~7 MB over these 3,000 reads and which moves by well
under 1 MB without it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from flows.ledger import Ledger
from flows.ledger.audit import AuditEntry
from flows.ledger.shared import SharedConnection, engine_for
from testkit import ledger_version

NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")
READS = 3000


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Ledger]:
    ledger = Ledger(tmp_path / "ledger.duckdb").shared()
    ledger.record_versions([ledger_version("d-1")], actor="a", now=NOW)
    ledger.audit_many([AuditEntry(actor="li.wei", command=c, args={"draft_id": "d-1", "version": 1},
                                  result_code=code, duration_s=0.001, started=NOW, draft_id="d-1")
                       for c, code in (("server.show", "OK"), ("server.approve", "FORBIDDEN"))])
    yield ledger
    ledger.close()


def _malloc_in_use() -> int | None:
    """Bytes glibc's malloc has handed out and not had back (``mallinfo2().uordblks``); None off glibc ≥ 2.33."""

    class MallInfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                    "fsmblks", "uordblks", "fordblks", "keepcost")]

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.mallinfo2
    except (OSError, AttributeError):
        return None
    fn.restype = MallInfo2
    return int(fn().uordblks)


def test_the_held_file_runs_without_the_in_clause_rewriter(held: Ledger) -> None:
    engine = engine_for(held.path)
    assert engine is not None
    with engine.reading() as cur:
        setting = cur.execute("SELECT current_setting('disabled_optimizers')").fetchone()
    assert setting is not None and "in_clause" in str(setting[0]).split(",")
    assert SharedConnection.DISABLED_OPTIMIZERS == "in_clause"


def test_showing_a_draft_s_refusals_again_and_again_keeps_no_memory(held: Ledger) -> None:
    if _malloc_in_use() is None:
        pytest.skip("needs glibc's mallinfo2")
    for _ in range(200):  # warm: first-use allocations (plans, caches) are not what is measured
        held.refusals("d-1", 1)
    before = _malloc_in_use()
    for _ in range(READS):
        assert [r.result_code for r in held.refusals("d-1", 1)] == ["FORBIDDEN"]
    after = _malloc_in_use()
    assert before is not None and after is not None
    assert after - before < 2 * 2**20, f"{READS} reads kept {(after - before) / 2**20:.1f} MB"
