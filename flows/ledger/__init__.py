"""The ledger: the DuckDB file that is the source of truth for mission state.

Rooms: ``store`` (file, lock, transactions, reads), ``records`` (row values
and hashes), ``states`` (the state machine), ``drafts``, ``approvals``,
``claims``, ``audit``; ``ledger`` puts them together; ``schema`` holds the
migrations. Callers import from ``flows.ledger``.
"""

from flows.ledger.approvals import APPROVAL_TTL
from flows.ledger.audit import redact
from flows.ledger.ledger import Ledger, open_ledger
from flows.ledger.records import (
    ApprovalRecord,
    AuditRecord,
    Claim,
    DispatchRecord,
    DraftRecord,
    EventRecord,
    NewVersion,
    idempotency_key,
    params_hash,
)
from flows.ledger.states import DISPATCH_STATUSES, STATES, TRANSITIONS
from flows.ledger.store import LEDGER_FILE, kill_point
from planner.errors import LedgerUnavailable

__all__ = [
    "STATES",
    "TRANSITIONS",
    "DISPATCH_STATUSES",
    "APPROVAL_TTL",
    "LEDGER_FILE",
    "kill_point",
    "idempotency_key",
    "params_hash",
    "redact",
    "NewVersion",
    "DraftRecord",
    "ApprovalRecord",
    "DispatchRecord",
    "EventRecord",
    "AuditRecord",
    "Claim",
    "Ledger",
    "LedgerUnavailable",
    "open_ledger",
]
