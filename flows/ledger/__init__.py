"""The ledger: the DuckDB file that is the source of truth for mission state.

``store`` holds the storage, records, state machine, approvals, dispatch claims
and audit; ``schema`` its migrations. Callers import from ``flows.ledger``.
"""

from flows.ledger.store import *  # noqa: F401,F403
from flows.ledger.store import __all__  # noqa: F401
