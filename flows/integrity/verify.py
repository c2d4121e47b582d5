"""Verify a whole ledger: the walk behind ``sortie ledger verify``, the authority's check on start, backups.

Why a function of its own: the server must refuse to start (and so to
dispatch) from a ledger that fails, the CLI must name the first break, and a
backup must be checked before it is restored — the same walk each time
(``flows.ledger.walk``), run by ``Ledger.verify`` without keeping writers
out. ``verify_ledger(full=False)`` is the start-up check: the entries after
the last signed checkpoint and the one-query checks over every row, so it
does not grow with history (``flows.ledger.checkpoints``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from flows.errors import LedgerTampered
from flows.ledger import ChainReport, Checkpoint, Ledger
from flows.ledger.chain import read_head_file
from flows.ledger.signing import KeyStore
from flows.ledger.verifying import walk_file

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


def verify_ledger(
    ledger: Ledger,
    *,
    strict: bool = True,
    full: bool = True,
    against: Sequence[tuple[str, Checkpoint]] = (),
) -> ChainReport:
    """Check ``ledger`` (every entry when ``full``; else since the last checkpoint, as a server's start does) and
    against published anchors; ``strict`` raises on a break. A clean check is recorded as a signed checkpoint."""
    report = ledger.verify(full=full, against=against)
    return raise_if_broken(report, f"the ledger {ledger.path}") if strict else report


def verify_file(path: Path, keys: KeyStore, head: Path, *, against: Sequence[tuple[str, Checkpoint]] = ()) -> ChainReport:
    """Verify a ledger file that is not in use (a backup), read-only, against ``head``; never raises on a break."""
    return walk_file(path, keys, read_head_file(head), against=against, head_name=head.name)
