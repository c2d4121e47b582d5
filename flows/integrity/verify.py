"""Verify a whole ledger: the walk behind ``sortie ledger verify`` and the authority's check on start.

Why a function of its own: the server must refuse to start (and so to
dispatch) from a ledger that fails, the CLI must name the first break, and a
backup must be checked before it is restored — the same walk each time
(``flows.ledger.chain.verify_all``).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from flows.ledger import Ledger
from flows.ledger.chain import ChainReport, verify_all
from flows.ledger.signing import KeyStore
from planner.errors import LedgerTampered, LedgerUnavailable

__all__ = ["verify_ledger", "verify_file", "raise_if_broken"]


def raise_if_broken(report: ChainReport, what: str) -> ChainReport:
    """``LedgerTampered`` naming the first break (all of them in ``details``), else the report."""
    if not report.ok:
        raise LedgerTampered(
            f"{what} fails verification: {report.breaks[0].text()}"
            + (f" (and {len(report.breaks) - 1} more)" if len(report.breaks) > 1 else "")
            + "; restore the latest good backup (`sortie ledger restore BACKUP_DIR`)",
            details=report.to_dict(),
        )
    return report


def verify_ledger(ledger: Ledger, *, strict: bool = True) -> ChainReport:
    """Walk every entry of ``ledger`` (the server calls this on start); ``strict`` raises on a break."""
    if not ledger.path.exists():
        ledger._check_missing()  # a missing file beside its head or drafts is an error
        return ChainReport()
    report = ledger._read(lambda con: verify_all(con, ledger.keys, ledger.head_path), ChainReport())
    return raise_if_broken(report, f"the ledger {ledger.path}") if strict else report


def verify_file(path: Path, keys: KeyStore, head: Path) -> ChainReport:
    """Verify a ledger file that is not in use (a backup), read-only, against ``head``; never raises on a break."""
    try:
        con = duckdb.connect(str(path), read_only=True, config={"threads": 1})
    except duckdb.Error as exc:
        raise LedgerUnavailable(f"the backup {path} cannot be opened: {str(exc).splitlines()[0]}") from None
    try:
        return verify_all(con, keys, head)
    except duckdb.Error as exc:
        raise LedgerUnavailable(f"the backup {path} is damaged: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()
