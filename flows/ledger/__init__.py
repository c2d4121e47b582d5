"""The ledger: the DuckDB file that is the source of truth for mission state.

Rooms: ``store`` (transactions, reads) over ``files`` (opening, migrating,
file modes), ``turn`` (the cross-process turn) and ``shared`` (a server's
long-lived connection); ``records`` (row values and hashes), ``states`` (the
state machine), ``drafts``, ``requests`` (open requests and their dialogue),
``approvals``, ``claims`` with ``dispatch_log``, ``audit``, ``verifying``; the hash chain in ``chain`` (hashes, head),
``checks`` and ``walk`` (verification), ``checkpoints`` (signed positions,
anchors), ``adopt`` (upgrading older files); ``home`` (one server per home);
``ledger`` puts the rooms together; ``schema`` holds the migrations. Callers
import from ``flows.ledger``.
"""

from flows.ledger.approvals import APPROVAL_TTL
from flows.ledger.audit import AuditEntry, redact
from flows.ledger.checkpoints import Checkpoint
from flows.ledger.checks import Break, ChainReport
from flows.ledger.home import HomeClaim, claim_home
from flows.ledger.ledger import Ledger, open_ledger
from flows.ledger.requests import REQUEST_STATES, RequestTurn
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
from flows.errors import LedgerUnavailable

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
    "AuditEntry",
    "Break",
    "ChainReport",
    "Checkpoint",
    "HomeClaim",
    "claim_home",
    "RequestTurn",
    "REQUEST_STATES",
]
