"""The hash chain that makes the ledger tamper-evident: what each entry's hash covers, and the signed head.

Why: the ledger is a file; anyone who can write it can add an approval row,
delete an event or an audit row, forget a dispatch, or put an older copy in
its place. Every row that records what was decided or what happened to a
vehicle is therefore an *entry* of one chain:

- events (every state change: approvals, dispatch outcomes, launches, take-off,
  recalls, landings), approvals, every change of a dispatch (``dispatch_log``:
  claim, attempt, outcome, settlement by reconcile), every audit row, and every
  turn of an open request (``request_turns``: asked, answered, planned, expired);
- each carries ``chain_seq`` (its place in the one global order 1, 2, 3, …),
  ``prev_hash`` (the hash of the entry before it), ``entry_hash`` (sha256 over
  both links and the row's content) and, for the entries of a draft (all but
  audit rows and request turns), ``draft_prev_hash`` (the previous entry of the
  same draft).

``chain_head`` (one row) holds the last ``seq`` and hash, signed with the
authority's key (``flows.ledger.signing``); after each commit the same signed
head is written beside the ledger as ``ledger.duckdb.head``. So:

- a row added by hand has no (or a wrong) hash: the draft's chain breaks;
- an edited row no longer hashes to its ``entry_hash``;
- a deleted entry leaves a gap in ``chain_seq`` and a dangling ``prev_hash``
  (the last one: the signed head names a hash no row has);
- a dispatch row deleted or edited no longer matches the last entry of its
  ``dispatch_log`` (``flows.ledger.dispatch_log``);
- an older copy of the file has a lower ``seq`` than ``ledger.duckdb.head``;
  an older copy of the whole home (file and head) is found against an anchor
  published elsewhere (``flows.ledger.checkpoints``).

The checks themselves are in ``flows.ledger.walk``.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import duckdb

from flows.ledger.files import private
from flows.ledger.signing import KeyStore, WriteContext, canonical_bytes, current_write

__all__ = [
    "GENESIS",
    "HEAD_SUFFIX",
    "HEAD_FORMAT",
    "CHAINED_TABLES",
    "DRAFT_TABLES",
    "event_content",
    "approval_content",
    "audit_content",
    "dispatch_log_content",
    "request_content",
    "REQUEST_HASHED",
    "command_content",
    "COMMAND_HASHED",
    "entry_hash",
    "head_row",
    "head_statement",
    "chain_values",
    "advance_head",
    "flush_head",
    "head_path",
    "read_head_file",
    "write_head_file",
    "union_of",
]

GENESIS = "0" * 64
HEAD_SUFFIX = ".head"
HEAD_FORMAT = "sortie-ledger-head/1"

#: Every table whose rows are entries of the chain, and those whose rows also form each draft's own chain.
CHAINED_TABLES = ("events", "approvals", "dispatch_log", "audit", "request_turns", "vehicle_commands")
DRAFT_TABLES = ("events", "approvals", "dispatch_log")


def union_of(tables: tuple[str, ...], columns: str, where: str = "") -> str:
    """``SELECT columns FROM t WHERE … UNION ALL …`` over ``tables`` (the same filter on each)."""
    return " UNION ALL ".join(f"SELECT {columns} FROM {t}{f' WHERE {where}' if where else ''}" for t in tables)


# --------------------------------------------------------------------------- what a hash covers


def event_content(row: Mapping[str, Any]) -> dict[str, Any]:
    """What an event's hash covers: the event, and the plan and world hash of its draft version."""
    return {
        "kind": "event",
        "draft_id": row["draft_id"],
        "version": int(row["version"]),
        "actor": row["actor"],
        "from_state": row["from_state"],
        "to_state": row["to_state"],
        "reason": row["reason"],
        "event_time": row["event_time"],
        "row_version": int(row["row_version"]),
        "plan_hash": row["plan_hash"],
        "world_hash": row["world_hash"],
    }


def approval_content(row: Mapping[str, Any]) -> dict[str, Any]:
    """What an approval's hash covers: every column, the signed statement and its signature."""
    return {
        "kind": "approval",
        **{
            k: row[k]
            for k in (
                "approval_id",
                "draft_id",
                "plan_hash",
                "approver",
                "decision",
                "comment",
                "created_time",
                "expires_time",
                "evidence_json",
                "statement_json",
                "signature",
                "key_id",
            )
        },
        "version": int(row["version"]),
    }


#: The audit columns an audit entry's hash covers (every column but the chain's own).
AUDIT_HASHED = ("audit_id", "actor", "command", "args_sha256", "args_redacted", "result_code", "duration_ms",
                "started_time", "draft_id", "result_message", "token_id", "client_addr", "caller")


def audit_content(row: Mapping[str, Any]) -> dict[str, Any]:
    """What an audit row's hash covers: who, what (argument hash and redacted copy), the result and why, how
    long, when, which token, from where."""
    return {"kind": "audit", **{k: row[k] for k in AUDIT_HASHED}}


def dispatch_log_content(row: Mapping[str, Any]) -> dict[str, Any]:
    """What a dispatch change's hash covers: which dispatch, what changed, and the whole row after the change."""
    return {
        "kind": "dispatch",
        "idempotency_key": row["idempotency_key"],
        "draft_id": row["draft_id"],
        "version": int(row["version"]),
        "change": row["change"],
        "status": row["status"],
        "row_json": row["row_json"],
        "change_time": row["change_time"],
    }


#: The columns of a request turn its entry's hash covers (every column but the chain's own).
REQUEST_HASHED = ("request_id", "turn", "state", "tenant", "region_id", "requested_by", "request_text", "request_json",
                  "questions_json", "answers_json", "actor", "reason", "draft_id", "created_time", "expires_time",
                  "turn_time")


def request_content(row: Mapping[str, Any]) -> dict[str, Any]:
    """What a request turn's hash covers: the request as written and read, its questions, every answer with who gave
    it and when, who made the turn and why, the draft it planned, its times."""
    return {"kind": "request", **{k: row[k] for k in REQUEST_HASHED}, "turn": int(row["turn"])}


#: The columns of a vehicle command journal entry its hash covers (every column but the chain's own).
COMMAND_HASHED = ("command_id", "change", "draft_id", "drone_id", "action", "command", "params_json", "actor", "outcome",
                  "detail_json", "owner_host", "change_time")


def command_content(row: Mapping[str, Any]) -> dict[str, Any]:
    """What a vehicle command entry's hash covers: which command to which vehicle for which mission, by whom, from
    which process, and what was known of it at this change (sent, answered, settled)."""
    return {"kind": "command", **{k: row[k] for k in COMMAND_HASHED},
            "version": None if row["version"] is None else int(row["version"]), "owner_pid": int(row["owner_pid"])}


def entry_hash(prev: str, draft_prev: str | None, content: Mapping[str, Any]) -> str:
    """sha256 over the two links and the canonical content (an audit entry has no draft link: ``""``)."""
    h = hashlib.sha256()
    h.update(prev.encode("ascii") + b"\n" + (draft_prev or "").encode("ascii") + b"\n")
    h.update(canonical_bytes(dict(content)))
    return h.hexdigest()


# --------------------------------------------------------------------------- the head


def head_row(con: duckdb.DuckDBPyConnection) -> tuple[int, str, str | None, str | None] | None:
    row = con.execute("SELECT seq, head_hash, signature, key_id FROM chain_head WHERE id = 1").fetchone()
    return None if row is None else (int(row[0]), str(row[1]), row[2], row[3])


def head_statement(seq: int, head_hash: str) -> dict[str, Any]:
    return {"format": HEAD_FORMAT, "seq": int(seq), "head_hash": head_hash}


def _draft_last(con: duckdb.DuckDBPyConnection, draft_id: str) -> str:
    row = con.execute(
        "SELECT entry_hash FROM (" + union_of(DRAFT_TABLES, "chain_seq, entry_hash",
                                              "draft_id = ? AND chain_seq IS NOT NULL")
        + ") ORDER BY chain_seq DESC LIMIT 1",
        [draft_id] * len(DRAFT_TABLES),
    ).fetchone()
    return GENESIS if row is None else str(row[0])


def chain_values(
    con: duckdb.DuckDBPyConnection, keys: KeyStore, draft_id: str | None, content: Mapping[str, Any]
) -> tuple[int, str, str | None, str]:
    """The chain columns (seq, prev, draft prev, hash) for a new entry, and the head advanced to it.

    Called inside the writing transaction, just before the row's INSERT; the
    head moves in the same transaction, so a crash leaves both or neither.
    Inside ``Store._write`` the signed head row is written once, at the commit
    (``flush_head``); elsewhere (an upgrade's adoption) at once. ``draft_id``
    None: an entry of the global chain only (an audit row).
    """
    ctx = current_write()
    if ctx is not None and ctx.head is not None:
        seq, prev = ctx.head
    else:
        head = head_row(con)
        seq, prev = (0, GENESIS) if head is None else (head[0], head[1])
        if ctx is not None:
            ctx.head_exists = head is not None
    draft_prev = None
    if draft_id is not None:
        draft_prev = ctx.draft_last.get(draft_id) if ctx is not None else None
        draft_prev = draft_prev or _draft_last(con, draft_id)
    entry = entry_hash(prev, draft_prev, content)
    if ctx is not None:
        ctx.head, ctx.dirty = (seq + 1, entry), True
        if draft_id is not None:
            ctx.draft_last[draft_id] = entry
    else:
        advance_head(con, keys, seq + 1, entry, exists=seq > 0)
    return seq + 1, prev, draft_prev, entry


def advance_head(con: duckdb.DuckDBPyConnection, keys: KeyStore, seq: int, head_hash: str, *,
                 exists: bool) -> tuple[int, str, str, str]:
    """Set the signed chain head (inside the caller's transaction); returns it as ``head_row`` would."""
    signature, key_id = keys.sign(head_statement(seq, head_hash))
    if exists:
        con.execute(
            "UPDATE chain_head SET seq = ?, head_hash = ?, signature = ?, key_id = ? WHERE id = 1",
            [seq, head_hash, signature, key_id],
        )
    else:
        con.execute(
            "INSERT INTO chain_head (id, seq, head_hash, signature, key_id) VALUES (1, ?, ?, ?, ?)",
            [seq, head_hash, signature, key_id],
        )
    return seq, head_hash, signature, key_id


def flush_head(con: duckdb.DuckDBPyConnection, ctx: WriteContext) -> tuple[int, str, str, str] | None:
    """Write the head the transaction's entries reached (once, before its commit); None if it wrote none."""
    if not ctx.dirty or ctx.head is None:
        return None
    return advance_head(con, ctx.keys, ctx.head[0], ctx.head[1], exists=ctx.head_exists)


# --------------------------------------------------------------------------- the head file


def head_path(ledger_path: Path) -> Path:
    return ledger_path.with_name(ledger_path.name + HEAD_SUFFIX)


def read_head_file(path: Path) -> dict[str, Any] | None:
    """The recorded head beside a ledger, or None when there is none; a damaged file reads as ``{}``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_head_file(con: duckdb.DuckDBPyConnection, path: Path,
                    head: tuple[int, str, str | None, str | None] | None = None) -> None:
    """Copy the signed head of ``con``'s ledger beside it (after the commit, still holding the lock); 0600.

    ``head``: the head the transaction just committed (saves reading it back)."""
    head = head if head is not None else head_row(con)
    if head is None:
        return
    seq, head_hash, signature, key_id = head
    current = read_head_file(path)
    if current and current.get("seq") == seq and current.get("head_hash") == head_hash:
        return
    data = {**head_statement(seq, head_hash), "signature": signature, "key_id": key_id}
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, sort_keys=True) + "\n")
    os.replace(tmp, path)
    private(path.with_name(path.name[: -len(HEAD_SUFFIX)] + ".wal"))
