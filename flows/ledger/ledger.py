"""``Ledger``: the ledger file with all of its rooms, and ``open_ledger`` for the deployment's file.

Why a separate module: each room (drafts, approvals, claims, audit) adds its
writes to ``Store``; this is the one place they are put together, so callers
hold one object and the rooms stay independent of each other.
"""

from __future__ import annotations

from pathlib import Path

from flows.context import sortie_home
from flows.ledger.audit import AuditRoom
from flows.ledger.claims import ClaimsRoom
from flows.ledger.command_journal import JournalRoom
from flows.ledger.drafts import DraftsRoom
from flows.ledger.requests import RequestsRoom
from flows.ledger.store import LEDGER_FILE
from flows.ledger.verifying import VerifyRoom

__all__ = ["Ledger", "open_ledger"]


class Ledger(RequestsRoom, DraftsRoom, ClaimsRoom, JournalRoom, AuditRoom, VerifyRoom):
    """The ledger file at ``path``; every method works in one transaction (a read: one snapshot).

    Cheap to construct and safe to share: it holds no connection between calls
    (the CLI: each call opens and closes the file) unless the process holds
    the file open (``shared()``, a server), which every ``Ledger`` of the file
    then uses.
    """


def open_ledger(home: str | Path | None = None) -> Ledger:
    """The deployment's ledger: ``SORTIE_HOME/ledger.duckdb`` unless ``home`` says otherwise."""
    if home is None:
        home = sortie_home()
    return Ledger(Path(home) / LEDGER_FILE)
