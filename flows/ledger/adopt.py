"""Upgrading a ledger whose rows predate the chain that now covers them: trust on upgrade, once, in order.

Why: users have ledger files. Migration 3 put events and approvals into the
hash chain and migration 5 the audit and the dispatches; a file written
before either holds rows without chain columns. Refusing such a file would
strand its history, and silently resetting it would lose it, so the upgrade
chains those rows as they are at that moment, in the order they were written,
right after the entries the file already has (the schema and the adoption
commit in one transaction, ``flows.ledger.files.migrate``):

- events and approvals (schema < 3), by their time; approvals stay unsigned,
  so dispatching one needs a new, signed approval;
- audit rows (schema < 5), by ``audit_id``, global entries only;
- dispatch rows (schema < 5), each as one ``adopted`` entry of ``dispatch_log``
  holding the row as it is, by creation time.

What the file held before the upgrade is trusted; everything after it is
checked. The tests of this module open ledger files written by the releases
that made them (``tests/integrity/fixtures``).
"""

from __future__ import annotations

from typing import Any

import duckdb

from flows.ledger.chain import (
    approval_content,
    audit_content,
    chain_values,
    dispatch_log_content,
    event_content,
)
from flows.ledger.dispatch_log import ROW_COLUMNS, row_json
from flows.ledger.signing import KeyStore

__all__ = ["adopt_older", "adopt_unchained", "adopt_audit_and_dispatches", "EVENT_SELECT", "APPROVAL_SELECT"]

EVENT_SELECT = (
    "SELECT e.event_id, e.draft_id, e.version, e.actor, e.from_state, e.to_state, e.reason, e.event_time, "
    "e.row_version, e.chain_seq, e.prev_hash, e.draft_prev_hash, e.entry_hash, d.plan_hash, d.world_hash "
    "FROM events e LEFT JOIN drafts d ON d.draft_id = e.draft_id AND d.version = e.version"
)
APPROVAL_SELECT = (
    "SELECT approval_id, draft_id, version, plan_hash, approver, decision, comment, created_time, expires_time, "
    "evidence_json, statement_json, signature, key_id, chain_seq, prev_hash, draft_prev_hash, entry_hash FROM approvals"
)


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def adopt_unchained(con: duckdb.DuckDBPyConnection, keys: KeyStore) -> int:
    """Chain the events and approvals of a ledger written before the chain existed (schema 1–2)."""
    rows = [("event", r) for r in _rows(con, EVENT_SELECT + " WHERE e.chain_seq IS NULL ORDER BY e.event_id")]
    rows += [("approval", r) for r in _rows(con, APPROVAL_SELECT + " WHERE chain_seq IS NULL")]
    rows.sort(key=lambda kr: (kr[1]["event_time"] if kr[0] == "event" else kr[1]["created_time"], kr[0] == "approval",
                              kr[1].get("event_id") or 0))
    for kind, row in rows:
        content = event_content(row) if kind == "event" else approval_content(row)
        seq, prev, draft_prev, entry = chain_values(con, keys, row["draft_id"], content)
        table, key_col, key = (("events", "event_id", row["event_id"]) if kind == "event"
                               else ("approvals", "approval_id", row["approval_id"]))
        con.execute(
            f"UPDATE {table} SET chain_seq = ?, prev_hash = ?, draft_prev_hash = ?, entry_hash = ? WHERE {key_col} = ?",
            [seq, prev, draft_prev, entry, key],
        )
    return len(rows)


def adopt_audit_and_dispatches(con: duckdb.DuckDBPyConnection, keys: KeyStore, stamp: str) -> int:
    """Chain the audit rows and the dispatch rows of a ledger from before schema 5 (``stamp``: the upgrade's time)."""
    audits = _rows(con, "SELECT audit_id, actor, command, args_sha256, args_redacted, result_code, duration_ms, "
                        "started_time, draft_id, result_message, token_id, client_addr, caller FROM audit "
                        "WHERE chain_seq IS NULL ORDER BY audit_id")
    for row in audits:
        seq, prev, _, entry = chain_values(con, keys, None, audit_content(row))
        con.execute("UPDATE audit SET chain_seq = ?, prev_hash = ?, entry_hash = ? WHERE audit_id = ?",
                    [seq, prev, entry, row["audit_id"]])
    dispatches = con.execute(
        f"SELECT {', '.join(ROW_COLUMNS)} FROM dispatches d WHERE NOT EXISTS "
        "(SELECT 1 FROM dispatch_log l WHERE l.idempotency_key = d.idempotency_key) ORDER BY created_time, "
        "idempotency_key"
    ).fetchall()
    for values in dispatches:
        entry_row = {"idempotency_key": values[0], "draft_id": values[1], "version": int(values[2]),
                     "change": "adopted", "status": values[7], "row_json": row_json(values), "change_time": stamp}
        seq, prev, draft_prev, entry = chain_values(con, keys, values[1], dispatch_log_content(entry_row))
        con.execute(
            "INSERT INTO dispatch_log (idempotency_key, draft_id, version, change, status, row_json, change_time, "
            "chain_seq, prev_hash, draft_prev_hash, entry_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [*entry_row.values(), seq, prev, draft_prev, entry],
        )
    return len(audits) + len(dispatches)


def adopt_older(con: duckdb.DuckDBPyConnection, keys: KeyStore, done: set[int]) -> bool:
    """Chain what a file from before migrations 3 and 5 holds (``done``: the migrations it had); a new file
    has nothing to adopt. Whether anything was written (the head file is then rewritten)."""
    from datetime import datetime, timezone

    if not done:
        return False
    changed = False
    if 3 not in done:
        adopt_unchained(con, keys)
        changed = True
    if 5 not in done:
        adopt_audit_and_dispatches(con, keys, datetime.now(timezone.utc).isoformat())
        changed = True
    return changed
