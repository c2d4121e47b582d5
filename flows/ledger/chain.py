"""The hash chain that makes the ledger tamper-evident, and the walks that check it.

Why: the ledger is a file; anyone who can write it can add an approval row,
delete an event or put an older copy in its place. Every event and approval
row therefore carries

- ``chain_seq``: its place in the one global order of entries (1, 2, 3, …),
- ``prev_hash``: the hash of the entry before it in that order,
- ``draft_prev_hash``: the hash of the previous entry of the same draft,
- ``entry_hash``: sha256 over both and the row's own content.

``chain_head`` (one row) holds the last ``seq`` and hash, signed with the
authority's key (``flows.ledger.signing``); after each commit the same signed
head is written beside the ledger as ``ledger.head``. So:

- a row added by hand has no (or a wrong) hash: the draft's chain breaks;
- an edited row (an event's reason, a draft's plan hash) no longer hashes to
  its ``entry_hash``;
- a deleted entry leaves a gap in ``chain_seq`` and a dangling ``prev_hash``
  (the last one: the signed head names a hash no row has);
- an older copy of the file has a lower ``seq`` than ``ledger.head``;
- a missing file where ``ledger.head`` exists is not a fresh start.

Two costs of checking: ``check_draft`` + ``check_head`` walk one draft and
compare the head (cheap; dispatch does it every time); ``verify_all`` walks
every entry, replays every draft's states and verifies every approval
signature (``sortie ledger verify``, and the server on start).
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from flows.ledger.signing import KeyStore, canonical_bytes

__all__ = [
    "GENESIS",
    "HEAD_SUFFIX",
    "Break",
    "ChainReport",
    "chain_values",
    "event_content",
    "approval_content",
    "advance_head",
    "adopt_unchained",
    "read_head_file",
    "write_head_file",
    "check_draft",
    "check_head",
    "verify_all",
]

GENESIS = "0" * 64
HEAD_SUFFIX = ".head"
HEAD_FORMAT = "sortie-ledger-head/1"

_CHAIN_COLS = "chain_seq, prev_hash, draft_prev_hash, entry_hash"
_EVENT_SELECT = (
    "SELECT e.event_id, e.draft_id, e.version, e.actor, e.from_state, e.to_state, e.reason, e.event_time, "
    "e.row_version, e.chain_seq, e.prev_hash, e.draft_prev_hash, e.entry_hash, d.plan_hash, d.world_hash "
    "FROM events e LEFT JOIN drafts d ON d.draft_id = e.draft_id AND d.version = e.version"
)
_APPROVAL_SELECT = (
    "SELECT approval_id, draft_id, version, plan_hash, approver, decision, comment, created_time, expires_time, "
    "evidence_json, statement_json, signature, key_id, chain_seq, prev_hash, draft_prev_hash, entry_hash FROM approvals"
)


@dataclass(frozen=True)
class Break:
    """One place where the ledger is not what was written: which row, and what is wrong."""

    where: str
    problem: str
    draft_id: str | None = None

    def text(self) -> str:
        return f"{self.where}: {self.problem}"


@dataclass
class ChainReport:
    """What a walk checked and the breaks it found, first first."""

    entries: int = 0
    drafts: int = 0
    approvals: int = 0
    head_seq: int = 0
    legacy_unsigned: int = 0
    breaks: list[Break] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.breaks

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "entries": self.entries,
            "drafts": self.drafts,
            "approvals": self.approvals,
            "head_seq": self.head_seq,
            "legacy_unsigned": self.legacy_unsigned,
            "first_break": None if self.ok else self.breaks[0].text(),
            "breaks": [b.text() for b in self.breaks[:50]],
        }


# --------------------------------------------------------------------------- hashing


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


def _entry_hash(prev: str, draft_prev: str, content: Mapping[str, Any]) -> str:
    h = hashlib.sha256()
    h.update(prev.encode("ascii") + b"\n" + draft_prev.encode("ascii") + b"\n")
    h.update(canonical_bytes(dict(content)))
    return h.hexdigest()


def _head_row(con: duckdb.DuckDBPyConnection) -> tuple[int, str, str | None, str | None] | None:
    row = con.execute("SELECT seq, head_hash, signature, key_id FROM chain_head WHERE id = 1").fetchone()
    return None if row is None else (int(row[0]), str(row[1]), row[2], row[3])


def _draft_last(con: duckdb.DuckDBPyConnection, draft_id: str) -> str:
    row = con.execute(
        "SELECT entry_hash FROM (SELECT chain_seq, entry_hash FROM events WHERE draft_id = ? AND chain_seq IS NOT NULL "
        "UNION ALL SELECT chain_seq, entry_hash FROM approvals WHERE draft_id = ? AND chain_seq IS NOT NULL) "
        "ORDER BY chain_seq DESC LIMIT 1",
        [draft_id, draft_id],
    ).fetchone()
    return GENESIS if row is None else str(row[0])


def _head_statement(seq: int, head_hash: str) -> dict[str, Any]:
    return {"format": HEAD_FORMAT, "seq": int(seq), "head_hash": head_hash}


def chain_values(
    con: duckdb.DuckDBPyConnection, keys: KeyStore, draft_id: str, content: Mapping[str, Any]
) -> tuple[int, str, str, str]:
    """The chain columns (seq, prev, draft prev, hash) for a new entry, and the head advanced to it.

    Called inside the writing transaction, just before the row's INSERT; the
    head moves in the same transaction, so a crash leaves both or neither.
    """
    head = _head_row(con)
    seq, prev = (0, GENESIS) if head is None else (head[0], head[1])
    draft_prev = _draft_last(con, draft_id)
    entry = _entry_hash(prev, draft_prev, content)
    advance_head(con, keys, seq + 1, entry, exists=head is not None)
    return seq + 1, prev, draft_prev, entry


def advance_head(con: duckdb.DuckDBPyConnection, keys: KeyStore, seq: int, head_hash: str, *, exists: bool) -> None:
    """Set the signed chain head (inside the caller's transaction)."""
    signature, key_id = keys.sign(_head_statement(seq, head_hash))
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


def adopt_unchained(con: duckdb.DuckDBPyConnection, keys: KeyStore) -> int:
    """Chain the rows of a ledger written before the chain existed (schema 1), in the order they were written.

    Trust on upgrade: what the file holds at that moment becomes the start of
    the chain. Its approvals stay unsigned, so dispatching them needs a new
    (signed) approval. Returns how many rows were chained.
    """
    rows = [("event", r) for r in _rows(con, _EVENT_SELECT + " WHERE e.chain_seq IS NULL ORDER BY e.event_id")]
    rows += [("approval", r) for r in _rows(con, _APPROVAL_SELECT + " WHERE chain_seq IS NULL")]
    rows.sort(key=lambda kr: (kr[1]["event_time"] if kr[0] == "event" else kr[1]["created_time"], kr[0] == "approval",
                              kr[1].get("event_id") or 0))
    for kind, row in rows:
        seq, prev, draft_prev, entry = chain_values(con, keys, row["draft_id"], _content(kind, row))
        table, key_col, key = (("events", "event_id", row["event_id"]) if kind == "event"
                               else ("approvals", "approval_id", row["approval_id"]))
        con.execute(
            f"UPDATE {table} SET chain_seq = ?, prev_hash = ?, draft_prev_hash = ?, entry_hash = ? WHERE {key_col} = ?",
            [seq, prev, draft_prev, entry, key],
        )
    return len(rows)


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


def write_head_file(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Copy the signed head of ``con``'s ledger beside it (after the commit, still holding the lock)."""
    head = _head_row(con)
    if head is None:
        return
    seq, head_hash, signature, key_id = head
    current = read_head_file(path)
    if current and current.get("seq") == seq and current.get("head_hash") == head_hash:
        return
    data = {**_head_statement(seq, head_hash), "signature": signature, "key_id": key_id}
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}")
    tmp.write_text(json.dumps(data, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# --------------------------------------------------------------------------- checking


def _rows(con: duckdb.DuckDBPyConnection, sql: str, args: Iterable[Any] = ()) -> list[dict[str, Any]]:
    cur = con.execute(sql, list(args))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _entries(con: duckdb.DuckDBPyConnection, draft_id: str | None) -> list[tuple[str, dict[str, Any]]]:
    where_e = "" if draft_id is None else " WHERE e.draft_id = ?"
    where_a = "" if draft_id is None else " WHERE draft_id = ?"
    args = [] if draft_id is None else [draft_id]
    out = [("event", r) for r in _rows(con, _EVENT_SELECT + where_e, args)]
    out += [("approval", r) for r in _rows(con, _APPROVAL_SELECT + where_a, args)]
    # Unchained rows (NULL seq) sort first: they are the first thing wrong.
    out.sort(key=lambda kr: (kr[1]["chain_seq"] is not None, kr[1]["chain_seq"] or 0))
    return out


def _name(kind: str, row: Mapping[str, Any]) -> str:
    ident = row["event_id"] if kind == "event" else str(row["approval_id"])[:12]
    extra = f" {row['from_state']}→{row['to_state']}" if kind == "event" else f" {row['decision']} by {row['approver']}"
    return f"{kind} {ident} of {row['draft_id']} v{row['version']}{extra}"


def _content(kind: str, row: Mapping[str, Any]) -> dict[str, Any]:
    return event_content(row) if kind == "event" else approval_content(row)


def check_draft(con: duckdb.DuckDBPyConnection, draft_id: str) -> list[Break]:
    """One draft's chain, state replay and plan hashes (cheap: the draft's rows only)."""
    breaks: list[Break] = []
    prev = GENESIS
    for kind, row in _entries(con, draft_id):
        name = _name(kind, row)
        if row["chain_seq"] is None or row["entry_hash"] is None:
            breaks.append(Break(name, "is not in the hash chain (written outside sortie, e.g. by hand)", draft_id))
            continue
        if row["draft_prev_hash"] != prev:
            breaks.append(Break(name, "does not follow the draft's previous entry (an entry before it was "
                                      "deleted or inserted)", draft_id))
        if _entry_hash(row["prev_hash"] or "", row["draft_prev_hash"] or "", _content(kind, row)) != row["entry_hash"]:
            breaks.append(Break(name, "its content was changed after it was written (hash mismatch)", draft_id))
        prev = row["entry_hash"]
    breaks += _check_states(con, draft_id)
    return breaks


def _check_states(con: duckdb.DuckDBPyConnection, draft_id: str) -> list[Break]:
    """Each version's state and row version are the replay of its events; its plan hashes to its plan hash."""
    out: list[Break] = []
    drafts = _rows(con, "SELECT version, state, row_version, plan_json, plan_hash FROM drafts WHERE draft_id = ?",
                   [draft_id])
    events = _rows(con, "SELECT version, from_state, to_state, row_version FROM events WHERE draft_id = ? "
                        "ORDER BY event_id", [draft_id])
    for d in drafts:
        where = f"draft {draft_id} v{d['version']}"
        evs = [e for e in events if e["version"] == d["version"]]
        state = None
        for e in evs:
            if e["from_state"] != state:
                out.append(Break(where, f"event {e['from_state']}→{e['to_state']} does not follow {state} "
                                        "(an event is missing)", draft_id))
                break
            state = e["to_state"]
        if state != d["state"] or (evs and evs[-1]["row_version"] != d["row_version"]):
            out.append(Break(where, f"its state {d['state']} is not what its events say ({state}): the state "
                                    "was written without its event", draft_id))
        if d["plan_json"] is not None:
            text = json.dumps(json.loads(d["plan_json"]), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            if hashlib.sha256(text.encode("utf-8")).hexdigest() != d["plan_hash"]:
                out.append(Break(where, "its stored plan does not hash to its plan hash (the plan was edited)",
                                 draft_id))
    return out


def check_head(con: duckdb.DuckDBPyConnection, keys: KeyStore, path: Path) -> list[Break]:
    """The signed head matches the last entry, the seqs have no gap, and the file beside agrees."""
    out: list[Break] = []
    stats = con.execute(
        "SELECT count(*), max(chain_seq), count(DISTINCT chain_seq) FROM (SELECT chain_seq FROM events "
        "WHERE chain_seq IS NOT NULL UNION ALL SELECT chain_seq FROM approvals WHERE chain_seq IS NOT NULL)"
    ).fetchone()
    count, top, distinct = int(stats[0]), int(stats[1] or 0), int(stats[2])
    head = _head_row(con)
    if head is None:
        if count:
            out.append(Break("chain head", "is missing although the ledger holds chained entries"))
        db_seq, db_hash = 0, GENESIS
    else:
        db_seq, db_hash, signature, key_id = head
        if not keys.exists() or not keys.verify(_head_statement(db_seq, db_hash), signature, key_id):
            out.append(Break("chain head", "its signature does not verify (edited, or another installation's key)"))
        if db_seq != top or count != top or distinct != top:
            out.append(Break("chain head", f"names entry {db_seq} but the ledger holds {count} chained entries up to "
                                           f"{top}: entries were deleted or added"))
        last = con.execute(
            "SELECT entry_hash FROM (SELECT chain_seq, entry_hash FROM events UNION ALL SELECT chain_seq, entry_hash "
            "FROM approvals) WHERE chain_seq = ?",
            [db_seq],
        ).fetchall()
        if db_seq and [r[0] for r in last] != [db_hash]:
            out.append(Break("chain head", f"names hash {db_hash[:12]}… for entry {db_seq}, which no row has"))
    recorded = read_head_file(path)
    if recorded is None:
        if db_seq:
            out.append(Break(path.name, f"is missing beside a ledger with {db_seq} entries (restore it from the "
                                        "backup, or the ledger was copied without it)"))
        return out
    file_seq, file_hash = recorded.get("seq"), recorded.get("head_hash")
    if (
        not isinstance(file_seq, int)
        or not isinstance(file_hash, str)
        or not keys.exists()
        or not keys.verify(_head_statement(file_seq, file_hash), recorded.get("signature"), recorded.get("key_id"))
    ):
        out.append(Break(path.name, "is damaged or its signature does not verify"))
        return out
    if file_seq > db_seq:
        out.append(Break("ledger", f"holds {db_seq} entries but {path.name} recorded {file_seq}: this is an older "
                                   "copy of the ledger (restore the latest backup)"))
    elif file_seq:
        row = con.execute(
            "SELECT entry_hash FROM (SELECT chain_seq, entry_hash FROM events UNION ALL SELECT chain_seq, entry_hash "
            "FROM approvals) WHERE chain_seq = ?",
            [file_seq],
        ).fetchall()
        if [r[0] for r in row] != [file_hash]:
            out.append(Break("ledger", f"entry {file_seq} is not the one {path.name} recorded: the history was "
                                       "rewritten or replaced"))
    return out


def verify_all(con: duckdb.DuckDBPyConnection, keys: KeyStore, path: Path) -> ChainReport:
    """Walk every entry in order (links and hashes), every draft's states, every approval's signature, the head."""
    report = ChainReport()
    entries = _entries(con, None)
    report.entries = len(entries)
    prev = GENESIS
    expected = 1
    for kind, row in entries:
        name = _name(kind, row)
        if row["chain_seq"] is None or row["entry_hash"] is None:
            report.breaks.append(Break(name, "is not in the hash chain (written outside sortie, e.g. by hand)",
                                       row["draft_id"]))
            continue
        if row["chain_seq"] != expected:
            report.breaks.append(Break(name, f"is entry {row['chain_seq']} where entry {expected} was expected "
                                             "(an entry was deleted)", row["draft_id"]))
            expected = row["chain_seq"]
        if row["prev_hash"] != prev:
            report.breaks.append(Break(name, "does not follow the entry before it (deleted or inserted entry)",
                                       row["draft_id"]))
        if _entry_hash(row["prev_hash"] or "", row["draft_prev_hash"] or "", _content(kind, row)) != row["entry_hash"]:
            report.breaks.append(Break(name, "its content was changed after it was written (hash mismatch)",
                                       row["draft_id"]))
        prev = row["entry_hash"]
        expected += 1
    drafts = [r[0] for r in con.execute("SELECT DISTINCT draft_id FROM drafts ORDER BY 1").fetchall()]
    report.drafts = len(drafts)
    for draft_id in drafts:
        for b in check_draft(con, draft_id):
            if b not in report.breaks:
                report.breaks.append(b)
    for row in _rows(con, _APPROVAL_SELECT):
        report.approvals += 1
        problem = approval_problem(keys, row)
        if problem == "is not signed" and row["chain_seq"] is not None:
            # Chained when a pre-chain ledger was upgraded (``adopt_unchained``): part of the record, but dispatch
            # never accepts it (it needs a signed approval).
            report.legacy_unsigned += 1
            continue
        if problem:
            report.breaks.append(Break(_name("approval", row), problem, row["draft_id"]))
    report.breaks += check_head(con, keys, path)
    head = _head_row(con)
    report.head_seq = 0 if head is None else head[0]
    return report


def approval_problem(keys: KeyStore, row: Mapping[str, Any]) -> str | None:
    """Why an approval row is not a valid signed statement of itself, or None."""
    if not row.get("statement_json") or not row.get("signature"):
        return "is not signed"
    try:
        statement = json.loads(row["statement_json"])
    except ValueError:
        return "its signed statement is not JSON"
    if not keys.exists() or not keys.verify(statement, row["signature"], row["key_id"]):
        return "its signature does not verify"
    for k in ("approval_id", "draft_id", "plan_hash", "approver", "decision"):
        if statement.get(k) != row[k]:
            return f"its {k} is not the one that was signed"
    if statement.get("version") != row["version"] or statement.get("expires_at") != row["expires_time"]:
        return "its version or expiry is not the one that was signed"
    return None
