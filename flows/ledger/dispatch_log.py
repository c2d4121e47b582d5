"""Every change of a dispatch row, as an entry of the hash chain (``dispatch_log``).

Why: the dispatch row is what holds a drone (``flows.ledger.claims.busy_with``)
and what says a version flew; it changes as the upload goes (claim, attempts,
outcome, a reconcile's settlement), so the row itself cannot carry a hash that
stays true. Instead each change appends one chained entry holding the whole
row as it is after the change. Then:

- a deleted dispatch row is a key in the log with no row (a second mission
  for the same drone no longer passes because the first was forgotten);
- an edited row (ACKED turned FAILED, a drone id changed) is not what its
  last log entry says;
- a deleted log entry is a gap in the chain.

``row_json`` lists the columns explicitly (``ROW_COLUMNS``), so a later
migration that adds a dispatch column does not change what an old entry's
row means; such a migration adds its column here with the rule for old rows.
"""

from __future__ import annotations

from typing import Any

import duckdb

from flows.ledger.chain import chain_values, dispatch_log_content
from flows.ledger.records import _dumps
from flows.ledger.signing import KeyStore

__all__ = ["ROW_COLUMNS", "CHANGES", "row_json", "log_dispatch"]

ROW_COLUMNS = (
    "idempotency_key", "draft_id", "version", "plan_hash", "params_hash", "params_json", "drone_ids", "status",
    "attempts", "attempts_json", "result_json", "actor", "owner_host", "owner_pid", "created_time", "updated_time",
    "items_hash", "approval_id",
)
#: What a log entry records: the claim, an upload attempt, the outcome, a reconcile's settlement of a FAILED one,
#: or a row that existed before the log did (chained as it was on upgrade).
CHANGES = ("claim", "attempt", "finish", "settle", "adopted")


def row_json(values: tuple[Any, ...] | list[Any]) -> str:
    """The canonical JSON of one dispatch row given in ``ROW_COLUMNS`` order."""
    return _dumps(dict(zip(ROW_COLUMNS, values)))


def log_dispatch(con: duckdb.DuckDBPyConnection, keys: KeyStore, key: str, change: str, stamp: str) -> None:
    """Append the chained entry for a change of dispatch ``key`` (inside the transaction that made it)."""
    if change not in CHANGES:
        raise ValueError(f"unknown dispatch change {change!r}")
    values = con.execute(f"SELECT {', '.join(ROW_COLUMNS)} FROM dispatches WHERE idempotency_key = ?", [key]).fetchone()
    if values is None:
        raise LookupError(f"no dispatch {key[:12]}… to log")
    row = {
        "idempotency_key": key,
        "draft_id": values[1],
        "version": int(values[2]),
        "change": change,
        "status": values[7],
        "row_json": row_json(values),
        "change_time": stamp,
    }
    seq, prev, draft_prev, entry = chain_values(con, keys, row["draft_id"], dispatch_log_content(row))
    con.execute(
        "INSERT INTO dispatch_log (idempotency_key, draft_id, version, change, status, row_json, change_time, "
        "chain_seq, prev_hash, draft_prev_hash, entry_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [key, row["draft_id"], row["version"], change, row["status"], row["row_json"], stamp, seq, prev, draft_prev,
         entry],
    )
