"""The checks of the ledger that are one query each, or one draft's rows: cheap enough for every dispatch.

Why separate from the walk (``flows.ledger.walk``): dispatch checks the draft
it is about to fly, the signed head and every dispatch row before anything is
sent (``flows.integrity.seal``); a server start checks every draft's state and
every dispatch row. These must cost milliseconds whatever the history, so
each is one SQL statement over a whole table (DuckDB scans and joins a
10,000-draft ledger in milliseconds) or a walk of one draft's own entries.

    Break, ChainReport       what a check found
    check_head               the signed head, the seq count, the file beside
    check_dispatch_rows      every dispatch row is its last logged change (none deleted, none edited)
    check_states_sql         every version's state and row version are its last event's
    check_plans_sql          every stored plan hashes to its plan hash
    check_draft              one draft's entries, states and plan
    approval_problem         why an approval row is not a valid signed statement of itself
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import duckdb

from flows.ledger.adopt import APPROVAL_SELECT, EVENT_SELECT
from flows.ledger.chain import (
    CHAINED_TABLES,
    DRAFT_TABLES,
    GENESIS,
    approval_content,
    dispatch_log_content,
    entry_hash,
    event_content,
    head_row,
    head_statement,
    union_of,
)
from flows.ledger.dispatch_log import ROW_COLUMNS
from flows.ledger.signing import KeyStore

__all__ = [
    "Break",
    "ChainReport",
    "check_head",
    "check_dispatch_rows",
    "check_states_sql",
    "check_plans_sql",
    "check_draft",
    "approval_problem",
    "entry_name",
    "DISPATCH_LOG_SELECT",
    "AUDIT_SELECT",
    "REQUEST_SELECT",
    "COMMAND_SELECT",
    "GLOBAL_KINDS",
]

#: The kinds of entry that belong to the global chain only (no draft's own chain).
GLOBAL_KINDS = frozenset({"audit", "request", "command"})

DISPATCH_LOG_SELECT = (
    "SELECT log_id, idempotency_key, draft_id, version, change, status, row_json, change_time, chain_seq, prev_hash, "
    "draft_prev_hash, entry_hash FROM dispatch_log"
)
REQUEST_SELECT = (
    "SELECT request_id, turn, state, tenant, region_id, requested_by, request_text, request_json, questions_json, "
    "answers_json, actor, reason, draft_id, created_time, expires_time, turn_time, chain_seq, prev_hash, "
    "NULL AS draft_prev_hash, entry_hash FROM request_turns"
)
COMMAND_SELECT = (
    "SELECT command_id, change, draft_id, version, drone_id, action, command, params_json, actor, outcome, detail_json, "
    "owner_host, owner_pid, change_time, chain_seq, prev_hash, NULL AS draft_prev_hash, entry_hash FROM vehicle_commands"
)
AUDIT_SELECT = (
    "SELECT audit_id, actor, command, args_sha256, args_redacted, result_code, duration_ms, started_time, draft_id, "
    "result_message, token_id, client_addr, caller, chain_seq, prev_hash, NULL AS draft_prev_hash, entry_hash "
    "FROM audit"
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
    """What a check covered and the breaks it found, first first.

    ``scope`` is ``full`` (every entry from the first) or ``since`` (the
    entries after the checkpoint at ``from_seq``, plus the one-query checks
    over every row).
    """

    entries: int = 0
    drafts: int = 0
    approvals: int = 0
    audit_rows: int = 0
    dispatch_changes: int = 0
    head_seq: int = 0
    head_hash: str = GENESIS
    legacy_unsigned: int = 0
    scope: str = "full"
    from_seq: int = 0
    breaks: list[Break] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.breaks

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "scope": self.scope,
            "from_seq": self.from_seq,
            "entries": self.entries,
            "drafts": self.drafts,
            "approvals": self.approvals,
            "audit_rows": self.audit_rows,
            "dispatch_changes": self.dispatch_changes,
            "head_seq": self.head_seq,
            "head_hash": self.head_hash,
            "legacy_unsigned": self.legacy_unsigned,
            "first_break": None if self.ok else self.breaks[0].text(),
            "breaks": [b.text() for b in self.breaks[:50]],
        }


def rows(con: duckdb.DuckDBPyConnection, sql: str, args: Iterable[Any] = ()) -> list[dict[str, Any]]:
    cur = con.execute(sql, list(args))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def entry_name(kind: str, row: Mapping[str, Any]) -> str:
    """How a break names an entry: ``event 12 of d-1 v1 DRAFT→APPROVED``, ``audit 7 server.approve by …``."""
    if kind == "event":
        return f"event {row['event_id']} of {row['draft_id']} v{row['version']} {row['from_state']}→{row['to_state']}"
    if kind == "approval":
        return (f"approval {str(row['approval_id'])[:12]} of {row['draft_id']} v{row['version']} {row['decision']} by "
                f"{row['approver']}")
    if kind == "dispatch":
        return (f"dispatch change {row['log_id']} ({row['change']}, {row['status']}) of {row['draft_id']} "
                f"v{row['version']}")
    if kind == "command":
        return f"vehicle command {str(row['command_id'])[:12]} {row['command']} to {row['drone_id']} {row['change']}"
    if kind == "request":
        return f"request {row['request_id']} turn {row['turn']} {row['state']} by {row['actor']}"
    return f"audit {row['audit_id']} {row['command']} by {row['actor']} ({row['result_code']})"


def content(kind: str, row: Mapping[str, Any]) -> dict[str, Any]:
    from flows.ledger.chain import audit_content, command_content, request_content

    if kind == "command":
        return command_content(row)
    if kind == "request":
        return request_content(row)
    if kind == "event":
        return event_content(row)
    if kind == "approval":
        return approval_content(row)
    if kind == "dispatch":
        return dispatch_log_content(row)
    return audit_content(row)


def _entry_at(con: duckdb.DuckDBPyConnection, seq: int) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT entry_hash FROM (" + union_of(CHAINED_TABLES, "chain_seq, entry_hash", "chain_seq = ?") + ")",
        [seq] * len(CHAINED_TABLES)).fetchall()]


def check_head(con: duckdb.DuckDBPyConnection, keys: KeyStore, recorded: dict[str, Any] | None,
               name: str = "ledger.duckdb.head") -> list[Break]:
    """The signed head matches the last entry, the seqs have no gap, and the head file (``recorded``) agrees."""
    out: list[Break] = []
    stats = con.execute(
        "SELECT count(*), max(chain_seq), count(DISTINCT chain_seq) FROM ("
        + union_of(CHAINED_TABLES, "chain_seq", "chain_seq IS NOT NULL") + ")"
    ).fetchone()
    count, top, distinct = int(stats[0]), int(stats[1] or 0), int(stats[2])
    head = head_row(con)
    if head is None:
        if count:
            out.append(Break("chain head", "is missing although the ledger holds chained entries"))
        db_seq, db_hash = 0, GENESIS
    else:
        db_seq, db_hash, signature, key_id = head
        if not keys.exists() or not keys.verify(head_statement(db_seq, db_hash), signature, key_id):
            out.append(Break("chain head", "its signature does not verify (edited, or another installation's key)"))
        if db_seq != top or count != top or distinct != top:
            out.append(Break("chain head", f"names entry {db_seq} but the ledger holds {count} chained entries up to "
                                           f"{top}: entries were deleted or added"))
        if db_seq and _entry_at(con, db_seq) != [db_hash]:
            out.append(Break("chain head", f"names hash {db_hash[:12]}… for entry {db_seq}, which no row has"))
    if recorded is None:
        if db_seq:
            out.append(Break(name, f"is missing beside a ledger with {db_seq} entries (restore it from the backup, "
                                   "or the ledger was copied without it)"))
        return out
    file_seq, file_hash = recorded.get("seq"), recorded.get("head_hash")
    if (
        not isinstance(file_seq, int)
        or not isinstance(file_hash, str)
        or not keys.exists()
        or not keys.verify(head_statement(file_seq, file_hash), recorded.get("signature"), recorded.get("key_id"))
    ):
        out.append(Break(name, "is damaged or its signature does not verify"))
        return out
    if file_seq > db_seq:
        out.append(Break("ledger", f"holds {db_seq} entries but {name} recorded {file_seq}: this is an older "
                                   "copy of the ledger (restore the latest backup)"))
    elif file_seq and _entry_at(con, file_seq) != [file_hash]:
        out.append(Break("ledger", f"entry {file_seq} is not the one {name} recorded: the history was rewritten or "
                                   "replaced"))
    return out


_INT_COLUMNS = ("version", "attempts", "owner_pid")
_LATEST_LOG = ("SELECT idempotency_key, arg_max(row_json, chain_seq) AS row_json, arg_max(status, chain_seq) AS status, "
               "any_value(draft_id) AS draft_id, any_value(version) AS version FROM dispatch_log "
               "WHERE chain_seq IS NOT NULL GROUP BY idempotency_key")


def check_dispatch_rows(con: duckdb.DuckDBPyConnection) -> list[Break]:
    """Every dispatch row is its last logged change: none deleted, none edited, none written outside sortie."""
    out: list[Break] = []
    for key, draft_id, version, status, row_json in con.execute(
        f"SELECT l.idempotency_key, l.draft_id, l.version, l.status, l.row_json FROM ({_LATEST_LOG}) l "
        "WHERE NOT EXISTS (SELECT 1 FROM dispatches d WHERE d.idempotency_key = l.idempotency_key) ORDER BY 2, 3"
    ).fetchall():
        drones = json.loads(row_json).get("drone_ids")
        out.append(Break(f"dispatch {key[:12]}… of {draft_id} v{version}",
                         f"was deleted (its last recorded change: {status}, drones {drones})", draft_id))
    for key, draft_id, version in con.execute(
        "SELECT idempotency_key, draft_id, version FROM dispatches d WHERE NOT EXISTS "
        "(SELECT 1 FROM dispatch_log l WHERE l.idempotency_key = d.idempotency_key AND l.chain_seq IS NOT NULL) "
        "ORDER BY 2, 3"
    ).fetchall():
        out.append(Break(f"dispatch {key[:12]}… of {draft_id} v{version}",
                         "is not in the hash chain (written outside sortie, e.g. by hand)", draft_id))
    # Each logged row parsed once into a struct (lenient: a value of the wrong type reads as NULL and differs).
    structure = json.dumps({c: ("BIGINT" if c in _INT_COLUMNS else "VARCHAR") for c in ROW_COLUMNS})
    differs = " OR ".join(f"l.r.{c} IS DISTINCT FROM d.{c}" for c in ROW_COLUMNS)
    for key, draft_id, version, status in con.execute(
        f"SELECT d.idempotency_key, d.draft_id, d.version, d.status FROM dispatches d JOIN (SELECT idempotency_key, "
        f"json_transform(row_json, '{structure}') AS r FROM ({_LATEST_LOG})) l "
        f"ON l.idempotency_key = d.idempotency_key WHERE {differs} ORDER BY 2, 3"
    ).fetchall():
        out.append(Break(f"dispatch {key[:12]}… of {draft_id} v{version} ({status})",
                         "is not what its last recorded change says: it was edited after it was written", draft_id))
    return out


def check_states_sql(con: duckdb.DuckDBPyConnection) -> list[Break]:
    """Every version's state and row version are those of its last event (one query over every draft)."""
    out: list[Break] = []
    for draft_id, version, state, last in con.execute(
        "SELECT d.draft_id, d.version, d.state, e.state FROM drafts d LEFT JOIN (SELECT draft_id, version, "
        "arg_max(to_state, event_id) AS state, arg_max(row_version, event_id) AS row_version FROM events "
        "GROUP BY draft_id, version) e ON e.draft_id = d.draft_id AND e.version = d.version "
        "WHERE e.state IS DISTINCT FROM d.state OR e.row_version IS DISTINCT FROM d.row_version ORDER BY 1, 2"
    ).fetchall():
        out.append(Break(f"draft {draft_id} v{version}", f"its state {state} is not what its events say ({last}): "
                                                         "the state was written without its event", draft_id))
    return out


def _plan_hash_ok(plan_json: str, plan_hash: str | None) -> bool:
    text = json.dumps(json.loads(plan_json), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest() == plan_hash


def check_plans_sql(con: duckdb.DuckDBPyConnection, draft_id: str | None = None) -> list[Break]:
    """Every stored plan hashes to its plan hash (sha256 in SQL; a stored text that is not canonical JSON is
    canonicalised in Python before it is called edited)."""
    where = "" if draft_id is None else " AND draft_id = ?"
    out: list[Break] = []
    for d_id, version, plan_json, plan_hash in con.execute(
        "SELECT draft_id, version, plan_json, plan_hash FROM drafts WHERE plan_json IS NOT NULL AND "
        f"sha256(plan_json) IS DISTINCT FROM plan_hash{where} ORDER BY 1, 2",
        [] if draft_id is None else [draft_id],
    ).fetchall():
        if not _plan_hash_ok(plan_json, plan_hash):
            out.append(Break(f"draft {d_id} v{version}", "its stored plan does not hash to its plan hash (the plan "
                                                         "was edited)", d_id))
    return out


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


def draft_entries(con: duckdb.DuckDBPyConnection, draft_id: str) -> list[tuple[str, dict[str, Any]]]:
    """One draft's entries (events, approvals, dispatch changes), unchained ones first, then in chain order."""
    out = [("event", r) for r in rows(con, EVENT_SELECT + " WHERE e.draft_id = ?", [draft_id])]
    out += [("approval", r) for r in rows(con, APPROVAL_SELECT + " WHERE draft_id = ?", [draft_id])]
    out += [("dispatch", r) for r in rows(con, DISPATCH_LOG_SELECT + " WHERE draft_id = ?", [draft_id])]
    out.sort(key=lambda kr: (kr[1]["chain_seq"] is not None, kr[1]["chain_seq"] or 0))
    return out


def check_draft(con: duckdb.DuckDBPyConnection, draft_id: str) -> list[Break]:
    """One draft's chain, state replay and plan hashes (cheap: the draft's rows only)."""
    breaks: list[Break] = []
    prev = GENESIS
    entries = draft_entries(con, draft_id)
    for kind, row in entries:
        name = entry_name(kind, row)
        if row["chain_seq"] is None or row["entry_hash"] is None:
            breaks.append(Break(name, "is not in the hash chain (written outside sortie, e.g. by hand)", draft_id))
            continue
        if row["draft_prev_hash"] != prev:
            breaks.append(Break(name, "does not follow the draft's previous entry (an entry before it was "
                                      "deleted or inserted)", draft_id))
        if entry_hash(row["prev_hash"] or "", row["draft_prev_hash"], content(kind, row)) != row["entry_hash"]:
            breaks.append(Break(name, "its content was changed after it was written (hash mismatch)", draft_id))
        prev = row["entry_hash"]
    versions = rows(con, "SELECT version, state, row_version FROM drafts WHERE draft_id = ?", [draft_id])
    events = sorted((r for k, r in entries if k == "event"), key=lambda r: r["event_id"])
    for d in versions:
        where = f"draft {draft_id} v{d['version']}"
        evs = [e for e in events if e["version"] == d["version"]]
        state = None
        for e in evs:
            if e["from_state"] != state:
                breaks.append(Break(where, f"event {e['from_state']}→{e['to_state']} does not follow {state} "
                                           "(an event is missing)", draft_id))
                break
            state = e["to_state"]
        if state != d["state"] or (evs and evs[-1]["row_version"] != d["row_version"]):
            breaks.append(Break(where, f"its state {d['state']} is not what its events say ({state}): the state "
                                       "was written without its event", draft_id))
    return breaks + check_plans_sql(con, draft_id)
